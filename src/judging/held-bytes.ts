/**
 * What a buffered span costs the heap, estimated, for `limits.maxBufferedBytes` of the adapter and
 * of the processor. A count of spans does not bound memory once spans carry chat histories: one
 * span can hold a hundred kilobytes. Everything a span holds is counted: name, status message, tracestate, every
 * attribute's key and value, events and links; its resource and scope by their owner
 * ({@link sharedBytes}), as several spans share them. Text at two bytes a character (V8 keeps text
 * with any character past U+00FF so), and fixed costs per record, per value and per trace, set
 * so that the estimate is 1.3-1.9x the heap measured after GC for bench/collector's chat spans
 * and for spans of 30 short attributes and 3 events (the adapter's records; for the processor's
 * SDK spans, 1.05x for small ones and 2x for chat spans, measured in review). What a value shares
 * with an earlier value of its trace is taken off by the adapter, which knows (continued-texts.ts).
 */
import { getHeapStatistics } from 'node:v8';
import type { Attributes, ScopeRecord } from '../model/span-record.js';

/** What the estimate reads of a span: a SpanRecord (the adapter's) or an SDK ReadableSpan (the processor's). */
export interface SpanLike {
  readonly name: string;
  readonly attributes: object;
  readonly events: readonly { readonly name: string; readonly attributes?: object }[];
  readonly links: readonly { readonly attributes?: object; readonly traceState?: string }[];
  readonly status: { readonly message?: string };
  readonly traceState?: string;
}

/** A buffered trace's own records: its entry, its state, its decision later. */
export const TRACE_BYTES = 1_024;
/** A span record besides its text: ids, times, status, the objects holding them. */
const SPAN_BYTES = 640;
/** An event, a link or a scope besides its text. */
const ENTRY_BYTES = 160;
/** An attribute besides its key's and value's characters: its slot, the strings' headers, a number. */
const VALUE_BYTES = 48;
/** Bytes per character of text. */
export const BYTES_PER_CHAR = 2;

/**
 * The heap a buffered span holds of its own, its resource and scope aside (see the module comment).
 * Reads only what is there: an SDK span made by hand may lack a name or carry an event named by a
 * number, and the estimate must neither throw nor become NaN (a span would be lost, the cap off).
 */
export function heldBytes(span: SpanLike): number {
  let bytes =
    SPAN_BYTES +
    BYTES_PER_CHAR * (chars(span.name) + chars(span.status?.message) + chars(span.traceState)) +
    attributesBytes(span.attributes);
  for (const event of span.events ?? [])
    bytes += ENTRY_BYTES + BYTES_PER_CHAR * chars(event?.name) + attributesBytes(event?.attributes);
  for (const link of span.links ?? [])
    bytes += ENTRY_BYTES + BYTES_PER_CHAR * chars(link?.traceState) + attributesBytes(link?.attributes);
  return bytes;
}

/** A string's length; 0 for anything else. */
function chars(text: unknown): number {
  return typeof text === 'string' ? text.length : 0;
}

/** The heap a resource and a scope hold, which the spans of one resource and scope share. */
export function sharedBytes(resource: Attributes, scope: ScopeRecord): number {
  return (
    2 * ENTRY_BYTES +
    attributesBytes(resource) +
    BYTES_PER_CHAR * (scope.name.length + (scope.version?.length ?? 0)) +
    (scope.attributes ? attributesBytes(scope.attributes) : 0)
  );
}

function attributesBytes(attributes: object | undefined): number {
  if (typeof attributes !== 'object' || attributes === null) return 0;
  let bytes = 0;
  // for-in, not Object.keys: no array per object (attributes are plain objects, nothing inherited).
  for (const key in attributes)
    bytes += BYTES_PER_CHAR * key.length + valueBytes((attributes as Record<string, unknown>)[key]);
  return bytes;
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return VALUE_BYTES + BYTES_PER_CHAR * value.length;
  if (typeof value !== 'object' || value === null) return VALUE_BYTES;
  if (value instanceof Uint8Array) return VALUE_BYTES + value.byteLength;
  if (Array.isArray(value)) {
    let bytes = VALUE_BYTES;
    for (const item of value) bytes += valueBytes(item);
    return bytes;
  }
  return VALUE_BYTES + attributesBytes(value);
}

/** A default cap: `most` bytes, or `heapShare` of the heap V8 may grow to when that is less. */
export function defaultMaxBufferedBytes(most: number, heapShare: number): number {
  return Math.min(most, Math.floor(getHeapStatistics().heap_size_limit * heapShare));
}

/** What a trace's held spans take, kept in its per-trace state. */
export interface BytesOfTrace {
  bytes: number;
}

/**
 * The bytes both front doors hold, against their `limits.maxBufferedBytes`: added span by span to
 * each trace's state and the total, and taken off whole when the trace is finished or let go
 * (once, whichever comes first).
 */
export class HeldBytes {
  /** What all held traces take, estimated. */
  total = 0;

  /** Throws a RangeError for a cap that is not a number of at least 1 (Infinity turns it off). */
  constructor(readonly max: number) {
    if (!(max >= 1)) throw new RangeError(`limits.maxBufferedBytes must be at least 1, got ${max}`);
  }

  /** Whether the cap is reached. */
  full(): boolean {
    return this.total >= this.max;
  }

  /** Whether `bytes` more would pass the cap. */
  wouldPass(bytes: number): boolean {
    return this.total + bytes > this.max;
  }

  hold(trace: BytesOfTrace, bytes: number): void {
    trace.bytes += bytes;
    this.total += bytes;
  }

  release(trace: BytesOfTrace): void {
    this.total -= trace.bytes;
    trace.bytes = 0;
  }
}
