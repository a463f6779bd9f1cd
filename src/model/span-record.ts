/**
 * One small internal shape for a span, whatever its source (SDK ReadableSpan, OTLP JSON,
 * OTLP protobuf, stored files). Everything downstream of the readers sees only this.
 */

/**
 * An attribute value as a plain value. 64-bit integers that do not fit a JS number exactly are
 * kept as their decimal string, so nothing is lost; bytes stay bytes.
 */
export type AttributeValue =
  | string
  | number
  | boolean
  | null
  | Uint8Array
  | AttributeValue[]
  | { [key: string]: AttributeValue };

/** Attributes keyed by their dotted name. */
export type Attributes = Record<string, AttributeValue>;

/** OTLP span kinds, by name. */
export type SpanKindName = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';

/** OTLP status codes, by name. */
export type StatusCodeName = 'unset' | 'ok' | 'error';

/** A span event (exceptions, GenAI content events, ...). */
export interface SpanEventRecord {
  name: string;
  timeUnixNano: bigint;
  attributes: Attributes;
}

/** A link to a span of this or another trace. */
export interface SpanLinkRecord {
  traceId: string;
  spanId: string;
  attributes: Attributes;
  /** The linked context's W3C tracestate, when it had one. */
  traceState?: string;
}

/** The instrumentation scope that produced a span. */
export interface ScopeRecord {
  name: string;
  version?: string;
  attributes?: Attributes;
}

/** One span, normalized from any source. Ids are lowercase hex; times are exact nanoseconds. */
export interface SpanRecord {
  /** 32 lowercase hex characters. */
  traceId: string;
  /** 16 lowercase hex characters. */
  spanId: string;
  /** 16 lowercase hex characters; absent for a root span. */
  parentSpanId?: string;
  name: string;
  kind: SpanKindName;
  startTimeUnixNano: bigint;
  /** Absent when the span never ended (still open when captured). */
  endTimeUnixNano?: bigint;
  status: { code: StatusCodeName; message?: string };
  attributes: Attributes;
  events: SpanEventRecord[];
  links: SpanLinkRecord[];
  resource: Attributes;
  scope: ScopeRecord;
  /** The span context's W3C tracestate, when it had one: kept so forwarded spans carry it on. */
  traceState?: string;
  /** What the producer dropped over its limits, when it dropped anything: forwarded as received. */
  dropped?: DroppedCounts;
}

/** Counts of what a producer dropped from a span over its limits. */
export interface DroppedCounts {
  attributes: number;
  events: number;
  links: number;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ALL_ZERO = /^0+$/;

/** A valid trace id: 32 lowercase hex characters, not all zero (the OTel "invalid" id). */
export function isTraceId(value: string): boolean {
  return TRACE_ID.test(value) && !ALL_ZERO.test(value);
}

/** A valid span id: 16 lowercase hex characters, not all zero. */
export function isSpanId(value: string): boolean {
  return SPAN_ID.test(value) && !ALL_ZERO.test(value);
}

/** Span duration in milliseconds, or undefined while the span is open. */
export function durationMs(
  span: Pick<SpanRecord, 'startTimeUnixNano' | 'endTimeUnixNano'>,
): number | undefined {
  if (span.endTimeUnixNano === undefined) return undefined;
  return Number(span.endTimeUnixNano - span.startTimeUnixNano) / 1e6;
}
