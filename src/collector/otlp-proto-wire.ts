/**
 * The leaf readers of `otlp-proto.ts`'s one-pass decoder, on protobufjs's Reader: ids, strings,
 * 64-bit integers, AnyValues, attribute lists, and wire-type checks against the field numbers of
 * the schema in `otlp-proto-schema.ts`.
 */
import type protobuf from 'protobufjs';
import { MAX_JSON_DEPTH, TOO_DEEP_TEXT } from '../model/json-depth.js';
import type { Attributes, AttributeValue } from '../model/span-record.js';
import { noteText, type TextNote } from '../model/text-extensions.js';
import type { ExtendingTexts, HeldTexts } from './extending-texts.js';
import { Invalid, TooDeepValue } from './otlp-json-values.js';

/**
 * protobufjs's BufferReader. `buf` is a Buffer, whose `utf8Slice` and `hexSlice` (what
 * `toString` calls after argument checks, and what protobufjs itself uses) decode natively.
 */
export type ProtoReader = protobuf.Reader & {
  buf: Buffer & {
    utf8Slice(start: number, end: number): string;
    hexSlice(start: number, end: number): string;
  };
  /** The request's long string values, which later ones may extend. */
  texts: ExtendingTexts;
  /** The texts the adapter holds for a trace, which a long value may continue (ProtobufDecodeOptions). */
  heldTexts: ((traceId: string) => HeldTexts | undefined) | undefined;
};

/**
 * Bytes that are not the message they should be (truncated, a wrong wire type): thrown, since
 * it ends the whole request. `where` grows as the error leaves each nested message.
 */
export class Malformed extends Error {
  where = '';
}

/** `error` (ours or protobufjs's) as a Malformed, with `segment` (and `[index]`) prepended to where. */
export function within(error: unknown, segment: string, index = -1): Malformed {
  const malformed =
    error instanceof Malformed
      ? error
      : new Malformed(error instanceof RangeError ? `truncated (${error.message})` : String(error));
  malformed.where = (index < 0 ? segment : `${segment}[${index}]`) + malformed.where;
  return malformed;
}

/** `invalid` with `segment` (and `[index]`) prepended to its path; paths are built only for errors. */
export function locate(invalid: Invalid, segment: string, index = -1): Invalid {
  return invalid.under(index < 0 ? segment : `${segment}[${index}]`);
}

/** One length-delimited message field read with `read`; a Malformed error in it is located at `segment[index]`. */
export function readNested<A, T>(
  reader: ProtoReader,
  read: (reader: ProtoReader, end: number, arg: A, index: number) => T,
  arg: A,
  segment: string,
  index = -1,
): T {
  const end = lengthEnd(reader);
  try {
    return read(reader, end, arg, index);
  } catch (error) {
    throw within(error, segment, index);
  }
}

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;
const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'group start', 'group end', 'fixed32'];

/** A message's name and the wire type of each field number it defines (-1: none). */
export interface MessageFields {
  name: string;
  wires: readonly number[];
}
const fields = (name: string, wires: number[]): MessageFields => ({ name, wires });
export const REQUEST = fields('ExportTraceServiceRequest', [-1, LEN]);
export const RESOURCE_SPANS = fields('ResourceSpans', [-1, LEN, LEN, LEN]);
export const RESOURCE = fields('Resource', [-1, LEN, VARINT]);
export const SCOPE_SPANS = fields('ScopeSpans', [-1, LEN, LEN, LEN]);
export const SCOPE = fields('InstrumentationScope', [-1, LEN, LEN, LEN, VARINT]);
// biome-ignore format: one entry per field number
export const SPAN = fields('Span', [-1, LEN, LEN, LEN, LEN, LEN, VARINT, I64, I64, LEN, VARINT, LEN, VARINT, LEN, VARINT, LEN, I32]);
export const EVENT = fields('Event', [-1, I64, LEN, LEN, VARINT]);
export const LINK = fields('Link', [-1, LEN, LEN, LEN, LEN, VARINT, I32]);
export const STATUS = fields('Status', [-1, -1, LEN, VARINT]);
const KEY_VALUE = fields('KeyValue', [-1, LEN, LEN]);
const ANY_VALUE = fields('AnyValue', [-1, LEN, VARINT, VARINT, I64, LEN, LEN, LEN]);
const ARRAY_VALUE = fields('ArrayValue', [-1, LEN]);
const KEY_VALUE_LIST = fields('KeyValueList', [-1, LEN]);

/**
 * Skips a field the decoder does not read. Unknown fields are skipped, as protobuf requires; a
 * known field with another wire type means the bytes are not this message.
 */
export function skipField(reader: ProtoReader, tag: number, message: MessageFields): void {
  const field = tag >>> 3;
  const wire = tag & 7;
  if (field === 0) throw new Malformed(`${message.name} has a field number 0 (byte ${reader.pos})`);
  const expected = message.wires[field] ?? -1;
  if (expected !== -1 && expected !== wire) {
    throw new Malformed(
      `${message.name} field ${field} has wire type ${wire} (${WIRE_NAMES[wire] ?? 'invalid'}), expected ${expected} (${WIRE_NAMES[expected]})`,
    );
  }
  reader.skipType(wire);
}

/** Reads a length prefix; returns where the field ends, checked against the end of the body. */
export function lengthEnd(reader: ProtoReader): number {
  const length = reader.uint32();
  const end = reader.pos + length;
  if (end > reader.len)
    throw new Malformed(
      `truncated: ${length} bytes at byte ${reader.pos}, past the end of the body (${reader.len})`,
    );
  return end;
}

/** A field that ran past the end of its message: the lengths do not nest, so these are not OTLP bytes. */
export function verifyEnd(reader: ProtoReader, end: number, message: string): void {
  if (reader.pos !== end) throw new Malformed(`a field runs past the end of its ${message} (byte ${end})`);
}

export function readString(reader: ProtoReader): string {
  const end = lengthEnd(reader);
  // Not protobufjs's string(): it clips a string that runs past the body instead of failing.
  const value = reader.buf.utf8Slice(reader.pos, end);
  reader.pos = end;
  return value;
}

/** A string value: long ones may share the text of one read before them ({@link ExtendingTexts}). */
function readStringValue(reader: ProtoReader): string {
  const end = lengthEnd(reader);
  const start = reader.pos;
  reader.pos = end;
  return reader.texts.read(reader.buf, start, end);
}

/**
 * Strings that repeat across spans (attribute keys, span and event names) from a small cache of
 * the last ones seen: a hit skips the native decode and returns a string V8 has already
 * internalized as a property key. Bounded: one short string per slot, its bytes copied (into one
 * pool) so nothing pins a request. (Tried for string values too: no clear gain, and unique values
 * churn it.) Spans of one kind write their keys in the same order, so each slot remembers the
 * slot read after it: when the bytes are that slot's, neither hashing nor probing is needed.
 */
const CACHE_SLOTS = 1024;
const MAX_CACHED_LENGTH = 64;
const cachedPool = new Uint8Array(CACHE_SLOTS * MAX_CACHED_LENGTH);
/** Each slot's byte length; -1 while empty. */
const cachedLengths = new Int32Array(CACHE_SLOTS).fill(-1);
const cachedStrings: string[] = new Array(CACHE_SLOTS).fill('');
/** The slot read after each slot the last time it was read. */
const nextSlots = new Int32Array(CACHE_SLOTS);
let lastSlot = 0;

/** Whether slot `slot` holds the bytes `buf[start, start + length)`. */
function holds(slot: number, buf: Uint8Array, start: number, length: number): boolean {
  if (cachedLengths[slot] !== length) return false;
  const at = slot * MAX_CACHED_LENGTH;
  for (let i = 0; i < length; i++) if (cachedPool[at + i] !== buf[start + i]) return false;
  return true;
}

/** A string field, through the cache of repeated strings. */
export function readCommonString(reader: ProtoReader): string {
  const end = lengthEnd(reader);
  const start = reader.pos;
  const length = end - start;
  reader.pos = end;
  const buf = reader.buf;
  if (length > MAX_CACHED_LENGTH) return buf.utf8Slice(start, end);
  const expected = nextSlots[lastSlot] as number;
  if (holds(expected, buf, start, length)) {
    lastSlot = expected;
    return cachedStrings[expected] as string;
  }
  let hash = length;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (buf[i] as number), 0x01000193);
  const slot = (hash ^ (hash >>> 15)) & (CACHE_SLOTS - 1);
  nextSlots[lastSlot] = slot;
  lastSlot = slot;
  if (holds(slot, buf, start, length)) return cachedStrings[slot] as string;
  const value = buf.utf8Slice(start, end);
  cachedPool.set(buf.subarray(start, end), slot * MAX_CACHED_LENGTH);
  cachedLengths[slot] = length;
  cachedStrings[slot] = value;
  return value;
}

/** Eight bytes seen as one unsigned 64-bit integer: one BigInt made, not three. */
const fixed64Bytes = new Uint8Array(8);
const fixed64Value = new BigUint64Array(fixed64Bytes.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A fixed64 (nanosecond time) as an exact bigint. */
export function readFixed64(reader: ProtoReader): bigint {
  const pos = reader.pos;
  if (!LITTLE_ENDIAN || pos + 8 > reader.len) {
    // protobufjs's fixed32 throws the RangeError for a truncated field.
    const low = reader.fixed32();
    const high = reader.fixed32();
    // high * 2^32 is an exact double (a 32-bit integer times a power of two), so one addition is left.
    return high === 0 ? BigInt(low) : BigInt(high * 4294967296) + BigInt(low);
  }
  const buf = reader.buf;
  const bytes = fixed64Bytes;
  for (let i = 0; i < 8; i++) bytes[i] = buf[pos + i] as number;
  reader.pos = pos + 8;
  return fixed64Value[0] as bigint;
}

/**
 * An int64 varint: a number when exactly representable, else its decimal string (as the JSON
 * decoder gives). Read here, not with protobufjs's int64(), which near the end of the body
 * drops the bytes of a varint longer than four.
 */
export function readInt64(reader: ProtoReader): number | string {
  const buf = reader.buf;
  let pos = reader.pos;
  let low = 0;
  let high = 0;
  for (let shift = 0; shift < 64; shift += 7) {
    if (pos >= reader.len)
      throw new Malformed(`truncated: a varint at byte ${reader.pos} runs past the body`);
    const byte = buf[pos++] as number;
    if (shift < 28) low |= (byte & 0x7f) << shift;
    else if (shift === 28) {
      low |= (byte & 0x0f) << 28;
      high = (byte & 0x7f) >> 4;
    } else high |= (byte & 0x7f) << (shift - 32);
    if (byte < 0x80) {
      reader.pos = pos;
      // Two's complement: |value| < 2^53 exactly when the high word is within +-2^21.
      const value = (high | 0) * 4294967296 + (low >>> 0);
      if (Number.isSafeInteger(value)) return value;
      return BigInt.asIntN(64, (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0)).toString();
    }
  }
  throw new Malformed(`a varint at byte ${reader.pos} is longer than 10 bytes`);
}

/** Bytes copied out: a subarray would keep the whole request buffer alive. */
export function readBytesCopy(reader: ProtoReader): Uint8Array {
  const end = lengthEnd(reader);
  const copy = new Uint8Array(end - reader.pos);
  copy.set(reader.buf.subarray(reader.pos, end));
  reader.pos = end;
  return copy;
}

/** The last id read through it: the spans of a request share trace ids, and siblings their parent. */
export interface IdMemo {
  bytes: Uint8Array;
  hex: string;
}
/** An empty memo for ids of `size` bytes. */
export const idMemo = (size: number): IdMemo => ({ bytes: new Uint8Array(size), hex: '' });

/**
 * A trace id (16 bytes) or span id (8 bytes) as lowercase hex, or an Invalid at `at`.
 * `optional`: empty means absent (parent_span_id of a root span), so undefined.
 */
export function readId(
  reader: ProtoReader,
  size: 16 | 8,
  at: string,
  memo?: IdMemo,
  optional = false,
): string | Invalid | undefined {
  const end = lengthEnd(reader);
  const start = reader.pos;
  reader.pos = end;
  const what = size === 16 ? 'trace id' : 'span id';
  if (end - start !== size) {
    if (optional && end === start) return undefined;
    return new Invalid(at, `expected a ${what} of ${size} bytes, got ${end - start}`);
  }
  const buf = reader.buf;
  if (memo !== undefined && memo.hex !== '') {
    let i = 0;
    while (i < size && memo.bytes[i] === buf[start + i]) i++;
    if (i === size) return memo.hex;
  }
  for (let i = start; i < end; i++) {
    if (buf[i] === 0) continue;
    const hex = buf.hexSlice(start, end);
    if (memo !== undefined) {
      memo.bytes.set(buf.subarray(start, end));
      memo.hex = hex;
    }
    return hex;
  }
  return new Invalid(at, `an all-zero ${what} is invalid`);
}

/** One attribute (a KeyValue field) read into `into`; its problem, if any, located at `segment[index]`. */
export function readAttribute(
  reader: ProtoReader,
  into: Attributes,
  segment: string,
  index: number,
): Invalid | undefined {
  const end = lengthEnd(reader);
  let invalid: Invalid | undefined;
  try {
    invalid = readKeyValue(reader, end, into, 0);
  } catch (error) {
    throw within(error, segment, index);
  }
  return invalid === undefined ? undefined : locate(invalid, segment, index);
}

function readKeyValue(
  reader: ProtoReader,
  end: number,
  into: Attributes,
  depth: number,
): Invalid | undefined {
  let key = '';
  let value: AttributeValue | Invalid = null;
  let note: TextNote | undefined;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 10) key = readCommonString(reader);
    else if (tag === 18) {
      // A span attribute's value may continue the value its trace holds under the key.
      reader.texts.key = depth === 0 ? key : '';
      value = readAnyValue(reader, lengthEnd(reader), depth);
      reader.texts.key = '';
      // What the texts know of the string the value is (readAnyValue forgets it at each other field).
      note = typeof value === 'string' ? reader.texts.note : undefined;
    } else skipField(reader, tag, KEY_VALUE);
  }
  verifyEnd(reader, end, 'KeyValue');
  // Too deep: the attribute says so and the span is kept; inside a kvlist, its attribute does.
  if (value instanceof TooDeepValue && depth === 0) value = TOO_DEEP_TEXT;
  else if (value instanceof Invalid) return value.under('.value');
  // `into["__proto__"] = v` would set the prototype, not a key.
  if (key === '__proto__')
    Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  else into[key] = value;
  if (note !== undefined) noteText(into, key, value as string, note);
  return undefined;
}

/** An AnyValue: its one value, null when empty. A oneof field seen twice keeps the last, as protobuf does. */
function readAnyValue(reader: ProtoReader, end: number, depth: number): AttributeValue | Invalid {
  let value: AttributeValue | Invalid = null;
  while (reader.pos < end) {
    const tag = reader.uint32();
    // The last field is the value (a oneof seen twice keeps the last): only a string_value leaves a note.
    reader.texts.note = undefined;
    switch (tag) {
      case 10: // 1 string_value
        value = readStringValue(reader);
        break;
      case 16: // 2 bool_value
        value = reader.uint32() !== 0;
        break;
      case 24: // 3 int_value
        value = readInt64(reader);
        break;
      case 33: // 4 double_value
        value = reader.double();
        break;
      case 42: // 5 array_value
        value = readContainer(reader, depth, readArrayValue);
        break;
      case 50: // 6 kvlist_value
        value = readContainer(reader, depth, readKeyValueList);
        break;
      case 58: // 7 bytes_value
        value = readBytesCopy(reader);
        break;
      default:
        skipField(reader, tag, ANY_VALUE);
    }
  }
  verifyEnd(reader, end, 'AnyValue');
  return value;
}

/** An ArrayValue or KeyValueList; past the depth bound an Invalid, its bytes skipped, not recursed into. */
function readContainer(
  reader: ProtoReader,
  depth: number,
  read: (reader: ProtoReader, end: number, depth: number) => AttributeValue | Invalid,
): AttributeValue | Invalid {
  const end = lengthEnd(reader);
  if (depth < MAX_JSON_DEPTH) return read(reader, end, depth + 1);
  reader.pos = end;
  return new TooDeepValue();
}

function readArrayValue(reader: ProtoReader, end: number, depth: number): AttributeValue[] | Invalid {
  const items: AttributeValue[] = [];
  let invalid: Invalid | undefined;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag !== 10) {
      skipField(reader, tag, ARRAY_VALUE);
      continue;
    }
    const item = readAnyValue(reader, lengthEnd(reader), depth);
    if (item instanceof Invalid) {
      invalid ??= item.under(`.arrayValue.values[${items.length}]`);
      items.push(null);
    } else items.push(item);
  }
  verifyEnd(reader, end, 'ArrayValue');
  return invalid ?? items;
}

function readKeyValueList(reader: ProtoReader, end: number, depth: number): Attributes | Invalid {
  const object: Attributes = {};
  let invalid: Invalid | undefined;
  let index = 0;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag !== 10) {
      skipField(reader, tag, KEY_VALUE_LIST);
      continue;
    }
    const bad = readKeyValue(reader, lengthEnd(reader), object, depth);
    if (bad !== undefined) invalid ??= bad.under(`.kvlistValue.values[${index}]`);
    index++;
  }
  verifyEnd(reader, end, 'KeyValueList');
  return invalid ?? object;
}
