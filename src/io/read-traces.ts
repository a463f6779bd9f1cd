/**
 * Reading a stored trace file, whatever its name: the format is told from the content.
 * Accepted: one OTLP JSON ExportTraceServiceRequest, a JSON array of them, a JSON array of bare
 * OTLP spans (resource and scope unknown), Collector file-exporter JSON lines (one request per
 * line), or a JSON array of typed call/result events.
 */
import { z } from 'zod';
import { type DecodeError, decodeExportTraceRequest, parseOtlpJsonText } from '../collector/otlp-json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { TypedEvent } from '../model/typed-event.js';
import { jsonObjectSchema } from '../scenario/assertions.js';

/** What a stored file held, once read. */
export type StoredInput =
  | { format: 'otlp-json' | 'otlp-jsonl'; spans: SpanRecord[] }
  | { format: 'typed-events'; events: TypedEvent[] };

/**
 * Something wrong with an input file. `location` is a path inside the document
 * (`resourceSpans[0].scopeSpans[0].spans[3].spanId`, `[3].ok`) or, for JSON lines, `line N`.
 */
export interface InputError {
  source: string;
  location?: string;
  message: string;
}

/**
 * The result of reading one file. When `errors` is not empty the file must not be evaluated
 * (a verdict on half a trace would mislead), but `input` still holds what could be read.
 */
export interface ReadResult {
  source: string;
  input?: StoredInput;
  errors: InputError[];
}

/** One line for a user: `file.json: [3].ok: expected boolean, got string` or `file.jsonl:3: ...`. */
export function formatInputError(error: InputError): string {
  if (!error.location) return `${error.source}: ${error.message}`;
  const line = /^line (\d+)$/.exec(error.location);
  if (line) return `${error.source}:${line[1]}: ${error.message}`;
  return `${error.source}: ${error.location}: ${error.message}`;
}

/** Errors listed per file at most; a file with thousands of bad spans gets a count for the rest. */
const MAX_ERRORS = 100;
const NOTHING_FOUND = 'no spans or events found';
const EXPECTED_FORMATS =
  'expected OTLP JSON (an object with "resourceSpans", an array of them, or an array of OTLP spans), Collector file-exporter ' +
  'JSON lines, or an array of typed events ({"kind": "call" | "result" | "decision", ...})';

/** Reads one stored file's text; `source` (a path, or `-`) is only used to label errors. */
export function readStoredTraces(text: string, source: string): ReadResult {
  try {
    return readStoredTracesUnguarded(text, source);
  } catch (error) {
    // A reader never throws: whatever slipped through (a document nested too deep for a
    // validator's recursion) is an error of this input, with the others still read.
    return failed(source, `could not be read: ${(error as Error).message}`);
  }
}

function readStoredTracesUnguarded(text: string, source: string): ReadResult {
  // Editors on Windows may save a byte order mark, which JSON.parse rejects.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') return failed(source, `${NOTHING_FOUND}: the file is empty`);
  let document: unknown;
  try {
    document = parseOtlpJsonText(body);
  } catch (error) {
    const lines = nonBlankLines(body);
    if (lines.length > 1 && isJson(lines[0]?.text ?? '')) return readJsonLines(lines, source);
    return failed(source, `not valid JSON: ${(error as Error).message}`);
  }
  if (isOtlpRequest(document)) return readRequests([document], false, source);
  if (!Array.isArray(document))
    return failed(source, `${EXPECTED_FORMATS}; got ${describeDocument(document)}`);
  // An empty list of typed events is a run that made no tool call: a trajectory, not a mistake.
  if (document.length === 0) return { source, input: { format: 'typed-events', events: [] }, errors: [] };
  if (isOtlpRequest(document[0])) return readRequests(document, true, source);
  const items = itemShapes(document);
  if (items.span !== undefined && items.event !== undefined)
    return failed(
      source,
      `an array mixing OTLP spans ([${items.span}]) with typed events ([${items.event}]): give one format per file`,
    );
  if (items.span !== undefined) return readBareSpans(document, source);
  if (isObject(document[0]) && 'kind' in document[0]) {
    // Re-parsed plainly: the exact-integer pass of OTLP parsing must not turn numbers in tool arguments into strings.
    return readTypedEvents(JSON.parse(body) as unknown[], source);
  }
  return failed(
    source,
    `${EXPECTED_FORMATS}; got an array whose first item is ${describeDocument(document[0])}`,
  );
}

// ---- OTLP -----------------------------------------------------------------------------------

/** Requests of one JSON document; `inArray` prefixes locations with the request's index. */
function readRequests(requests: readonly unknown[], inArray: boolean, source: string): ReadResult {
  const spans: SpanRecord[] = [];
  const errors = new ErrorList(source);
  requests.forEach((request, index) => {
    const prefix = inArray ? `[${index}]` : '';
    if (!isOtlpRequest(request)) {
      errors.add(
        prefix,
        `expected an ExportTraceServiceRequest like the first item, got ${describeDocument(request)}`,
      );
      return;
    }
    const decoded = decodeExportTraceRequest(request);
    for (const span of decoded.spans) spans.push(span);
    for (const error of decoded.errors) errors.add(joinPath(prefix, error.path), error.message);
  });
  return finish(source, { format: 'otlp-json', spans }, errors);
}

/** Where a bare array of spans sits inside the request it is read as; cut from error locations. */
const BARE_SPANS_AT = 'resourceSpans[0].scopeSpans[0].spans';

/**
 * A JSON array of OTLP spans with no request around them (what some stores and exporters save):
 * read as one request of unknown resource and scope, so every span is checked as in a request and
 * each error names the item it is in (`[3].spanId`).
 */
function readBareSpans(spans: readonly unknown[], source: string): ReadResult {
  const decoded = decodeExportTraceRequest({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
  const errors = new ErrorList(source);
  for (const error of decoded.errors) {
    const path = error.path.startsWith(BARE_SPANS_AT) ? error.path.slice(BARE_SPANS_AT.length) : error.path;
    errors.add(path.replace(/^\./, ''), error.message);
  }
  return finish(source, { format: 'otlp-json', spans: decoded.spans }, errors);
}

/** The first item that looks like an OTLP span (`traceId` and `spanId`), and the first typed event. */
function itemShapes(items: readonly unknown[]): { span?: number; event?: number } {
  const found: { span?: number; event?: number } = {};
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (!isObject(item)) continue;
    if (found.span === undefined && 'traceId' in item && 'spanId' in item) found.span = i;
    else if (found.event === undefined && isTypedEventKind(item.kind)) found.event = i;
    if (found.span !== undefined && found.event !== undefined) break;
  }
  return found;
}

/** A typed event's `kind`; a span's `kind` is a number or a `SPAN_KIND_*` name, never one of these. */
function isTypedEventKind(kind: unknown): boolean {
  return kind === 'call' || kind === 'result' || kind === 'decision';
}

/** Collector file-exporter output: one ExportTraceServiceRequest per line, blank lines ignored. */
function readJsonLines(lines: readonly NumberedLine[], source: string): ReadResult {
  const spans: SpanRecord[] = [];
  const errors = new ErrorList(source);
  for (const { number, text } of lines) {
    const at = `line ${number}`;
    let request: unknown;
    try {
      request = parseOtlpJsonText(text);
    } catch (error) {
      errors.add(at, `not valid JSON: ${(error as Error).message}`);
      continue;
    }
    if (!isOtlpRequest(request)) {
      errors.add(at, `expected an ExportTraceServiceRequest per line, got ${describeDocument(request)}`);
      continue;
    }
    const decoded = decodeExportTraceRequest(request);
    for (const span of decoded.spans) spans.push(span);
    for (const error of decoded.errors) errors.add(at, withPath(error));
  }
  return finish(source, { format: 'otlp-jsonl', spans }, errors);
}

function finish(source: string, input: StoredInput & { spans: SpanRecord[] }, errors: ErrorList): ReadResult {
  if (input.spans.length === 0 && errors.list.length === 0) errors.add('', NOTHING_FOUND);
  return { source, input, errors: errors.done() };
}

// ---- typed events ---------------------------------------------------------------------------

const nonEmptyString = z.string().min(1);
// Not z.record: it would turn a `__proto__` key of arguments or results into the prototype.
const jsonObject = jsonObjectSchema('an object', 'A JSON object.');
const callEvent = z.strictObject({
  kind: z.literal('call'),
  id: nonEmptyString,
  tool: nonEmptyString,
  args: jsonObject,
});
const resultEvent = z.strictObject({
  kind: z.literal('result'),
  callId: nonEmptyString,
  ok: z.boolean(),
  output: jsonObject,
});
const decisionEvent = z.strictObject({
  kind: z.literal('decision'),
  callId: nonEmptyString,
  outcome: z.enum(['allow', 'deny', 'require_approval']),
});
const typedEvents = z.array(z.discriminatedUnion('kind', [callEvent, resultEvent, decisionEvent]));
const FIELDS_OF = {
  call: 'kind, id, tool, args',
  result: 'kind, callId, ok, output',
  decision: 'kind, callId, outcome',
} as const;

function readTypedEvents(document: unknown[], source: string): ReadResult {
  const errors = new ErrorList(source);
  const parsed = typedEvents.safeParse(document);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) errors.add(pathText(issue.path), issueMessage(issue, document));
    return { source, errors: errors.done() };
  }
  const events: TypedEvent[] = parsed.data;
  checkCallIds(events, errors);
  return { source, input: { format: 'typed-events', events }, errors: errors.done() };
}

/**
 * Ids join results and decisions to calls: each call id is unique, each result answers one
 * earlier call, once, and each decision names an earlier call.
 */
function checkCallIds(events: readonly TypedEvent[], errors: ErrorList): void {
  const calls = new Map<string, number>();
  const results = new Map<string, number>();
  events.forEach((event, index) => {
    if (event.kind === 'call') {
      const first = calls.get(event.id);
      if (first !== undefined)
        errors.add(`[${index}].id`, `call id "${event.id}" is already used by [${first}]`);
      else calls.set(event.id, index);
      return;
    }
    if (event.kind === 'decision') {
      if (!calls.has(event.callId))
        errors.add(`[${index}].callId`, `no earlier call has id "${event.callId}"`);
      return;
    }
    const answered = results.get(event.callId);
    if (!calls.has(event.callId)) {
      errors.add(`[${index}].callId`, `no earlier call has id "${event.callId}"`);
    } else if (answered !== undefined) {
      errors.add(`[${index}].callId`, `call "${event.callId}" already has a result at [${answered}]`);
    } else {
      results.set(event.callId, index);
    }
  });
}

/** zod's issue in the words of this file format: `expected boolean, got string`. */
function issueMessage(issue: z.core.$ZodIssue, document: unknown): string {
  const value = valueAt(document, issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      const expected = issue.expected === 'record' ? 'object' : issue.expected;
      return value === undefined
        ? `missing; expected ${expected}`
        : `expected ${expected}, got ${typeName(value)}`;
    }
    case 'too_small':
      return issue.origin === 'string' ? 'must not be empty' : issue.message;
    case 'unrecognized_keys': {
      const kind =
        isObject(value) && (value.kind === 'call' || value.kind === 'result' || value.kind === 'decision')
          ? value.kind
          : undefined;
      const fields = kind ? `; a ${kind} has ${FIELDS_OF[kind]}` : '';
      const keys = issue.keys.map((key) => JSON.stringify(key)).join(', ');
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}${fields}`;
    }
    case 'invalid_union':
      if (issue.discriminator === 'kind') {
        return `expected "call", "result" or "decision", got ${value === undefined ? 'nothing' : JSON.stringify(value)}`;
      }
      return `expected a JSON value, got ${typeName(value)}`;
    default:
      return issue.message;
  }
}

// ---- helpers --------------------------------------------------------------------------------

/** Collects errors up to {@link MAX_ERRORS}, then only counts them. */
class ErrorList {
  readonly list: InputError[] = [];
  private omitted = 0;
  constructor(private readonly source: string) {}

  add(location: string, message: string): void {
    if (this.list.length >= MAX_ERRORS) {
      this.omitted++;
      return;
    }
    this.list.push(location ? { source: this.source, location, message } : { source: this.source, message });
  }

  done(): InputError[] {
    if (this.omitted > 0)
      this.list.push({ source: this.source, message: `${this.omitted} more errors not listed` });
    return this.list;
  }
}

function failed(source: string, message: string): ReadResult {
  return { source, errors: [{ source, message }] };
}

interface NumberedLine {
  number: number;
  text: string;
}

function nonBlankLines(text: string): NumberedLine[] {
  const lines: NumberedLine[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() !== '') lines.push({ number: index + 1, text: line });
  });
  return lines;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOtlpRequest(value: unknown): value is Record<string, unknown> {
  return isObject(value) && 'resourceSpans' in value;
}

function joinPath(prefix: string, path: string): string {
  if (!path) return prefix;
  return prefix && !path.startsWith('[') ? `${prefix}.${path}` : prefix + path;
}

function withPath(error: DecodeError): string {
  return error.path ? `${error.path}: ${error.message}` : error.message;
}

/** `[3].args.order_id`; keys that are not identifiers are quoted: `[3].args["order id"]`. */
function pathText(path: readonly PropertyKey[]): string {
  return path
    .map((part) =>
      typeof part === 'number'
        ? `[${part}]`
        : /^[A-Za-z_$][\w$]*$/.test(String(part))
          ? `.${String(part)}`
          : `[${JSON.stringify(String(part))}]`,
    )
    .join('')
    .replace(/^\./, '');
}

function valueAt(document: unknown, path: readonly PropertyKey[]): unknown {
  let value = document;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** A document that is not a trace, described so the user recognizes it. */
function describeDocument(value: unknown): string {
  if (!isObject(value)) return typeName(value);
  const keys = Object.keys(value);
  if ('resource_spans' in value)
    return 'an object with "resource_spans" (OTLP JSON field names are lowerCamelCase: "resourceSpans")';
  if (keys.length === 0) return 'an empty object';
  const shown = keys.slice(0, 5).map((key) => JSON.stringify(key));
  return `an object with keys ${shown.join(', ')}${keys.length > 5 ? ', ...' : ''}`;
}
