/**
 * `toolpath serve` as a real process under a flood of idle and slow connections: past
 * `limits.maxConnections`, and past the process's open-file limit (set with `prlimit`), a real
 * OTLP exporter, HTTP and gRPC, on a new connection, still gets its 200 / OK within a second,
 * while the attacker holds (and reopens) its connections; the connections closed to make room are
 * the longest idle, and counted (issue 41).
 */
import { execFileSync } from 'node:child_process';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { type ServeProcess, startServe } from '../helpers/serve-process.js';
import { addressOf, Flood, otlpExporter, timedExport, timedNewExport } from './connection-flood.js';

/** The promise: an export on a new connection answered within this, flood or not. */
const PROMISE_MS = 1_000;
const ROUNDS = 3;
/**
 * The flood's size: a fifth of the attack of issue 41 by default (a shared 2-core machine);
 * `FLOOD_SIZE=issue` runs it whole (600 idle, 150 dribbling, 150 stalled HTTP, 100 idle gRPC
 * against `maxConnections` 1,000; 1,100 idle on each port under an open-file limit of 1,024).
 */
const WHOLE = process.env.FLOOD_SIZE === 'issue';
const SIZE = WHOLE
  ? {
      cap: 1000,
      idle: 600,
      dribbling: 150,
      stalled: 150,
      grpcIdle: 90,
      http2: 10,
      files: 1024,
      perPort: 1100,
    }
  : { cap: 200, idle: 110, dribbling: 30, stalled: 30, grpcIdle: 40, http2: 10, files: 256, perPort: 300 };

const hasPrlimit = (() => {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return process.platform === 'linux';
  } catch {
    return false;
  }
})();

let serve: ServeProcess | undefined;
let flood: Flood | undefined;
afterEach(async () => {
  flood?.stop();
  for (const exporter of Object.values(earlier)) await exporter.shutdown().catch(() => undefined);
  await serve?.stop();
  serve = undefined;
  flood = undefined;
});

const config = (maxConnections?: number, metricsPort?: number) => `receivers:
  otlp:
    http: { endpoint: "127.0.0.1:0" }
    grpc: { endpoint: "127.0.0.1:0" }
  idleTimeout: 5m
${maxConnections === undefined ? '' : `limits: { maxConnections: ${maxConnections} }\n`}${
  metricsPort === undefined ? '' : `metrics: { prometheus: { endpoint: "127.0.0.1:${metricsPort}" } }\n`
}`;

/**
 * Exports over both protocols `ROUNDS` times, the flood refilled before each: with a new exporter
 * (a new connection), and with one made before the flood (its connection may have been closed
 * for room meanwhile). Resolves with how long each took.
 */
async function exportsDuringFlood(running: ServeProcess, attack: Flood): Promise<number[]> {
  const address = (protocol: 'http' | 'grpc') =>
    protocol === 'http' ? running.httpUrl : running.grpcAddress;
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await attack.refill();
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const protocol of ['http', 'grpc'] as const) {
      const fresh = await timedNewExport(protocol, address(protocol));
      expect(fresh, `new ${protocol} exporter, round ${round}`).toMatchObject({ code: 0 });
      const kept = await timedExport(earlier[protocol] as SpanExporter);
      expect(kept, `${protocol} exporter made before the flood, round ${round}`).toMatchObject({ code: 0 });
      times.push(Math.round(fresh.ms), Math.round(kept.ms));
    }
  }
  return times;
}

/** Exporters made, and used once, before the flood. */
const earlier: Partial<Record<'http' | 'grpc', SpanExporter>> = {};
async function exportBeforeFlood(running: ServeProcess): Promise<void> {
  earlier.http = otlpExporter('http', running.httpUrl);
  earlier.grpc = otlpExporter('grpc', running.grpcAddress);
  expect((await timedExport(earlier.http)).code).toBe(0);
  expect((await timedExport(earlier.grpc)).code).toBe(0);
}

/** What the stop line says was closed to make room. */
function closedToMakeRoom(stdout: string): number {
  return Number(/closed (\d+) connections, longest idle first, to make room/.exec(stdout)?.[1] ?? 0);
}

describe('toolpath serve under a connection flood', () => {
  it(`answers real exporters within ${PROMISE_MS} ms past limits.maxConnections (idle, dribbling, stalled)`, async () => {
    const metricsPort = await freePort();
    serve = await startServe(config(SIZE.cap, metricsPort), {}, { bundled: true });
    const http = addressOf(serve.httpUrl);
    const grpc = addressOf(serve.grpcAddress);
    await exportBeforeFlood(serve);
    flood = new Flood();
    await flood.add(http, 'idle', SIZE.idle);
    await flood.add(http, 'dribbling_headers', SIZE.dribbling);
    await flood.add(http, 'stalled_body', SIZE.stalled);
    await flood.add(grpc, 'idle', SIZE.grpcIdle);
    await flood.add(grpc, 'http2_no_stream', SIZE.http2);
    const times = await exportsDuringFlood(serve, flood);
    console.info(`export times under a flood past maxConnections (ms): ${times.join(', ')}`);
    for (const ms of times) expect(ms).toBeLessThan(PROMISE_MS);
    // Counted by port and by what the connection closed was doing.
    const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const evicted = (receiver: string, state: string) =>
      scraped
        .split('\n')
        .filter((line) => line.startsWith('toolpath_connections_evicted_total{'))
        .filter((line) => line.includes(`toolpath_receiver="${receiver}"`))
        .filter((line) => line.includes(`toolpath_connection_state="${state}"`))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    expect(evicted('http', 'idle'), scraped).toBeGreaterThan(0);
    expect(evicted('grpc', 'idle'), scraped).toBeGreaterThan(0);
    flood.stop();
    expect(await serve.stop()).toBe(0);
    // At or over the cap, refilled: each exporter's connection made room, and so did what was over.
    const over = SIZE.idle + SIZE.dribbling + SIZE.stalled + SIZE.grpcIdle + SIZE.http2 - SIZE.cap;
    expect(closedToMakeRoom(serve.stdout())).toBeGreaterThanOrEqual(over + 2 * ROUNDS);
  }, 120_000);

  it(`answers real exporters within ${PROMISE_MS} ms while the attacker reopens each connection closed`, async () => {
    serve = await startServe(config(200), {}, { bundled: true });
    await exportBeforeFlood(serve);
    flood = new Flood(true);
    await flood.add(addressOf(serve.httpUrl), 'idle', 150);
    await flood.add(addressOf(serve.httpUrl), 'dribbling_headers', 50);
    await flood.add(addressOf(serve.grpcAddress), 'idle', 50);
    const times = await exportsDuringFlood(serve, flood);
    console.info(
      `export times under a churning flood (ms): ${times.join(', ')}; ${flood.closedByServer} closed`,
    );
    for (const ms of times) expect(ms).toBeLessThan(PROMISE_MS);
    flood.stop();
    expect(await serve.stop()).toBe(0);
    expect(closedToMakeRoom(serve.stdout())).toBeGreaterThanOrEqual(50);
  }, 120_000);

  it.skipIf(!hasPrlimit)(
    `answers real exporters within ${PROMISE_MS} ms with more idle connections than open files (prlimit)${
      hasPrlimit ? '' : ' (skipped: util-linux prlimit is not installed here)'
    }`,
    async () => {
      // maxConnections at its default (1,000), over the open-file limit: the limit is what binds.
      serve = await startServe(config(), {}, { bundled: true, openFiles: SIZE.files });
      expect(serve.stdout()).toContain(`open-file limit ${SIZE.files}`);
      await exportBeforeFlood(serve);
      flood = new Flood();
      await flood.add(addressOf(serve.httpUrl), 'idle', SIZE.perPort);
      await flood.add(addressOf(serve.grpcAddress), 'idle', SIZE.perPort);
      const times = await exportsDuringFlood(serve, flood);
      console.info(`export times under a flood past the open-file limit (ms): ${times.join(', ')}`);
      for (const ms of times) expect(ms).toBeLessThan(PROMISE_MS);
      flood.stop();
      expect(await serve.stop()).toBe(0);
      expect(closedToMakeRoom(serve.stdout())).toBeGreaterThanOrEqual(2 * SIZE.perPort - SIZE.files);
    },
    120_000,
  );
});
