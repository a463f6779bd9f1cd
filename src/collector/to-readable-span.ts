/**
 * SpanRecord -> SDK ReadableSpan, so the adapter can hand received spans (and its evaluation
 * spans, which take the evaluated span's resource) to the OTel exporters. The reverse of
 * `fromReadableSpan`; attribute values pass as they are (the OTLP serializer writes nested
 * objects as kvlists, bytes as bytes).
 */
import {
  type Attributes,
  createTraceState,
  type HrTime,
  type SpanContext,
  type SpanKind,
  type SpanStatusCode,
  TraceFlags,
  type TraceState,
} from '@opentelemetry/api';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type {
  Attributes as RecordAttributes,
  SpanKindName,
  SpanRecord,
  StatusCodeName,
} from '../model/span-record.js';

/** API SpanKind numbers by name (OTLP `unspecified` has no API kind: internal). */
const KINDS: Record<SpanKindName, SpanKind> = {
  unspecified: 0,
  internal: 0,
  server: 1,
  client: 2,
  producer: 3,
  consumer: 4,
};
const STATUS: Record<StatusCodeName, SpanStatusCode> = { unset: 0, ok: 1, error: 2 };
const NANOS_PER_SECOND = 1_000_000_000n;

// Spans of one ResourceSpans share one attributes object (the decoders see to it): one Resource each.
const resources = new WeakMap<RecordAttributes, Resource>();

/** The Resource of a record's resource attributes, shared by every span of that resource. */
export function resourceOf(record: SpanRecord): Resource {
  let resource = resources.get(record.resource);
  if (!resource) {
    resource = resourceFromAttributes(record.resource as Attributes);
    resources.set(record.resource, resource);
  }
  return resource;
}

/** A finished ReadableSpan carrying everything the record holds, plus `extraAttributes` if given. */
export function toReadableSpan(record: SpanRecord, extraAttributes?: Attributes): ReadableSpan {
  const context: SpanContext = {
    traceId: record.traceId,
    spanId: record.spanId,
    traceFlags: TraceFlags.SAMPLED,
  };
  if (record.traceState !== undefined) context.traceState = receivedTraceState(record.traceState);
  const parent =
    record.parentSpanId === undefined
      ? undefined
      : { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: TraceFlags.SAMPLED };
  const startTime = nanosToHrTime(record.startTimeUnixNano);
  const end = record.endTimeUnixNano ?? record.startTimeUnixNano;
  const endTime = nanosToHrTime(end);
  const status =
    record.status.message === undefined
      ? { code: STATUS[record.status.code] }
      : { code: STATUS[record.status.code], message: record.status.message };
  return {
    name: record.name,
    kind: KINDS[record.kind],
    spanContext: () => context,
    parentSpanContext: parent,
    startTime,
    endTime,
    duration: nanosToHrTime(end > record.startTimeUnixNano ? end - record.startTimeUnixNano : 0n),
    status,
    attributes: extraAttributes
      ? { ...(record.attributes as Attributes), ...extraAttributes }
      : (record.attributes as Attributes),
    links: record.links.map((link) => ({
      context: {
        traceId: link.traceId,
        spanId: link.spanId,
        traceFlags: TraceFlags.SAMPLED,
        traceState: link.traceState === undefined ? undefined : receivedTraceState(link.traceState),
      },
      attributes: link.attributes as Attributes,
    })),
    events: record.events.map((event) => ({
      name: event.name,
      time: nanosToHrTime(event.timeUnixNano),
      attributes: event.attributes as Attributes,
    })),
    ended: true,
    resource: resourceOf(record),
    instrumentationScope: record.scope,
    droppedAttributesCount: record.dropped?.attributes ?? 0,
    droppedEventsCount: record.dropped?.events ?? 0,
    droppedLinksCount: record.dropped?.links ?? 0,
  };
}

/**
 * A tracestate that serializes exactly as received. The API's parser drops what is not W3C
 * tracestate (uppercase keys, over 32 members, ...), and an adapter passing spans on should
 * not rewrite them; reads and changes go to the parsed form.
 */
function receivedTraceState(raw: string): TraceState {
  const parsed = createTraceState(raw);
  return {
    get: (key) => parsed.get(key),
    set: (key, value) => parsed.set(key, value),
    unset: (key) => parsed.unset(key),
    serialize: () => raw,
  };
}

/** Exact nanoseconds to HrTime. */
export function nanosToHrTime(nanos: bigint): HrTime {
  return [Number(nanos / NANOS_PER_SECOND), Number(nanos % NANOS_PER_SECOND)];
}
