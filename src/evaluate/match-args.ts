/**
 * Argument matching for native `match` specs: `exact`, `superset` (the call has at least these
 * arguments: seed 001's `subset`), `subset` (the call has nothing beyond these) and `regex`. Each answer is
 * a match, a mismatch that says which key differed and how, or "undecided" when the arguments
 * cannot be judged (not captured, unparsable, too long for the regex cap) - never a guess.
 *
 * Objects are read through own properties only, so `__proto__` and `constructor` are ordinary keys.
 */
import type { JsonValue } from '../model/json.js';
import type { Captured } from '../model/trajectory.js';
import type { CompiledRegex, JsonObject } from '../scenario/assertions.js';
import type { ArgsMatchSpec } from '../scenario/native.js';

/** The outcome of matching one call's arguments. `detail` is a phrase ready to go in a reason. */
export type MatchOutcome =
  | { status: 'match' }
  | { status: 'mismatch'; detail: string }
  | { status: 'undecided'; detail: string };

/**
 * The regex mode tests at most this many characters (UTF-16 code units, 1 MiB) of
 * `JSON.stringify(input)`. A match inside the prefix counts; no match in a cut prefix is
 * undecided, since the match could lie past the cut. RE2 is linear, so this bounds the work.
 */
export const REGEX_INPUT_LIMIT = 1 << 20;

/** At most this many differences are listed for one call; the rest are counted. */
const MAX_DIFFERENCES = 3;

const MATCHED: MatchOutcome = { status: 'match' };

/** Matches one call's recorded arguments against a `match` spec. */
export function matchArgs(match: ArgsMatchSpec, args: Captured<JsonValue>): MatchOutcome {
  if (!args.captured) return { status: 'undecided', detail: 'arguments were not captured' };
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
  const expected = match.args ?? {};
  const differences =
    match.mode === 'exact'
      ? diffExact(expected, args.value)
      : match.mode === 'superset'
        ? diffSubset(expected, args.value)
        : match.mode === 'subset'
          ? diffWithin(expected, args.value)
          : [`mode ${match.mode} is not supported yet`];
  return differences.length === 0 ? MATCHED : { status: 'mismatch', detail: joinDifferences(differences) };
}

/**
 * `regex` mode: the pattern is tested against `JSON.stringify(input)`. Arguments that were
 * captured but are not valid JSON are tested as the raw text they were recorded as.
 */
export function matchRegex(regex: CompiledRegex, input: JsonValue, parseError?: string): MatchOutcome {
  const text = parseError !== undefined && typeof input === 'string' ? input : JSON.stringify(input);
  const cut = text.length > REGEX_INPUT_LIMIT;
  const tested = cut ? text.slice(0, REGEX_INPUT_LIMIT) : text;
  if (regex.program.test(tested)) return MATCHED;
  const shown = `/${regex.source}/${regex.flags}`;
  if (cut) {
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

/** Deep equality of JSON values: key order is irrelevant, arrays are ordered. */
export function deepEqualJson(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => deepEqualJson(item, b[index] as JsonValue));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every(
    (key) => Object.hasOwn(b, key) && deepEqualJson(a[key] as JsonValue, b[key] as JsonValue),
  );
}

/**
 * `exact` mode: how `actual` differs from `expected` (empty when deep-equal). Lists missing
 * keys, extra keys and differing values, each with its path, up to a few.
 */
export function diffExact(expected: JsonValue, actual: JsonValue): string[] {
  const differences: string[] = [];
  collectDifferences(expected, actual, '', differences);
  return differences;
}

/**
 * `subset` mode: every top-level key of `expected` must be present on `actual` with a deep-equal
 * value; extra keys on `actual` are ignored. Returns the differences (empty when it holds).
 */
export function diffSubset(expected: JsonObject, actual: JsonValue): string[] {
  if (!isObject(actual))
    return [`expected an object of arguments, saw ${renderValue(JSON.stringify(actual))}`];
  const differences: string[] = [];
  for (const key of Object.keys(expected)) {
    const want = expected[key] as JsonValue;
    if (!Object.hasOwn(actual, key)) {
      differences.push(`missing key ${formatKey('', key)} (expected ${render(want)})`);
    } else if (!deepEqualJson(want, actual[key] as JsonValue)) {
      // The value itself must be equal in full, so below the top level the comparison is exact.
      collectDifferences(want, actual[key] as JsonValue, formatKey('', key), differences);
    }
  }
  return differences;
}

/**
 * `subset` mode (agentevals' sense, from the call's side): every top-level key the call has must
 * be in `expected` with a deep-equal value; keys `expected` has and the call lacks are fine.
 */
export function diffWithin(expected: JsonObject, actual: JsonValue): string[] {
  if (!isObject(actual))
    return [`expected an object of arguments, saw ${renderValue(JSON.stringify(actual))}`];
  const differences: string[] = [];
  for (const key of Object.keys(actual)) {
    if (!Object.hasOwn(expected, key))
      differences.push(`extra key ${formatKey('', key)} (saw ${render(actual[key])})`);
    else
      collectDifferences(
        expected[key] as JsonValue,
        actual[key] as JsonValue,
        formatKey('', key),
        differences,
      );
  }
  return differences;
}

function collectDifferences(expected: JsonValue, actual: JsonValue, path: string, out: string[]): void {
  if (deepEqualJson(expected, actual)) return;
  const at = path === '' ? '' : `${path}: `;
  if (isObject(expected) && isObject(actual)) {
    for (const key of Object.keys(expected)) {
      const keyPath = formatKey(path, key);
      if (!Object.hasOwn(actual, key)) out.push(`missing key ${keyPath} (expected ${render(expected[key])})`);
      else collectDifferences(expected[key] as JsonValue, actual[key] as JsonValue, keyPath, out);
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key))
        out.push(`extra key ${formatKey(path, key)} (saw ${render(actual[key])})`);
    }
    return;
  }
  if (Array.isArray(expected) && Array.isArray(actual) && expected.length === actual.length) {
    expected.forEach((item, index) => {
      collectDifferences(item, actual[index] as JsonValue, `${path}[${index}]`, out);
    });
    return;
  }
  out.push(`${at}expected ${render(expected)}, saw ${render(actual)}`);
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

/** How an expectation reads in a reason: `the expected arguments {...}`, `the pattern /x/i`. */
export function describeExpectation(match: ArgsMatchSpec): string {
  if (match.mode === 'regex') return `the pattern /${match.pattern}/${match.flags ?? ''}`;
  if (match.mode === 'schema') return 'the arguments JSON Schema';
  const json = renderValue(JSON.stringify(match.args));
  if (match.mode === 'exact') return `exactly the arguments ${json}`;
  return match.mode === 'subset' ? `no arguments beyond ${json}` : `the expected arguments ${json}`;
}
