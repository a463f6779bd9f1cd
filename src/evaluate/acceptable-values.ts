/**
 * Acceptable values in an argument match (`oneOf: {<path>: [values]}`, BFCL's possible answers)
 * and BFCL's string normalization (`normalize`), for the `exact`, `superset` and `subset` modes.
 *
 * - The argument at each `oneOf` path must equal one of its values (compared as the rest of the
 *   match compares: `numeric`, `normalize`); `""` among them means it may also be left out, as in
 *   BFCL's possible answers (and a given `""` is accepted too). The paths are then taken out of
 *   both sides before the mode compares the rest, and an object left empty by that counts as
 *   absent: `oneOf: {customer.tier: [...]}` with `mode: exact` needs no `customer: {}` in `args`.
 * - `normalize` compares strings as BFCL's checker does: spaces and `, . / - _ * ^` removed,
 *   lower-cased, `'` read as `"`. It applies to every string value at any depth (BFCL's goes one
 *   level into lists and objects), never to keys; with `numeric`, numeric strings are left as they
 *   are, so "1.5" is still 1.5 and not "15".
 *
 * Each argument's result says which value matched, that it was left out, or what was seen.
 */
import type { JsonValue } from '../model/json.js';
import type { JsonObject } from '../scenario/assertions.js';
import { readPath, splitPath } from '../scenario/json-path.js';
import { ignorePaths, withoutPaths } from './ignore-paths.js';

/** The value that marks an acceptable-values list as optional (BFCL's convention). */
export const OPTIONAL_MARK = '';

/** How one `oneOf` argument stood in a call. */
export type AcceptableResult =
  | { path: string; status: 'matched'; value: JsonValue }
  | { path: string; status: 'left_out' }
  | { path: string; status: 'missing'; values: readonly JsonValue[] }
  | { path: string; status: 'other'; seen: JsonValue; values: readonly JsonValue[] };

/** How values are compared: the match's own equality, and the normalization it asks for. */
export interface ValueComparison {
  equal(expected: JsonValue, actual: JsonValue): boolean;
  /** Set with `normalize`: the value with its strings normalized. */
  normalize?: (value: JsonValue) => JsonValue;
}

/** BFCL's `standardize_string`: spaces and `,./-_*^` removed, lower-cased, `'` as `"`. */
export function normalizeString(text: string): string {
  return text.replace(STRIPPED, '').toLowerCase().replaceAll("'", '"');
}

const STRIPPED = /[ ,./\-_*^]/g;

/**
 * `value` with every string normalized ({@link normalizeString}), keys unchanged; `keep` leaves
 * the strings it accepts as they are. Walks with a stack of its own, not recursion, so a deeply
 * nested argument cannot exhaust the call stack.
 */
export function normalizedStrings(value: JsonValue, keep?: (text: string) => boolean): JsonValue {
  const convert = (item: JsonValue): JsonValue => {
    if (typeof item === 'string') return keep?.(item) ? item : normalizeString(item);
    if (typeof item !== 'object' || item === null) return item;
    const copy: JsonValue = Array.isArray(item) ? [] : {};
    pending.push([item, copy]);
    return copy;
  };
  const pending: [JsonValue[] | JsonObject, JsonValue[] | JsonObject][] = [];
  const root = convert(value);
  while (pending.length > 0) {
    const [source, target] = pending.pop() as [JsonValue[] | JsonObject, JsonValue[] | JsonObject];
    if (Array.isArray(source)) {
      for (const item of source) (target as JsonValue[]).push(convert(item));
    } else {
      for (const key of Object.keys(source))
        setOwn(target as JsonObject, key, convert(source[key] as JsonValue));
    }
  }
  return root;
}

/** How each `oneOf` argument stands in `actual` (the call's arguments, `ignore` already applied). */
export function checkAcceptable(
  oneOf: Readonly<Record<string, readonly JsonValue[]>>,
  actual: JsonValue,
  comparison: ValueComparison,
): AcceptableResult[] {
  const results: AcceptableResult[] = [];
  for (const path of Object.keys(oneOf)) {
    const values = oneOf[path] as readonly JsonValue[];
    const [hit] = readPath(actual, path);
    if (hit === undefined) {
      results.push(
        values.includes(OPTIONAL_MARK) ? { path, status: 'left_out' } : { path, status: 'missing', values },
      );
      continue;
    }
    const { normalize } = comparison;
    const seen = normalize ? normalize(hit.value) : hit.value;
    const index = values.findIndex((candidate) =>
      comparison.equal(normalize ? normalize(candidate) : candidate, seen),
    );
    results.push(
      index === -1
        ? { path, status: 'other', seen: hit.value, values }
        : { path, status: 'matched', value: values[index] as JsonValue },
    );
  }
  return results;
}

/**
 * `value` without the `oneOf` paths, and without the objects along them that are left empty: the
 * paths are judged by {@link checkAcceptable}, so the mode compares what is left.
 */
export function withoutAcceptable(value: JsonValue, paths: readonly string[]): JsonValue {
  let pruned = withoutPaths(value, ignorePaths(paths));
  for (const path of paths) {
    const segments = splitPath(path);
    if (segments.length > 1) pruned = withoutEmptied(pruned, segments, 0);
  }
  return pruned;
}

/**
 * `value` with the object at `segments[0..depth]` removed from its parent object when it is left
 * empty, and so on up the path. Recursion is on the path's length (the scenario's), not the input's.
 */
function withoutEmptied(value: JsonValue, segments: readonly string[], depth: number): JsonValue {
  if (depth >= segments.length - 1 || !isObject(value)) return value;
  const key = segments[depth] as string;
  if (!Object.hasOwn(value, key)) return value;
  const child = value[key] as JsonValue;
  const next = withoutEmptied(child, segments, depth + 1);
  const emptied = isObject(next) && Object.keys(next).length === 0;
  if (!emptied && next === child) return value;
  const copy: JsonObject = {};
  for (const kept of Object.keys(value)) {
    if (kept !== key) setOwn(copy, kept, value[kept] as JsonValue);
    else if (!emptied) setOwn(copy, kept, next);
  }
  return copy;
}

/** The phrases a reason lists for arguments that did not match: `unit: expected one of …, saw "cm"`. */
export function acceptableProblems(results: readonly AcceptableResult[]): string[] {
  const problems: string[] = [];
  for (const result of results) {
    if (result.status === 'missing')
      problems.push(`missing key ${result.path} (expected ${listed(result.values)})`);
    else if (result.status === 'other')
      problems.push(`${result.path}: expected ${listed(result.values)}, saw ${render(result.seen)}`);
  }
  return problems;
}

/** What the arguments that did match had: `radius: 4, unit: left out (optional)`; '' when none did. */
export function acceptedSummary(results: readonly AcceptableResult[]): string {
  const accepted: string[] = [];
  for (const result of results) {
    if (result.status === 'matched') accepted.push(`${result.path}: ${render(result.value)}`);
    else if (result.status === 'left_out') accepted.push(`${result.path}: left out (optional)`);
  }
  return accepted.join(', ');
}

/** `one of "units", "cm" or left out`, `5`: a values list as reasons show it. */
function listed(values: readonly JsonValue[]): string {
  const shown = values.filter((value) => value !== OPTIONAL_MARK).map(render);
  const more = shown.length > MAX_SHOWN ? `, and ${shown.length - MAX_SHOWN} more` : '';
  const text =
    shown.length === 0
      ? '""'
      : shown.length === 1
        ? (shown[0] as string)
        : `one of ${shown.slice(0, MAX_SHOWN).join(', ')}${more}`;
  return values.includes(OPTIONAL_MARK) ? `${text} or left out` : text;
}

const MAX_SHOWN = 5;
const MAX_RENDERED = 60;

function render(value: JsonValue): string {
  const json = JSON.stringify(value);
  return json.length > MAX_RENDERED ? `${json.slice(0, MAX_RENDERED - 1)}…` : json;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own key; defineProperty for `__proto__`, which assignment would turn into a prototype. */
function setOwn(object: JsonObject, key: string, value: JsonValue): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true });
  else object[key] = value;
}
