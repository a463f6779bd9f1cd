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
  const hits: PathHit[] = [];
  collect(document, splitPath(path), 0, '', hits);
  return hits;
}

function collect(value: JsonValue, segments: readonly string[], depth: number, at: string, out: PathHit[]) {
  if (depth === segments.length) {
    out.push({ path: at, value });
    return;
  }
  const segment = segments[depth] as string;
  for (const [key, child] of children(value, segment)) {
    collect(child, segments, depth + 1, joinPath(at, key), out);
  }
}

/** The children of `value` a segment selects: one key or index, or all of them for `*`. */
function children(value: JsonValue, segment: string): [string, JsonValue][] {
  if (Array.isArray(value)) {
    if (segment === '*') return value.map((item, index) => [String(index), item]);
    if (!/^(0|[1-9]\d*)$/.test(segment)) return [];
    const index = Number(segment);
    return index < value.length ? [[segment, value[index] as JsonValue]] : [];
  }
  if (!isJsonObject(value)) return [];
  if (segment === '*') return Object.keys(value).map((key) => [key, value[key] as JsonValue]);
  return Object.hasOwn(value, segment) ? [[segment, value[segment] as JsonValue]] : [];
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
