/**
 * `ignore` for argument matching: dot paths (the syntax of json-path.ts: `metadata`,
 * `items.*.sku`, `*` = any one key or index) removed from a value before it is compared. An
 * ignored array element is removed, so the elements after it move up. Own keys only: a
 * `__proto__` key is data, kept as an own property in copies.
 */
import type { JsonValue } from '../model/json.js';
import type { JsonObject } from '../scenario/assertions.js';
import { splitPath } from '../scenario/json-path.js';

/** A parsed `ignore` path: its segments. */
export type IgnorePath = readonly string[];

const NO_PATHS: readonly IgnorePath[] = [];

/** Parsed `ignore` lists by the list itself: parsed once per spec, not once per call. */
const parsedIgnores = new WeakMap<readonly string[], readonly IgnorePath[]>();

/** The parsed paths of an `ignore` list (cached by the list). */
export function ignorePaths(ignore: readonly string[] | undefined): readonly IgnorePath[] {
  if (!ignore || ignore.length === 0) return NO_PATHS;
  let parsed = parsedIgnores.get(ignore);
  if (!parsed) {
    parsed = ignore.map(splitPath);
    parsedIgnores.set(ignore, parsed);
  }
  return parsed;
}

const REMOVED = Symbol('removed');

/**
 * `value` without what the paths select, for `ignore`; `depth` is how many segments are already
 * matched. `*` is any one key or index. Unchanged parts are shared: nothing is copied when no
 * path applies, which is the common case.
 */
export function withoutPaths(value: JsonValue, paths: readonly IgnorePath[], depth = 0): JsonValue {
  if (paths.length === 0 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: JsonValue[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item = value[index] as JsonValue;
      const next = pruneChild(String(index), item, paths, depth);
      if (next !== item && !copy) copy = value.slice(0, index);
      if (copy && next !== REMOVED) copy.push(next as JsonValue);
    }
    return copy ?? value;
  }
  const keys = Object.keys(value);
  let copy: JsonObject | undefined;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const child = value[key] as JsonValue;
    const next = pruneChild(key, child, paths, depth);
    if (next !== child && !copy) {
      copy = {};
      for (const kept of keys.slice(0, index)) setOwn(copy, kept, value[kept] as JsonValue);
    }
    if (copy && next !== REMOVED) setOwn(copy, key, next as JsonValue);
  }
  return copy ?? value;
}

/** The child at `key` once the paths are applied: REMOVED, pruned, or itself. */
function pruneChild(
  key: string,
  child: JsonValue,
  paths: readonly IgnorePath[],
  depth: number,
): JsonValue | typeof REMOVED {
  let deeper: IgnorePath[] | undefined;
  for (const path of paths) {
    const segment = path[depth];
    if (segment !== '*' && segment !== key) continue;
    if (path.length === depth + 1) return REMOVED;
    if (!deeper) deeper = [];
    deeper.push(path);
  }
  return deeper ? withoutPaths(child, deeper, depth + 1) : child;
}

/** Sets an own key; defineProperty for `__proto__`, which assignment would turn into a prototype. */
function setOwn(object: JsonObject, key: string, value: JsonValue): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true });
  else object[key] = value;
}
