/**
 * SDK spans packed for a worker thread: the strings of a batch of traces in one list, everything
 * else (lengths, tags, numbers, times) on a tape of doubles. Posting spans as objects costs the
 * app's thread a structured clone of the whole graph (docs/performance.md: more, for an agent
 * conversation, more than making the records); posting a list of strings and one transferred
 * buffer costs a copy of the text. The worker unpacks the SpanRecords `fromReadableSpan` would
 * have made, value for value. A long attribute string that extends an earlier one of the batch
 * (a chat history: the previous turn's plus what happened since) is packed as that one's number
 * and what it adds, and unpacked as the two joined, with a note for the history reader
 * (model/text-extensions.ts): a long conversation costs the pack its new text once, not every
 * history whole.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { hrTimeToNanos, lowercase, SPAN_KIND_NAMES, setKey, statusOf, textOf } from '../io/readable-span.js';
import type { Attributes, AttributeValue, ScopeRecord, SpanRecord } from '../model/span-record.js';
import {
  MIN_EXTENDED_LENGTH,
  newTextRef,
  noteText,
  RecentStrings,
  type TextNote,
  type TextRef,
} from '../model/text-extensions.js';

/** A batch of traces' spans, packed. `tape` is transferable. */
export interface SpanPack {
  /** The strings, in the order the tape reads them. */
  texts: string[];
  tape: Float64Array<ArrayBuffer>;
}

/** No string here (an absent optional field). */
const ABSENT = -1;

enum Tag {
  Null = 0,
  String = 1,
  Number = 2,
  True = 3,
  False = 4,
  Array = 5,
  Map = 6,
  Bytes = 7,
  /** A long string that extends an earlier one: the earlier one's number, then the added text. */
  Extension = 8,
}

type SdkAttributes = ReadableSpan['attributes'];

/** Packs traces of spans (each trace's spans as the processor buffered them). */
export function packTraces(traces: readonly (readonly ReadableSpan[])[]): SpanPack {
  const packer = new Packer();
  packer.number(traces.length);
  for (const spans of traces) {
    packer.number(spans.length);
    for (const span of spans) packer.span(span);
  }
  return packer.done();
}

/** Unpacks what {@link packTraces} packed: per trace, the records `fromReadableSpan` makes. Throws on a damaged pack. */
export function unpackTraces(pack: SpanPack): SpanRecord[][] {
  const unpacker = new Unpacker(pack);
  const traces: SpanRecord[][] = [];
  for (let t = unpacker.count(); t > 0; t--) {
    const spans: SpanRecord[] = [];
    for (let s = unpacker.count(); s > 0; s--) spans.push(unpacker.span());
    traces.push(spans);
  }
  unpacker.end();
  return traces;
}

class Packer {
  private readonly texts: string[] = [];
  private tape: Float64Array<ArrayBuffer> = new Float64Array(1024);
  private length = 0;
  /** Spans of a tracer share their resource and scope: packed once, then by number. */
  private readonly resources = new Map<ReadableSpan['resource'], number>();
  private readonly scopes = new Map<ReadableSpan['instrumentationScope'], number>();
  /** Long attribute strings: a chat history is packed as the one it extends plus what it adds. */
  private readonly recent = new RecentStrings();

  done(): SpanPack {
    // The strings go as they are: joining them into one text for the post costs the app's thread
    // a copy more than the structured clone of the list does (docs/performance.md).
    return { texts: this.texts, tape: this.tape.slice(0, this.length) };
  }

  number(value: number): void {
    if (this.length === this.tape.length) {
      const grown = new Float64Array(this.tape.length * 2);
      grown.set(this.tape);
      this.tape = grown;
    }
    this.tape[this.length++] = value;
  }

  /**
   * A string, or ABSENT for undefined. The SDK keeps whatever a JavaScript caller passed as a name
   * or id: anything else is packed as its text, so one odd span costs its trace a string, not the batch.
   */
  string(value: unknown): void {
    if (value === undefined) {
      this.number(ABSENT);
      return;
    }
    const text = typeof value === 'string' ? value : String(value);
    this.number(text.length);
    this.texts.push(text);
  }

  /** A string that must be there: absent (undefined, null) packs as the empty string, as {@link textOf} reads it. */
  required(value: unknown): void {
    this.string(textOf(value));
  }

  /** An HrTime; what is not a number reads as NaN, which `hrTimeToNanos` reads as 0, as it would the original. */
  time(time: readonly unknown[]): void {
    this.number(typeof time[0] === 'number' ? time[0] : Number.NaN);
    this.number(typeof time[1] === 'number' ? time[1] : Number.NaN);
  }

  span(span: ReadableSpan): void {
    const context = span.spanContext();
    this.required(context.traceId);
    this.required(context.spanId);
    this.string(span.parentSpanContext?.spanId || undefined);
    this.required(span.name);
    this.number(span.kind);
    this.time(span.startTime);
    this.number(span.ended ? 1 : 0);
    this.time(span.endTime);
    this.number(span.status.code);
    this.string(span.status.message || undefined);
    this.attributes(span.attributes);
    this.number(span.events.length);
    for (const event of span.events) {
      this.required(event.name);
      this.time(event.time);
      this.attributes(event.attributes);
    }
    this.number(span.links.length);
    for (const link of span.links) {
      this.required(link.context.traceId);
      this.required(link.context.spanId);
      this.attributes(link.attributes);
    }
    this.resource(span.resource);
    this.scope(span.instrumentationScope);
  }

  /** A resource's number; the first time, its attributes follow. */
  private resource(resource: ReadableSpan['resource']): void {
    if (this.numbered(this.resources, resource)) this.attributes(resource.attributes);
  }

  /** A scope's number; the first time, its name, version and attributes follow. */
  private scope(scope: ReadableSpan['instrumentationScope']): void {
    if (!this.numbered(this.scopes, scope)) return;
    this.required(scope.name);
    this.string(scope.version || undefined);
    // 3.x scopes may carry attributes; 2.x ones do not.
    this.attributes((scope as { attributes?: SdkAttributes }).attributes);
  }

  /** Packs `key`'s number in `table`, numbering it if new; true when new (its content follows). */
  private numbered<K>(table: Map<K, number>, key: K): boolean {
    const known = table.get(key);
    if (known !== undefined) {
      this.number(known);
      return false;
    }
    table.set(key, table.size);
    this.number(table.size - 1);
    return true;
  }

  private attributes(attributes: SdkAttributes | undefined): void {
    if (!attributes) {
      this.number(0);
      return;
    }
    const keys = Object.keys(attributes);
    this.number(keys.length);
    for (const key of keys) {
      this.string(key);
      this.value(attributes[key]);
    }
  }

  /** The value `toAttributeValue` in readable-span.ts would make, tagged. */
  private value(value: unknown): void {
    if (value === undefined || value === null) {
      this.number(Tag.Null);
      return;
    }
    switch (typeof value) {
      case 'string': {
        const extended = this.recent.extends(value);
        if (extended === undefined) {
          this.number(Tag.String);
          this.string(value);
        } else {
          this.number(Tag.Extension);
          this.number(extended.id);
          this.string(value.substring(extended.shared));
        }
        return;
      }
      case 'number':
        this.number(Tag.Number);
        this.number(value);
        return;
      case 'boolean':
        this.number(value ? Tag.True : Tag.False);
        return;
      case 'object':
        if (value instanceof Uint8Array) {
          this.number(Tag.Bytes);
          this.number(value.length);
          for (const byte of value) this.number(byte);
        } else if (Array.isArray(value)) {
          this.number(Tag.Array);
          this.number(value.length);
          for (const item of value) this.value(item);
        } else {
          this.number(Tag.Map);
          this.attributes(value as SdkAttributes);
        }
        return;
      default:
        this.number(Tag.Null);
    }
  }
}

class Unpacker {
  private readonly texts: readonly string[];
  private readonly tape: Float64Array;
  private at = 0;
  private textAt = 0;
  private readonly resources: Attributes[] = [];
  private readonly scopes: ScopeRecord[] = [];
  /** Long attribute strings by number, as {@link RecentStrings} numbers them: each but its last character, and what stands for it. */
  private readonly opens: string[] = [];
  private readonly refs: TextRef[] = [];
  /** What is known of the value last read, when it is a long string, for its attributes to note. */
  private note: TextNote | undefined;

  constructor(pack: SpanPack) {
    this.texts = pack.texts;
    this.tape = pack.tape;
  }

  end(): void {
    if (this.at !== this.tape.length || this.textAt !== this.texts.length)
      this.damaged('data after the last trace');
  }

  number(): number {
    if (this.at >= this.tape.length) this.damaged('the tape ends early');
    return this.tape[this.at++] as number;
  }

  /** A count of items to come; each takes at least one number on the tape. */
  count(): number {
    const value = this.number();
    if (!Number.isInteger(value) || value < 0 || value > this.tape.length - this.at)
      this.damaged(`a count of ${value}`);
    return value;
  }

  /** A resource's or scope's number. */
  index(): number {
    const value = this.number();
    if (!Number.isInteger(value) || value < 0) this.damaged(`an index of ${value}`);
    return value;
  }

  string(): string | undefined {
    const length = this.number();
    if (length === ABSENT) return undefined;
    const value = this.texts[this.textAt];
    if (typeof value !== 'string' || value.length !== length) this.damaged(`a string of length ${length}`);
    this.textAt++;
    return value;
  }

  required(): string {
    const value = this.string();
    if (value === undefined) this.damaged('a required string is absent');
    return value;
  }

  span(): SpanRecord {
    const traceId = lowercase(this.required());
    const spanId = lowercase(this.required());
    const parentSpanId = this.string();
    const name = this.required();
    const kind = SPAN_KIND_NAMES[this.number()] ?? 'unspecified';
    const startTimeUnixNano = hrTimeToNanos([this.number(), this.number()]);
    const ended = this.number() === 1;
    const end = hrTimeToNanos([this.number(), this.number()]);
    const status = statusOf(this.number(), this.string());
    const attributes = this.attributes();
    const events = Array.from({ length: this.count() }, () => ({
      name: this.required(),
      timeUnixNano: hrTimeToNanos([this.number(), this.number()]),
      attributes: this.attributes(),
    }));
    const links = Array.from({ length: this.count() }, () => ({
      traceId: lowercase(this.required()),
      spanId: lowercase(this.required()),
      attributes: this.attributes(),
    }));
    return {
      traceId,
      spanId,
      parentSpanId: parentSpanId === undefined ? undefined : lowercase(parentSpanId),
      name,
      kind,
      startTimeUnixNano,
      endTimeUnixNano: ended ? end : undefined,
      status,
      attributes,
      events,
      links,
      resource: this.resource(),
      scope: this.scope(),
    };
  }

  private resource(): Attributes {
    const index = this.index();
    if (index < this.resources.length) return this.resources[index] as Attributes;
    if (index !== this.resources.length) this.damaged(`resource ${index} before ${this.resources.length}`);
    const attributes = this.attributes();
    this.resources.push(attributes);
    return attributes;
  }

  private scope(): ScopeRecord {
    const index = this.index();
    if (index < this.scopes.length) return this.scopes[index] as ScopeRecord;
    if (index !== this.scopes.length) this.damaged(`scope ${index} before ${this.scopes.length}`);
    const scope: ScopeRecord = { name: this.required() };
    const version = this.string();
    if (version !== undefined) scope.version = version;
    const attributes = this.attributes();
    if (Object.keys(attributes).length > 0) scope.attributes = attributes;
    this.scopes.push(scope);
    return scope;
  }

  private attributes(): Attributes {
    const result: Attributes = {};
    for (let n = this.count(); n > 0; n--) {
      const key = this.required();
      this.note = undefined;
      const value = this.value();
      // Only a string value itself: one inside a list leaves its note behind, unused.
      const note = typeof value === 'string' ? this.note : undefined;
      setKey(result, key, value);
      if (note !== undefined) noteText(result, key, value as string, note);
    }
    return result;
  }

  /** A long string is numbered, as the packer numbered it; shorter ones are not. */
  private longString(value: string): string {
    if (value.length >= MIN_EXTENDED_LENGTH) {
      const ref = newTextRef();
      this.opens.push(value.slice(0, -1));
      this.refs.push(ref);
      this.note = { ref };
    }
    return value;
  }

  /** The earlier string's number, then the added text: the two joined, not copied, and noted. */
  private extendedString(): string {
    const id = this.index();
    const earlier = this.refs[id];
    if (earlier === undefined) this.damaged(`an extension of string ${id} of ${this.refs.length}`);
    const added = this.required();
    const open = this.opens[id] as string;
    const value = open + added;
    if (value.length < MIN_EXTENDED_LENGTH || added.length === 0) this.damaged('an extension too short');
    const ref = newTextRef();
    this.opens.push(open + added.slice(0, -1));
    this.refs.push(ref);
    this.note = { ref, extension: { earlier, added } };
    return value;
  }

  private value(): AttributeValue {
    const tag = this.number();
    switch (tag) {
      case Tag.Null:
        return null;
      case Tag.String:
        return this.longString(this.required());
      case Tag.Extension:
        return this.extendedString();
      case Tag.Number:
        return this.number();
      case Tag.True:
        return true;
      case Tag.False:
        return false;
      case Tag.Array:
        return Array.from({ length: this.count() }, () => this.value());
      case Tag.Map:
        return this.attributes();
      case Tag.Bytes:
        return Uint8Array.from({ length: this.count() }, () => this.number());
      default:
        return this.damaged(`a value tagged ${tag}`);
    }
  }

  private damaged(what: string): never {
    throw new Error(`toolpath: a damaged span pack (${what}, at ${this.at} of ${this.tape.length})`);
  }
}
