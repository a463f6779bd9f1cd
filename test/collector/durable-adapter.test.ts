/**
 * Durable mode in the adapter, behind the real OTLP/HTTP receiver: requests answered 200 only
 * once on disk, what is not done given back by a new adapter on the same folder (judged once,
 * report lines not written twice), `storage.maxBytes` refusing requests (429) until judging
 * frees the log, compaction letting the oldest segment go while one trace still waits in it,
 * and a log tail cut by a crash mid-write: detected, cut, counted, the rest judged.
 */
import { readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdapterOptions, TraceAdapter } from '../../src/collector/adapter.js';
import { readRecord } from '../../src/collector/durable-records.js';
import {
  agentRoot,
  type JsonSpan,
  postSpans,
  spanIdOf,
  toolSpan,
  traceIdOf,
} from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { eventually, startNextHop } from './next-hop.js';
import { startReportingAdapter } from './reporting-adapter.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

interface Running {
  adapter: TraceAdapter;
  url: string;
  /** Graceful: judges what is buffered, writes the last marks. */
  stop(): Promise<void>;
  /**
   * What a crash leaves: the receiver gone, the adapter left as it is (its waits are long, so it
   * judges nothing more), nothing flushed on the way out.
   */
  crash(): Promise<void>;
}

/** An adapter with storage in `dir` and a reports file beside it, behind a real HTTP receiver. */
function start(dir: string, options: Partial<AdapterOptions> = {}, storage = {}): Promise<Running> {
  return startReportingAdapter({
    dir,
    options: {
      scenarios: [{ id: 'refund', tools: { allowed: ['get_order', 'issue_refund'] } }],
      decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
      sweepIntervalMs: 20,
      ...options,
    },
    storage,
    cleanup: (stop) => cleanup.push(stop),
  });
}

function reportIds(dir: string): string[] {
  const file = join(dir, 'reports.jsonl');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { traceId: string }).traceId);
}

const agentTrace = (n: number): JsonSpan[] => [agentRoot(n), toolSpan(n, 1, 'get_order', '{"orderId":"A1"}')];

describe('durable mode in the adapter', () => {
  it('gives back to a new adapter every trace answered 200 and not judged, and judges it once', async () => {
    const dir = temporaryDir('toolpath-durable-');
    const first = await start(dir);
    for (let n = 0; n < 5; n++) expect((await postSpans(first.url, agentTrace(n))).status).toBe(200);
    // Five judged and reported before the crash, three still buffered.
    first.adapter.judgeAllNow();
    for (let n = 5; n < 8; n++) expect((await postSpans(first.url, agentTrace(n))).status).toBe(200);
    await first.adapter.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await first.crash();

    const second = await start(dir, { decision: { waitMs: 1e9, waitAfterRootMs: 10 } });
    expect(second.adapter.stats().storage).toMatchObject({ replayedTraces: 3, cutSegments: 0 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await second.stop();
    const ids = reportIds(dir);
    expect(ids.sort()).toEqual(Array.from({ length: 8 }, (_, n) => traceIdOf(n)).sort());
  });

  it('takes a span resent after a crash once: the trace is judged with each span once', async () => {
    const dir = temporaryDir('toolpath-durable-');
    const first = await start(dir);
    expect((await postSpans(first.url, agentTrace(0))).status).toBe(200);
    await first.crash();
    const second = await start(dir);
    // The client did not hear the answer and sends the same request again.
    expect((await postSpans(second.url, agentTrace(0))).status).toBe(200);
    second.adapter.judgeAllNow();
    await second.stop();
    const lines = readFileSync(join(dir, 'reports.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect((JSON.parse(lines[0] as string) as { stats: { calls: number } }).stats.calls).toBe(1);
  });

  it('refuses requests with 429 at storage.maxBytes, and takes them again once judging frees the log', async () => {
    const dir = temporaryDir('toolpath-durable-');
    const running = await start(dir, {}, { maxBytes: 64 * 1024, segmentBytes: 8 * 1024 });
    let n = 0;
    let refused: Response | undefined;
    while (n < 1_000) {
      const response = await postSpans(running.url, agentTrace(n++));
      if (response.status !== 200) {
        refused = response;
        break;
      }
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('retry-after')).toBe('1');
    expect(await refused?.text()).toMatch(
      /storage full \(about 0 MiB in .*storage, storage\.maxBytes 65536\)/,
    );
    expect(running.adapter.stats().storage?.refusedFull).toBe(1);
    const accepted = n - 1;
    running.adapter.judgeAllNow();
    // Done traces free their segments once the marks are written.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(running.adapter.stats().storage?.bytes).toBeLessThan(16 * 1024);
    expect((await postSpans(running.url, agentTrace(n))).status).toBe(200);
    running.adapter.judgeAllNow();
    await running.stop();
    expect(reportIds(dir)).toHaveLength(accepted + 1);
  });

  it('compacts: a trace still waiting in the oldest segment is copied forward, the segment deleted, the trace kept', async () => {
    const dir = temporaryDir('toolpath-durable-');
    const storage = join(dir, 'storage');
    // Traces with a root are judged 10 ms after it; one without waits.
    const running = await start(
      dir,
      { decision: { waitMs: 1e9, waitAfterRootMs: 10 } },
      { maxBytes: 48 * 1024, segmentBytes: 4 * 1024 },
    );
    // A trace with no root: it waits while everything after it is judged.
    const waiting: JsonSpan = {
      ...toolSpan(9_999, 1, 'get_order', '{"orderId":"W"}'),
      parentSpanId: spanIdOf(0),
    };
    expect((await postSpans(running.url, [waiting])).status).toBe(200);
    const firstSegment = readdirSync(storage).sort()[0] as string;
    for (let n = 0; n < 400; n++) {
      const response = await postSpans(running.url, agentTrace(n));
      expect(response.status).toBe(200);
    }
    // The traces after it are judged 10 ms after their roots and their marks written: under load
    // that can take longer than any fixed pause, so wait (up to 5 s) until only the waiting trace
    // is held, then for the marks.
    for (let waited = 0; waited < 5_000 && running.adapter.stats().bufferedSpans !== 1; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stats = running.adapter.stats().storage;
    expect(stats?.compactions).toBeGreaterThan(0);
    expect(readdirSync(storage)).not.toContain(firstSegment);
    // Compaction runs as a request is admitted, so the last one admitted may pass the cap by its
    // own size (less than a segment here), no more.
    expect(stats?.bytes).toBeLessThan(48 * 1024 + 4 * 1024);
    await running.crash();
    // The waiting trace is still in the log, with its span.
    const again = await start(dir);
    expect(again.adapter.stats().storage?.replayedTraces).toBe(1);
    expect(again.adapter.stats().bufferedSpans).toBe(1);
    await again.stop();
    expect(reportIds(dir).filter((id) => id === traceIdOf(9_999))).toHaveLength(1);
  });

  it('cuts a log tail torn by a crash mid-write, counts it, and judges the traces before it', async () => {
    const dir = temporaryDir('toolpath-durable-');
    const storage = join(dir, 'storage');
    const first = await start(dir);
    for (let n = 0; n < 3; n++) expect((await postSpans(first.url, agentTrace(n))).status).toBe(200);
    await first.crash();
    // The last request's record only half written.
    const segment = join(
      storage,
      readdirSync(storage)
        .filter((name) => name.endsWith('.log'))
        .sort()
        .at(-1) as string,
    );
    const size = statSync(segment).size;
    truncateSync(segment, size - 200);
    const second = await start(dir);
    const stats = second.adapter.stats().storage;
    expect(stats).toMatchObject({ replayedTraces: 2, cutSegments: 1, cutBytes: expect.any(Number) });
    expect(stats?.cutBytes).toBeGreaterThan(0);
    second.adapter.judgeAllNow();
    await second.stop();
    expect(reportIds(dir).sort()).toEqual([traceIdOf(0), traceIdOf(1)]);
  });

  it('keeps the findings a next hop that is down did not take at shutdown, and sends them after the restart', async () => {
    const dir = temporaryDir('toolpath-durable-');
    // The next hop's port, closed for the first run.
    const probe = await startNextHop();
    const port = probe.port;
    await probe.close();
    const exporter = () =>
      new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces`, timeoutMillis: 2_000 });
    const first = await start(dir, { exporter: exporter() });
    for (let n = 0; n < 4; n++) expect((await postSpans(first.url, agentTrace(n))).status).toBe(200);
    await first.stop();
    const stats = first.adapter.stats();
    expect(stats.judgedTraces).toBe(4);
    expect(stats.storage?.keptForRestart).toBe(4);
    expect(first.adapter.losses.describe()).toBe('');

    const hop = await startNextHop(port);
    cleanup.push(() => hop.close());
    const second = await start(dir, { exporter: exporter(), decision: { waitMs: 1e9, waitAfterRootMs: 10 } });
    expect(second.adapter.stats().storage).toMatchObject({ replayedTraces: 4, replayedReported: 4 });
    await eventually(() => hop.spans.length === 4, 'the four evaluation spans at the next hop');
    await second.stop();
    expect(new Set(hop.spans.map((span) => span.traceId))).toEqual(
      new Set(Array.from({ length: 4 }, (_, n) => traceIdOf(n))),
    );
    // Judged again for their findings only: one report line each.
    expect(reportIds(dir)).toHaveLength(4);
    // And done now: a third start has nothing to give back.
    const third = await start(dir);
    expect(third.adapter.stats().storage?.replayedTraces).toBe(0);
    await third.stop();
  });

  it('skips just a damaged record in a closed segment and judges everything around it exactly once', async () => {
    const dir = temporaryDir('toolpath-durable-');
    const storage = join(dir, 'storage');
    const first = await start(
      dir,
      { decision: { waitMs: 1e9, waitAfterRootMs: 10 } },
      { segmentBytes: 4096 },
    );
    const sent: string[] = [];
    for (let n = 0; n < 60; n++) {
      expect((await postSpans(first.url, agentTrace(n))).status).toBe(200);
      sent.push(traceIdOf(n));
      if (n % 3 === 0) {
        // A trace with no root: it waits, not judged before the crash.
        const waiting = {
          ...toolSpan(1_000 + n, 1, 'get_order', '{"orderId":"W"}'),
          parentSpanId: spanIdOf(0),
        };
        expect((await postSpans(first.url, [waiting])).status).toBe(200);
        sent.push(traceIdOf(1_000 + n));
      }
    }
    for (let waited = 0; waited < 5_000 && first.adapter.stats().bufferedSpans !== 20; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await first.crash();

    const logs = readdirSync(storage)
      .filter((name) => name.endsWith('.log'))
      .sort()
      .map((name) => join(storage, name));
    expect(logs.length).toBeGreaterThan(3);
    // The traces whose spans a damaged request record held, if it was one.
    const damagedTraces = new Set<string>();
    const lose = (payload: Buffer) => {
      const record = readRecord(payload);
      if (record?.type === 1) for (const id of record.traceIds) damagedTraces.add(id);
    };
    // One byte flipped in the middle frame of a closed segment...
    const flipped = logs[1] as string;
    const flippedFrames = frames(flipped);
    const middle = flippedFrames[Math.floor(flippedFrames.length / 2)] as Frame;
    const data = readFileSync(flipped);
    lose(data.subarray(middle.offset + 8, middle.offset + middle.bytes));
    const at = middle.offset + 8 + Math.floor((middle.bytes - 8) / 2);
    data[at] = (data[at] as number) ^ 0x5a;
    writeFileSync(flipped, data);
    // ...and another cut mid-record: what follows the cut in it is gone.
    const cut = logs[2] as string;
    const cutFrames = frames(cut);
    const cutAt = cutFrames[Math.floor(cutFrames.length / 2)] as Frame;
    const cutData = readFileSync(cut);
    for (const frame of cutFrames.filter((f) => f.offset >= cutAt.offset))
      lose(cutData.subarray(frame.offset + 8, frame.offset + frame.bytes));
    truncateSync(cut, cutAt.offset + Math.floor(cutAt.bytes / 2));

    const second = await start(dir);
    expect(second.adapter.stats().storage).toMatchObject({ cutSegments: 1, skippedRecords: 1 });
    expect(second.adapter.stats().storage?.skippedBytes).toBe(middle.bytes);
    second.adapter.judgeAllNow();
    await second.stop();
    const lines = new Map<string, number>();
    for (const id of reportIds(dir)) lines.set(id, (lines.get(id) ?? 0) + 1);
    // None judged twice; every trace whose spans were not in a damaged record judged once.
    expect([...lines].filter(([, count]) => count > 1)).toEqual([]);
    expect(sent.filter((id) => !damagedTraces.has(id) && lines.get(id) !== 1)).toEqual([]);
    expect(damagedTraces.size).toBeLessThan(10);
  });
});

interface Frame {
  offset: number;
  bytes: number;
}

/** The frames of a segment, as written (header, then `[length][crc][payload]`). */
function frames(file: string): Frame[] {
  const data = readFileSync(file);
  const out: Frame[] = [];
  for (let at = 8; at + 8 <= data.length; ) {
    const length = data.readUInt32LE(at);
    out.push({ offset: at, bytes: 8 + length });
    at += 8 + length;
  }
  return out;
}
