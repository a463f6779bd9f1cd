/**
 * A slow next hop in durable mode: findings the forward queue has no room for wait in the span
 * log, not dropped as `forward_queue_full`, and go out oldest first as the hop takes them, each
 * once; when the log fills with them, clients are refused (429) instead. Real OTLP/HTTP receivers
 * on both sides, the real protobuf exporter between them.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterEach, describe, expect, it } from 'vitest';
import { type AdapterOptions, TraceAdapter } from '../../src/collector/adapter.js';
import { startHttpReceiver } from '../../src/collector/http-receiver.js';
import { EVALUATION_SPAN_NAME } from '../../src/judging/evaluation-events.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { agentRoot, postSpans, toolSpan, traceIdOf } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { eventually, startSlowHop } from './next-hop.js';
import { startReportingAdapter } from './reporting-adapter.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});
const slowHop = (delayMs: number) => startSlowHop(delayMs, cleanup);

function start(dir: string, hopUrl: string, { storage, ...options }: Partial<AdapterOptions> = {}) {
  return startReportingAdapter({
    dir,
    options: {
      scenarios: [{ id: 'refund', tools: { allowed: ['get_order', 'issue_refund'] } }],
      decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
      sweepIntervalMs: 20,
      exporter: new OTLPTraceExporter({ url: `${hopUrl}/v1/traces`, timeoutMillis: 10_000 }),
      // A small queue, so a slow hop fills it at once.
      queue: { maxQueueSize: 20, maxBatchSize: 10, flushDelayMs: 5 },
      ...options,
    },
    storage: storage ?? {},
    cleanup: (stop) => cleanup.push(stop),
  });
}

/** Evaluation spans the hop got, by trace. */
function findingsByTrace(spans: readonly SpanRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const span of spans)
    if (span.name === EVALUATION_SPAN_NAME) counts.set(span.traceId, (counts.get(span.traceId) ?? 0) + 1);
  return counts;
}

const agentTrace = (n: number) => [agentRoot(n), toolSpan(n, 1, 'get_order', '{"orderId":"A1"}')];

describe('durable mode with a slow next hop', () => {
  it('keeps findings the forward queue has no room for in the log, drops none, and sends each once', async () => {
    const dir = temporaryDir('toolpath-slow-hop-');
    const hop = await slowHop(200);
    const running = await start(dir, hop.url);
    const traces = 100;
    for (let n = 0; n < traces; n++) expect((await postSpans(running.url, agentTrace(n))).status).toBe(200);
    running.adapter.judgeAllNow();
    const waiting = running.adapter.stats();
    expect(waiting.dropped.forward_queue_full).toBe(0);
    // Past the queue's 20: in the log.
    expect(waiting.storage?.waitingOutputs).toBeGreaterThanOrEqual(traces - 20);
    await eventually(
      () => findingsByTrace(hop.spans).size === traces,
      'every finding at the next hop',
      60_000,
    );
    await eventually(() => running.adapter.stats().storage?.liveTraces === 0, 'every trace done');
    const stats = running.adapter.stats();
    expect(stats.storage).toMatchObject({ waitingOutputs: 0, waitingSpans: 0 });
    expect(stats.storage?.parkedOutputs).toBeGreaterThanOrEqual(traces - 20);
    expect(stats.dropped.forward_queue_full).toBe(0);
    expect(running.adapter.losses.describe()).toBe('');
    const findings = findingsByTrace(hop.spans);
    expect([...findings.keys()].sort()).toEqual(
      Array.from({ length: traces }, (_, n) => traceIdOf(n)).sort(),
    );
    expect([...findings.values()].every((count) => count === 1)).toBe(true);
    // The findings as the hop got them from the log are those it got straight from the queue.
    const evaluation = hop.spans.filter((span) => span.name === EVALUATION_SPAN_NAME);
    const first = evaluation[0] as SpanRecord;
    const last = evaluation.at(-1) as SpanRecord;
    expect(Object.keys(last.attributes).sort()).toEqual(Object.keys(first.attributes).sort());
    expect(last.events.map((event) => event.name)).toEqual(first.events.map((event) => event.name));
    expect(last.resource).toEqual(first.resource);
    expect(last.scope).toEqual(first.scope);
  }, 90_000);

  it('keeps retrying a next hop that is down past the attempts a batch gets without storage, and sends each finding once it is back', async () => {
    const dir = temporaryDir('toolpath-down-hop-');
    const hop = await slowHop(0);
    // In front of the hop: 500 (which the OTLP exporter does not retry itself) while down.
    let down = true;
    const front = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        if (down) return response.writeHead(500).end();
        const passed = await fetch(`${hop.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': String(request.headers['content-type']) },
          body: Buffer.concat(chunks),
        });
        response.writeHead(passed.status, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => front.close(resolve)));
    const { port } = front.address() as AddressInfo;
    const running = await start(dir, `http://127.0.0.1:${port}`, {
      queue: {
        maxQueueSize: 20,
        maxBatchSize: 10,
        flushDelayMs: 5,
        maxAttempts: 2,
        initialBackoffMs: 10,
        maxBackoffMs: 40,
      },
    });
    const traces = 30;
    for (let n = 0; n < traces; n++) expect((await postSpans(running.url, agentTrace(n))).status).toBe(200);
    running.adapter.judgeAllNow();
    // Many more attempts than the two a batch gets without storage.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(running.adapter.stats().dropped.forward_failed).toBe(0);
    expect(findingsByTrace(hop.spans).size).toBe(0);
    down = false;
    await eventually(
      () => findingsByTrace(hop.spans).size === traces,
      'every finding at the next hop',
      60_000,
    );
    await eventually(() => running.adapter.stats().storage?.liveTraces === 0, 'every trace done');
    expect(running.adapter.losses.describe()).toBe('');
    expect([...findingsByTrace(hop.spans).values()].every((count) => count === 1)).toBe(true);
  }, 90_000);

  it('without storage, counts each finding the full queue drops (forward_queue_full), as the losses say', async () => {
    const hop = await slowHop(200);
    const adapter = new TraceAdapter({
      scenarios: [{ id: 'refund', tools: { allowed: ['get_order', 'issue_refund'] } }],
      decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
      exporter: new OTLPTraceExporter({ url: `${hop.url}/v1/traces`, timeoutMillis: 10_000 }),
      queue: { maxQueueSize: 20, maxBatchSize: 10, flushDelayMs: 5 },
    });
    cleanup.push(() => adapter.shutdown());
    const receiver = await startHttpReceiver({
      host: '127.0.0.1',
      port: 0,
      ingest: adapter,
      maxRequestBytes: 1 << 20,
    });
    cleanup.push(() => receiver.close());
    for (let n = 0; n < 100; n++) expect((await postSpans(receiver.url, agentTrace(n))).status).toBe(200);
    adapter.judgeAllNow();
    const dropped = adapter.stats().dropped.forward_queue_full;
    expect(dropped).toBe(80);
    expect(adapter.losses.describe()).toContain('80 findings');
  }, 60_000);

  it('refuses requests (429) once what waits for the hop fills storage.maxBytes, dropping nothing', async () => {
    const dir = temporaryDir('toolpath-slow-hop-');
    // Slower than the exporter waits: every export times out and is retried.
    const hop = await slowHop(60_000);
    const running = await start(dir, hop.url, {
      decision: { waitMs: 1e9, waitAfterRootMs: 5 },
      exporter: new OTLPTraceExporter({ url: `${hop.url}/v1/traces`, timeoutMillis: 1_000 }),
      storage: {
        directory: join(dir, 'storage'),
        maxBytes: 2 ** 20,
        segmentBytes: 64 * 1024,
      },
    });
    const padded = (n: number) => [
      { ...agentRoot(n), attributes: { ...agentRoot(n).attributes, 'app.padding': 'p'.repeat(2_000) } },
      toolSpan(n, 1, 'get_order', '{"orderId":"A1"}'),
    ];
    let refused = 0;
    let accepted = 0;
    for (let n = 0; n < 2_000 && refused === 0; n++) {
      const { status } = await postSpans(running.url, padded(n));
      if (status === 429) refused++;
      else expect(status).toBe(200);
      if (status === 200) accepted++;
      // Judged, and its output parked, before the next few.
      if (n % 20 === 19)
        await eventually(() => running.adapter.stats().bufferedTraces === 0, 'judged', 5_000);
    }
    expect(refused).toBe(1);
    const stats = running.adapter.stats();
    expect(stats.storage?.refusedFull).toBeGreaterThan(0);
    expect(stats.dropped.forward_queue_full).toBe(0);
    expect(stats.storage?.waitingOutputs).toBeGreaterThan(0);
    expect(stats.storage?.waitingOutputs).toBeLessThan(accepted);
    expect(running.adapter.losses.describe()).toBe('');
  }, 90_000);

  it('sends what waited in the log after a restart when stopped first, each once', async () => {
    const dir = temporaryDir('toolpath-slow-hop-');
    const hop = await slowHop(1_000);
    const first = await start(dir, hop.url);
    const traces = 60;
    for (let n = 0; n < traces; n++) expect((await postSpans(first.url, agentTrace(n))).status).toBe(200);
    first.adapter.judgeAllNow();
    await first.stop();
    const stopped = first.adapter.stats();
    expect(stopped.dropped.forward_queue_full).toBe(0);
    expect(stopped.storage?.keptForRestart).toBeGreaterThan(0);
    expect(first.adapter.losses.describe()).toBe('');

    const second = await start(dir, hop.url, { decision: { waitMs: 1e9, waitAfterRootMs: 10 } });
    await eventually(
      () => findingsByTrace(hop.spans).size === traces,
      'every finding at the next hop',
      60_000,
    );
    await eventually(() => second.adapter.stats().storage?.liveTraces === 0, 'every trace done', 30_000);
    await second.stop();
    expect(second.adapter.stats().dropped.forward_queue_full).toBe(0);
    expect(second.adapter.losses.describe()).toBe('');
    // Sent again after the restart under the same span id: one finding per trace at the hop.
    const ids = new Map<string, Set<string>>();
    for (const span of hop.spans.filter((s) => s.name === EVALUATION_SPAN_NAME))
      ids.set(span.traceId, (ids.get(span.traceId) ?? new Set()).add(span.spanId));
    expect(ids.size).toBe(traces);
    expect([...ids.values()].every((set) => set.size === 1)).toBe(true);
  }, 90_000);
});
