/**
 * `limits.maxBufferedBytes`: chat spans carry whole histories, so a cap on spans does not bound
 * the adapter's memory; this one does. At or over it, requests are refused whole (the receivers
 * answer 429), counted, and taken once judging frees room; everything a span holds is counted,
 * but what a history shares with an earlier one of its own trace.
 */
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { type AdapterOptions, TraceAdapter } from '../../src/collector/adapter.js';
import { decodeExportTraceProtobuf } from '../../src/collector/otlp-proto.js';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import { heldBytes, sharedBytes, TRACE_BYTES } from '../../src/judging/held-bytes.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { noteOf } from '../../src/model/text-extensions.js';
import { INPUT_MESSAGES, recordConversations } from '../helpers/conversations.js';
import { PullReader } from '../processor/harness.js';

const NOW_NS = BigInt(Date.now()) * 1_000_000n;

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

/** Consecutive runs of `size`. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
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

  it('refuses requests once at the cap, counted, and takes them once judging frees room', async () => {
    const probe = adapterWith({});
    probe.ingest(decode(traces[0] as ReadableSpan[]));
    const oneTrace = probe.stats().bufferedBytes;
    await probe.shutdown();
    expect(oneTrace).toBeGreaterThan(10_000);

    const adapter = adapterWith({ maxBufferedBytes: Math.floor(1.5 * oneTrace) });
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

  it('reports buffered traces, spans and bytes through gauges, as stats() does', async () => {
    const reader = new PullReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const adapter = new TraceAdapter({
      scenarios: [{ id: 'any', tools: { allowed: ['get_order'] } }],
      decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
      sweepIntervalMs: 1e9,
      meterProvider,
    });
    const gauges = async () => {
      const { resourceMetrics } = await reader.collect();
      const values = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((metric) => metric.descriptor.name.startsWith('toolpath.buffer.'))
        .map((metric) => [metric.descriptor.name, metric.dataPoints[0]?.value]);
      return Object.fromEntries(values);
    };
    adapter.ingest(decode(traces[0] as ReadableSpan[]));
    const { bufferedTraces, bufferedSpans, bufferedBytes } = adapter.stats();
    expect(await gauges()).toEqual({
      'toolpath.buffer.traces': bufferedTraces,
      'toolpath.buffer.spans': bufferedSpans,
      'toolpath.buffer.bytes': bufferedBytes,
    });
    adapter.judgeAllNow();
    expect(await gauges()).toEqual({
      'toolpath.buffer.traces': 0,
      'toolpath.buffer.spans': 0,
      'toolpath.buffer.bytes': 0,
    });
    await adapter.shutdown();
    await meterProvider.shutdown();
  });

  it('takes a request of any size while under the cap, so none is refused for ever', async () => {
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
        expected -= TRACE_BYTES;
        for (const held of spans) expected -= counted(held);
      },
    });
    // Each span here has a resource and scope of its own, counted with it; each trace its own cost.
    const counted = (span: SpanRecord) => heldBytes(span) + sharedBytes(span.resource, span.scope);
    const ingest = (spans: SpanRecord[]) => {
      for (const taken of spans) if (!judged.has(taken.traceId)) expected += counted(taken);
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
      // Now, not 1970: a span of an unknown trace that ended long ago is late, and dropped.
      startTimeUnixNano: NOW_NS,
      endTimeUnixNano: NOW_NS + 1n,
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
    expected += count * TRACE_BYTES;
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

  for (const turnsPerRequest of [1, 8]) {
    it(`counts what each history shares with the one before it once, ${turnsPerRequest} turn(s) a request`, async () => {
      const turns = 8;
      const spans = recordConversations(1, turns);
      const adapter = adapterWith({});
      // Each turn is a chat span and a tool span; the root comes last, in a request of its own.
      const requests = chunks(spans.slice(0, -1), 2 * turnsPerRequest).concat([spans.slice(-1)]);
      for (const request of requests) adapter.ingest(decode(request));
      const records = spans.map(fromReadableSpan);
      const histories = records
        .map((record) => record.attributes[INPUT_MESSAGES])
        .filter((history): history is string => typeof history === 'string');
      // Every turn's history but the first holds the one before it but its closing bracket.
      const sharedChars = histories.slice(0, -1).reduce((sum, history) => sum + history.length - 1, 0);
      const first = records[0] as SpanRecord;
      expect(adapter.stats().bufferedBytes).toBe(
        records.map(heldBytes).reduce((a, b) => a + b, 0) -
          2 * sharedChars +
          TRACE_BYTES +
          requests.length * sharedBytes(first.resource, first.scope),
      );
      await adapter.shutdown();
    });
  }

  it('counts in full what a history shares with another trace, and what a resource holds', async () => {
    // Two conversations in one request; the second's first history continues the first's.
    const [a, b] = byTrace(recordConversations(2, 1)) as [ReadableSpan[], ReadableSpan[]];
    const chatOf = (trace: ReadableSpan[]) =>
      trace.find((span) => INPUT_MESSAGES in span.attributes) as ReadableSpan;
    const earlier = chatOf(a).attributes[INPUT_MESSAGES] as string;
    (chatOf(b) as { attributes: Record<string, unknown> }).attributes[INPUT_MESSAGES] =
      `${earlier.slice(0, -1)},{"role":"user"}]`;
    const request = decode([...a, ...b]);
    const noted = request.spans.filter(
      (span) => noteOf(span.attributes, INPUT_MESSAGES)?.extension !== undefined,
    );
    expect(noted).toHaveLength(1);
    const adapter = adapterWith({});
    adapter.ingest(request);
    const whole = request.spans.map(heldBytes).reduce((x, y) => x + y, 0);
    const first = request.spans[0] as SpanRecord;
    expect(adapter.stats().bufferedBytes).toBe(
      whole + 2 * (TRACE_BYTES + sharedBytes(first.resource, first.scope)),
    );
    await adapter.shutdown();

    const big = adapterWith({});
    const withResource = fromReadableSpan(a[0] as ReadableSpan);
    big.ingest({
      spans: [{ ...withResource, resource: { 'k8s.pod.annotations': 'x'.repeat(1 << 20) } }],
      errors: [],
      rejectedSpans: 0,
    });
    expect(big.stats().bufferedBytes).toBeGreaterThan(2 << 20);
    await big.shutdown();
  });
});
