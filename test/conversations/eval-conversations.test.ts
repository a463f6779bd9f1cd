/**
 * `toolpath eval` judging a chat app's conversation: one trace per user message, the order
 * lookup in one and the refund in the other, recorded by a real SDK provider and serialized by
 * the real OTLP JSON serializer into one file per trace.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import {
  CHAT_SCENARIO,
  captureChat,
  PER_TRACE_SCENARIO,
  SEED_001_ASSERTIONS,
} from '../helpers/chat-conversation.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
const files: Record<string, { paths: string[]; traceIds: string[] }> = {};

async function save(name: string, scenario: object): Promise<string> {
  const path = join(dir, `${name}.json`);
  await writeFile(path, JSON.stringify(scenario));
  return path;
}

beforeAll(async () => {
  dir = temporaryDir('toolpath-conversations-');
  const chats = {
    good: await captureChat('lookup-first'),
    swapped: await captureChat('refund-first'),
    anonymous: await captureChat('lookup-first', null),
  };
  for (const [name, traces] of Object.entries(chats)) {
    const paths: string[] = [];
    for (const [index, trace] of traces.entries()) {
      const path = join(dir, `${name}-${index + 1}.otlp.json`);
      await writeFile(path, trace.otlpJson);
      paths.push(path);
    }
    files[name] = { paths, traceIds: traces.map((trace) => trace.traceId) };
  }
});

async function evalJson(scenario: object, paths: string[]) {
  const run = await runCli([
    'eval',
    '--scenario',
    await save('scenario', scenario),
    '--format',
    'json',
    ...paths,
  ]);
  return { code: run.code, stderr: run.stderr, document: JSON.parse(run.stdout) };
}

const chat = (name: string) => files[name] as { paths: string[]; traceIds: string[] };

describe('toolpath eval, scope: conversation', () => {
  it('passes a conversation whose lookup (message 1) came before its refund (message 2), as one unit', async () => {
    const { code, document } = await evalJson(CHAT_SCENARIO, chat('good').paths);
    expect(code).toBe(0);
    expect(document.reports).toHaveLength(1);
    const report: Report = document.reports[0];
    expect(report).toMatchObject({
      verdict: 'pass',
      conversationId: 'chat-lookup-first',
      traceIds: chat('good').traceIds,
      traceId: chat('good').traceIds[1],
      final: true,
      stats: { calls: 2 },
    });
    expect(document.summary).toMatchObject({ traces: 2, evaluated: 1, passed: 1 });
    expect(document.summary.scenarios[0]).toMatchObject({ unit: 'conversation', evaluated: 1, passRate: 1 });
  });

  it('lists the traces earliest first whatever order the files are given in', async () => {
    const { document } = await evalJson(CHAT_SCENARIO, [...chat('good').paths].reverse());
    expect(document.reports[0].traceIds).toEqual(chat('good').traceIds);
    expect(document.reports[0].verdict).toBe('pass');
  });

  it('fails the swapped conversation, the finding naming each call with its trace', async () => {
    const { code, document } = await evalJson(CHAT_SCENARIO, chat('swapped').paths);
    expect(code).toBe(1);
    const report: Report = document.reports[0];
    expect(report.verdict).toBe('fail');
    expect(report.conversationId).toBe('chat-refund-first');
    expect(report.traceIds).toEqual(chat('swapped').traceIds);
    const order = report.findings.find((finding) => finding.rule === 'order.before');
    expect(order?.message).toMatch(/issue_refund .* came before any get_order/);
    // The refund (first named) happened in the first message's trace, the lookup in the second's.
    expect(order?.calls).toHaveLength(2);
    expect(order?.traceIds).toEqual(chat('swapped').traceIds);
    for (const finding of report.findings) expect(finding.traceIds).toHaveLength(finding.calls.length);
  });

  it('judges two conversations given together apart', async () => {
    const { document } = await evalJson(CHAT_SCENARIO, [...chat('good').paths, ...chat('swapped').paths]);
    const verdicts = Object.fromEntries(
      document.reports.map((report: Report) => [report.conversationId, report.verdict]),
    );
    expect(verdicts).toEqual({ 'chat-lookup-first': 'pass', 'chat-refund-first': 'fail' });
    expect(document.summary.scenarios[0]).toMatchObject({ evaluated: 2, passed: 1, failed: 1 });
  });

  it('judges traces without a conversation id each on its own', async () => {
    const { document } = await evalJson(CHAT_SCENARIO, chat('anonymous').paths);
    expect(document.reports).toHaveLength(2);
    for (const report of document.reports) {
      expect(report.conversationId).toBeUndefined();
      expect(report.verdict).toBe('fail');
    }
  });

  it('without scope, the same rules judge each message trace alone: both fail', async () => {
    const { document } = await evalJson(PER_TRACE_SCENARIO, chat('good').paths);
    expect(document.reports.map((report: Report) => report.verdict)).toEqual(['fail', 'fail']);
    expect(document.reports.map((report: Report) => report.conversationId)).toEqual([undefined, undefined]);
  });
});

describe('toolpath eval, seed-001 assertion files', () => {
  it('judge the conversation when the traces carry an id: one report over both traces', async () => {
    const good = await evalJson(SEED_001_ASSERTIONS, chat('good').paths);
    expect(good.document.reports).toHaveLength(1);
    expect(good.document.reports[0]).toMatchObject({
      verdict: 'pass',
      conversationId: 'chat-lookup-first',
      traceIds: chat('good').traceIds,
    });
    const swapped = await evalJson(SEED_001_ASSERTIONS, chat('swapped').paths);
    expect(swapped.document.reports[0].verdict).toBe('fail');
    expect(swapped.document.reports[0].assertions).toContainEqual(
      expect.objectContaining({ name: 'tool_sequence', status: 'fail' }),
    );
  });

  it('judge each trace when the traces carry none, as before', async () => {
    const { document } = await evalJson(SEED_001_ASSERTIONS, chat('anonymous').paths);
    expect(document.reports).toHaveLength(2);
    expect(document.reports.map((report: Report) => report.verdict)).toEqual(['fail', 'fail']);
  });
});
