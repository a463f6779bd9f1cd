/**
 * Connections an attacker holds open against `toolpath serve`: raw TCP sockets that send nothing,
 * HTTP requests whose headers dribble in, HTTP requests whose body stops, and HTTP/2 sessions
 * with no stream; and a real OTLP exporter's export, timed.
 */
import { connect as connectHttp2 } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

export interface Address {
  host: string;
  port: number;
}

/** `host:port` (or `http://host:port`) as an address. */
export function addressOf(text: string): Address {
  const [host, port] = text.replace('http://', '').split(':') as [string, string];
  return { host, port: Number(port) };
}

/** A raw TCP connection that reads what it is sent and never writes; resolves with it once connected. */
export async function rawSocket(address: Address): Promise<{ socket: Socket; closed: Promise<number> }> {
  const socket = connect(address.port, address.host);
  socket.on('error', () => {});
  socket.resume();
  await new Promise((resolve) => socket.once('connect', resolve));
  const opened = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  return { socket, closed };
}

/** Resolves with how long after opening the connection was closed, or rejects after `ms`. */
export function closedWithin(closed: Promise<number>, ms: number): Promise<number> {
  return Promise.race([
    closed,
    new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms)),
  ]);
}

/** The ways {@link Flood} holds a connection. */
export type AttackKind = 'idle' | 'dribbling_headers' | 'stalled_body' | 'http2_no_stream';

/** Connections held open by kind; {@link Flood.refill} reopens those the server closed. */
export class Flood {
  private readonly open = new Set<{ destroy(): void }>();
  private readonly wanted: { address: Address; kind: AttackKind; count: number; held: Set<unknown> }[] = [];
  private dribble: NodeJS.Timeout | undefined;
  private readonly dribblers = new Set<Socket>();
  private stopped = false;
  /** Connections the server closed. */
  closedByServer = 0;

  /** With `reconnect`, each connection the server closes is opened again at once (a churning attacker). */
  constructor(private readonly reconnect = false) {}

  private reopen(wanted: Flood['wanted'][number]): void {
    if (this.reconnect && !this.stopped) void this.fill(wanted);
  }

  /** Opens `count` connections of `kind` to `address`, resolving once all are connected. */
  async add(address: Address, kind: AttackKind, count: number): Promise<void> {
    const wanted = { address, kind, count, held: new Set<unknown>() };
    this.wanted.push(wanted);
    await this.fill(wanted);
  }

  /** Reopens the connections the server closed, resolving once all are connected. */
  async refill(): Promise<void> {
    await Promise.all(this.wanted.map((wanted) => this.fill(wanted)));
  }

  private async fill(wanted: Flood['wanted'][number]): Promise<void> {
    const opening: Promise<void>[] = [];
    for (let n = wanted.held.size; n < wanted.count; n++) opening.push(this.one(wanted));
    await Promise.all(opening);
  }

  /** Connections held now. */
  get held(): number {
    return this.open.size;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.dribble);
    for (const connection of this.open) connection.destroy();
    this.open.clear();
  }

  private async one(wanted: Flood['wanted'][number]): Promise<void> {
    const { address, kind } = wanted;
    if (this.stopped) return;
    if (kind === 'http2_no_stream') {
      const session = connectHttp2(`http://${address.host}:${address.port}`);
      session.on('error', () => {});
      const handle = { destroy: () => session.destroy() };
      this.open.add(handle);
      wanted.held.add(handle);
      session.once('close', () => {
        wanted.held.delete(handle);
        if (this.open.delete(handle)) this.closedByServer++;
        this.reopen(wanted);
      });
      await new Promise<void>((resolve) => {
        session.once('connect', () => resolve());
        session.once('close', () => resolve());
      });
      return;
    }
    const socket = connect(address.port, address.host);
    socket.on('error', () => {});
    socket.resume();
    this.open.add(socket);
    wanted.held.add(socket);
    socket.once('close', () => {
      wanted.held.delete(socket);
      this.dribblers.delete(socket);
      if (this.open.delete(socket)) this.closedByServer++;
      this.reopen(wanted);
    });
    await new Promise<void>((resolve) => {
      socket.once('connect', () => resolve());
      socket.once('close', () => resolve());
    });
    if (socket.destroyed) return;
    if (kind === 'dribbling_headers') {
      socket.write('POST /v1/traces HTTP/1.1\r\nHost: x\r\n');
      this.dribblers.add(socket);
      this.dribble ??= setInterval(() => {
        for (const dribbler of this.dribblers) dribbler.write('X-A: b\r\n');
      }, 300);
    } else if (kind === 'stalled_body') {
      socket.write(
        'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"resourceSpans":',
      );
    }
  }
}

/** One agent trace from the real SDK: an `invoke_agent` root. */
export function agentTrace(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const local = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const root = local.getTracer('flood-test').startSpan('invoke_agent support', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
  });
  root.end();
  return memory.getFinishedSpans().slice();
}

/** A real OTLP exporter, http/protobuf to `http://host:port` or gRPC to `host:port`. */
export function otlpExporter(protocol: 'http' | 'grpc', address: string): SpanExporter {
  const timeoutMillis = 10_000;
  return protocol === 'http'
    ? new ProtobufExporter({ url: `${address}/v1/traces`, timeoutMillis })
    : new GrpcExporter({ url: `http://${address}`, timeoutMillis });
}

/** Exports one trace with `exporter`; resolves with the result code (0 success) and how long it took. */
export async function timedExport(
  exporter: SpanExporter,
): Promise<{ code: number; ms: number; error?: string }> {
  const spans = agentTrace();
  const started = performance.now();
  const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
    exporter.export(spans, resolve),
  );
  const ms = performance.now() - started;
  return { code: result.code, ms, ...(result.error && { error: result.error.message }) };
}

/** {@link timedExport} with a new exporter, so on a new connection, shut down after. */
export async function timedNewExport(
  protocol: 'http' | 'grpc',
  address: string,
): Promise<{ code: number; ms: number; error?: string }> {
  const exporter = otlpExporter(protocol, address);
  const result = await timedExport(exporter);
  await exporter.shutdown().catch(() => undefined);
  return result;
}
