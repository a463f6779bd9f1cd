/**
 * SpanRecords out as OTLP JSON (an ExportTraceServiceRequest): what `toolpath promote` writes as a
 * fixture and serve's reports file stores, readable back by every reader of OTLP JSON.
 */
import { SPAN_KINDS, STATUS_CODES } from '../collector/otlp-json-values.js';
import type { Attributes, AttributeValue, SpanRecord } from '../model/span-record.js';

/** Spans as one OTLP JSON ExportTraceServiceRequest, grouped by resource and scope. */
export function encodeOtlpJson(spans: readonly SpanRecord[]): { resourceSpans: unknown[] } {
  const resources = new Map<string, { resource: Attributes; scopes: Map<string, SpanRecord[]> }>();
  for (const span of spans) {
    const resourceKey = JSON.stringify(encodeAttributes(span.resource));
    let group = resources.get(resourceKey);
    if (!group) {
      group = { resource: span.resource, scopes: new Map() };
      resources.set(resourceKey, group);
    }
    const scopeKey = JSON.stringify([span.scope.name, span.scope.version ?? '']);
    const list = group.scopes.get(scopeKey);
    if (list) list.push(span);
    else group.scopes.set(scopeKey, [span]);
  }
  return {
    resourceSpans: [...resources.values()].map(({ resource, scopes }) => ({
      resource: { attributes: encodeAttributes(resource) },
      scopeSpans: [...scopes.values()].map((list) => ({
        scope: {
          name: list[0]?.scope.name ?? '',
          ...(list[0]?.scope.version !== undefined && { version: list[0].scope.version }),
        },
        spans: list.map(encodeSpan),
      })),
    })),
  };
}

function encodeSpan(span: SpanRecord): Record<string, unknown> {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.traceState !== undefined && { traceState: span.traceState }),
    ...(span.parentSpanId !== undefined && { parentSpanId: span.parentSpanId }),
    name: span.name,
    kind: SPAN_KINDS.indexOf(span.kind),
    startTimeUnixNano: String(span.startTimeUnixNano),
    ...(span.endTimeUnixNano !== undefined && { endTimeUnixNano: String(span.endTimeUnixNano) }),
    attributes: encodeAttributes(span.attributes),
    events: span.events.map((event) => ({
      timeUnixNano: String(event.timeUnixNano),
      name: event.name,
      attributes: encodeAttributes(event.attributes),
    })),
    links: span.links.map((link) => ({
      traceId: link.traceId,
      spanId: link.spanId,
      ...(link.traceState !== undefined && { traceState: link.traceState }),
      attributes: encodeAttributes(link.attributes),
    })),
    ...(span.dropped !== undefined && {
      droppedAttributesCount: span.dropped.attributes,
      droppedEventsCount: span.dropped.events,
      droppedLinksCount: span.dropped.links,
    }),
    status: {
      code: STATUS_CODES.indexOf(span.status.code),
      ...(span.status.message !== undefined && { message: span.status.message }),
    },
  };
}

function encodeAttributes(attributes: Attributes): { key: string; value: unknown }[] {
  return Object.entries(attributes).map(([key, value]) => ({ key, value: encodeValue(value) }));
}

function encodeValue(value: AttributeValue): unknown {
  if (value === null) return {};
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number')
    return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(encodeValue) } };
  return { kvlistValue: { values: encodeAttributes(value) } };
}
