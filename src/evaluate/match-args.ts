/**
 * Argument matching for native `match` specs: `exact`, `superset` (the call has at least these
 * arguments: the trajectory-assertion JSON's `subset`), `subset` (the call has nothing beyond these), `regex` and
 * `schema` (JSON Schema, see json-schema.ts). Each answer is a match, a mismatch that says which
 * key differed and how, or "undecided" when the arguments cannot be judged (not captured,
 * unparsable, too long for the regex cap) - never a guess.
 *
 * `exact`, `superset` and `subset` take three options:
 * - `ignore`: dot paths (`metadata`, `items.*.sku`; `*` is any one key or index) removed from
 *   both sides, and from `defaults`, before comparing. An ignored array element is removed, so
 *   the elements after it move up. Only a whole segment can be `*`: `*_id` names a key `*_id`.
 * - `defaults`: top-level arguments with a declared default. An argument that is absent counts as
 *   its default, and one equal to its default counts as absent, on either side, so `{page: 1}`
 *   and `{}` are the same call when page defaults to 1; a non-default value never matches an
 *   absent one. Values are literal: `"*"` is the string `"*"`, never a wildcard (promptfoo #9842).
 * - `numeric`: numbers and numeric strings compare by exact decimal value: 1, 1.0, "1", "1.0" and
 *   "1e0" are equal. A numeric string is JSON number syntax, so "01", "+1", " 1", "1.", "0x1" and
 *   "NaN" are not numbers: zero-padded strings are usually codes (zip codes, account numbers).
 *   Decimal strings are compared exactly, not as doubles: "9007199254740993" is not
 *   "9007199254740992". Non-numeric strings are only ever equal to themselves.
 * The options have no effect in `regex` and `schema` modes. So do `oneOf` (acceptable values per
 * argument path) and `normalize` (BFCL's string normalization), in acceptable-values.ts.
 *
 * Objects are read through own properties only, so `__proto__` and `constructor` are ordinary keys.
 */
import type { JsonValue } from '../model/json.js';
import type { Captured } from '../model/trajectory.js';
import type { CompiledRegex, JsonObject } from '../scenario/assertions.js';
import { validateAgainstSchema } from '../scenario/json-schema.js';
import type { ArgsMatchSpec } from '../scenario/native.js';
import {
  type AcceptableResult,
  acceptableProblems,
  acceptedSummary,
  checkAcceptable,
  normalizedStrings,
  type ValueComparison,
  withoutAcceptable,
} from './acceptable-values.js';
import { ignorePaths, withoutPaths } from './ignore-paths.js';

/** The outcome of matching one call's arguments. `detail` is a phrase ready to go in a reason. */
export type MatchOutcome =
  | { status: 'match' }
  | { status: 'mismatch'; detail: string }
  | { status: 'undecided'; detail: string };

/** How values are compared in `exact`, `superset` and `subset` modes (the spec's options). */
export interface CompareOptions {
  /** Compare numbers and numeric strings by value. */
  numeric?: boolean;
  /** Declared defaults of top-level arguments: absent and default are the same. */
  defaults?: JsonObject;
}

/**
 * The regex mode tests at most this many characters (UTF-16 code units, 1 MiB) of
 * `JSON.stringify(input)`. A match inside the prefix counts; no match in a cut prefix is
 * undecided, since the match could lie past the cut. RE2 is linear, so this bounds the work.
 */
export const REGEX_INPUT_LIMIT = 1 << 20;

/** At most this many differences are listed for one call; the rest are counted. */
const MAX_DIFFERENCES = 3;

const MATCHED: MatchOutcome = { status: 'match' };

/** One shared object, so a schema-less spec built in code is compiled once like any other. */
const ACCEPT_ALL: JsonObject = {};

/** Matches one call's recorded arguments against a `match` spec. */
export function matchArgs(match: ArgsMatchSpec, args: Captured<JsonValue>): MatchOutcome {
  if (!args.captured) return { status: 'undecided', detail: 'arguments were not captured' };
  // Too deep: there is no text to test either.
  if (args.tooDeep) return { status: 'undecided', detail: `arguments are ${args.parseError}` };
  if (match.mode === 'regex') {
    if (!match.regex) throw new Error('regex match spec was not compiled');
    return matchRegex(match.regex, args.value, args.parseError);
  }
  if (args.parseError !== undefined) {
    // Often an attribute cut by a length limit: what the tool really received is unknown.
    return {
      status: 'undecided',
      detail: `arguments are not valid JSON (${args.parseError}), so they cannot be compared`,
    };
  }
  if (match.mode === 'schema') return matchSchema(match.schema ?? ACCEPT_ALL, args.value);
  const ignore = ignorePaths(match.ignore);
  let expected = withoutPaths(match.args ?? {}, ignore) as JsonObject;
  let actual = withoutPaths(args.value, ignore);
  const options: CompareOptions = { numeric: match.numeric === true };
  if (match.defaults) options.defaults = withoutPaths(match.defaults, ignore) as JsonObject;
  let acceptable: AcceptableResult[] | undefined;
  if (match.oneOf !== undefined || match.normalize === true) {
    const comparison = comparisonOf(match);
    if (match.oneOf !== undefined) {
      acceptable = checkAcceptable(match.oneOf, actual, comparison);
      const paths = Object.keys(match.oneOf);
      expected = withoutAcceptable(expected, paths) as JsonObject;
      actual = withoutAcceptable(actual, paths);
    }
    const { normalize } = comparison;
    if (normalize !== undefined) {
      expected = normalize(expected) as JsonObject;
      actual = normalize(actual);
      if (options.defaults) options.defaults = normalize(options.defaults) as JsonObject;
    }
  }
  const differences =
    match.mode === 'exact'
      ? diffExact(expected, actual, options)
      : match.mode === 'superset'
        ? diffSubset(expected, actual, options)
        : diffWithin(expected, actual, options);
  if (acceptable === undefined)
    return differences.length === 0 ? MATCHED : { status: 'mismatch', detail: joinDifferences(differences) };
  const problems = acceptableProblems(acceptable);
  if (problems.length === 0 && differences.length === 0) return MATCHED;
  const accepted = acceptedSummary(acceptable);
  const detail = joinDifferences([...problems, ...differences]);
  return { status: 'mismatch', detail: accepted === '' ? detail : `${detail}; accepted: ${accepted}` };
}

/** The equality and normalization of a match with `oneOf` or `normalize`. */
function comparisonOf(match: ArgsMatchSpec): ValueComparison {
  const numeric = match.numeric === true;
  const comparison: ValueComparison = { equal: (a, b) => jsonEqual(a, b, numeric) };
  if (match.normalize === true) {
    // With numeric, a numeric string stays as written: normalizing "1.5" would make it "15".
    const keep = numeric ? (text: string) => numericKey(text) !== undefined : undefined;
    comparison.normalize = (value) => normalizedStrings(value, keep);
  }
  return comparison;
}

/**
 * `regex` mode: the pattern is tested against `JSON.stringify(input)`. Arguments that were
 * captured but are not valid JSON are tested as the raw text they were recorded as.
 */
export function matchRegex(regex: CompiledRegex, input: JsonValue, parseError?: string): MatchOutcome {
  const text = parseError !== undefined && typeof input === 'string' ? input : JSON.stringify(input);
  const cut = text.length > REGEX_INPUT_LIMIT;
  const tested = cut ? text.slice(0, REGEX_INPUT_LIMIT) : text;
  if (!cut && regex.program.test(tested)) return MATCHED;
  // Rendered only for a reason: most arguments match.
  const shown = `/${regex.source}/${regex.flags}`;
  if (cut) {
    // In a cut input, a match that reaches the cut may owe it to the cut (`$`, `\b` there):
    // only a match that ends before it is a real match of the whole input.
    const matcher = regex.program.matcher(tested);
    if (matcher.find()) {
      if (matcher.end() < tested.length) return MATCHED;
      return {
        status: 'undecided',
        detail: `arguments are ${text.length} characters long; ${shown} matched only up to the cut at ${REGEX_INPUT_LIMIT}, which may be why it matched`,
      };
    }
    return {
      status: 'undecided',
      detail:
        `arguments are ${text.length} characters long; only the first ${REGEX_INPUT_LIMIT} were tested ` +
        `against ${shown} and did not match`,
    };
  }
  if (parseError !== undefined) {
    return {
      status: 'undecided',
      detail: `arguments are not valid JSON (${parseError}) and did not match ${shown}`,
    };
  }
  return { status: 'mismatch', detail: `${shown} did not match ${renderValue(text)}` };
}

/** `schema` mode: the arguments must satisfy the JSON Schema; the mismatch lists its violations. */
export function matchSchema(schema: JsonObject, input: JsonValue): MatchOutcome {
  const verdict = validateAgainstSchema(schema, input);
  if (verdict.valid === true) return MATCHED;
  if (verdict.valid === false) return { status: 'mismatch', detail: joinDifferences(verdict.errors) };
  // Only a spec built in code, past the scenario loader, can get here.
  const problems = verdict.problems.map((problem) => problem.message).join('; ');
  return { status: 'undecided', detail: `the JSON Schema cannot be used: ${problems}` };
}

/** Deep equality of JSON values: key order is irrelevant, arrays are ordered. */
export function deepEqualJson(a: JsonValue, b: JsonValue): boolean {
  return jsonEqual(a, b, false);
}

/**
 * The exact decimal value of a number or numeric string, as a canonical key (`15e-1` for 1.5,
 * "1.50" and "15e-1"), or undefined for anything else. Two values are numerically equal exactly
 * when their keys are equal, which makes `numeric` comparison an equivalence.
 */
export function numericKey(value: JsonValue | undefined): string | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    text = String(value); // the shortest decimal that reads back as this double: what a person wrote
  } else if (typeof value === 'string') text = value;
  else return undefined;
  const parts = NUMBER_SYNTAX.exec(text);
  if (!parts) return undefined;
  const [, sign = '', integer = '', fraction = '', exponent = '0'] = parts;
  const digits = `${integer}${fraction}`;
  // Index loops, not regexes: a trailing-zero regex is quadratic on long digit strings.
  let first = 0;
  while (first < digits.length && digits[first] === '0') first++;
  if (first === digits.length) return '0';
  let last = digits.length;
  while (digits[last - 1] === '0') last--;
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(digits.length - last);
  return `${sign}${digits.slice(first, last)}e${scale}`;
}

/** JSON number syntax: no leading zeros, no `+`, digits on both sides of the point. */
const NUMBER_SYNTAX = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

function jsonEqual(a: JsonValue, b: JsonValue, numeric: boolean): boolean {
  if (a === b) return true;
  if (numeric && (typeof a === 'number' || typeof a === 'string')) {
    if (typeof b !== 'number' && typeof b !== 'string') return false;
    const key = numericKey(a);
    return key !== undefined && key === numericKey(b);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => jsonEqual(item, b[index] as JsonValue, numeric));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every(
    (key) => Object.hasOwn(b, key) && jsonEqual(a[key] as JsonValue, b[key] as JsonValue, numeric),
  );
}

/**
 * `exact` mode: how `actual` differs from `expected` (empty when they are equal). Lists missing
 * keys, extra keys and differing values, each with its path, up to a few.
 */
export function diffExact(expected: JsonValue, actual: JsonValue, options: CompareOptions = {}): string[] {
  const differences: string[] = [];
  if (options.defaults && isObject(expected) && isObject(actual)) {
    // Defaults are about top-level arguments: both directions, each excusing default values.
    differences.push(...diffSubset(expected, actual, options));
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key) && !isDefault(key, actual[key] as JsonValue, options))
        differences.push(extraKey(key, actual[key] as JsonValue, options));
    }
    return differences;
  }
  collectDifferences(expected, actual, '', differences, options.numeric === true);
  return differences;
}

/**
 * `superset` mode: every top-level key of `expected` must be present on `actual` with an equal
 * value; extra keys on `actual` are ignored. Returns the differences (empty when it holds).
 */
export function diffSubset(expected: JsonObject, actual: JsonValue, options: CompareOptions = {}): string[] {
  if (!isObject(actual)) return [notAnObject(actual)];
  const differences: string[] = [];
  for (const key of Object.keys(expected)) {
    const want = expected[key] as JsonValue;
    if (!Object.hasOwn(actual, key)) {
      if (!isDefault(key, want, options)) differences.push(missingKey(key, want, options));
    } else {
      // The value itself must be equal in full, so below the top level the comparison is exact.
      collectDifferences(
        want,
        actual[key] as JsonValue,
        formatKey('', key),
        differences,
        options.numeric === true,
      );
    }
  }
  return differences;
}

/**
 * `subset` mode (agentevals' sense, from the call's side): every top-level key the call has must
 * be in `expected` with an equal value; keys `expected` has and the call lacks are fine.
 */
export function diffWithin(expected: JsonObject, actual: JsonValue, options: CompareOptions = {}): string[] {
  if (!isObject(actual)) return [notAnObject(actual)];
  const differences: string[] = [];
  for (const key of Object.keys(actual)) {
    const saw = actual[key] as JsonValue;
    if (!Object.hasOwn(expected, key)) {
      if (!isDefault(key, saw, options)) differences.push(extraKey(key, saw, options));
    } else {
      collectDifferences(
        expected[key] as JsonValue,
        saw,
        formatKey('', key),
        differences,
        options.numeric === true,
      );
    }
  }
  return differences;
}

function collectDifferences(
  expected: JsonValue,
  actual: JsonValue,
  path: string,
  out: string[],
  numeric: boolean,
): void {
  if (jsonEqual(expected, actual, numeric)) return;
  const at = path === '' ? '' : `${path}: `;
  if (isObject(expected) && isObject(actual)) {
    for (const key of Object.keys(expected)) {
      const keyPath = formatKey(path, key);
      if (!Object.hasOwn(actual, key)) out.push(`missing key ${keyPath} (expected ${render(expected[key])})`);
      else collectDifferences(expected[key] as JsonValue, actual[key] as JsonValue, keyPath, out, numeric);
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key))
        out.push(`extra key ${formatKey(path, key)} (saw ${render(actual[key])})`);
    }
    return;
  }
  if (Array.isArray(expected) && Array.isArray(actual) && expected.length === actual.length) {
    expected.forEach((item, index) => {
      collectDifferences(item, actual[index] as JsonValue, `${path}[${index}]`, out, numeric);
    });
    return;
  }
  out.push(`${at}expected ${render(expected)}, saw ${render(actual)}`);
}

/** True when `key` has a declared default and `value` equals it. */
function isDefault(key: string, value: JsonValue, options: CompareOptions): boolean {
  const { defaults } = options;
  return (
    defaults !== undefined &&
    Object.hasOwn(defaults, key) &&
    jsonEqual(defaults[key] as JsonValue, value, options.numeric === true)
  );
}

function missingKey(key: string, want: JsonValue, options: CompareOptions): string {
  const base = `missing key ${formatKey('', key)} (expected ${render(want)}`;
  const { defaults } = options;
  // Absent means the default, so say why absent is not good enough here.
  if (defaults && Object.hasOwn(defaults, key))
    return `${base}; absent means the default ${render(defaults[key])})`;
  return `${base})`;
}

function extraKey(key: string, saw: JsonValue, options: CompareOptions): string {
  const base = `extra key ${formatKey('', key)} (saw ${render(saw)}`;
  const { defaults } = options;
  if (defaults && Object.hasOwn(defaults, key)) return `${base}, not its default ${render(defaults[key])})`;
  return `${base})`;
}

function notAnObject(actual: JsonValue): string {
  return `expected an object of arguments, saw ${renderValue(JSON.stringify(actual))}`;
}

function joinDifferences(differences: readonly string[]): string {
  const shown = differences.slice(0, MAX_DIFFERENCES).join(', ');
  const rest = differences.length - MAX_DIFFERENCES;
  return rest > 0 ? `${shown} and ${rest} more difference(s)` : shown;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `a.b`, or `a["odd key"]` for keys that are not identifiers. */
function formatKey(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/** Values in messages: JSON, cut so a huge argument cannot flood a reason. */
function render(value: JsonValue | undefined): string {
  return renderValue(JSON.stringify(value) ?? 'undefined');
}

const MAX_RENDERED = 120;

/** Cuts a JSON rendering to a readable length for messages. */
export function renderValue(json: string): string {
  return json.length > MAX_RENDERED ? `${json.slice(0, MAX_RENDERED - 1)}…` : json;
}

/**
 * How an expectation reads in a reason: `the expected arguments {...}`, `the pattern /x/i`,
 * `the JSON Schema {...}`, with the options in parentheses when any are set.
 */
export function describeExpectation(match: ArgsMatchSpec): string {
  if (match.mode === 'regex') return `the pattern /${match.pattern}/${match.flags ?? ''}`;
  if (match.mode === 'schema') return `the JSON Schema ${render(match.schema)}`;
  const acceptable = match.oneOf === undefined ? [] : Object.keys(match.oneOf);
  const onlyAccepted = match.args === undefined && acceptable.length > 0;
  const json = onlyAccepted
    ? `accepted values for ${renderValue(acceptable.join(', '))}`
    : render(match.args);
  const base =
    match.mode === 'exact'
      ? `exactly ${onlyAccepted ? '' : 'the arguments '}${json}`
      : match.mode === 'subset'
        ? `no arguments beyond ${json}`
        : `${onlyAccepted ? '' : 'the expected arguments '}${json}`;
  const notes: string[] = [];
  if (match.args !== undefined && acceptable.length > 0)
    notes.push(`accepted values for ${renderValue(acceptable.join(', '))}`);
  if (match.normalize) notes.push('strings normalized');
  if (match.ignore && match.ignore.length > 0) notes.push(`ignoring ${renderValue(match.ignore.join(', '))}`);
  if (match.defaults && Object.keys(match.defaults).length > 0)
    notes.push(`defaults ${render(match.defaults)}`);
  if (match.numeric) notes.push('numbers compared by value');
  return notes.length === 0 ? base : `${base} (${notes.join('; ')})`;
}
