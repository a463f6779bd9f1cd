/**
 * Dot paths into JSON arguments and results, the one path syntax every rule family reads:
 * `customer.id`, `items.0.sku`, `items.*.sku`. A segment is an object key, or an array index
 * when it is a non-negative integer and the value there is an array; `*` matches any one
 * segment (every key of an object, every element of an array). Keys that contain a dot cannot
 * be addressed. Objects are read through own properties only, so `__proto__`, `constructor`
 * and `toString` are ordinary keys and never reach the prototype.
 */
import { isJsonObject, type JsonValue } from '../model/json.js';

/** A value found in a document, with the concrete path it sits at (`items.0.sku`; empty for the root). */
export interface PathHit {
  path: string;
  value: JsonValue;
}

/** The segments of a dot path; `*` stays a segment of its own. */
export function splitPath(path: string): string[] {
  return path.split('.');
}

/**
 * Every value at `path` in `document`, in document order. No hit means the path is absent
 * (a missing key, an index past the end, a scalar where the path goes deeper).
 */
export function readPath(document: JsonValue, path: string): PathHit[] {
  const compiled = compilePath(path);
  if (compiled.concrete === undefined) {
    const hits: PathHit[] = [];
    collect(document, compiled.segments, compiled.indexes, 0, '', hits);
    return hits;
  }
  // No `*`: at most one hit, at a path known in advance; a straight walk, no path building. The
  // array is made at its size: a push onto an empty array allocates room for 16.
  const value = valueAt(document, compiled);
  return value === ABSENT ? [] : [{ path: compiled.concrete, value }];
}

/**
 * Whether every value at `path` in `document` (what {@link readPath} finds) passes `test`;
 * undefined when there is none. Collects no hits for a path without `*`: for a check asked of
 * every call, most of which pass.
 */
export function everyValueAt(
  document: JsonValue,
  path: string,
  test: (value: JsonValue) => boolean,
): boolean | undefined {
  const compiled = compilePath(path);
  if (compiled.concrete !== undefined) {
    const value = valueAt(document, compiled);
    return value === ABSENT ? undefined : test(value);
  }
  const hits = readPath(document, path);
  if (hits.length === 0) return undefined;
  for (const hit of hits) if (!test(hit.value)) return false;
  return true;
}

/**
 * Whether some value at `path` in `document` is `scalar` (equal as Map keys are), without
 * collecting the hits: what {@link readPath} would find, asked of one value.
 */
export function holdsAt(document: JsonValue, path: string, scalar: JsonValue): boolean {
  const compiled = compilePath(path);
  if (compiled.concrete === undefined) {
    for (const hit of readPath(document, path)) if (sameValueZero(hit.value, scalar)) return true;
    return false;
  }
  const value = valueAt(document, compiled);
  return value !== ABSENT && sameValueZero(value, scalar);
}

/** The one value at a path without `*`, or ABSENT. */
function valueAt(document: JsonValue, compiled: CompiledPath): JsonValue | typeof ABSENT {
  const { segments, indexes } = compiled;
  let value = document;
  for (let depth = 0; depth < segments.length; depth++) {
    const child = childAt(value, segments[depth] as string, indexes[depth] as number);
    if (child === ABSENT) return ABSENT;
    value = child;
  }
  return value;
}

/** A dot path parsed once: its segments, each segment's array index (-1: not an index), its one concrete path when it has no `*`. */
interface CompiledPath {
  segments: readonly string[];
  indexes: readonly number[];
  concrete: string | undefined;
}

/** Parsed paths by their text; scenarios name few paths, the cap only bounds a misuse. */
const compiledPaths = new Map<string, CompiledPath>();
const MAX_COMPILED_PATHS = 1_000;
const ARRAY_INDEX = /^(0|[1-9]\d*)$/;

function compilePath(path: string): CompiledPath {
  let compiled = compiledPaths.get(path);
  if (compiled) return compiled;
  const segments = splitPath(path);
  const indexes = segments.map((segment) => (ARRAY_INDEX.test(segment) ? Number(segment) : -1));
  const concrete = segments.includes('*') ? undefined : segments.reduce(joinPath, '');
  compiled = { segments, indexes, concrete };
  if (compiledPaths.size >= MAX_COMPILED_PATHS) compiledPaths.clear();
  compiledPaths.set(path, compiled);
  return compiled;
}

/** What {@link childAt} returns for a missing child (a JSON value is never undefined, but a hand-built one may be). */
const ABSENT: unique symbol = Symbol('absent');

/** The child a non-`*` segment selects (`index` is the segment as an array index, else -1), or ABSENT. */
function childAt(value: JsonValue, segment: string, index: number): JsonValue | typeof ABSENT {
  if (Array.isArray(value)) return index >= 0 && index < value.length ? (value[index] as JsonValue) : ABSENT;
  if (!isJsonObject(value)) return ABSENT;
  return Object.hasOwn(value, segment) ? (value[segment] as JsonValue) : ABSENT;
}

function collect(
  value: JsonValue,
  segments: readonly string[],
  indexes: readonly number[],
  depth: number,
  at: string,
  out: PathHit[],
) {
  if (depth === segments.length) {
    out.push({ path: at, value });
    return;
  }
  const segment = segments[depth] as string;
  if (segment !== '*') {
    const child = childAt(value, segment, indexes[depth] as number);
    if (child !== ABSENT) collect(child, segments, indexes, depth + 1, joinPath(at, segment), out);
    return;
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      collect(value[index] as JsonValue, segments, indexes, depth + 1, joinPath(at, String(index)), out);
    }
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      collect(value[key] as JsonValue, segments, indexes, depth + 1, joinPath(at, key), out);
    }
  }
}

/**
 * Every value in `document` at any depth, the document itself first, then depth-first in
 * document order. Containers are yielded as well as their contents, so a whole sub-object can
 * match as well as each of its fields.
 */
export function walkJson(document: JsonValue): PathHit[] {
  const hits: PathHit[] = [];
  const stack: PathHit[] = [{ path: '', value: document }];
  // An explicit stack: a deeply nested result cannot overflow the call stack.
  while (stack.length > 0) {
    const hit = stack.pop() as PathHit;
    hits.push(hit);
    const { value, path } = hit;
    const entries: [string, JsonValue][] = Array.isArray(value)
      ? value.map((item, index) => [String(index), item])
      : isJsonObject(value)
        ? Object.keys(value).map((key) => [key, value[key] as JsonValue])
        : [];
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, child] = entries[index] as [string, JsonValue];
      stack.push({ path: joinPath(path, key), value: child });
    }
  }
  return hits;
}

/**
 * The values {@link walkJson} finds, in the same order, without their paths: for callers that
 * only compare values, which spares building a path string per node.
 */
export function jsonValues(document: JsonValue): JsonValue[] {
  const values: JsonValue[] = [];
  const stack: JsonValue[] = [document];
  while (stack.length > 0) {
    const value = stack.pop() as JsonValue;
    values.push(value);
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) stack.push(value[index] as JsonValue);
    } else if (isJsonObject(value)) {
      const keys = Object.keys(value);
      for (let index = keys.length - 1; index >= 0; index--)
        stack.push(value[keys[index] as string] as JsonValue);
    }
  }
  return values;
}

/**
 * Whether {@link jsonValues} of `document` has `scalar` (equal as Map keys are: `===`, except
 * that NaN equals NaN), found without collecting the values: stops at the first.
 */
export function holdsScalar(document: JsonValue, scalar: JsonValue): boolean {
  if (sameValueZero(document, scalar)) return true;
  if (document === null || typeof document !== 'object') return false;
  // An explicit stack (a deeply nested result cannot overflow the call stack), made at the first
  // nested container: a flat result is searched without one. The search order does not matter.
  let stack: JsonValue[] | undefined;
  let value: JsonValue | undefined = document;
  while (value !== undefined) {
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const item = value[index] as JsonValue;
        if (sameValueZero(item, scalar)) return true;
        if (item !== null && typeof item === 'object') {
          stack ??= [];
          stack.push(item);
        }
      }
    } else if (isJsonObject(value)) {
      // `for...in` over own keys: what Object.keys lists, without allocating the list.
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const item = value[key] as JsonValue;
        if (sameValueZero(item, scalar)) return true;
        if (item !== null && typeof item === 'object') {
          stack ??= [];
          stack.push(item);
        }
      }
    }
    value = stack?.pop();
  }
  return false;
}

/** Equality as Map keys have it: `===`, except that NaN equals NaN. */
export function sameValueZero(a: JsonValue, b: JsonValue): boolean {
  return a === b || (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b));
}

/**
 * True when a concrete path (`items.0.sku`) is matched by a pattern (`items.*.sku`): same
 * number of segments, each equal or `*`. For `ignore` lists and the like.
 */
export function pathMatches(pattern: string, concrete: string): boolean {
  const want = splitPath(pattern);
  const have = splitPath(concrete);
  return (
    want.length === have.length && want.every((segment, index) => segment === '*' || segment === have[index])
  );
}

/** `a` + `b` → `a.b`; the root path is empty. */
export function joinPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * An index key for a scalar found at a path, undefined for an object or array. Typed, so the
 * number 40 and the string "40" never share a key; `String` writes 40 and 40.0 alike, as JSON
 * equality wants.
 */
export function scalarKey(value: JsonValue): string | undefined {
  if (typeof value === 'string') return `s${value}`;
  if (value === null || typeof value !== 'object') return `v${String(value)}`;
  return undefined;
}
