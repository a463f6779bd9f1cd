/**
 * Decoding of OTLP JSON `ExportTraceServiceRequest`s (OTLP/HTTP JSON bodies, stored files) into
 * SpanRecords. Written by hand rather than with a generic proto3-JSON parser because OTLP JSON
 * departs from proto3 JSON (ids are hex, not base64), and because a bad span must be rejected
 * alone, with a path, so the rest of the request is kept (OTLP `partial_success`).
 */
import type {
  Attributes,
  DroppedCounts,
  ScopeRecord,
  SpanEventRecord,
  SpanLinkRecord,
  SpanRecord,
} from '../model/span-record.js';
import { addError, type DecodeState, finishDecoding, startDecoding } from './decode-state.js';
import { ExtendingStrings } from './extending-texts.js';
import {
  decodeEnum,
  decodeId,
  decodeKeyValues,
  decodeSharedId,
  decodeString,
  decodeTimestamp,
  describe,
  hasItems,
  hasKeys,
  Invalid,
  isObject,
  PARENT_IDS,
  readCount,
  SPAN_KINDS,
  STATUS_CODES,
  TRACE_IDS,
  unsafeIntegers,
} from './otlp-json-values.js';

/**
 * `JSON.parse` for OTLP JSON that keeps 64-bit integers exact: bare integer values of the
 * timestamp fields (`startTimeUnixNano`, `endTimeUnixNano`, `timeUnixNano`,
 * `observedTimeUnixNano`) and of `intValue` are read as decimal strings, which the decoder
 * accepts. Throws JSON.parse's SyntaxError (with positions in `text`) when `text` is not JSON.
 */
export function parseOtlpJsonText(text: string): unknown {
  const bare = findBareExactIntegers(text);
  // Producers that write int64 as strings (the Go collector; the JS SDK for timestamps) skip the copy.
  if (bare.length === 0) return JSON.parse(text);
  let quoted = '';
  let from = 0;
  for (let i = 0; i < bare.length; i += 2) {
    const start = bare[i] as number;
    const end = bare[i + 1] as number;
    quoted += `${text.slice(from, start)}"${text.slice(start, end)}"`;
    from = end;
  }
  quoted += text.slice(from);
  try {
    return JSON.parse(quoted);
  } catch (error) {
    // Re-parse the original so the error's positions point into the caller's text.
    JSON.parse(text);
    throw error;
  }
}

/**
 * Parses and decodes an OTLP JSON body, exactly as `decodeExportTraceRequest(parseOtlpJsonText(text))`
 * but cheaper for conforming producers: OTLP JSON writes int64 as strings, so the request is
 * first parsed by bare `JSON.parse`, and parsed again with exact integers only when the decoder
 * met a bare integer JSON.parse may have rounded (beyond 2^53). Throws JSON.parse's SyntaxError
 * when `text` is not JSON.
 */
export function decodeOtlpJsonText(text: string, options: DecodeOptions = {}): DecodeResult {
  unsafeIntegers.seen = 0;
  const result = decodeExportTraceRequest(JSON.parse(text), options);
  if (unsafeIntegers.seen === 0) return result;
  return decodeExportTraceRequest(parseOtlpJsonText(text), options);
}

/**
 * Start and end offsets (flattened pairs, in text order) of the integer tokens that are values
 * of the exact-integer keys. Found with indexOf rather than a regex: several times faster on
 * megabyte bodies, and this runs on every request.
 *
 * Why string contents are never matched: inside a JSON string every `"` is escaped, so it
 * follows a `\`. A key's opening quote must follow `{`, `,` or whitespace, so it is a real
 * string delimiter; a delimiter followed by the key name, a quote and `:` opens an object key
 * (a closing quote is never followed by a letter). The value must be a whole JSON integer
 * token (`,` or `}` next), so `1.5` and `1e+21` are left to JSON.parse.
 */
function findBareExactIntegers(text: string): number[] {
  const found: number[] = [];
  let nano = text.indexOf('UnixNano"');
  let int = text.indexOf('intValue"');
  while (nano !== -1 || int !== -1) {
    const isNano = int === -1 || (nano !== -1 && nano < int);
    const at = isNano ? nano : int;
    const keyEnd = at + 9; // both markers are 9 characters long
    const keyStart = isNano ? nanoKeyStart(text, at) : at - 1;
    if (keyStart > 0 && text.charCodeAt(keyStart) === QUOTE && isKeyLead(text.charCodeAt(keyStart - 1))) {
      addIntegerValue(text, keyEnd, found);
    }
    if (isNano) nano = text.indexOf('UnixNano"', keyEnd);
    else int = text.indexOf('intValue"', keyEnd);
  }
  return found;
}

const QUOTE = 0x22;
const NANO_KEY_PREFIXES = ['startTime', 'endTime', 'observedTime', 'time'];

/** Where the opening quote of a `...UnixNano"` key would be, or -1 when it is no timestamp key. */
function nanoKeyStart(text: string, at: number): number {
  for (const prefix of NANO_KEY_PREFIXES) {
    if (text.startsWith(prefix, at - prefix.length)) return at - prefix.length - 1;
  }
  return -1;
}

/** `{`, `,` or JSON whitespace: what may precede an object key. */
function isKeyLead(code: number): boolean {
  return code === 0x7b || code === 0x2c || isJsonSpace(code);
}

function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** After a key: if `: <integer>` follows, ending at `,` or `}`, records the integer's offsets. */
function addIntegerValue(text: string, keyEnd: number, found: number[]): void {
  let i = keyEnd;
  while (isJsonSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x3a) return; // ':'
  i++;
  while (isJsonSpace(text.charCodeAt(i))) i++;
  const start = i;
  if (text.charCodeAt(i) === 0x2d) i++; // '-'
  const firstDigit = i;
  while (isDigit(text.charCodeAt(i))) i++;
  // No digits, or a leading zero JSON forbids: leave it for JSON.parse to reject.
  if (i === firstDigit || (text.charCodeAt(firstDigit) === 0x30 && i - firstDigit > 1)) return;
  const end = i;
  // Up to 15 digits a double holds the integer exactly: JSON.parse may read it, no copy needed
  // (the JS SDK writes every integer attribute as a bare number).
  if (end - firstDigit <= MAX_EXACT_DIGITS) return;
  while (isJsonSpace(text.charCodeAt(i))) i++;
  const next = text.charCodeAt(i);
  if (next === 0x2c || next === 0x7d) found.push(start, end);
}

const MAX_EXACT_DIGITS = 15;

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** One rejected part of a request: where (`resourceSpans[0].scopeSpans[1].spans[3].spanId`) and why. */
export interface DecodeError {
  path: string;
  message: string;
}

/** Limits for {@link decodeExportTraceRequest}. */
export interface DecodeOptions {
  /** Errors listed at most (default 100); the rest are summed up in one last error, so memory stays bounded. */
  maxErrors?: number;
}

/** The spans that decoded, and why the others did not. */
export interface DecodeResult {
  spans: SpanRecord[];
  errors: DecodeError[];
  /** Spans present in the request but not in `spans`, as far as they can be counted (for OTLP `partial_success.rejected_spans`). */
  rejectedSpans: number;
}

/**
 * Decodes an OTLP JSON ExportTraceServiceRequest (as parsed by {@link parseOtlpJsonText}).
 * Never throws: a bad span is left out with an error naming its path, every other span is
 * kept; a request that is not an object, or whose `resourceSpans` is not an array, is one error.
 */
export function decodeExportTraceRequest(request: unknown, options: DecodeOptions = {}): DecodeResult {
  const out = startDecoding(options);
  out.strings = new ExtendingStrings();
  if (!isObject(request)) {
    addError(
      out,
      '',
      `expected an ExportTraceServiceRequest object ({"resourceSpans": [...]}), got ${describe(request)}`,
    );
  } else if (request.resourceSpans != null && !Array.isArray(request.resourceSpans)) {
    addError(out, 'resourceSpans', `expected an array, got ${describe(request.resourceSpans)}`);
  } else {
    const list = (request.resourceSpans ?? []) as unknown[];
    for (let i = 0; i < list.length; i++) decodeResourceSpans(list[i], `resourceSpans[${i}]`, out);
  }
  return finishDecoding(out);
}

function decodeResourceSpans(raw: unknown, at: string, out: DecodeState): void {
  if (!isObject(raw)) {
    addError(out, at, `expected a ResourceSpans object, got ${describe(raw)}`);
    return;
  }
  // Legacy producers (OTLP < 0.15) wrote instrumentationLibrarySpans; read it only when scopeSpans is empty.
  const legacy = !hasItems(raw.scopeSpans) && raw.instrumentationLibrarySpans != null;
  const listKey = legacy ? 'instrumentationLibrarySpans' : 'scopeSpans';
  const list = raw[listKey];
  if (list == null) return;
  if (!Array.isArray(list)) {
    addError(out, `${at}.${listKey}`, `expected an array, got ${describe(list)}`);
    return;
  }

  const resource = decodeResource(raw.resource);
  if (resource instanceof Invalid) {
    addError(out, `${at}.resource${resource.path}`, resource.message);
    out.rejectedSpans += list.reduce((n: number, scopeSpans) => n + countSpans(scopeSpans), 0);
    return;
  }
  for (let j = 0; j < list.length; j++) {
    decodeScopeSpans(
      list[j],
      `${at}.${listKey}[${j}]`,
      legacy ? 'instrumentationLibrary' : 'scope',
      resource,
      out,
    );
  }
}

function decodeScopeSpans(
  raw: unknown,
  at: string,
  scopeKey: string,
  resource: Attributes,
  out: DecodeState,
): void {
  if (!isObject(raw)) {
    addError(out, at, `expected a ScopeSpans object, got ${describe(raw)}`);
    return;
  }
  const spans = raw.spans;
  if (spans == null) return;
  if (!Array.isArray(spans)) {
    addError(out, `${at}.spans`, `expected an array, got ${describe(spans)}`);
    return;
  }
  const scope = decodeScope(raw[scopeKey]);
  if (scope instanceof Invalid) {
    addError(out, `${at}.${scopeKey}${scope.path}`, scope.message);
    out.rejectedSpans += spans.length;
    return;
  }
  for (let k = 0; k < spans.length; k++) {
    const span = decodeSpan(spans[k], resource, scope, out.strings);
    if (span instanceof Invalid) {
      addError(out, `${at}.spans[${k}]${span.path}`, span.message);
      out.rejectedSpans++;
    } else {
      out.spans.push(span);
    }
  }
}

function countSpans(scopeSpans: unknown): number {
  return isObject(scopeSpans) && Array.isArray(scopeSpans.spans) ? scopeSpans.spans.length : 0;
}

function decodeResource(raw: unknown): Attributes | Invalid {
  if (raw == null) return {};
  if (!isObject(raw)) return new Invalid('', `expected a Resource object, got ${describe(raw)}`);
  return decodeKeyValues(raw.attributes, '.attributes', 0);
}

function decodeScope(raw: unknown): ScopeRecord | Invalid {
  if (raw == null) return { name: '' };
  if (!isObject(raw)) return new Invalid('', `expected an InstrumentationScope object, got ${describe(raw)}`);
  const name = decodeString(raw.name, '.name');
  if (name instanceof Invalid) return name;
  const version = decodeString(raw.version, '.version');
  if (version instanceof Invalid) return version;
  const attributes = decodeKeyValues(raw.attributes, '.attributes', 0);
  if (attributes instanceof Invalid) return attributes;
  // Empty means absent in proto3, so both are left out (as fromReadableSpan does).
  const scope: ScopeRecord = { name };
  if (version !== '') scope.version = version;
  if (hasKeys(attributes)) scope.attributes = attributes;
  return scope;
}

function decodeSpan(
  raw: unknown,
  resource: Attributes,
  scope: ScopeRecord,
  strings: ExtendingStrings | undefined,
): SpanRecord | Invalid {
  if (!isObject(raw)) return new Invalid('', `expected a Span object, got ${describe(raw)}`);
  const traceId = decodeSharedId(raw.traceId, '.traceId', 32, TRACE_IDS);
  if (traceId instanceof Invalid) return traceId;
  const spanId = decodeId(raw.spanId, '.spanId', 16);
  if (spanId instanceof Invalid) return spanId;
  // Empty or absent parentSpanId marks a root span.
  const parentSpanId =
    raw.parentSpanId == null || raw.parentSpanId === ''
      ? undefined
      : decodeSharedId(raw.parentSpanId, '.parentSpanId', 16, PARENT_IDS);
  if (parentSpanId instanceof Invalid) return parentSpanId;
  const name = decodeString(raw.name, '.name');
  if (name instanceof Invalid) return name;
  const kind = decodeEnum(raw.kind, SPAN_KINDS, 'SPAN_KIND_', '.kind');
  if (kind instanceof Invalid) return kind;
  const startTimeUnixNano = decodeTimestamp(raw.startTimeUnixNano, '.startTimeUnixNano');
  if (startTimeUnixNano instanceof Invalid) return startTimeUnixNano;
  const end = decodeTimestamp(raw.endTimeUnixNano, '.endTimeUnixNano');
  if (end instanceof Invalid) return end;
  const status = decodeStatus(raw.status);
  if (status instanceof Invalid) return status;
  const attributes = decodeKeyValues(raw.attributes, '.attributes', 0, strings);
  if (attributes instanceof Invalid) return attributes;
  const events = decodeList(raw.events, '.events', decodeEvent);
  if (events instanceof Invalid) return events;
  const links = decodeList(raw.links, '.links', decodeLink);
  if (links instanceof Invalid) return links;
  const dropped = readDropped(raw);
  const span: SpanRecord = {
    traceId,
    spanId,
    parentSpanId,
    name,
    kind,
    startTimeUnixNano,
    // An end time of 0 (or none) is how an exporter writes a span that had not ended.
    endTimeUnixNano: end === 0n ? undefined : end,
    status,
    attributes,
    events,
    links,
    resource,
    scope,
  };
  // Left out when empty or zero (proto3 defaults), as the protobuf decoder does.
  // Kept to forward as received; a malformed one (not a string) is left out, never the span.
  if (typeof raw.traceState === 'string' && raw.traceState !== '') span.traceState = raw.traceState;
  if (dropped) span.dropped = dropped;
  return span;
}

/** The span's dropped counts, or undefined when nothing was dropped (see {@link readCount}). */
function readDropped(raw: Record<string, unknown>): DroppedCounts | undefined {
  const attributes = readCount(raw.droppedAttributesCount);
  const events = readCount(raw.droppedEventsCount);
  const links = readCount(raw.droppedLinksCount);
  return attributes + events + links === 0 ? undefined : { attributes, events, links };
}

function decodeStatus(raw: unknown): SpanRecord['status'] | Invalid {
  if (raw == null) return { code: 'unset' };
  if (!isObject(raw)) return new Invalid('.status', `expected a Status object, got ${describe(raw)}`);
  const code = decodeEnum(raw.code, STATUS_CODES, 'STATUS_CODE_', '.status.code');
  if (code instanceof Invalid) return code;
  const message = decodeString(raw.message, '.status.message');
  if (message instanceof Invalid) return message;
  return message === '' ? { code } : { code, message };
}

function decodeEvent(raw: unknown): SpanEventRecord | Invalid {
  if (!isObject(raw)) return new Invalid('', `expected an Event object, got ${describe(raw)}`);
  const name = decodeString(raw.name, '.name');
  if (name instanceof Invalid) return name;
  const timeUnixNano = decodeTimestamp(raw.timeUnixNano, '.timeUnixNano');
  if (timeUnixNano instanceof Invalid) return timeUnixNano;
  const attributes = decodeKeyValues(raw.attributes, '.attributes', 0);
  if (attributes instanceof Invalid) return attributes;
  return { name, timeUnixNano, attributes };
}

function decodeLink(raw: unknown): SpanLinkRecord | Invalid {
  if (!isObject(raw)) return new Invalid('', `expected a Link object, got ${describe(raw)}`);
  const traceId = decodeId(raw.traceId, '.traceId', 32);
  if (traceId instanceof Invalid) return traceId;
  const spanId = decodeId(raw.spanId, '.spanId', 16);
  if (spanId instanceof Invalid) return spanId;
  const attributes = decodeKeyValues(raw.attributes, '.attributes', 0);
  if (attributes instanceof Invalid) return attributes;
  const traceState = raw.traceState;
  return typeof traceState === 'string' && traceState !== ''
    ? { traceId, spanId, attributes, traceState }
    : { traceId, spanId, attributes };
}

function decodeList<T>(raw: unknown, at: string, decodeItem: (item: unknown) => T | Invalid): T[] | Invalid {
  if (raw == null) return [];
  if (!Array.isArray(raw)) return new Invalid(at, `expected an array, got ${describe(raw)}`);
  const items: T[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const item = decodeItem(raw[i]);
    if (item instanceof Invalid) return new Invalid(`${at}[${i}]${item.path}`, item.message);
    items[i] = item;
  }
  return items;
}
