/**
 * `toolpath serve` judging a conversation whose traces arrive in different requests, sent by the
 * real OTLP exporters (protobuf over HTTP, then gRPC): provisional reports after each trace, the
 * final one once the conversation is idle, its findings forwarded to a real next hop on an
 * evaluation span under the latest trace.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { type RunningService, startService } from '../../src/collector/serve.js';
import type { Report } from '../../src/model/report.js';
import { eventually, type NextHop, sendWith, startNextHop } from '../collector/next-hop.js';
import { CHAT_SCENARIO, recordChat } from '../helpers/chat-conversation.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function serve(): Promise<{ running: RunningService; hop: NextHop; reports: () => Report[] }> {
  const hop = await startNextHop();
  cleanup.push(() => hop.close());
  const dir = temporaryDir('toolpath-serve-conversations-');
  writeFileSync(join(dir, 'chat.json'), JSON.stringify(CHAT_SCENARIO));
  const config = parseAdapterConfig(
    {
      receivers: { otlp: { http: { endpoint: '127.0.0.1:0' }, grpc: { endpoint: '127.0.0.1:0' } } },
      scenarios: ['*.json'],
      decision: { wait: '10s', waitAfterRoot: '50ms' },
      // Idle well after the second request is sent, even on a loaded machine: the test waits for it.
      conversations: { idleTimeout: '4s', maxConversations: 100, maxCalls: 1000 },
      exporters: { otlp: { endpoint: hop.url, protocol: 'http/json' } },
      reports: { file: 'reports.jsonl' },
    },
    'test.yaml',
  );
  const running = await startService(config, { baseDir: dir, log: () => {} });
  cleanup.push(() => running.close());
  const reports = () => {
    try {
      return readFileSync(join(dir, 'reports.jsonl'), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Report);
    } catch {
      return [];
    }
  };
  return { running, hop, reports };
}

describe('toolpath serve, scope: conversation', () => {
  it.each([
    ['lookup-first', 'pass'],
    ['refund-first', 'fail'],
  ] as const)(
    'judges the %s conversation across requests: provisional, then %s when idle',
    async (order, verdict) => {
      const { running, hop, reports } = await serve();
      const [first, second] = await recordChat(order);
      expect(await sendWith('http/protobuf+gzip', running.httpUrl as string, first ?? [])).toBe(0);
      await eventually(() => reports().length === 1, 'the first provisional report');
      expect(reports()[0]).toMatchObject({ final: false, conversationId: `chat-${order}` });
      expect(reports()[0]?.verdict).toBe(order === 'lookup-first' ? 'inconclusive' : 'fail');

      expect(await sendWith('grpc', `http://${running.grpcAddress}`, second ?? [])).toBe(0);
      await eventually(() => reports().some((report) => report.final === true), 'the final report', 30_000);
      const all = reports();
      const provisional = all.filter((report) => report.final === false);
      const final = all.filter((report) => report.final === true);
      expect(provisional).toHaveLength(2);
      expect(final).toHaveLength(1);
      const traceIds = [first, second].map((spans) => spans?.[0]?.spanContext().traceId);
      expect(final[0]).toMatchObject({
        verdict,
        conversationId: `chat-${order}`,
        traceIds,
        traceId: traceIds[1],
      });

      // Its findings went on to the next hop, on an evaluation span under the latest trace's agent span.
      await eventually(
        () =>
          hop.spans.some(
            (span) =>
              span.name === 'toolpath.evaluate' && span.attributes['toolpath.conversation.final'] === true,
          ),
        'the final evaluation span at the next hop',
      );
      const finalSpan = hop.spans.find(
        (span) =>
          span.name === 'toolpath.evaluate' && span.attributes['toolpath.conversation.final'] === true,
      );
      const agent = second?.find((span) => span.name === 'invoke_agent support-agent');
      expect(finalSpan?.traceId).toBe(traceIds[1]);
      expect(finalSpan?.parentSpanId).toBe(agent?.spanContext().spanId);
      const result = finalSpan?.events.find((event) => event.name === 'gen_ai.evaluation.result');
      expect(result?.attributes['toolpath.verdict']).toBe(verdict);
    },
  );
});
