/**
 * `toolpath serve` as a real process holds no connection for ever: on both ports, a connection
 * that sends nothing (a raw TCP socket, no HTTP request, no HTTP/2 preface) and one whose request
 * stops or trickles are closed after `receivers.idleTimeout`; past `limits.maxConnections`, a new
 * connection closes the longest-idle one (counted), so idle sockets can neither use up the
 * process's file descriptors (issue 24) nor lock out the next real client (issue 41; floods in
 * serve-floods.test.ts).
 */
import { connect as connectHttp2 } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRoot, grpcExport, postSpans, type ServeProcess, startServe } from '../helpers/serve-process.js';

const IDLE_MS = 3_000;
const MAX_CONNECTIONS = 10;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await startServe(
    `receivers:
  otlp:
    http: { endpoint: "127.0.0.1:0" }
    grpc: { endpoint: "127.0.0.1:0" }
  idleTimeout: ${IDLE_MS}ms
limits: { maxConnections: ${MAX_CONNECTIONS} }
`,
  );
}, 60_000);
afterAll(() => serve?.stop());

const hostPort = (address: string) => {
  const [host, port] = address.split(':') as [string, string];
  return { host, port: Number(port) };
};
const httpAddress = () => hostPort(serve.httpUrl.replace('http://', ''));
const grpcAddress = () => hostPort(serve.grpcAddress);

/** A raw TCP connection that reads what it is sent and never writes; resolves with it once connected. */
async function rawSocket(address: {
  host: string;
  port: number;
}): Promise<{ socket: Socket; closed: Promise<number> }> {
  const socket = connect(address.port, address.host);
  socket.on('error', () => {});
  socket.resume();
  await new Promise((resolve) => socket.once('connect', resolve));
  const opened = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  return { socket, closed };
}

/** Resolves with how long after opening the connection was closed, or rejects after `ms`. */
function closedWithin(closed: Promise<number>, ms: number): Promise<number> {
  return Promise.race([
    closed,
    new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms)),
  ]);
}

describe('toolpath serve connections', () => {
  it('closes connections that send nothing, on both ports, after receivers.idleTimeout', async () => {
    const sockets = await Promise.all([
      ...Array.from({ length: 4 }, () => rawSocket(grpcAddress())),
      ...Array.from({ length: 4 }, () => rawSocket(httpAddress())),
    ]);
    const after = await Promise.all(sockets.map(({ closed }) => closedWithin(closed, IDLE_MS * 3)));
    for (const ms of after) expect(ms).toBeGreaterThanOrEqual(IDLE_MS - 500);
  }, 30_000);

  it('closes a connection whose request stops or trickles, on both ports', async () => {
    // gRPC: the call's headers and the start of a message, then a byte now and then.
    const session = connectHttp2(`http://${serve.grpcAddress}`);
    session.on('error', () => {});
    const opened = Date.now();
    const grpcClosed = new Promise<number>((resolve) =>
      session.once('close', () => resolve(Date.now() - opened)),
    );
    const call = session.request({
      ':method': 'POST',
      ':path': '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    call.on('error', () => {});
    call.resume();
    call.write(Buffer.from([0, 0, 0, 1, 0]));
    // HTTP: headers promising a body that comes a byte now and then.
    const { socket, closed: httpClosed } = await rawSocket(httpAddress());
    socket.write(
      'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
    );
    const trickle = setInterval(() => {
      if (!call.destroyed) call.write(Buffer.from([0]));
      if (!socket.destroyed) socket.write(' ');
    }, 300);
    try {
      const [grpcMs, httpMs] = await Promise.all([
        closedWithin(grpcClosed, IDLE_MS * 3),
        closedWithin(httpClosed, IDLE_MS * 3),
      ]);
      expect(grpcMs).toBeGreaterThanOrEqual(IDLE_MS - 500);
      expect(httpMs).toBeGreaterThanOrEqual(IDLE_MS - 500);
    } finally {
      clearInterval(trickle);
      session.destroy();
    }
  }, 30_000);

  it('past limits.maxConnections closes the longest-idle connection for a new one, on either port, and counts it', async () => {
    // Opened one after another, so the server takes them in this order: held[0] is the longest idle.
    const held: Awaited<ReturnType<typeof rawSocket>>[] = [];
    for (let n = 0; n < MAX_CONNECTIONS; n++) {
      held.push(await rawSocket(n % 2 === 0 ? grpcAddress() : httpAddress()));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const extras = [await rawSocket(grpcAddress()), await rawSocket(httpAddress())];
    // Each new one closed the oldest held, whatever its port; the newer held ones stay open.
    for (const { closed } of held.slice(0, 2))
      expect(await closedWithin(closed, IDLE_MS / 2)).toBeLessThan(IDLE_MS);
    const stillOpen = [...held.slice(2), ...extras].filter(({ socket }) => !socket.destroyed);
    expect(stillOpen).toHaveLength(MAX_CONNECTIONS);
    // A real client is served at once, the cap still full of idle connections.
    expect((await postSpans(serve.httpUrl, [agentRoot(2)])).status).toBe(200);
    expect(await grpcExport(serve.grpcAddress)).toBeNull();
    for (const { socket } of [...held, ...extras]) socket.destroy();
    expect(await serve.stop()).toBe(0);
    // The two extra sockets and the two clients each closed one; none was refused.
    const closed = /; closed (\d+) connections, longest idle first, to make room/.exec(serve.stdout());
    expect(Number(closed?.[1])).toBeGreaterThanOrEqual(4);
    expect(serve.stdout()).not.toMatch(/refused \d+ connections/);
  }, 60_000);
});
