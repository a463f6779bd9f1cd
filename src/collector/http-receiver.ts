import http from 'node:http';
import type { Socket } from 'node:net';
import zlib from 'node:zlib';
import { diag } from '@opentelemetry/api';
import type { AdmittedConnection } from './connection-limit.js';
import type { TraceIngest } from './ingest.js';
import { type DecodeResult, decodeOtlpJsonText } from './otlp-json.js';
import { decodeExportTraceProtobuf, encodeExportTraceResponse, type PartialSuccess } from './otlp-proto.js';
import {
  acknowledged,
  bearerMatches,
  cut,
  DEFAULT_IDLE_TIMEOUT_MS,
  decodeOptionsFor,
  encodeRpcStatus,
  exportOutcome,
  hostForUrl,
  type ReceiverOptions,
  RpcCode,
  type RpcStatus,
  type RunningReceiver,
  rpcStatusJson,
} from './receiver-common.js';

export type { ReceiverOptions, RunningReceiver } from './receiver-common.js';

type Format = 'json' | 'protobuf';
const CONTENT_TYPES: Record<Format, string> = {
  json: 'application/json',
  protobuf: 'application/x-protobuf',
};
const TRACES_PATH = '/v1/traces';
/** How long a close() waits for requests in flight before cutting connections. */
const CLOSE_GRACE_MS = 5000;

/**
 * Starts the OTLP/HTTP receiver: `POST /v1/traces`, `GET /healthz` (always 200), `GET /readyz`
 * (200 when `ingest.ready()`, else 503). Resolves once listening; rejects if it cannot bind.
 */
export function startHttpReceiver(options: ReceiverOptions): Promise<RunningReceiver> {
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  // Node checks the request and header timeouts at this interval (30 s by default).
  const connectionsCheckingInterval = Math.max(10, Math.min(30_000, Math.floor(idleMs / 4)));
  const server = http.createServer({ connectionsCheckingInterval }, (req, res) => {
    handle(req, res, options).catch((error: unknown) => {
      diag.error('toolpath: the OTLP/HTTP receiver failed on a request', error);
      if (!res.headersSent)
        sendStatus(res, 500, 'json', { code: RpcCode.INTERNAL, message: 'internal error' });
      else res.destroy();
    });
  });
  // A whole request (a 20 MiB body included) must arrive within the idle timeout, and a connection
  // that sends nothing for that long is closed; idle keep-alive connections outlive the SDK's 5 s
  // batch delay (at the default of a minute), so exporters reuse them between exports.
  server.requestTimeout = idleMs;
  server.headersTimeout = idleMs;
  server.keepAliveTimeout = idleMs;
  server.timeout = idleMs;
  const { connections } = options;
  if (connections) {
    const admitted = new WeakMap<Socket, AdmittedConnection>();
    server.on('connection', (socket: Socket) => {
      const connection = connections.admit(socket, 'http');
      if (connection) admitted.set(socket, connection);
    });
    // A connection is idle between requests (and while headers dribble in); one whose body is
    // still arriving is next to be closed for room; one waiting for its answer is not.
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const progress = admitted.get(req.socket)?.request();
      if (!progress) return;
      req.once('end', progress.received);
      res.once('close', progress.done);
    });
  }
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      server.on('error', (error) => diag.error('toolpath: OTLP/HTTP server error', error));
      const port = (server.address() as { port: number }).port;
      resolve({ url: `http://${hostForUrl(options.host)}:${port}`, port, close: () => closeServer(server) });
    });
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, options: ReceiverOptions) {
  const path = (req.url ?? '').split('?', 1)[0];
  const format = formatOf(req.headers['content-type']);
  const limit = options.maxRequestBytes;
  // Refusals answer in the request's encoding when it is one of ours, else in JSON.
  const refuse = (code: number, message: string, headers?: Record<string, string>) =>
    reject(req, res, limit, code, format ?? 'json', message, headers);
  if (path === '/healthz' || path === '/readyz') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(405, 'use GET', { Allow: 'GET, HEAD' });
    const ready = path === '/healthz' || options.ingest.ready();
    res.writeHead(ready ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' });
    return void res.end(ready ? 'ok\n' : 'not ready\n');
  }
  if (path !== TRACES_PATH) return refuse(404, `no such endpoint; send traces to POST ${TRACES_PATH}`);
  if (req.method !== 'POST') return refuse(405, `use POST on ${TRACES_PATH}`, { Allow: 'POST' });
  if (!bearerMatches(options.bearerToken, req.headers.authorization)) {
    return refuse(401, 'missing or wrong bearer token', { 'WWW-Authenticate': 'Bearer' });
  }
  if (format === undefined) {
    const type = JSON.stringify(req.headers['content-type'] ?? '');
    return refuse(415, `unsupported content type ${type}; use application/json or application/x-protobuf`);
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip') {
    return refuse(415, `unsupported content encoding ${JSON.stringify(encoding)}; use gzip or none`);
  }
  if (Number(req.headers['content-length'] ?? 0) > limit) return refuse(413, tooLarge(limit, 'declared'));

  const body = await readBody(req, encoding === 'gzip', limit);
  if (body.kind === 'aborted') return; // The client is gone: nothing to answer, nothing to ingest.
  if (body.kind !== 'ok') return refuse(body.kind === 'too_large' ? 413 : 400, body.message);

  const outcome = await acknowledged(
    exportOutcome(options.ingest, decode(body.bytes, format, options.ingest), {
      format,
      bytes: body.bytes,
    }),
  );
  switch (outcome.kind) {
    case 'accepted': {
      const { partial } = outcome;
      const json = partial === undefined ? {} : { partialSuccess: jsonPartial(partial) };
      const payload = format === 'protobuf' ? encodeExportTraceResponse(partial) : JSON.stringify(json);
      res.writeHead(200, { 'Content-Type': CONTENT_TYPES[format] });
      return void res.end(payload);
    }
    case 'bad_data':
      return sendStatus(res, 400, format, outcome.status);
    case 'unavailable': {
      const status = outcome.reason === 'full' ? 429 : 503;
      const code = outcome.reason === 'full' ? RpcCode.RESOURCE_EXHAUSTED : RpcCode.UNAVAILABLE;
      const retryAfter = String(outcome.status.retryAfterSeconds);
      return sendStatus(res, status, format, { ...outcome.status, code }, { 'Retry-After': retryAfter });
    }
    case 'failed':
      return sendStatus(res, 500, format, outcome.status);
  }
}

/** `application/json` or `application/x-protobuf`, parameters (charset) ignored; else undefined. */
function formatOf(contentType: string | undefined): Format | undefined {
  const type = (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase();
  if (type === CONTENT_TYPES.json) return 'json';
  if (type === CONTENT_TYPES.protobuf) return 'protobuf';
  return undefined;
}

function decode(bytes: Buffer, format: Format, ingest: TraceIngest): DecodeResult {
  if (format === 'protobuf') return decodeExportTraceProtobuf(bytes, decodeOptionsFor(ingest));
  try {
    return decodeOtlpJsonText(bytes.toString('utf8'));
  } catch (error) {
    const message = `invalid JSON: ${error instanceof Error ? error.message : String(error)}`;
    return { spans: [], errors: [{ path: '', message: cut(message) }], rejectedSpans: 0 };
  }
}

/** proto3 JSON of ExportTracePartialSuccess: int64 as a decimal string. */
function jsonPartial(partial: PartialSuccess): object {
  return { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage };
}

function tooLarge(limit: number, where: string): string {
  return `request body too large (${where}): the limit is ${limit} bytes`;
}

function sendStatus(
  res: http.ServerResponse,
  code: number,
  format: Format,
  status: RpcStatus,
  headers: Record<string, string> = {},
): void {
  const body = format === 'protobuf' ? encodeRpcStatus(status) : rpcStatusJson(status);
  res.writeHead(code, { ...headers, 'Content-Type': CONTENT_TYPES[format] });
  res.end(body);
}

/** How much of a refused body (in size limits) is read and dropped before the connection is cut. */
const DISCARD_LIMITS = 4;

const HTTP_TO_RPC: Record<number, number> = {
  401: RpcCode.UNAUTHENTICATED,
  404: RpcCode.NOT_FOUND,
  405: RpcCode.UNIMPLEMENTED,
  413: RpcCode.RESOURCE_EXHAUSTED,
  415: RpcCode.UNIMPLEMENTED,
};

/**
 * Answers a request refused before (or while) its body is read, then reads and drops what is
 * left of the body (nothing is kept), up to {@link DISCARD_LIMITS} times the size limit. Node's
 * client (and others) fail with EPIPE instead of reading the answer when the connection closes
 * while they are still sending, and an exporter retries that as a network error, whereas it
 * must not retry a 413. Past that budget the connection is cut rather than read for ever.
 */
function reject(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  limit: number,
  code: number,
  format: Format,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendStatus(res, code, format, { code: HTTP_TO_RPC[code] ?? RpcCode.INVALID_ARGUMENT, message }, headers);
  if (req.readableEnded) return;
  let left = DISCARD_LIMITS * limit;
  req.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) req.socket.destroy();
  });
  req.on('error', () => {}); // a reset while discarding is expected, not an error
  req.resume();
}

type Body =
  | { kind: 'ok'; bytes: Buffer }
  | { kind: 'too_large'; message: string }
  | { kind: 'bad'; message: string }
  | { kind: 'aborted' };

/**
 * Reads the body, counting bytes on the wire and (for gzip) after inflating as they stream, so
 * neither a large body nor a small gzip that inflates past the limit is ever held beyond it.
 */
function readBody(req: http.IncomingMessage, gzip: boolean, limit: number): Promise<Body> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let wire = 0;
    let settled = false;
    const inflate = gzip ? zlib.createGunzip() : undefined;

    const settle = (body: Body) => {
      if (settled) return;
      settled = true;
      req.off('data', onWire).off('end', onWireEnd).off('error', onAbort).off('close', onClose);
      if (inflate !== undefined) {
        inflate.removeAllListeners();
        inflate.on('error', () => {});
        inflate.destroy();
      }
      if (body.kind !== 'ok') chunks.length = 0;
      resolve(body);
    };
    const take = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) settle({ kind: 'too_large', message: tooLarge(limit, 'after decompression') });
      else chunks.push(chunk);
    };
    const onWire = (chunk: Buffer) => {
      wire += chunk.length;
      if (wire > limit) return settle({ kind: 'too_large', message: tooLarge(limit, 'on the wire') });
      if (inflate === undefined) return take(chunk);
      // Backpressure: inflate at the pace its output is counted.
      if (!inflate.write(chunk)) {
        req.pause();
        inflate.once('drain', () => settled || req.resume());
      }
    };
    const onWireEnd = () => {
      if (inflate !== undefined) inflate.end();
      else settle({ kind: 'ok', bytes: join(chunks, size) });
    };
    const onAbort = () => settle({ kind: 'aborted' });
    const onClose = () => req.complete || onAbort();

    req.on('data', onWire).on('end', onWireEnd).on('error', onAbort).on('close', onClose);
    inflate
      ?.on('data', take)
      .on('end', () => settle({ kind: 'ok', bytes: join(chunks, size) }))
      .on('error', (error) => settle({ kind: 'bad', message: `invalid gzip body: ${error.message}` }));
  });
}

function join(chunks: Buffer[], size: number): Buffer {
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
}
