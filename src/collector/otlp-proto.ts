/**
 * Decoding of OTLP protobuf `ExportTraceServiceRequest`s (OTLP/HTTP `application/x-protobuf`
 * bodies, OTLP/gRPC messages) into SpanRecords, with the semantics of the JSON decoder in
 * `otlp-json.ts`: a bad span is rejected alone, with a path, and every other span is kept.
 *
 * One pass with a protobufjs Reader straight into SpanRecords, not `Type.decode` and a
 * conversion: no intermediate message objects, ids hex-encoded and bytes copied at once, so
 * nothing keeps the request buffer alive. The schema in `otlp-proto-schema.ts` encodes the
 * response and is the baseline the benchmark measures this against.
 */
import protobuf from 'protobufjs';
import type {
  Attributes,
  ScopeRecord,
  SpanEventRecord,
  SpanKindName,
  SpanLinkRecord,
  SpanRecord,
} from '../model/span-record.js';
import type { DecodeOptions, DecodeResult } from './otlp-json.js';
import { hasKeys, Invalid, SPAN_KINDS, STATUS_CODES } from './otlp-json-values.js';
import {
  EVENT,
  idMemo,
  LINK,
  locate,
  Malformed,
  type ProtoReader,
  REQUEST,
  RESOURCE,
  RESOURCE_SPANS,
  readAttribute,
  readCommonString,
  readFixed64,
  readId,
  readNested,
  readString,
  SCOPE,
  SCOPE_SPANS,
  SPAN,
  STATUS,
  skipField,
  verifyEnd,
  within,
} from './otlp-proto-wire.js';

export {
  decodeExportTraceResponse,
  encodeExportTraceResponse,
  type PartialSuccess,
} from './otlp-proto-schema.js';

import { addError, type DecodeState, finishDecoding, startDecoding } from './decode-state.js';
import { ExtendingTexts, type HeldTexts } from './extending-texts.js';

/** How a protobuf request is decoded: as JSON ones are, and on the long values held for its traces. */
export interface ProtobufDecodeOptions extends DecodeOptions {
  /**
   * The long values the adapter holds for a trace (`TraceIngest.heldTexts`): a value continuing
   * one of them is decoded from its new bytes alone. Undefined for none.
   */
  heldTexts?: (traceId: string) => HeldTexts | undefined;
}

/**
 * Decodes an OTLP protobuf ExportTraceServiceRequest into the same {@link DecodeResult} as
 * `decodeExportTraceRequest` gives for the same request in JSON. Never throws: a bad span
 * (an id of the wrong length or all zero, an unknown kind or status code, values nested too
 * deep) is left out with an error naming its path, every other span is kept; bytes that are
 * not an ExportTraceServiceRequest (truncated, wrong wire types) are one error and no spans.
 */
export function decodeExportTraceProtobuf(
  bytes: Uint8Array,
  options: ProtobufDecodeOptions = {},
): DecodeResult {
  const out = startDecoding(options);
  try {
    const reader = createReader(bytes, options);
    let index = 0;
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      if (tag === 10) readNested(reader, readResourceSpans, out, 'resourceSpans', index++);
      else skipField(reader, tag, REQUEST);
    }
  } catch (error) {
    const malformed = within(error, '');
    const message = `not a valid OTLP protobuf ExportTraceServiceRequest: ${malformed.message}`;
    return { spans: [], errors: [{ path: malformed.where, message }], rejectedSpans: 0 };
  }
  return finishDecoding(out);
}

/** How far `out` had got, to take back what a rejected resource or scope (or ignored legacy spans) added. */
type Mark = [spans: number, errors: number, omittedErrors: number, rejectedSpans: number];
const mark = (out: DecodeState): Mark => [
  out.spans.length,
  out.errors.length,
  out.omittedErrors,
  out.rejectedSpans,
];

/** Takes `out` back to `to`; returns how many spans (kept or rejected) that removed. */
function rollBack(out: DecodeState, [spans, errors, omittedErrors, rejectedSpans]: Mark): number {
  const removed = out.spans.length - spans + out.rejectedSpans - rejectedSpans;
  out.spans.length = spans;
  out.errors.length = errors;
  out.omittedErrors = omittedErrors;
  out.rejectedSpans = rejectedSpans;
  return removed;
}

/** Rejects everything added since `start` as one error: a bad resource or scope fails all its spans (as in JSON). */
function rejectSince(out: DecodeState, start: Mark, path: string, invalid: Invalid): void {
  const rejected = rollBack(out, start);
  addError(out, path + invalid.path, invalid.message);
  out.rejectedSpans += rejected;
}

function createReader(bytes: Uint8Array, options: ProtobufDecodeOptions): ProtoReader {
  if (!(bytes instanceof Uint8Array)) throw new Malformed('expected the request body as bytes');
  // A Buffer view (no copy) gives protobufjs's BufferReader and native hex and UTF-8 decoding.
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const reader = protobuf.Reader.create(buf) as ProtoReader;
  reader.texts = new ExtendingTexts();
  reader.heldTexts = options.heldTexts;
  return reader;
}

function readResourceSpans(reader: ProtoReader, end: number, out: DecodeState, index: number): void {
  const at = `resourceSpans[${index}]`;
  // Filled in place, so spans read before a (non-canonical, late) resource field share it too.
  const resource: Attributes = {};
  let resourceError: Invalid | undefined;
  const start = mark(out);
  let scopeIndex = 0;
  let legacyIndex = 0;
  // Producers older than OTLP 0.15 wrote instrumentation_library_spans (field 1000); as in the
  // JSON decoder, those are read only when there are no scope_spans.
  let legacyStart: Mark | undefined;
  let hasScopeSpans = false;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 10) {
      const invalid = readNested(reader, readResource, resource, '.resource');
      resourceError ??= invalid;
    } else if (tag === 18) {
      if (!hasScopeSpans && legacyStart !== undefined) rollBack(out, legacyStart);
      hasScopeSpans = true;
      const context = { out, resource, legacy: false, at: `${at}.scopeSpans[${scopeIndex}]` };
      readNested(reader, readScopeSpans, context, '.scopeSpans', scopeIndex++);
    } else if (tag === 8002 && !hasScopeSpans) {
      legacyStart ??= mark(out);
      const context = {
        out,
        resource,
        legacy: true,
        at: `${at}.instrumentationLibrarySpans[${legacyIndex}]`,
      };
      readNested(reader, readScopeSpans, context, '.instrumentationLibrarySpans', legacyIndex++);
    } else skipField(reader, tag, RESOURCE_SPANS);
  }
  verifyEnd(reader, end, 'ResourceSpans');
  if (resourceError !== undefined) rejectSince(out, start, `${at}.resource`, resourceError);
}

/** A Resource's attributes, read into the object its spans share; the first problem, if any. */
function readResource(reader: ProtoReader, end: number, into: Attributes): Invalid | undefined {
  let invalid: Invalid | undefined;
  let index = 0;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag !== 10) {
      skipField(reader, tag, RESOURCE);
      continue;
    }
    const bad = readAttribute(reader, into, '.attributes', index++);
    invalid ??= bad;
  }
  verifyEnd(reader, end, 'Resource');
  return invalid;
}

interface ScopeSpansContext {
  out: DecodeState;
  resource: Attributes;
  /** instrumentation_library_spans, whose scope is `instrumentationLibrary`. */
  legacy: boolean;
  at: string;
}

function readScopeSpans(
  reader: ProtoReader,
  end: number,
  { out, resource, legacy, at }: ScopeSpansContext,
): void {
  const scopeKey = legacy ? 'instrumentationLibrary' : 'scope';
  const owners = { resource, scope: { name: '' } as ScopeRecord };
  let scopeError: Invalid | undefined;
  const start = mark(out);
  let index = 0;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 18) {
      const span = readNested(reader, readSpan, owners, '.spans', index);
      if (span instanceof Invalid) {
        addError(out, `${at}.spans[${index}]${span.path}`, span.message);
        out.rejectedSpans++;
      } else out.spans.push(span);
      index++;
    } else if (tag === 10) {
      const invalid = readNested(reader, readScope, owners.scope, `.${scopeKey}`);
      scopeError ??= invalid;
    } else skipField(reader, tag, SCOPE_SPANS);
  }
  verifyEnd(reader, end, 'ScopeSpans');
  if (scopeError !== undefined) rejectSince(out, start, `${at}.${scopeKey}`, scopeError);
}

/** An InstrumentationScope (or legacy InstrumentationLibrary), read into the object its spans share. */
function readScope(reader: ProtoReader, end: number, scope: ScopeRecord): Invalid | undefined {
  let invalid: Invalid | undefined;
  const attributes: Attributes = scope.attributes ?? {};
  let index = 0;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 10) scope.name = readString(reader);
    else if (tag === 18) {
      // Empty means absent in proto3: version and attributes only when present, as in JSON.
      const version = readString(reader);
      if (version === '') delete scope.version;
      else scope.version = version;
    } else if (tag === 26) {
      const bad = readAttribute(reader, attributes, '.attributes', index++);
      invalid ??= bad;
    } else skipField(reader, tag, SCOPE);
  }
  verifyEnd(reader, end, 'InstrumentationScope');
  if (hasKeys(attributes)) scope.attributes = attributes;
  return invalid;
}

// Spans of a request share their trace id, and siblings their parent: one hex conversion serves many.
const traceIds = idMemo(16);
const parentIds = idMemo(8);

function readSpan(
  reader: ProtoReader,
  end: number,
  { resource, scope }: { resource: Attributes; scope: ScopeRecord },
): SpanRecord | Invalid {
  let traceId: string | Invalid | undefined;
  let spanId: string | Invalid | undefined;
  let parentSpanId: string | Invalid | undefined;
  let name = '';
  let kind = 0;
  let startTime = 0n;
  let endTime = 0n;
  let status: SpanRecord['status'] | Invalid | undefined;
  let traceState = '';
  let droppedAttributes = 0;
  let droppedEvents = 0;
  let droppedLinks = 0;
  const attributes: Attributes = {};
  const events: SpanEventRecord[] = [];
  const links: SpanLinkRecord[] = [];
  let badAttribute: Invalid | undefined;
  let badEvent: Invalid | undefined;
  let badLink: Invalid | undefined;
  let attributeIndex = 0;
  let eventIndex = 0;
  let linkIndex = 0;
  // Another span's trace must not lend its texts: only once this span's trace id is read.
  reader.texts.held = undefined;
  while (reader.pos < end) {
    const tag = reader.uint32();
    switch (tag) {
      case 10: // 1 trace_id
        traceId = readId(reader, 16, '.traceId', traceIds);
        reader.texts.held = typeof traceId === 'string' ? reader.heldTexts?.(traceId) : undefined;
        break;
      case 18: // 2 span_id
        spanId = readId(reader, 8, '.spanId');
        break;
      case 26: // 3 trace_state
        traceState = readString(reader);
        break;
      case 34: // 4 parent_span_id: empty marks a root span
        parentSpanId = readId(reader, 8, '.parentSpanId', parentIds, true);
        break;
      case 42: // 5 name
        name = readCommonString(reader);
        break;
      case 48: // 6 kind
        kind = reader.uint32();
        break;
      case 57: // 7 start_time_unix_nano
        startTime = readFixed64(reader);
        break;
      case 65: // 8 end_time_unix_nano
        endTime = readFixed64(reader);
        break;
      case 74: {
        // 9 attributes
        const bad = readAttribute(reader, attributes, '.attributes', attributeIndex++);
        badAttribute ??= bad;
        break;
      }
      case 90: {
        // 11 events
        const event = readNested(reader, readEvent, undefined, '.events', eventIndex);
        if (event instanceof Invalid) badEvent ??= locate(event, '.events', eventIndex);
        else events.push(event);
        eventIndex++;
        break;
      }
      case 106: {
        // 13 links
        const link = readNested(reader, readLink, undefined, '.links', linkIndex);
        if (link instanceof Invalid) badLink ??= locate(link, '.links', linkIndex);
        else links.push(link);
        linkIndex++;
        break;
      }
      case 122: // 15 status
        status = readNested(reader, readStatus, undefined, '.status');
        break;
      case 80: // 10 dropped_attributes_count
        droppedAttributes = reader.uint32();
        break;
      case 96: // 12 dropped_events_count
        droppedEvents = reader.uint32();
        break;
      case 112: // 14 dropped_links_count
        droppedLinks = reader.uint32();
        break;
      default:
        skipField(reader, tag, SPAN);
    }
  }
  verifyEnd(reader, end, 'Span');
  reader.texts.held = undefined;
  // Checked in the JSON decoder's order, so both name the same first problem.
  if (traceId === undefined) return new Invalid('.traceId', 'expected a trace id of 16 bytes, got none');
  if (traceId instanceof Invalid) return traceId;
  if (spanId === undefined) return new Invalid('.spanId', 'expected a span id of 8 bytes, got none');
  if (spanId instanceof Invalid) return spanId;
  if (parentSpanId instanceof Invalid) return parentSpanId;
  if (kind >= SPAN_KINDS.length)
    return new Invalid('.kind', `expected a SpanKind 0-${SPAN_KINDS.length - 1}, got ${kind | 0}`);
  if (status instanceof Invalid) return status;
  const invalid = badAttribute ?? badEvent ?? badLink;
  if (invalid !== undefined) return invalid;
  const span: SpanRecord = {
    traceId,
    spanId,
    parentSpanId,
    name,
    kind: SPAN_KINDS[kind] as SpanKindName,
    startTimeUnixNano: startTime,
    // An end time of 0 (or none) is how an exporter writes a span that had not ended.
    endTimeUnixNano: endTime === 0n ? undefined : endTime,
    status: status ?? { code: 'unset' },
    attributes,
    events,
    links,
    resource,
    scope,
  };
  if (traceState !== '') span.traceState = traceState;
  if (droppedAttributes + droppedEvents + droppedLinks > 0)
    span.dropped = { attributes: droppedAttributes, events: droppedEvents, links: droppedLinks };
  return span;
}

function readStatus(reader: ProtoReader, end: number): SpanRecord['status'] | Invalid {
  let code = 0;
  let message = '';
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 24) code = reader.uint32();
    else if (tag === 18) message = readString(reader);
    else skipField(reader, tag, STATUS);
  }
  verifyEnd(reader, end, 'Status');
  const name = STATUS_CODES[code];
  if (name === undefined)
    return new Invalid('.status.code', `expected a StatusCode 0-${STATUS_CODES.length - 1}, got ${code | 0}`);
  return message === '' ? { code: name } : { code: name, message };
}

function readEvent(reader: ProtoReader, end: number): SpanEventRecord | Invalid {
  let name = '';
  let timeUnixNano = 0n;
  const attributes: Attributes = {};
  let invalid: Invalid | undefined;
  let index = 0;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 9) timeUnixNano = readFixed64(reader);
    else if (tag === 18) name = readCommonString(reader);
    else if (tag === 26) {
      const bad = readAttribute(reader, attributes, '.attributes', index++);
      invalid ??= bad;
    } else skipField(reader, tag, EVENT);
  }
  verifyEnd(reader, end, 'Event');
  return invalid ?? { name, timeUnixNano, attributes };
}

function readLink(reader: ProtoReader, end: number): SpanLinkRecord | Invalid {
  let traceId: string | Invalid | undefined;
  let spanId: string | Invalid | undefined;
  let traceState = '';
  const attributes: Attributes = {};
  let invalid: Invalid | undefined;
  let index = 0;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 10) traceId = readId(reader, 16, '.traceId', traceIds);
    else if (tag === 18) spanId = readId(reader, 8, '.spanId');
    else if (tag === 26) traceState = readString(reader);
    else if (tag === 34) {
      const bad = readAttribute(reader, attributes, '.attributes', index++);
      invalid ??= bad;
    } else skipField(reader, tag, LINK);
  }
  verifyEnd(reader, end, 'Link');
  if (traceId === undefined) return new Invalid('.traceId', 'expected a trace id of 16 bytes, got none');
  if (traceId instanceof Invalid) return traceId;
  if (spanId === undefined) return new Invalid('.spanId', 'expected a span id of 8 bytes, got none');
  if (spanId instanceof Invalid) return spanId;
  if (invalid !== undefined) return invalid;
  return traceState === '' ? { traceId, spanId, attributes } : { traceId, spanId, attributes, traceState };
}
