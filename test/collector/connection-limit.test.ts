/**
 * The connection cap's choice of what to close for a new connection, against a brute-force
 * model over random opens, requests and closes; its room under an open-file limit; and the
 * /proc readings it takes that limit from.
 */
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AdmittedConnection,
  ConnectionLimit,
  type ReceiverName,
  type RequestProgress,
} from '../../src/collector/connection-limit.js';
import { startGrpcReceiver } from '../../src/collector/grpc-receiver.js';
import { type RunningReceiver, startHttpReceiver } from '../../src/collector/http-receiver.js';
import type { TraceIngest } from '../../src/collector/ingest.js';
import { openFileCount, openFileLimit, parseOpenFileLimit } from '../../src/collector/open-files.js';
import { addressOf, closedWithin, otlpExporter, rawSocket, timedExport } from './connection-flood.js';

/** A connection as the cap sees one: `destroy()` closes it, and it says `close` a tick later, as a socket does. */
class Connection extends EventEmitter {
  destroyed = false;
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    process.nextTick(() => this.emit('close'));
  }
}

const noFiles = { limit: () => Number.POSITIVE_INFINITY, count: () => undefined };

type Op =
  | { kind: 'open'; receiver: ReceiverName }
  | { kind: 'start' | 'receive' | 'finish' | 'hang_up'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('open' as const), receiver: fc.constantFrom<ReceiverName>('http', 'grpc') }),
  fc.record({
    kind: fc.constantFrom('start' as const, 'receive' as const, 'finish' as const, 'hang_up' as const),
    pick: fc.nat(),
  }),
);

interface Modelled {
  connection: Connection;
  admitted: AdmittedConnection;
  receiver: ReceiverName;
  requests: { progress: RequestProgress; state: 'receiving' | 'working' }[];
  /** Order of entering its present phase. */
  entered: number;
}

describe('ConnectionLimit', () => {
  it('closes for a new connection the one a brute-force model picks, or refuses it when there is none', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.array(op, { maxLength: 120 }),
        async (max, ops) => {
          const limit = new ConnectionLimit(max, {}, noFiles);
          const open: Modelled[] = [];
          let moves = 0;
          const phase = (m: Modelled) =>
            m.requests.some((r) => r.state === 'working') ? 2 : m.requests.length > 0 ? 1 : 0;
          // Any request event moves a connection to the back of its phase, as its last sign of life.
          const move = (m: Modelled, change: () => void) => {
            change();
            m.entered = moves++;
          };
          for (const step of ops) {
            if (step.kind === 'open') {
              // The model: at the cap, the connection not waiting for an answer that entered its
              // phase first, idle before receiving, on the new one's port or on one holding more
              // than its share.
              const share = Math.max(1, Math.floor(max * 0.1));
              const count = (r: ReceiverName) => open.filter((m) => m.receiver === r).length;
              const candidates = open.filter(
                (m) => phase(m) < 2 && (m.receiver === step.receiver || count(m.receiver) > share),
              );
              candidates.sort((a, b) => phase(a) - phase(b) || a.entered - b.entered);
              const expected = open.length >= max ? candidates[0] : undefined;
              const connection = new Connection();
              const admitted = limit.admit(connection as unknown as Socket, step.receiver);
              if (open.length >= max && expected === undefined) {
                expect(admitted).toBeUndefined();
                expect(connection.destroyed).toBe(true);
                continue;
              }
              expect(admitted).toBeDefined();
              const closed = open.filter((m) => m.connection.destroyed);
              expect(closed).toEqual(expected ? [expected] : []);
              if (expected) open.splice(open.indexOf(expected), 1);
              open.push({
                connection,
                admitted: admitted as AdmittedConnection,
                receiver: step.receiver,
                requests: [],
                entered: moves++,
              });
            } else if (open.length > 0) {
              const m = open[step.pick % open.length] as Modelled;
              if (step.kind === 'start') {
                move(m, () => m.requests.push({ progress: m.admitted.request(), state: 'receiving' }));
              } else if (step.kind === 'hang_up') {
                open.splice(open.indexOf(m), 1);
                m.connection.destroy();
                await new Promise((resolve) => process.nextTick(resolve));
              } else if (m.requests.length > 0) {
                const request = m.requests[step.pick % m.requests.length] as Modelled['requests'][number];
                if (step.kind === 'receive' && request.state === 'receiving')
                  move(m, () => {
                    request.progress.received();
                    request.state = 'working';
                  });
                else if (step.kind === 'finish')
                  move(m, () => {
                    request.progress.done();
                    m.requests.splice(m.requests.indexOf(request), 1);
                  });
              }
            }
            expect(limit.open).toBe(open.length);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves the files open besides its connections, and a margin, under the open-file limit', () => {
    let others = 40;
    // 256 files, 40 open besides, 32 kept free.
    expect(new ConnectionLimit(1000, {}, { limit: () => 256, count: () => others }).capacity).toBe(184);
    expect(new ConnectionLimit(10_000, {}, { limit: () => 4096, count: () => others }).capacity).toBe(
      4096 - 40 - 204,
    );
    expect(new ConnectionLimit(100, {}, { limit: () => 256, count: () => 40 }).capacity).toBe(100);
    others = 1000;
    expect(new ConnectionLimit(1000, {}, { limit: () => 256, count: () => others }).capacity).toBe(2);
    expect(new ConnectionLimit(1000, {}, noFiles).capacity).toBe(1000);
  });

  it('counts and closes for room with a throwing meter, on real sockets', async () => {
    const accepted: Socket[] = [];
    const limit = new ConnectionLimit(
      3,
      {
        onEvicted: () => {
          throw new Error('broken meter');
        },
      },
      noFiles,
    );
    const server = createServer((socket) => {
      accepted.push(socket);
      limit.admit(socket, 'http');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const clients: Socket[] = [];
    const closed: number[] = [];
    for (let n = 0; n < 5; n++) {
      const client = connect(port, '127.0.0.1');
      client.on('error', () => {});
      client.once('close', () => closed.push(n));
      clients.push(client);
      await new Promise((resolve) => client.once('connect', resolve));
      while (accepted.length <= n) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    while (closed.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closed).toEqual([0, 1]);
    expect(limit.open).toBe(3);
    expect(limit.evicted).toBe(2);
    for (const client of clients) client.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
});

describe('ConnectionLimit with the receivers', () => {
  it('never closes a connection whose request waits for its answer, and closes it for room once answered', async () => {
    let commit = () => {};
    const committed = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const ingest: TraceIngest = { ingest: () => ({ kind: 'accepted', committed }), ready: () => true };
    const limit = new ConnectionLimit(2, {}, noFiles);
    const options = { host: '127.0.0.1', port: 0, ingest, maxRequestBytes: 1 << 20, connections: limit };
    const receivers = [await startHttpReceiver(options), await startGrpcReceiver(options)];
    const [httpReceiver, grpcReceiver] = receivers as [RunningReceiver, RunningReceiver];
    const exporters = [
      otlpExporter('http', httpReceiver.url),
      otlpExporter('grpc', `127.0.0.1:${grpcReceiver.port}`),
    ];
    try {
      // Both exports wait for the commit: the cap is full of connections waiting for answers.
      const exports = exporters.map((exporter) => timedExport(exporter));
      while (limit.open < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const address of [httpReceiver.url, `127.0.0.1:${grpcReceiver.port}`]) {
        const refused = await rawSocket(addressOf(address));
        await closedWithin(refused.closed, 5_000);
      }
      expect([limit.refused, limit.evicted]).toEqual([2, 0]);
      commit();
      for (const result of await Promise.all(exports)) expect(result.code).toBe(0);
      // Answered, they are idle: a new connection closes the one on its own port for room.
      const extra = await rawSocket(addressOf(httpReceiver.url));
      while (limit.evicted === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      expect([limit.refused, limit.evicted, limit.open]).toEqual([2, 1, 2]);
      extra.socket.destroy();
      // The HTTP exporter's connection was closed; it exports again on a new one.
      expect((await timedExport(exporters[0] as SpanExporter)).code).toBe(0);
    } finally {
      for (const exporter of exporters) await exporter.shutdown().catch(() => undefined);
      for (const receiver of receivers) await receiver.close();
    }
  }, 30_000);
});

describe('open files from /proc', () => {
  it('reads the soft limit, unlimited, and nothing readable', () => {
    const text = [
      'Limit                     Soft Limit           Hard Limit           Units',
      'Max processes             63437                63437                processes',
      'Max open files            1024                 1048576              files',
    ].join('\n');
    expect(parseOpenFileLimit(text)).toBe(1024);
    expect(parseOpenFileLimit(text.replace('1024 ', 'unlimited'))).toBe(Number.POSITIVE_INFINITY);
    expect(parseOpenFileLimit('garbage')).toBe(Number.POSITIVE_INFINITY);
    expect(openFileLimit('/nonexistent/limits')).toBe(Number.POSITIVE_INFINITY);
    expect(openFileCount('/nonexistent/fd')).toBeUndefined();
  });

  const procNote = existsSync('/proc/self/limits') ? '' : ' (skipped: no /proc/self/limits here)';
  it.skipIf(procNote !== '')(`matches this process${procNote}`, async () => {
    const soft = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]);
    expect(openFileLimit()).toBe(soft);
    const before = openFileCount() as number;
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    expect(openFileCount()).toBe(before + 1);
    await new Promise((resolve) => server.close(resolve));
  });
});
