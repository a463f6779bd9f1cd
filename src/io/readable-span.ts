/**
 * SDK ReadableSpan -> SpanRecord, for the in-process processor and for the adapter's own output spans. Uses only fields of the
 * ReadableSpan interface of `@opentelemetry/sdk-trace`, which is identical in its 2.x and 3.x lines (sdk-trace-base 2.x
 * re-exports it), so the same code serves both.
 */
import type { HrTime, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type {
  Attributes,
  AttributeValue,
  ScopeRecord,
  SpanEventRecord,
  SpanKindName,
  SpanLinkRecord,
  SpanRecord,
  StatusCodeName,
} from '../model/span-record.js';

/** API SpanKind (INTERNAL = 0 ... CONSUMER = 4) by number; OTLP numbers are these plus one. */
export const SPAN_KIND_NAMES: readonly SpanKindName[] = [
  'internal',
  'server',
  'client',
  'producer',
  'consumer',
];
/** API SpanStatusCode (UNSET = 0, OK = 1, ERROR = 2) by number, the same numbers as OTLP. */
const STATUS_CODE_NAMES: readonly StatusCodeName[] = ['unset', 'ok', 'error'];
const NANOS_PER_SECOND = 1_000_000_000n;

type SdkAttributes = ReadableSpan['attributes'];
type SdkResource = ReadableSpan['resource'];
type SdkScope = ReadableSpan['instrumentationScope'];

// Spans of one tracer share one scope object and one resource: convert each once, and let the
// SpanRecords share the result, as the OTLP decoder does.
const scopeCache = new WeakMap<SdkScope, ScopeRecord>();
const resourceCache = new WeakMap<SdkResource, Attributes>();

/** Converts an SDK span (ended or not) to a SpanRecord; an unended span has no end time. */
export function fromReadableSpan(span: ReadableSpan): SpanRecord {
  return toRecord(span, span.ended);
}

/** {@link fromReadableSpan} for a span in `onEnding`: its end time is set, though not yet marked ended. */
export function fromEndingSpan(span: ReadableSpan): SpanRecord {
  return toRecord(span, true);
}

function toRecord(span: ReadableSpan, ended: boolean): SpanRecord {
  const context = span.spanContext();
  const parentSpanId = span.parentSpanContext?.spanId;
  return {
    // The SDK accepts upper-case ids from propagators; SpanRecord ids are lowercase.
    traceId: lowercase(context.traceId),
    spanId: lowercase(context.spanId),
    parentSpanId: parentSpanId ? lowercase(parentSpanId) : undefined,
    name: textOf(span.name),
    kind: SPAN_KIND_NAMES[span.kind] ?? 'unspecified',
    startTimeUnixNano: hrTimeToNanos(span.startTime),
    endTimeUnixNano: ended ? hrTimeToNanos(span.endTime) : undefined,
    status: statusOf(span.status.code, span.status.message),
    attributes: toAttributes(span.attributes),
    events: span.events.map(toEventRecord),
    links: span.links.map(toLinkRecord),
    resource: resourceAttributes(span.resource),
    scope: scopeRecord(span.instrumentationScope),
  };
}

function toEventRecord(event: ReadableSpan['events'][number]): SpanEventRecord {
  return {
    name: textOf(event.name),
    timeUnixNano: hrTimeToNanos(event.time),
    attributes: toAttributes(event.attributes),
  };
}

function toLinkRecord(link: ReadableSpan['links'][number]): SpanLinkRecord {
  return {
    traceId: lowercase(link.context.traceId),
    spanId: lowercase(link.context.spanId),
    attributes: toAttributes(link.attributes),
  };
}

/**
 * A name as text. The SDK keeps whatever a JavaScript caller passed (`startSpan(undefined)`, an
 * event named by a number): absent reads as the empty string, as OTLP decodes a missing name, and
 * anything else as its text, so every reader downstream can treat names as strings.
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  return value == null ? '' : String(value);
}

/**
 * A hex id in lower case: the id itself when it has no upper-case letter (nearly always), where
 * `toLowerCase` would allocate a copy. Only ASCII letters are lowered: ids are hex.
 */
export function lowercase(id: string): string {
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i);
    if (code >= 65 && code <= 90) return id.toLowerCase();
  }
  return id;
}

/**
 * `[seconds, nanoseconds]` to exact nanoseconds. Truncates fractions as the OTLP serializer
 * does, so both readers give the same time for the same span.
 */
export function hrTimeToNanos(time: HrTime): bigint {
  // The SDK takes `span.end(NaN)` or an invalid Date: such a time reads as 0 (unknown), never a throw.
  const seconds = Number.isFinite(time[0]) ? Math.trunc(time[0]) : 0;
  const nanos = Number.isFinite(time[1]) ? Math.trunc(time[1]) : 0;
  return BigInt(seconds) * NANOS_PER_SECOND + BigInt(nanos);
}

export function statusOf(code: SpanStatusCode, message: string | undefined): SpanRecord['status'] {
  const name = STATUS_CODE_NAMES[code] ?? 'unset';
  // Proto3 cannot tell an empty message from none; drop it, as the OTLP decoder does.
  return message ? { code: name, message } : { code: name };
}

function scopeRecord(scope: SdkScope): ScopeRecord {
  let record = scopeCache.get(scope);
  if (!record) {
    record = { name: textOf(scope.name) };
    if (scope.version) record.version = scope.version;
    // 3.x scopes may carry attributes; 2.x ones do not. Read them without depending on the type.
    const attributes = (scope as { attributes?: SdkAttributes }).attributes;
    if (attributes && Object.keys(attributes).length > 0) record.attributes = toAttributes(attributes);
    scopeCache.set(scope, record);
  }
  return record;
}

function resourceAttributes(resource: SdkResource): Attributes {
  let attributes = resourceCache.get(resource);
  if (!attributes) {
    attributes = toAttributes(resource.attributes);
    // Attributes still being detected would change: do not remember them yet.
    if (!resource.asyncAttributesPending) resourceCache.set(resource, attributes);
  }
  return attributes;
}

/**
 * A copy of SDK attributes as plain AttributeValues: `undefined` (allowed in SDK arrays) becomes
 * null, as it does in OTLP. A copy, not the SDK's object, so nothing done to the span later shows through.
 */
function toAttributes(attributes: SdkAttributes | undefined): Attributes {
  const result: Attributes = {};
  if (!attributes) return result;
  for (const key of Object.keys(attributes)) setKey(result, key, toAttributeValue(attributes[key]));
  return result;
}

function toAttributeValue(value: unknown): AttributeValue {
  if (value === undefined || value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'object':
      if (value instanceof Uint8Array) return value;
      // Array.from, not map: a hole (`[1, , 3]`) reads as null, as `undefined` does, not as a hole.
      if (Array.isArray(value)) return Array.from(value, toAttributeValue);
      // Map-valued attributes (allowed by newer API versions): copied recursively.
      return toAttributes(value as SdkAttributes);
    default:
      // Functions, symbols and bigints do not pass the SDK's attribute checks; OTLP would carry them as empty.
      return null;
  }
}

/** `record["__proto__"] = v` would set the prototype instead of a key. */
export function setKey(record: Attributes, key: string, value: AttributeValue): void {
  if (key === '__proto__') {
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    record[key] = value;
  }
}
