/**
 * OTLP/HTTP receiver (`POST /v1/traces`, JSON and protobuf, optionally gzip) on node:http, and
 * the transport-free part both receivers share: what a decoded request comes to
 * ({@link exportOutcome}) and the google.rpc.Status that describes a failure.
 *
 * Answers follow the OTLP specification (opentelemetry-proto docs/specification.md, "OTLP/HTTP
 * Response" and "OTLP/gRPC Response"): 200 with an ExportTraceServiceResponse (partial_success
 * for rejected spans), 400 bad data, 413 over the limit (counted after decompression), 415, 405,
 * 429 / 503 with Retry-After when the adapter cannot take the spans; every 4xx/5xx body is a
 * google.rpc.Status in the request's encoding.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';
import { diag } from '@opentelemetry/api';
import protobuf from 'protobufjs';
import type { IngestResult, TraceIngest } from './ingest.js';
import {
  type DecodeError,
  type DecodeResult,
  decodeExportTraceRequest,
  parseOtlpJsonText,
} from './otlp-json.js';
import { decodeExportTraceProtobuf, encodeExportTraceResponse, type PartialSuccess } from './otlp-proto.js';

/** Where a receiver listens and what it hands spans to. */
export interface ReceiverOptions {
  /** Interface to bind; 127.0.0.1 by default in the adapter, so nothing is exposed unasked. */
  host: string;
  /** 0 picks a free port (see the returned `port`). */
  port: number;
  ingest: TraceIngest;
  /** Largest request body accepted, on the wire and after decompression (OTLP recommends 20 MiB). */
  maxRequestBytes: number;
  /** When set, requests must carry `Authorization: Bearer <token>`. */
  bearerToken?: string;
}

/** A listening receiver. */
export interface RunningReceiver {
  /** Base URL (`http://host:port`); the traces endpoint is `${url}/v1/traces` for OTLP/HTTP. */
  url: string;
  port: number;
  /** Stops accepting, lets requests in flight finish (a few seconds at most), then closes. */
  close(): Promise<void>;
}

/** google.rpc.Code values the receivers use. */
export const RpcCode = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** A google.rpc.Status, with the two detail messages OTLP names: BadRequest and RetryInfo. */
export interface RpcStatus {
  code: number;
  message: string;
  /** Becomes a google.rpc.BadRequest detail (field = decode path), as OTLP "Bad Data" asks. */
  violations?: readonly DecodeError[];
  /** Becomes a google.rpc.RetryInfo detail, as OTLP "Throttling" asks. */
  retryAfterSeconds?: number;
}

/** What one export request comes to, whatever the transport. */
export type ExportOutcome =
  | { kind: 'accepted'; partial?: PartialSuccess }
  | { kind: 'bad_data'; status: RpcStatus }
  | { kind: 'unavailable'; reason: 'full' | 'shutting_down'; status: RpcStatus }
  | { kind: 'failed'; status: RpcStatus };

const LISTED_ERRORS = 5;
const LISTED_VIOLATIONS = 20;
const MAX_MESSAGE = 1000;

/**
 * Decides a decoded request: unparsable (no spans, none counted as rejected, an error) is bad
 * data; otherwise the spans go to `ingest`, and rejected spans or skipped parts become
 * `partial_success`. A throwing ingest is reported (diag.error) and answered as an internal error.
 */
export function exportOutcome(ingest: TraceIngest, decoded: DecodeResult): ExportOutcome {
  if (decoded.spans.length === 0 && decoded.rejectedSpans === 0 && decoded.errors.length > 0) {
    const message = joinErrors(decoded.errors);
    const status = { code: RpcCode.INVALID_ARGUMENT, message, violations: decoded.errors };
    return { kind: 'bad_data', status };
  }
  let result: IngestResult;
  try {
    result = ingest.ingest(decoded);
  } catch (error) {
    diag.error('toolpath: the receiver could not hand spans to the adapter', error);
    const status = { code: RpcCode.INTERNAL, message: 'internal error while taking the spans' };
    return { kind: 'failed', status };
  }
  if (result.kind === 'unavailable') {
    // OTLP/gRPC Throttling: UNAVAILABLE with RetryInfo (the HTTP side maps it to 429/503 + Retry-After).
    const retryAfterSeconds = wholeSeconds(result.retryAfterSeconds);
    const status = { code: RpcCode.UNAVAILABLE, message: result.message, retryAfterSeconds };
    return { kind: 'unavailable', reason: result.reason, status };
  }
  if (decoded.rejectedSpans === 0 && decoded.errors.length === 0) return { kind: 'accepted' };
  const what =
    decoded.rejectedSpans > 0
      ? `${decoded.rejectedSpans} of ${decoded.rejectedSpans + decoded.spans.length} spans rejected`
      : 'parts of the request skipped';
  const errorMessage = cut(`${what}: ${joinErrors(decoded.errors)}`);
  return { kind: 'accepted', partial: { rejectedSpans: decoded.rejectedSpans, errorMessage } };
}

/** The first errors as `path: message; ...`, bounded, so one bad request cannot flood a response or a log. */
function joinErrors(errors: readonly DecodeError[]): string {
  const listed = errors.slice(0, LISTED_ERRORS).map((e) => (e.path ? `${e.path}: ${e.message}` : e.message));
  if (errors.length > LISTED_ERRORS) listed.push(`${errors.length - LISTED_ERRORS} more`);
  return cut(listed.join('; '));
}

function cut(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}...` : text;
}

/** Retry-After takes whole seconds; at least 1, so a client never retries in a tight loop. */
function wholeSeconds(seconds: number): number {
  return Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : 1;
}

const TYPE_PREFIX = 'type.googleapis.com/google.rpc.';

/**
 * `status` as protobuf google.rpc.Status {code=1, message=2, details=3}, each detail an Any
 * {type_url=1, value=2} holding a BadRequest {field_violations=1: {field=1, description=2}} or a
 * RetryInfo {retry_delay=1: Duration {seconds=1}}.
 */
export function encodeRpcStatus(status: RpcStatus): Uint8Array {
  const details: Uint8Array[] = [];
  const violations = (status.violations ?? []).slice(0, LISTED_VIOLATIONS);
  if (violations.length > 0) {
    const badRequest = message(violations.map((v) => message(v.path, v.message)));
    details.push(message(`${TYPE_PREFIX}BadRequest`, badRequest));
  }
  if (status.retryAfterSeconds !== undefined) {
    details.push(message(`${TYPE_PREFIX}RetryInfo`, message(message(status.retryAfterSeconds))));
  }
  return message(status.code, status.message, details);
}

/**
 * A protobuf message whose fields 1, 2, ... hold `values` in order: numbers as varints (int32
 * or int64, never negative here), strings and bytes length-delimited, arrays as repeated fields.
 */
function message(...values: (number | string | Uint8Array | Uint8Array[])[]): Uint8Array {
  const w = protobuf.Writer.create();
  values.forEach((value, i) => {
    const field = (i + 1) << 3;
    if (typeof value === 'number') w.uint32(field).int64(value);
    else if (typeof value === 'string') w.uint32(field | 2).string(value);
    else if (Array.isArray(value)) for (const item of value) w.uint32(field | 2).bytes(item);
    else w.uint32(field | 2).bytes(value);
  });
  return w.finish();
}

/** `status` in proto3 JSON (the Any details with `@type`, the Duration as `"5s"`). */
export function rpcStatusJson(status: RpcStatus): string {
  const details: object[] = [];
  const violations = (status.violations ?? []).slice(0, LISTED_VIOLATIONS);
  if (violations.length > 0) {
    const fieldViolations = violations.map((v) => ({ field: v.path, description: v.message }));
    details.push({ '@type': `${TYPE_PREFIX}BadRequest`, fieldViolations });
  }
  if (status.retryAfterSeconds !== undefined) {
    details.push({ '@type': `${TYPE_PREFIX}RetryInfo`, retryDelay: `${status.retryAfterSeconds}s` });
  }
  const { code, message } = status;
  return JSON.stringify(details.length > 0 ? { code, message, details } : { code, message });
}

/** True when no token is configured, or `header` is `Bearer <token>` (compared in constant time). */
export function bearerMatches(token: string | undefined, header: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^bearer[ \t]+(.+)$/i.exec(header?.trim() ?? '');
  if (match === null) return false;
  // Hashing first gives equal lengths, so the comparison leaks neither the token nor its length.
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(match[1] as string), digest(token));
}

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
  const server = http.createServer((req, res) => {
    handle(req, res, options).catch((error: unknown) => {
      diag.error('toolpath: the OTLP/HTTP receiver failed on a request', error);
      if (!res.headersSent)
        sendStatus(res, 500, 'json', { code: RpcCode.INTERNAL, message: 'internal error' });
      else res.destroy();
    });
  });
  // A whole request (a 20 MiB body included) must arrive within a minute; idle keep-alive
  // connections outlive the SDK's 5 s batch delay, so exporters reuse them between exports.
  server.requestTimeout = 60_000;
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 60_000;
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

/** `host` as it goes in a URL (IPv6 in brackets). */
export function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
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

  const outcome = exportOutcome(options.ingest, decode(body.bytes, format));
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

function decode(bytes: Buffer, format: Format): DecodeResult {
  if (format === 'protobuf') return decodeExportTraceProtobuf(bytes);
  let parsed: unknown;
  try {
    parsed = parseOtlpJsonText(bytes.toString('utf8'));
  } catch (error) {
    const message = `invalid JSON: ${error instanceof Error ? error.message : String(error)}`;
    return { spans: [], errors: [{ path: '', message: cut(message) }], rejectedSpans: 0 };
  }
  return decodeExportTraceRequest(parsed);
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
