/**
 * Durable mode, a slow next hop, and conversations ending while the forward queue is full: each
 * conversation's final findings wait for room (they cannot wait in the log as trace outputs do,
 * and were dropped before, with their `final done` record written all the same, so not even a
 * restart sent them), reach the hop once, and after a stop with some still waiting, are sent by
 * the next start under the same span id, as are those past the cap on finals waiting (the larger
 * of the queue's size and `maxConversations`). Real OTLP/HTTP receivers on both sides, the real
 * protobuf exporter between them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterEach, describe, expect, it } from 'vitest';
import { EVALUATION_SPAN_NAME } from '../../src/judging/evaluation-events.js';
import type { Report } from '../../src/model/report.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { agentRoot, type JsonSpan, postSpans, toolSpan, traceIdOf } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { eventually, startSlowHop } from './next-hop.js';
import { startReportingAdapter } from './reporting-adapter.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});
const slowHop = (delayMs: number) => startSlowHop(delayMs, cleanup);

const CHAT = {
  id: 'chat',
  scope: 'conversation',
  tools: { required: ['get_order', 'issue_refund'] },
};

function start(dir: string, hopUrl: string, maxConversations = 1000) {
  return startReportingAdapter({
    dir,
    options: {
      scenarios: [CHAT],
      decision: { waitMs: 1e9, waitAfterRootMs: 5 },
      conversations: { idleMs: 300, maxConversations, maxCalls: 1000 },
      sweepIntervalMs: 20,
      exporter: new OTLPTraceExporter({ url: `${hopUrl}/v1/traces`, timeoutMillis: 10_000 }),
      // A small queue, so the slow hop keeps it full while the conversations end.
      queue: { maxQueueSize: 6, maxBatchSize: 3, flushDelayMs: 5 },
    },
    storage: {},
    cleanup: (stop) => cleanup.push(stop),
  });
}

/** Conversation `c`'s two traces (2c and 2c+1): an agent run with one call each. */
function conversationTraces(c: number): JsonSpan[][] {
  return [
    [0, 'get_order'],
    [1, 'issue_refund'],
  ].map(([k, tool]) => {
    const root = agentRoot(2 * c + (k as number));
    return [
      { ...root, attributes: { ...root.attributes, 'gen_ai.conversation.id': `conv-${c}` } },
      toolSpan(2 * c + (k as number), 1, tool as string, '{"orderId":"A1"}'),
    ];
  });
}

/** The final evaluation spans the hop got: span ids by trace. */
function finalsAtHop(spans: readonly SpanRecord[]): Map<string, Set<string>> {
  const finals = new Map<string, Set<string>>();
  for (const span of spans)
    if (span.name === EVALUATION_SPAN_NAME && span.attributes['toolpath.conversation.final'] === true)
      finals.set(span.traceId, (finals.get(span.traceId) ?? new Set()).add(span.spanId));
  return finals;
}

function finalReports(dir: string): Report[] {
  return readFileSync(join(dir, 'reports.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Report)
    .filter((report) => report.final === true);
}

/** The latest trace of each of `count` conversations: where its final findings go. */
const latestTraces = (count: number) => Array.from({ length: count }, (_, c) => traceIdOf(2 * c + 1)).sort();

describe('durable mode, conversation finals and a full forward queue', () => {
  it('keeps each final until the queue has room, and the hop gets every one once', async () => {
    const dir = temporaryDir('toolpath-finals-full-queue-');
    const hop = await slowHop(150);
    const running = await start(dir, hop.url);
    const conversations = 20;
    for (let c = 0; c < conversations; c++)
      for (const trace of conversationTraces(c))
        expect((await postSpans(running.url, trace)).status).toBe(200);
    await eventually(
      () => finalReports(dir).length === conversations,
      'every conversation judged final',
      30_000,
    );
    await eventually(
      () => finalsAtHop(hop.spans).size === conversations,
      'every final at the next hop',
      60_000,
    );
    await eventually(() => running.adapter.stats().storage?.waitingFinals === 0, 'no final waiting');
    const stats = running.adapter.stats();
    // The path under test was taken: finals met a full queue.
    expect(stats.storage?.waitedFinals).toBeGreaterThan(0);
    expect(stats.storage?.deferredFinals).toBe(0);
    expect(stats.dropped.forward_queue_full).toBe(0);
    expect(running.adapter.losses.describe()).toBe('');
    const finals = finalsAtHop(hop.spans);
    expect([...finals.keys()].sort()).toEqual(latestTraces(conversations));
    expect([...finals.values()].every((ids) => ids.size === 1)).toBe(true);
    expect(finalReports(dir)).toHaveLength(conversations);
  }, 90_000);

  it('sends the finals still waiting at a stop, and those past the cap, after the next start, under the same span ids', async () => {
    const dir = temporaryDir('toolpath-finals-restart-');
    const hop = await slowHop(1_000);
    // At most 6 finals wait (the queue's size, larger than maxConversations).
    const first = await start(dir, hop.url, 4);
    const conversations = 12;
    for (let c = 0; c < conversations; c++)
      for (const trace of conversationTraces(c)) expect((await postSpans(first.url, trace)).status).toBe(200);
    await eventually(
      () => finalReports(dir).length === conversations,
      'every conversation judged final',
      30_000,
    );
    const waiting = first.adapter.stats().storage;
    expect(waiting?.waitingFinals).toBeGreaterThan(0);
    expect(waiting?.deferredFinals).toBeGreaterThan(0);
    await first.stop();
    expect(first.adapter.stats().dropped.forward_queue_full).toBe(0);
    expect(finalsAtHop(hop.spans).size).toBeLessThan(conversations);

    const second = await start(dir, hop.url, 4);
    await eventually(
      () => finalsAtHop(hop.spans).size === conversations,
      'every final at the next hop',
      60_000,
    );
    await eventually(() => second.adapter.stats().storage?.waitingFinals === 0, 'no final waiting');
    await second.stop();
    expect(second.adapter.losses.describe()).toBe('');
    const finals = finalsAtHop(hop.spans);
    expect([...finals.keys()].sort()).toEqual(latestTraces(conversations));
    // Sent again after the restart, a final keeps its span id: the hop sees one finding each.
    expect([...finals.values()].every((ids) => ids.size === 1)).toBe(true);
    // Judged again for their output only: each report line written once.
    expect(finalReports(dir)).toHaveLength(conversations);
  }, 90_000);
});
