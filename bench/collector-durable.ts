/**
 * Durable mode's cost, part of `bench:collector`: the same requests posted to a loopback OTLP/HTTP
 * receiver by concurrent clients (as a Collector's exporter sends with several consumers), to an
 * adapter without storage and to one with `storage` on the machine's temp folder, then judged;
 * the time from the first POST to every trace judged (and, durable, every mark on disk). Rounds
 * alternate the two in a rotating order, each on a fresh adapter (and a fresh folder); medians,
 * ranges, and the median of per-round (paired) ratios. The target: durable throughput at least
 * 0.67x of the other.
 *
 *   DURABLE_ROUNDS=9 DURABLE_CLIENTS=8 npx tsx bench/collector.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { TraceAdapter } from '../src/collector/adapter.js';
import { startHttpReceiver } from '../src/collector/http-receiver.js';
import type { TraceIngest } from '../src/collector/ingest.js';
import type { Scenario } from '../src/scenario/scenario.js';
import type { Request } from './collector.js';

const ROUNDS = Number(process.env.DURABLE_ROUNDS ?? 7);
const CLIENTS = Number(process.env.DURABLE_CLIENTS ?? 8);
/** Requests per round, each of about 1,000 spans with trace ids of its own. */
const REQUESTS = Number(process.env.DURABLE_REQUESTS ?? 32);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** One round: every request posted by CLIENTS clients at once, then everything judged; ms. */
async function round(requests: readonly Request[], scenario: Scenario, durable: boolean): Promise<number> {
  const dir = durable ? mkdtempSync(join(tmpdir(), 'toolpath-bench-durable-')) : undefined;
  const adapter = new TraceAdapter({
    scenarios: [scenario],
    decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
    sweepIntervalMs: 1e9,
    ...(dir && { storage: { directory: dir } }),
  });
  const ingest: TraceIngest = {
    ingest: (decoded, raw) => adapter.ingest(decoded, raw),
    ready: () => true,
    heldTexts: (traceId) => adapter.heldTexts(traceId),
  };
  const receiver = await startHttpReceiver({ host: '127.0.0.1', port: 0, ingest, maxRequestBytes: 64 << 20 });
  const url = `${receiver.url}/v1/traces`;
  try {
    const start = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let at = next++; at < requests.length; at = next++) {
          const response = await fetch(url, {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-protobuf' },
            body: (requests[at] as Request).protobuf,
          });
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
        }
      }),
    );
    adapter.judgeAllNow();
    // Durable: the judged traces' marks on disk too (shutdown commits them).
    await adapter.shutdown();
    const elapsed = performance.now() - start;
    const traces = requests.reduce((n, req) => n + req.traces, 0);
    if (adapter.stats().judgedTraces !== traces) throw new Error('not every trace judged');
    return elapsed;
  } finally {
    await receiver.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints durable mode's throughput against the adapter without storage, measured in the same run. */
export async function measureDurable(build: (seed: number) => Request, scenario: Scenario): Promise<void> {
  const requests = Array.from({ length: REQUESTS }, (_, n) => build(1_000 + n));
  const spans = requests.reduce((n, req) => n + req.spans, 0);
  console.log(
    `\ndurable mode, on against off: ${REQUESTS} protobuf requests (${spans.toLocaleString('en')} spans) posted over loopback HTTP by ${CLIENTS} clients, then judged; ${ROUNDS} rounds, log in ${tmpdir()}`,
  );
  const times = { off: [] as number[], on: [] as number[] };
  const paired: number[] = [];
  for (let i = -1; i < ROUNDS; i++) {
    // Alternate which goes first.
    const order = i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    const got: Record<string, number> = {};
    for (const mode of order) got[mode] = await round(requests, scenario, mode === 'on');
    if (i < 0) continue; // warm-up
    times.off.push(got.off as number);
    times.on.push(got.on as number);
    paired.push((got.off as number) / (got.on as number));
  }
  const rate = (ms: number) => Math.round(spans / (ms / 1000)).toLocaleString('en');
  for (const mode of ['off', 'on'] as const) {
    const list = times[mode];
    console.log(
      `  storage ${mode.padEnd(3)} ${median(list).toFixed(0).padStart(6)} ms (range ${Math.min(...list).toFixed(0)}-${Math.max(...list).toFixed(0)})  ${rate(median(list)).padStart(9)} spans/s`,
    );
  }
  const ratio = median(times.off) / median(times.on);
  const verdict = ratio >= 0.67 ? 'met' : 'NOT met';
  console.log(
    `  durable throughput at least 0.67x: ${ratio.toFixed(2)}x (${verdict}), paired ${median(paired).toFixed(2)}x (range ${Math.min(...paired).toFixed(2)}-${Math.max(...paired).toFixed(2)})`,
  );
}
