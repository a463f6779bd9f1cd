/**
 * What both OTLP receivers share, whatever the transport: their options, what a decoded request
 * comes to ({@link exportOutcome}), the google.rpc.Status that describes a failure, bearer
 * checks. The answers follow the OTLP specification (opentelemetry-proto docs/specification.md,
 * "OTLP/HTTP Response" and "OTLP/gRPC Response").
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { diag } from '@opentelemetry/api';
import protobuf from 'protobufjs';
import type { ConnectionLimit } from './connection-limit.js';
import type { RawRequest } from './durable-traces.js';
import type { IngestResult, TraceIngest } from './ingest.js';
import type { DecodeError, DecodeResult } from './otlp-json.js';
import type { PartialSuccess, ProtobufDecodeOptions } from './otlp-proto.js';

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
  /**
   * A connection with no request in flight for this long is closed, and so is one whose request
   * stops arriving for this long (default 60,000 ms): none is held open for ever.
   */
  idleTimeoutMs?: number;
  /** The cap on open connections, shared with the other receiver; none when absent. */
  connections?: ConnectionLimit;
}

/** {@link ReceiverOptions.idleTimeoutMs} when not given. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

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
  | { kind: 'accepted'; partial?: PartialSuccess; committed?: Promise<void> }
  | { kind: 'bad_data'; status: RpcStatus }
  | { kind: 'unavailable'; reason: 'full' | 'shutting_down'; status: RpcStatus }
  | { kind: 'failed'; status: RpcStatus };

const LISTED_ERRORS = 5;
const LISTED_VIOLATIONS = 20;
const MAX_MESSAGE = 1000;

/**
 * How a receiver decodes a request for `ingest`: on the long values it holds for the request's
 * traces, when it can say (the protobuf decoder then decodes a history continuing one from its
 * new bytes alone).
 */
export function decodeOptionsFor(ingest: TraceIngest): ProtobufDecodeOptions {
  return ingest.heldTexts === undefined ? {} : { heldTexts: (traceId) => ingest.heldTexts?.(traceId) };
}

/**
 * Decides a decoded request: unparsable (no spans, none counted as rejected, an error) is bad
 * data; otherwise the spans go to `ingest`, and rejected spans or skipped parts become
 * `partial_success`. A throwing ingest is reported (diag.error) and answered as an internal error.
 */
export function exportOutcome(ingest: TraceIngest, decoded: DecodeResult, raw?: RawRequest): ExportOutcome {
  if (decoded.spans.length === 0 && decoded.rejectedSpans === 0 && decoded.errors.length > 0) {
    const message = joinErrors(decoded.errors);
    const status = { code: RpcCode.INVALID_ARGUMENT, message, violations: decoded.errors };
    return { kind: 'bad_data', status };
  }
  let result: IngestResult;
  try {
    result = ingest.ingest(decoded, raw);
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
  const dropped = result.droppedSpans ?? 0;
  const committed = result.committed && { committed: result.committed };
  if (decoded.rejectedSpans === 0 && decoded.errors.length === 0 && dropped === 0)
    return { kind: 'accepted', ...committed };
  const total = decoded.rejectedSpans + decoded.spans.length;
  const parts: string[] = [];
  if (decoded.rejectedSpans > 0 || decoded.errors.length > 0) {
    const what =
      decoded.rejectedSpans > 0
        ? `${decoded.rejectedSpans} of ${total} spans rejected`
        : 'parts of the request skipped';
    parts.push(`${what}: ${joinErrors(decoded.errors)}`);
  }
  if (dropped > 0)
    parts.push(`${dropped} of ${total} spans not kept: ${result.dropReason ?? 'over a limit'}`);
  const partial = { rejectedSpans: decoded.rejectedSpans + dropped, errorMessage: cut(parts.join('; ')) };
  return { kind: 'accepted', partial, ...committed };
}

/**
 * The outcome once what durable mode wrote is on disk: the answer waits for it. A disk that
 * failed is a server that cannot keep its promise now: the client is told to retry (the spans
 * it already holds in memory are judged once, duplicates taken once).
 */
export async function acknowledged(outcome: ExportOutcome): Promise<ExportOutcome> {
  if (outcome.kind !== 'accepted' || outcome.committed === undefined) return outcome;
  try {
    await outcome.committed;
    return outcome;
  } catch (error) {
    const message = cut(`storage: could not write the span log: ${(error as Error).message}`);
    const status = { code: RpcCode.UNAVAILABLE, message, retryAfterSeconds: 5 };
    return { kind: 'unavailable', reason: 'shutting_down', status };
  }
}

/** The first errors as `path: message; ...`, bounded, so one bad request cannot flood a response or a log. */
function joinErrors(errors: readonly DecodeError[]): string {
  const listed = errors.slice(0, LISTED_ERRORS).map((e) => (e.path ? `${e.path}: ${e.message}` : e.message));
  if (errors.length > LISTED_ERRORS) listed.push(`${errors.length - LISTED_ERRORS} more`);
  return cut(listed.join('; '));
}

export function cut(text: string): string {
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

/** `host` as it goes in a URL (IPv6 in brackets). */
export function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
