/**
 * The leaves of OTLP JSON: ids, enums, 64-bit integers, AnyValues and attribute lists. Each
 * decoder returns its value or an {@link Invalid} naming the field, so `otlp-json.ts` can reject
 * one span and keep the rest.
 */
import { MAX_JSON_DEPTH, TOO_DEEP_TEXT } from '../model/json-depth.js';
import type { Attributes, AttributeValue, SpanKindName, StatusCodeName } from '../model/span-record.js';
import { noteText, type TextNote } from '../model/text-extensions.js';
import type { ExtendingStrings } from './extending-texts.js';

/**
 * Why a value was rejected, with its path relative to the caller. Returned rather than thrown:
 * callers prefix their own path segment, and only on this (rare) path are strings built.
 */
export class Invalid {
  constructor(
    readonly path: string,
    readonly message: string,
  ) {}

  /** The same problem, found inside `prefix` (a path the value sits at). */
  under(prefix: string): Invalid {
    return new Invalid(prefix + this.path, this.message);
  }
}

/**
 * An AnyValue nested deeper than {@link MAX_JSON_DEPTH}: not a broken span, a value too deep to
 * read. The attribute holding it keeps {@link TOO_DEEP_TEXT} and the span is kept, so its trace
 * is still judged whole (a rule that needs the value says it cannot decide).
 */
export class TooDeepValue extends Invalid {
  constructor(path = '') {
    super(path, `value nested deeper than ${MAX_JSON_DEPTH} levels`);
  }

  override under(prefix: string): Invalid {
    return new TooDeepValue(prefix + this.path);
  }
}

/** Span kinds by their OTLP enum number. */
export const SPAN_KINDS: readonly SpanKindName[] = [
  'unspecified',
  'internal',
  'server',
  'client',
  'producer',
  'consumer',
];
/** Status codes by their OTLP enum number. */
export const STATUS_CODES: readonly StatusCodeName[] = ['unset', 'ok', 'error'];
const MAX_UINT64 = 2n ** 64n - 1n;
/** `^-?[0-9]+$`, checked without a regex: this runs for every timestamp of every span. */
function isDecimalInteger(text: string): boolean {
  let i = text.charCodeAt(0) === 0x2d ? 1 : 0; // '-'
  if (i === text.length) return false;
  for (; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const ANY_VALUE_FIELDS = new Set([
  'stringValue',
  'boolValue',
  'intValue',
  'doubleValue',
  'arrayValue',
  'kvlistValue',
  'bytesValue',
]);

const MAX_UINT32 = 2 ** 32 - 1;

/** Enums come as integers, or as their proto names (`SPAN_KIND_SERVER`), which proto3 JSON also allows. */
export function decodeEnum<T extends string>(
  raw: unknown,
  names: readonly T[],
  prefix: string,
  at: string,
): T | Invalid {
  if (raw == null) return names[0] as T;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0 && raw < names.length)
    return names[raw] as T;
  if (typeof raw === 'string' && raw.startsWith(prefix)) {
    const index = names.indexOf(raw.slice(prefix.length).toLowerCase() as T);
    if (index >= 0) return names[index] as T;
  }
  const accepted = `0-${names.length - 1} or ${names.map((n) => prefix + n.toUpperCase()).join(', ')}`;
  return new Invalid(at, `expected ${accepted}, got ${preview(raw)}`);
}

/** A string field; absent (proto3's default) is the empty string. */
export function decodeString(raw: unknown, at: string): string | Invalid {
  if (raw == null) return '';
  return typeof raw === 'string' ? raw : new Invalid(at, `expected a string, got ${describe(raw)}`);
}

/** A trace id (32 hex) or span id (16 hex), returned lowercase. */
export function decodeId(raw: unknown, at: string, hexLength: 16 | 32): string | Invalid {
  const what = hexLength === 32 ? 'trace id' : 'span id';
  if (typeof raw !== 'string' || raw === '') {
    return new Invalid(
      at,
      `expected a ${what} of ${hexLength} hex characters, got ${raw === '' ? 'an empty string' : describe(raw)}`,
    );
  }
  if (raw.length === hexLength) {
    const checked = checkHex(raw);
    // The common case, valid lowercase hex, is returned as is: no regexes, no lowercased copy.
    if (checked === LOWER_HEX) return raw;
    if (checked === UPPER_HEX) return raw.toLowerCase();
    if (checked === ZERO_HEX) return new Invalid(at, `an all-zero ${what} is invalid`);
  }
  // A generic proto3-JSON writer base64-encodes ids; say so, since that is the usual cause.
  const base64Length = hexLength === 32 ? 24 : 12;
  const hint = raw.length === base64Length && BASE64.test(raw) ? '; OTLP JSON ids are hex, not base64' : '';
  return new Invalid(
    at,
    `expected ${hexLength} hex characters, got ${preview(raw)} (${raw.length} characters)${hint}`,
  );
}

/** The last id read through it, as written and as decoded. */
export interface IdMemo {
  raw: string;
  id: string;
}
/** Spans of a request share their trace id, and siblings their parent. */
export const TRACE_IDS: IdMemo = { raw: '', id: '' };
export const PARENT_IDS: IdMemo = { raw: '', id: '' };

/**
 * {@link decodeId} through `memo`: an id written as the last one was is that one's string, so the
 * spans share one (the parsed copy is left to the garbage collector while it is young).
 */
export function decodeSharedId(raw: unknown, at: string, hexLength: 16 | 32, memo: IdMemo): string | Invalid {
  if (typeof raw === 'string' && raw !== '' && raw === memo.raw) return memo.id;
  const id = decodeId(raw, at, hexLength);
  if (typeof id === 'string') {
    memo.raw = raw as string;
    memo.id = id;
  }
  return id;
}

const LOWER_HEX = 0;
const UPPER_HEX = 1;
const ZERO_HEX = 2;
const NOT_HEX = 3;

/** One pass over an id: not hex, all zero, hex with an uppercase digit, or lowercase hex. */
function checkHex(raw: string): number {
  let upper = false;
  let nonZero = false;
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code >= 0x30 && code <= 0x39) {
      if (code !== 0x30) nonZero = true;
    } else if (code >= 0x61 && code <= 0x66) nonZero = true;
    else if (code >= 0x41 && code <= 0x46) {
      nonZero = true;
      upper = true;
    } else return NOT_HEX;
  }
  if (!nonZero) return ZERO_HEX;
  return upper ? UPPER_HEX : LOWER_HEX;
}

/**
 * Bare JSON integers beyond 2^53 met in timestamp and intValue positions since the counter was
 * reset: JSON.parse may have rounded them, so `decodeOtlpJsonText` decodes again with them exact.
 * Module state is safe here: decoding is synchronous.
 */
export const unsafeIntegers = { seen: 0 };

/** A fixed64 nanosecond time, as a decimal string or an integer number; absent is 0. */
export function decodeTimestamp(raw: unknown, at: string): bigint | Invalid {
  if (raw == null) return 0n;
  if (typeof raw === 'string' && isDecimalInteger(raw)) {
    const value = BigInt(raw);
    if (value >= 0n && value <= MAX_UINT64) return value;
  } else if (typeof raw === 'number' && Number.isInteger(raw)) {
    // Counted even when negative, so the error quotes the value as written, not rounded.
    if (!Number.isSafeInteger(raw)) unsafeIntegers.seen++;
    if (raw >= 0) return BigInt(raw);
  }
  return new Invalid(
    at,
    `expected nanoseconds since the epoch (an unsigned 64-bit integer), got ${preview(raw)}`,
  );
}

/**
 * A uint32 count (the dropped counts), as a number or a decimal string; absent, or not such a
 * count, is 0: the judge never reads these, so a bad one costs the count, never the span.
 */
export function readCount(raw: unknown): number {
  const value = typeof raw === 'string' && isDecimalInteger(raw) ? Number(raw) : raw;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_UINT32
    ? value
    : 0;
}

/**
 * An int64 attribute: a number when exact, else its canonical decimal string, so nothing is lost.
 * Not range-checked: the JS SDK writes any integral number as intValue (even 1e21), and dropping
 * a span over an attribute value would lose more than it protects.
 */
function decodeInt(raw: unknown): AttributeValue | Invalid {
  if (typeof raw === 'string' && isDecimalInteger(raw)) {
    // Up to 15 digits a double is exact: skip the BigInt.
    if (raw.length <= 15) return Number(raw) || 0;
    const value = BigInt(raw);
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (typeof raw === 'number' && Number.isInteger(raw)) {
    if (Number.isSafeInteger(raw)) return raw || 0;
    unsafeIntegers.seen++;
    return BigInt(raw).toString();
  }
  return new Invalid('.intValue', `expected an integer (a decimal string or a number), got ${preview(raw)}`);
}

function decodeDouble(raw: unknown): number | Invalid {
  if (typeof raw === 'number') return raw;
  if (raw === 'NaN') return Number.NaN;
  if (raw === 'Infinity') return Number.POSITIVE_INFINITY;
  if (raw === '-Infinity') return Number.NEGATIVE_INFINITY;
  if (typeof raw === 'string' && JSON_NUMBER.test(raw)) return Number(raw);
  return new Invalid(
    '.doubleValue',
    `expected a number, "NaN", "Infinity" or "-Infinity", got ${preview(raw)}`,
  );
}

function decodeBytes(raw: unknown): Uint8Array | Invalid {
  if (typeof raw === 'string' && (raw === '' || BASE64.test(raw)))
    return Uint8Array.from(Buffer.from(raw, 'base64'));
  return new Invalid('.bytesValue', `expected base64, got ${preview(raw)}`);
}

/** An AnyValue: exactly one of its fields, or none (`{}`, which is null). */
function decodeAnyValue(raw: unknown, depth: number): AttributeValue | Invalid {
  if (raw == null) return null;
  if (!isObject(raw))
    return new Invalid('', `expected an AnyValue object (e.g. {"stringValue": "..."}), got ${describe(raw)}`);
  // Most values are strings: when no other field is set, skip the walk over the keys.
  const text = raw.stringValue;
  if (typeof text === 'string' && holdsOnlyString(raw)) return text;
  let field: string | undefined;
  for (const key in raw) {
    if (!ANY_VALUE_FIELDS.has(key) || raw[key] == null) continue;
    if (field !== undefined)
      return new Invalid('', `an AnyValue holds one value, got both ${field} and ${key}`);
    field = key;
  }
  switch (field) {
    case undefined:
      return null;
    case 'stringValue':
      return typeof raw.stringValue === 'string'
        ? raw.stringValue
        : new Invalid('.stringValue', `expected a string, got ${describe(raw.stringValue)}`);
    case 'boolValue':
      return typeof raw.boolValue === 'boolean'
        ? raw.boolValue
        : new Invalid('.boolValue', `expected true or false, got ${preview(raw.boolValue)}`);
    case 'intValue':
      return decodeInt(raw.intValue);
    case 'doubleValue':
      return decodeDouble(raw.doubleValue);
    case 'bytesValue':
      return decodeBytes(raw.bytesValue);
  }
  // Bounded recursion, so hostile input cannot overflow the stack.
  if (depth >= MAX_JSON_DEPTH) return new TooDeepValue();
  const container = raw[field as 'arrayValue' | 'kvlistValue'];
  if (!isObject(container))
    return new Invalid(`.${field}`, `expected an object with "values", got ${describe(container)}`);
  if (field === 'kvlistValue') return decodeKeyValues(container.values, '.kvlistValue.values', depth + 1);
  const values = container.values;
  if (values == null) return [];
  if (!Array.isArray(values))
    return new Invalid('.arrayValue.values', `expected an array, got ${describe(values)}`);
  const items: AttributeValue[] = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const item = decodeAnyValue(values[i], depth + 1);
    if (item instanceof Invalid) return item.under(`.arrayValue.values[${i}]`);
    items[i] = item;
  }
  return items;
}

/** No AnyValue field but stringValue is set (a field set elsewhere falls back to the key walk, which names both). */
function holdsOnlyString(raw: Record<string, unknown>): boolean {
  return (
    raw.boolValue == null &&
    raw.intValue == null &&
    raw.doubleValue == null &&
    raw.arrayValue == null &&
    raw.kvlistValue == null &&
    raw.bytesValue == null
  );
}

/** A `[{key, value}]` list (attributes, kvlistValue) as an object; a repeated key keeps its last value. */
export function decodeKeyValues(
  raw: unknown,
  at: string,
  depth: number,
  strings?: ExtendingStrings,
): Attributes | Invalid {
  const attributes: Attributes = {};
  if (raw == null) return attributes;
  if (!Array.isArray(raw))
    return new Invalid(at, `expected an array of {"key", "value"}, got ${describe(raw)}`);
  for (let i = 0; i < raw.length; i++) {
    const entry = raw[i];
    if (!isObject(entry))
      return new Invalid(`${at}[${i}]`, `expected a {"key", "value"} object, got ${describe(entry)}`);
    const written = entry.key;
    if (typeof written !== 'string') {
      return new Invalid(
        `${at}[${i}].key`,
        written === undefined ? 'missing key' : `expected a string, got ${describe(written)}`,
      );
    }
    const key = commonKey(written);
    let value = decodeAnyValue(entry.value, depth);
    // Too deep: the attribute says so and the span is kept; inside a kvlist, its attribute does.
    if (value instanceof TooDeepValue && depth === 0) value = TOO_DEEP_TEXT;
    else if (value instanceof Invalid) return value.under(`${at}[${i}].value`);
    let note: TextNote | undefined;
    if (strings !== undefined && typeof value === 'string') {
      value = strings.read(value);
      note = strings.note;
    }
    // `attributes["__proto__"] = v` would set the prototype, not a key.
    if (key === '__proto__')
      Object.defineProperty(attributes, key, { value, enumerable: true, writable: true, configurable: true });
    else attributes[key] = value;
    if (note !== undefined) noteText(attributes, key, value as string, note);
  }
  return attributes;
}

/**
 * Attribute keys repeat from span to span, but `JSON.parse` makes each a new string, and storing
 * a property under a new string makes V8 hash it and look it up among its property names. So the
 * keys seen last are kept in a few slots, and each slot remembers the slot read after it (spans
 * of one kind write their keys in the same order): a key equal to the one expected next is
 * that string, made a property name when first stored, found without hashing. Bounded: short
 * keys only, one a slot.
 */
const KEY_SLOTS = 256;
const MAX_CACHED_KEY = 64;
const cachedKeys: string[] = new Array(KEY_SLOTS).fill('');
/** The slot read after each slot the last time it was read. */
const nextKeySlots = new Int32Array(KEY_SLOTS);
let lastKeySlot = 0;

/** `key`, or an equal key seen before (see above). */
function commonKey(key: string): string {
  const expected = nextKeySlots[lastKeySlot] as number;
  const predicted = cachedKeys[expected] as string;
  if (predicted === key) {
    lastKeySlot = expected;
    return predicted;
  }
  if (key.length > MAX_CACHED_KEY) return key;
  // Not the one expected: its slot by a hash of its length and a few of its characters.
  const length = key.length;
  const slot =
    (Math.imul(length, 0x9e3779b1) ^
      (key.charCodeAt(length >> 1) << 4) ^
      (key.charCodeAt(length - 1) << 9) ^
      key.charCodeAt(length >> 2)) &
    (KEY_SLOTS - 1);
  nextKeySlots[lastKeySlot] = slot;
  lastKeySlot = slot;
  const cached = cachedKeys[slot] as string;
  if (cached === key) return cached;
  cachedKeys[slot] = key;
  return key;
}

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty array. */
export function hasItems(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

/** An object with at least one enumerable key. */
export function hasKeys(value: object): boolean {
  for (const _ in value) return true;
  return false;
}

/** The JSON type of a value, for messages: "got an array", "got number 5". */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `a string (${preview(value)})`;
  return `${typeof value} ${String(value)}`;
}

/** A short rendering of a scalar for messages; long strings are cut so one bad value cannot flood a log. */
function preview(value: unknown): string {
  if (typeof value !== 'string')
    return isObject(value) || Array.isArray(value) ? describe(value) : String(value);
  const cut = value.length > 40 ? `${value.slice(0, 40)}...` : value;
  return JSON.stringify(cut);
}
