/** A value that survives JSON: what arguments and results are once parsed. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * JSON with object keys sorted at every depth: equal values give equal strings whatever the
 * key order, so arguments can be compared and hashed. The text JSON.stringify writes for a copy
 * with sorted keys, written in one pass without the copy (repeated-call checks serialize the
 * arguments of every call, and the copy was most of their cost). An explicit stack, not
 * recursion: no depth of value can overflow the call stack.
 */
export function canonicalJson(value: JsonValue): string {
  // Scalars, and whatever is not JSON (undefined, a function), read as JSON.stringify reads them.
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  let text = Array.isArray(value) ? '[' : '{';
  const stack: ContainerFrame[] = [containerFrame(value)];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as ContainerFrame;
    const { container, keys } = frame;
    if (keys === undefined) {
      const items = container as JsonValue[];
      if (frame.next === items.length) {
        text += ']';
        stack.pop();
        continue;
      }
      if (frame.next > 0) text += ',';
      const item = items[frame.next++] as JsonValue;
      if (item !== null && typeof item === 'object') {
        text += Array.isArray(item) ? '[' : '{';
        stack.push(containerFrame(item));
      } else {
        // JSON.stringify writes what has no JSON form as null inside an array.
        text += (JSON.stringify(item) as string | undefined) ?? 'null';
      }
      continue;
    }
    const object = container as { [key: string]: JsonValue };
    let opened = false;
    while (frame.next < keys.length) {
      const key = keys[frame.next++] as string;
      const member = object[key] as JsonValue;
      const separator = frame.written ? ',' : '';
      if (member !== null && typeof member === 'object') {
        text += `${separator}${JSON.stringify(key)}:${Array.isArray(member) ? '[' : '{'}`;
        frame.written = true;
        stack.push(containerFrame(member));
        opened = true;
        break;
      }
      const scalar = JSON.stringify(member) as string | undefined;
      // ... and leaves such a member out of an object.
      if (scalar === undefined) continue;
      text += `${separator}${JSON.stringify(key)}:${scalar}`;
      frame.written = true;
    }
    if (opened) continue;
    text += '}';
    stack.pop();
  }
  return text;
}

/** A container being written or hashed: its members (keys in canonical order for an object), the next one. */
interface ContainerFrame {
  readonly container: JsonValue[] | { [key: string]: JsonValue };
  /** Undefined for an array. */
  readonly keys: string[] | undefined;
  next: number;
  /** An object member was written (the next one needs a comma). */
  written: boolean;
}

function containerFrame(container: JsonValue[] | { [key: string]: JsonValue }): ContainerFrame {
  const keys = Array.isArray(container) ? undefined : sortedKeys(container);
  return { container, keys, next: 0, written: false };
}

/**
 * The keys in the order JSON.stringify writes a copy made with sorted keys: array-index keys
 * (`0`, `10`) come first in numeric order in any object, whatever the order they were added in,
 * then the other keys sorted. `Object.keys` already lists the array-index keys first, in order.
 */
function sortedKeys(value: { [key: string]: JsonValue }): string[] {
  const keys = Object.keys(value);
  let indexes = 0;
  while (indexes < keys.length && isArrayIndex(keys[indexes] as string)) indexes++;
  if (indexes === keys.length) return keys;
  sortFrom(keys, indexes);
  return keys;
}

/** Keys past this many are sorted by Array.prototype.sort; fewer, by insertion (no comparator calls). */
const INSERTION_SORT_MAX = 16;

/**
 * Sorts `keys[from..]` in place, in the order `Array.prototype.sort()` gives strings (UTF-16
 * code units, which `<` compares): arguments have a handful of keys, and insertion sort spares
 * the generic sort's setup, which costs more than the comparisons.
 */
function sortFrom(keys: string[], from: number): void {
  if (keys.length - from > INSERTION_SORT_MAX) {
    const sorted = keys.slice(from).sort();
    for (let index = 0; index < sorted.length; index++) keys[from + index] = sorted[index] as string;
    return;
  }
  for (let index = from + 1; index < keys.length; index++) {
    const key = keys[index] as string;
    let at = index - 1;
    while (at >= from && (keys[at] as string) > key) {
      keys[at + 1] = keys[at] as string;
      at--;
    }
    keys[at + 1] = key;
  }
}

const MAX_ARRAY_INDEX = 4_294_967_294;

/** A canonical decimal integer below 2^32 - 1: what objects keep as an element, ahead of other keys. */
function isArrayIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  if (!(first >= 48 && first <= 57)) return false;
  return /^(0|[1-9]\d*)$/.test(key) && Number(key) <= MAX_ARRAY_INDEX;
}

/**
 * A 32-bit hash that agrees with {@link canonicalJson}: values with the same canonical JSON get
 * the same hash (key order ignored, -0 as 0, members JSON.stringify leaves out left out), and
 * different values almost always differ. Computed without building any text, so grouping
 * values by canonical JSON only needs the text of values whose hashes collide. Long strings
 * are sampled: a collision only costs the caller a canonical text.
 */
export function canonicalHash(value: JsonValue): number {
  if (value === null || typeof value !== 'object') return scalarHash(value);
  return flatHash(value) ?? nestedHash(value);
}

/** The hash of an array or object that holds no container (most arguments), with no stack; else undefined. */
function flatHash(value: JsonValue[] | { [key: string]: JsonValue }): number | undefined {
  if (Array.isArray(value)) {
    let hash = ARRAY_SEED ^ value.length;
    for (let index = 0; index < value.length; index++) {
      const item = value[index] as JsonValue;
      if (item !== null && typeof item === 'object') return undefined;
      hash = (Math.imul(hash, 31) + memberHash(item)) | 0;
    }
    return mix(hash);
  }
  let hash = OBJECT_SEED;
  const keys = Object.keys(value);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const member = value[key] as JsonValue;
    const type = typeof member;
    if (type === 'undefined' || type === 'function' || type === 'symbol') continue;
    if (member !== null && type === 'object') return undefined;
    hash = (hash + mix(Math.imul(key.length, 0x9e3779b1) ^ key.charCodeAt(0) ^ scalarHash(member))) | 0;
  }
  return hash;
}

/** The hash of a value holding containers: an explicit stack, a container's hash known once its members' are. */
function nestedHash(value: JsonValue[] | { [key: string]: JsonValue }): number {
  const stack: HashFrame[] = [hashFrame(value)];
  let finished: number | undefined;
  for (;;) {
    const frame = stack[stack.length - 1] as HashFrame;
    const { container, keys } = frame;
    if (finished !== undefined) {
      frame.hash =
        keys === undefined
          ? (Math.imul(frame.hash, 31) + finished) | 0
          : (frame.hash + mix(frame.keyHash ^ finished)) | 0;
      finished = undefined;
    }
    let descended = false;
    if (keys === undefined) {
      const items = container as JsonValue[];
      while (frame.next < items.length) {
        const item = items[frame.next++] as JsonValue;
        if (item !== null && typeof item === 'object') {
          stack.push(hashFrame(item));
          descended = true;
          break;
        }
        frame.hash = (Math.imul(frame.hash, 31) + memberHash(item)) | 0;
      }
    } else {
      const object = container as { [key: string]: JsonValue };
      while (frame.next < keys.length) {
        const key = keys[frame.next++] as string;
        const member = object[key] as JsonValue;
        const type = typeof member;
        if (type === 'undefined' || type === 'function' || type === 'symbol') continue;
        const keyHash = Math.imul(key.length, 0x9e3779b1) ^ key.charCodeAt(0);
        if (member !== null && typeof member === 'object') {
          frame.keyHash = keyHash;
          stack.push(hashFrame(member));
          descended = true;
          break;
        }
        frame.hash = (frame.hash + mix(keyHash ^ scalarHash(member))) | 0;
      }
    }
    if (descended) continue;
    stack.pop();
    const hash = keys === undefined ? mix(frame.hash) : frame.hash;
    if (stack.length === 0) return hash;
    finished = hash;
  }
}

/**
 * A container being hashed. An array's hash folds its members in order; an object's is a sum
 * over its members, so key order does not matter, and a key counts by its length and first
 * character only (the calls compared are mostly calls of one tool, with the same keys).
 */
interface HashFrame {
  readonly container: JsonValue[] | { [key: string]: JsonValue };
  /** Undefined for an array; an object's own keys in any order. */
  readonly keys: string[] | undefined;
  next: number;
  hash: number;
  /** The key hash of the object member being hashed. */
  keyHash: number;
}

function hashFrame(container: JsonValue[] | { [key: string]: JsonValue }): HashFrame {
  if (Array.isArray(container))
    return { container, keys: undefined, next: 0, hash: ARRAY_SEED ^ container.length, keyHash: 0 };
  return { container, keys: Object.keys(container), next: 0, hash: OBJECT_SEED, keyHash: 0 };
}

/** The hash of a value that is not an array or an object. */
function scalarHash(value: JsonValue): number {
  switch (typeof value) {
    case 'string':
      return stringHash(value);
    case 'number':
      return numberHash(value);
    case 'boolean':
      return value ? TRUE_HASH : FALSE_HASH;
    case 'object':
      return NULL_HASH;
    case 'bigint':
      // canonicalJson throws on a BigInt (JSON.stringify does); so does its hash.
      throw new TypeError('Do not know how to serialize a BigInt');
    default:
      // undefined, a function, a symbol: canonicalJson gives undefined for each.
      return UNDEFINED_HASH;
  }
}

const NULL_HASH = 0x2f6b1a3d;
const TRUE_HASH = 0x51ed27b3;
const FALSE_HASH = 0x1b873593;
const UNDEFINED_HASH = 0x68e31da4;
const ARRAY_SEED = 0x3c6ef372;
const OBJECT_SEED = 0x7f4a7c15;
/** Characters of a long string hashed from each end. */
const STRING_ENDS = 16;

/** What an array member hashes as: JSON.stringify writes null for what has no JSON form in an array. */
function memberHash(value: JsonValue): number {
  const type = typeof value;
  if (type === 'undefined' || type === 'function' || type === 'symbol') return NULL_HASH;
  return scalarHash(value);
}

/** Every character of a short string; the length and both ends of a long one. */
function stringHash(text: string): number {
  let hash = 0x811c9dc5 ^ text.length;
  const { length } = text;
  if (length <= 2 * STRING_ENDS) {
    for (let index = 0; index < length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  } else {
    for (let index = 0; index < STRING_ENDS; index++) {
      hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
      hash = Math.imul(hash ^ text.charCodeAt(length - 1 - index), 0x01000193);
    }
  }
  return hash;
}

const NUMBER_BITS = new Float64Array(1);
const NUMBER_WORDS = new Int32Array(NUMBER_BITS.buffer);

/** Equal for numbers JSON.stringify writes alike: -0 as 0, every non-finite number as null. */
function numberHash(value: number): number {
  if (!Number.isFinite(value)) return NULL_HASH;
  if ((value | 0) === value) return mix(value ^ 0x5bd1e995);
  NUMBER_BITS[0] = value;
  return mix((NUMBER_WORDS[0] as number) ^ Math.imul(NUMBER_WORDS[1] as number, 0x27d4eb2d));
}

/** A 32-bit finalizer (murmur3's), so sums of member hashes do not cancel out. */
function mix(input: number): number {
  let hash = input;
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

/**
 * Whether two JSON values are equal, objects compared key by key whatever their key order (as
 * their {@link canonicalJson} texts would be, without making them). A stack, not recursion.
 */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  // One stack for every call (nothing here calls out, so it is never in use twice), its slots
  // cleared after: a new array per comparison was most of what linking a trace's calls allocated.
  // Not `length = 0`: V8 frees an emptied array's storage, and the next push allocates it again.
  const stack = equalStack;
  stack[0] = a;
  stack[1] = b;
  let top = 2;
  let used = 2;
  let equal = true;
  while (top > 0) {
    const y = stack[--top] as JsonValue;
    const x = stack[--top] as JsonValue;
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) {
      equal = false;
      break;
    }
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) {
        equal = false;
        break;
      }
      for (let i = 0; i < x.length; i++) {
        stack[top++] = x[i] as JsonValue;
        stack[top++] = y[i] as JsonValue;
      }
    } else {
      if (Array.isArray(y)) {
        equal = false;
        break;
      }
      let keys = 0;
      for (const key in x) {
        if (!Object.hasOwn(y, key)) {
          equal = false;
          break;
        }
        stack[top++] = x[key] as JsonValue;
        stack[top++] = y[key] as JsonValue;
        keys++;
      }
      if (!equal) break;
      for (const _ in y) keys--;
      if (keys !== 0) {
        equal = false;
        break;
      }
    }
    if (top > used) used = top;
  }
  const reached = Math.max(used, top);
  // Kept for the next call, unless one huge comparison grew it: then let go.
  if (reached > MAX_KEPT_STACK) stack.length = 0;
  else stack.fill(null, 0, reached);
  return equal;
}

const equalStack: JsonValue[] = [];
const MAX_KEPT_STACK = 4096;
