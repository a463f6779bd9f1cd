/**
 * `limits.maxBufferedBytes`: chat spans carry whole histories, so a cap on spans does not bound
 * the adapter's memory; this one does. A request that would pass it is refused whole (the
 * receivers answer 429), counted, and taken once judging frees room; a history continued from an
 * earlier request counts only its new part.
 */
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { type AdapterOptions, TraceAdapter } from '../../src/collector/adapter.js';
import { heldBytes } from '../../src/collector/held-bytes.js';
import { decodeExportTraceProtobuf } from '../../src/collector/otlp-proto.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { fromReadableSpan } from '../../src/processor/readable-span.js';
import { INPUT_MESSAGES, recordConversations } from '../helpers/conversations.js';

const decode = (spans: ReadableSpan[]) =>
  decodeExportTraceProtobuf(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);

function adapterWith(limits: AdapterOptions['limits']): TraceAdapter {
  return new TraceAdapter({
    scenarios: [{ id: 'any', tools: { allowed: ['get_order'] } }],
    decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
    sweepIntervalMs: 1e9,
    limits,
  });
}

/** The spans of each conversation (trace), in the order recorded. */
function byTrace(spans: readonly ReadableSpan[]): ReadableSpan[][] {
  const traces = new Map<string, ReadableSpan[]>();
  for (const span of spans) {
    const id = span.spanContext().traceId;
    traces.set(id, [...(traces.get(id) ?? []), span]);
  }
  return [...traces.values()];
}

describe('limits.maxBufferedBytes', () => {
  const traces = byTrace(recordConversations(3, 4));

  it('refuses a request that would pass it, counted, and takes it once judging frees room', async () => {
    const probe = adapterWith({});
    probe.ingest(decode(traces[0] as ReadableSpan[]));
    const oneTrace = probe.stats().bufferedBytes;
    await probe.shutdown();
    expect(oneTrace).toBeGreaterThan(10_000);

    const adapter = adapterWith({ maxBufferedBytes: Math.floor(2.5 * oneTrace) });
    const [first, second, third] = traces as [ReadableSpan[], ReadableSpan[], ReadableSpan[]];
    expect(adapter.ingest(decode(first)).kind).toBe('accepted');
    expect(adapter.ingest(decode(second)).kind).toBe('accepted');
    const held = adapter.stats();
    const refused = adapter.ingest(decode(third));
    expect(refused).toMatchObject({ kind: 'unavailable', reason: 'full', retryAfterSeconds: 1 });
    expect(refused.kind === 'unavailable' && refused.message).toMatch(
      /^buffer full \(2 traces, \d+ spans, about 0 MiB\)$/,
    );
    // Nothing of it taken; its spans counted.
    expect(adapter.stats()).toMatchObject({
      bufferedTraces: 2,
      bufferedSpans: held.bufferedSpans,
      bufferedBytes: held.bufferedBytes,
    });
    expect(adapter.stats().dropped.buffer_full).toBe(third.length);

    adapter.judgeAllNow();
    expect(adapter.stats()).toMatchObject({ judgedTraces: 2, bufferedBytes: 0 });
    expect(adapter.ingest(decode(third)).kind).toBe('accepted');
    adapter.judgeAllNow();
    expect(adapter.stats().judgedTraces).toBe(3);
    await adapter.shutdown();
  });

  it('takes any request into an empty buffer, so none is refused for ever', async () => {
    const adapter = adapterWith({ maxBufferedBytes: 1 });
    expect(adapter.ingest(decode(traces[0] as ReadableSpan[])).kind).toBe('accepted');
    expect(adapter.ingest(decode(traces[1] as ReadableSpan[])).kind).toBe('unavailable');
    adapter.judgeAllNow();
    expect(adapter.ingest(decode(traces[1] as ReadableSpan[])).kind).toBe('accepted');
    await adapter.shutdown();
  });

  it('frees all it counted once every trace is judged, late spans of traces waiting their turn included', async () => {
    // Judged by the adapter's own sweep, 20 ms at a time: spans that arrive between those slices
    // join the traces still waiting their turn.
    const judgedSpans: number[] = [];
    // What should be counted at any time: what was taken into traces not judged yet.
    const judged = new Set<string>();
    let expected = 0;
    const adapter = new TraceAdapter({
      scenarios: [{ id: 'any', tools: { allowed: ['get_order'] } }],
      decision: { waitMs: 1e9, waitAfterRootMs: 0 },
      sweepIntervalMs: 1,
      onJudged: (spans) => {
        judgedSpans.push(spans.length);
        judged.add((spans[0] as SpanRecord).traceId);
        for (const held of spans) expected -= heldBytes(held);
      },
    });
    const ingest = (spans: SpanRecord[]) => {
      for (const taken of spans) if (!judged.has(taken.traceId)) expected += heldBytes(taken);
      expect(adapter.ingest({ spans, errors: [], rejectedSpans: 0 }).kind).toBe('accepted');
      expect(adapter.stats().bufferedBytes).toBe(expected);
    };
    const count = 4_000;
    const span = (n: number, parentSpanId?: string): SpanRecord => ({
      traceId: n.toString(16).padStart(32, '0'),
      spanId: (parentSpanId === undefined ? 1 : 2).toString(16).padStart(16, '0'),
      ...(parentSpanId !== undefined && { parentSpanId }),
      name: parentSpanId === undefined ? 'invoke_agent support' : 'chat',
      kind: 'internal',
      startTimeUnixNano: 1n,
      endTimeUnixNano: 2n,
      attributes:
        parentSpanId === undefined
          ? { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' }
          : { 'gen_ai.operation.name': 'chat', [INPUT_MESSAGES]: `[${JSON.stringify('x'.repeat(2_000))}]` },
      status: { code: 'unset' },
      events: [],
      links: [],
      resource: { attributes: {} },
      scope: { name: 'agent' },
    });
    const roots = Array.from({ length: count }, (_, n) => span(n));
    ingest(roots);
    while (adapter.stats().judgedTraces === 0) await new Promise((resolve) => setImmediate(resolve));
    // The latest traces first: judging takes the oldest first.
    for (let n = count - 50; n >= 0; n -= 50) {
      const late = Array.from({ length: 50 }, (_, i) => span(n + i, roots[0]?.spanId));
      ingest(late);
      expect(adapter.stats().bufferedBytes).toBe(expected);
      await new Promise((resolve) => setImmediate(resolve));
    }
    while (adapter.stats().judgedTraces < count) await new Promise((resolve) => setTimeout(resolve, 5));
    // Some late spans joined traces waiting their turn (judged with two spans), and all is freed.
    expect(judgedSpans.filter((spans) => spans === 2).length).toBeGreaterThan(0);
    expect(adapter.stats()).toMatchObject({ bufferedSpans: 0, bufferedBytes: 0 });
    expect(expected).toBe(0);
    await adapter.shutdown();
  });

  it('counts a history continued from an earlier request by its new part only', async () => {
    const turns = 8;
    const spans = recordConversations(1, turns);
    const adapter = adapterWith({});
    // A turn (a chat span and a tool span) a request, the root last.
    for (let at = 0; at < spans.length; at += 2) adapter.ingest(decode(spans.slice(at, at + 2)));
    const records = spans.map(fromReadableSpan);
    const whole = records.map(heldBytes).reduce((a, b) => a + b, 0);
    const histories = records
      .map((record) => record.attributes[INPUT_MESSAGES])
      .filter((h) => typeof h === 'string');
    const last = (histories.at(-1) as string).length;
    const { bufferedBytes } = adapter.stats();
    // At least the last history once (two bytes a character); far less than every history whole.
    expect(bufferedBytes).toBeGreaterThan(2 * last);
    expect(bufferedBytes).toBeLessThan(whole / 2);
    await adapter.shutdown();
  });
});
