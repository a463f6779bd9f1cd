/**
 * `toolpath eval` judging a conversation that a framework recorded, one trace per user message,
 * the order lookup in the first and the refund in the second: the OpenAI Agents SDK under logfire
 * (the trace span's `group_id`) and Mastra (its memory thread, exported as
 * `gen_ai.conversation.id`). The fixtures hold both traces in one file.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { CHAT_SCENARIO, PER_TRACE_SCENARIO } from '../helpers/chat-conversation.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const SPANS = new URL('../spans/', import.meta.url);
let dir: string;

beforeAll(() => {
  dir = temporaryDir('toolpath-framework-conversations-');
});

async function evalJson(scenario: object, file: string) {
  const scenarioPath = join(dir, `${(scenario as { id: string }).id}.json`);
  await writeFile(scenarioPath, JSON.stringify(scenario));
  const run = await runCli(['eval', '--scenario', scenarioPath, '--format', 'json', file]);
  return { code: run.code, document: JSON.parse(run.stdout) };
}

const fixturePath = (name: string) => new URL(`${name}.otlp.json`, SPANS).pathname;

describe.each([
  {
    framework: 'OpenAI Agents SDK under logfire',
    file: 'logfire-openai-agents-conversation',
    conversationId: 'thread_ana_a1001',
    traceIds: ['1'.padStart(32, '0'), '2'.padStart(32, '0')],
  },
  {
    framework: 'Mastra with memory',
    file: 'mastra-conversation',
    conversationId: 'thread-ana-a1001',
    traceIds: undefined,
  },
])('toolpath eval, scope: conversation, $framework', ({ file, conversationId, traceIds }) => {
  it('judges both message traces as one conversation: the lookup came before the refund', async () => {
    const { code, document } = await evalJson(CHAT_SCENARIO, fixturePath(file));
    expect(code).toBe(0);
    expect(document.reports).toHaveLength(1);
    const report: Report = document.reports[0];
    expect(report).toMatchObject({ verdict: 'pass', conversationId, final: true, stats: { calls: 2 } });
    expect(report.traceIds).toHaveLength(2);
    if (traceIds) expect(report.traceIds).toEqual(traceIds);
    expect(document.summary).toMatchObject({ traces: 2, evaluated: 1, passed: 1 });
    expect(document.summary.scenarios[0]).toMatchObject({ unit: 'conversation', evaluated: 1, passRate: 1 });
  });

  it('without scope, each message trace is judged alone, and both fail', async () => {
    const { code, document } = await evalJson(PER_TRACE_SCENARIO, fixturePath(file));
    expect(code).toBe(1);
    expect(document.reports.map((report: Report) => report.verdict)).toEqual(['fail', 'fail']);
  });
});

describe('toolpath eval, scope: conversation, Agents SDK traces whose group_id is "null"', () => {
  it('judges each trace on its own: "null" is no conversation', async () => {
    const spans = readFileSync(fixturePath('logfire-openai-agents-conversation'), 'utf8');
    const nulled = spans.replaceAll('"thread_ana_a1001"', '"null"');
    expect(nulled).not.toBe(spans);
    const path = join(dir, 'group-id-null.otlp.json');
    await writeFile(path, nulled);
    const { code, document } = await evalJson(CHAT_SCENARIO, path);
    expect(code).toBe(1);
    expect(document.reports).toHaveLength(2);
    for (const report of document.reports as Report[]) {
      expect(report.conversationId).toBeUndefined();
      expect(report.verdict).toBe('fail');
    }
  });
});
