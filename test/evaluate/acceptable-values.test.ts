/**
 * Acceptable values (`oneOf`, BFCL's possible answers) and string normalization (`normalize`)
 * in argument matches: what they accept, what a failure says per argument, and how a scenario
 * that misuses them is told. Then a property against a brute-force oracle.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizedStrings, normalizeString } from '../../src/evaluate/acceptable-values.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { matchArgs } from '../../src/evaluate/match-args.js';
import type { JsonValue } from '../../src/model/json.js';
import { argsMatchSchema } from '../../src/scenario/native.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { errorOf } from '../helpers/scenario-errors.js';
import { buildTrajectory } from '../helpers/trajectory.js';

const spec = (value: unknown) => argsMatchSchema.parse(value);
const judge = (match: unknown, args: JsonValue) => matchArgs(spec(match), { captured: true, value: args });

describe('oneOf', () => {
  const area = { mode: 'exact', oneOf: { base: [10], height: [5], unit: ['units', ''] } };

  it('accepts any listed value, and "" lets the argument be left out (or given as "")', () => {
    expect(judge(area, { base: 10, height: 5, unit: 'units' }).status).toBe('match');
    expect(judge(area, { base: 10, height: 5 }).status).toBe('match');
    expect(judge(area, { base: 10, height: 5, unit: '' }).status).toBe('match');
  });

  it('says per argument what was seen, what was expected, and which values were accepted', () => {
    expect(judge(area, { base: 10, height: 6, unit: 'cm' })).toEqual({
      status: 'mismatch',
      detail: 'height: expected 5, saw 6, unit: expected "units" or left out, saw "cm"; accepted: base: 10',
    });
    expect(judge(area, { base: 10 })).toEqual({
      status: 'mismatch',
      detail: 'missing key height (expected 5); accepted: base: 10, unit: left out (optional)',
    });
    // exact: nothing beyond the listed arguments and `args`.
    expect(judge(area, { base: 10, height: 5, scale: 2 })).toEqual({
      status: 'mismatch',
      detail: 'extra key scale (saw 2); accepted: base: 10, height: 5, unit: left out (optional)',
    });
  });

  it('combines with args and the mode for the other arguments', () => {
    const refund = { mode: 'superset', args: { orderId: 'O-17' }, oneOf: { reason: ['damaged', 'late'] } };
    expect(judge(refund, { orderId: 'O-17', reason: 'late', note: 'x' }).status).toBe('match');
    expect(judge(refund, { orderId: 'O-18', reason: 'late' })).toEqual({
      status: 'mismatch',
      detail: 'orderId: expected "O-17", saw "O-18"; accepted: reason: "late"',
    });
    const within = { mode: 'subset', args: { orderId: 'O-17' }, oneOf: { reason: ['damaged', ''] } };
    expect(judge(within, {}).status).toBe('match');
    expect(judge(within, { note: 'x' }).status).toBe('mismatch');
  });

  it('reads dot paths; an object left empty once they are taken out counts as absent', () => {
    const tier = {
      mode: 'exact',
      args: { customer: { id: 7 } },
      oneOf: { 'customer.tier': ['gold', 'silver'] },
    };
    expect(judge(tier, { customer: { id: 7, tier: 'gold' } }).status).toBe('match');
    expect(judge(tier, { customer: { id: 7, tier: 'bronze' } }).status).toBe('mismatch');
    const only = { mode: 'exact', oneOf: { 'customer.tier': ['gold', ''] } };
    expect(judge(only, { customer: { tier: 'gold' } }).status).toBe('match');
    expect(judge(only, {}).status).toBe('match');
    expect(judge(only, { customer: { tier: 'gold', id: 7 } }).status).toBe('mismatch');
  });

  it('compares numbers across int, float and numeric string with numeric, and lists and objects whole', () => {
    expect(judge({ mode: 'exact', oneOf: { amount: [40] } }, { amount: 40.0 }).status).toBe('match');
    expect(judge({ mode: 'exact', oneOf: { amount: [40] } }, { amount: '40' }).status).toBe('mismatch');
    expect(judge({ mode: 'exact', numeric: true, oneOf: { amount: [40] } }, { amount: '40.0' }).status).toBe(
      'match',
    );
    const stops = {
      mode: 'exact',
      oneOf: {
        stops: [
          ['Monterey', 'Santa Barbara'],
          ['Santa Barbara', 'Monterey'],
        ],
      },
    };
    expect(judge(stops, { stops: ['Santa Barbara', 'Monterey'] }).status).toBe('match');
    expect(judge(stops, { stops: ['Monterey'] }).status).toBe('mismatch');
  });

  it('works wherever a match does: a sequence step here', () => {
    const scenario = parseScenario(
      { order: { sequence: { steps: [{ tool: 'convert', match: { oneOf: { unit: ['in', 'inches'] } } }] } } },
      'convert.yaml',
    );
    expect(evaluate(buildTrajectory([{ tool: 'convert', args: { unit: 'inches' } }]), scenario).verdict).toBe(
      'pass',
    );
    const [finding] = evaluate(
      buildTrajectory([{ tool: 'convert', args: { unit: 'cm' } }]),
      scenario,
    ).findings;
    expect(finding?.message).toBe(
      'matched 0 of 1 steps; convert was called 1 time, but not with accepted values for unit: call c1: ' +
        'unit: expected one of "in", "inches", saw "cm"',
    );
  });
});

describe('normalize', () => {
  it('is BFCL’s standardization: spaces and , . / - _ * ^ removed, lower-cased, quote marks as "', () => {
    expect(normalizeString("April 1, 2024 - O'Hare_T*2^x/y.")).toBe('april12024o"haret2xy');
    expect(normalizedStrings({ City: ['New York', { Near: 'Jersey City' }], n: 1 })).toEqual({
      City: ['newyork', { Near: 'jerseycity' }],
      n: 1,
    });
  });

  it('applies to oneOf values and to args, never to keys', () => {
    const place = {
      mode: 'exact',
      normalize: true,
      oneOf: { location: ['New York, NY'] },
      args: { kind: 'Thai' },
    };
    expect(judge(place, { location: 'new york ny', kind: 'THAI' }).status).toBe('match');
    expect(judge(place, { location: 'new york', kind: 'thai' }).status).toBe('mismatch');
    expect(judge({ mode: 'exact', normalize: true, args: { Kind: 'x' } }, { kind: 'x' }).status).toBe(
      'mismatch',
    );
  });

  it('leaves numeric strings as they are with numeric, so "1.5" stays 1.5', () => {
    const rate = { mode: 'exact', normalize: true, numeric: true, oneOf: { rate: [1.5] } };
    expect(judge(rate, { rate: '1.5' }).status).toBe('match');
    expect(judge(rate, { rate: '15' }).status).toBe('mismatch');
    expect(judge({ ...rate, numeric: false, oneOf: { rate: ['1.5'] } }, { rate: '15' }).status).toBe('match');
  });

  it('does not recurse on the input: an argument nested 50,000 deep is normalized', () => {
    let deep: JsonValue = 'A B';
    for (let level = 0; level < 50_000; level++) deep = [deep];
    let inner = normalizedStrings(deep);
    for (let level = 0; level < 50_000; level++) inner = (inner as JsonValue[])[0] as JsonValue;
    expect(inner).toBe('ab');
  });
});

describe('oneOf and normalize in scenario files', () => {
  const load = (match: Record<string, unknown>) => errorOf({ arguments: [{ tool: 'calc', match }] });

  it('rejects what cannot work, saying where and the fix', () => {
    expect(load({ oneof: { unit: ['cm'] } })).toContain(
      'arguments[0].match: unknown key "oneof" (did you mean oneOf?)',
    );
    expect(load({ oneOf: { unit: ['cm'] }, normalise: true })).toBe(
      'scenario refund.yaml: arguments[0].match: unknown key "normalise" (did you mean normalize?)',
    );
    expect(load({ oneOf: { unit: [] } })).toBe(
      'scenario refund.yaml: arguments[0].match.oneOf.unit: expected at least 1 item(s); got an empty list',
    );
    expect(load({ oneOf: { 'items.*.sku': ['A'] } })).toBe(
      'scenario refund.yaml: arguments[0].match.oneOf["items.*.sku"]: a oneOf path names one argument: * is not supported here',
    );
    expect(load({ args: { unit: 'cm' }, oneOf: { unit: ['cm'] } })).toBe(
      'scenario refund.yaml: arguments[0].match.oneOf.unit: unit is given in args too: give its value in args, or its accepted values in oneOf',
    );
    expect(load({ oneOf: { 'meta.unit': ['cm'] }, ignore: ['meta'] })).toBe(
      'scenario refund.yaml: arguments[0].match.oneOf["meta.unit"]: meta.unit is left out by ignore (meta), so its accepted values would never be checked',
    );
    expect(load({ mode: 'regex', pattern: 'cm', oneOf: { unit: ['cm'] } })).toBe(
      'scenario refund.yaml: arguments[0].match.oneOf: oneOf compares argument values: use it with mode exact, superset or subset, not regex',
    );
  });

  it('loads a oneOf without args in every comparing mode', () => {
    for (const mode of ['exact', 'superset', 'subset'])
      expect(() => spec({ mode, oneOf: { unit: ['cm', ''] } })).not.toThrow();
    expect(() => spec({ mode: 'exact' })).toThrow(/mode exact needs args/);
  });
});

// ---- the brute-force oracle ------------------------------------------------------------------

const VALUES: readonly JsonValue[] = [
  0,
  1,
  1.5,
  '1',
  '1.5',
  'A b',
  'ab',
  "a'b",
  'a"b',
  '',
  true,
  null,
  [1, 'X'],
];
const value = fc.constantFrom(...VALUES);
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

function standardized(item: JsonValue, numeric: boolean): JsonValue {
  if (typeof item === 'string')
    return numeric && NUMBER.test(item)
      ? item
      : item
          .replace(/[ ,./\-_*^]/g, '')
          .toLowerCase()
          .replaceAll("'", '"');
  if (Array.isArray(item)) return item.map((inner) => standardized(inner, numeric));
  return item;
}

function same(a: JsonValue, b: JsonValue, numeric: boolean, normalize: boolean): boolean {
  const [x, y] = normalize ? [standardized(a, numeric), standardized(b, numeric)] : [a, b];
  const number = (v: JsonValue) =>
    typeof v === 'number' ? v : typeof v === 'string' && NUMBER.test(v) ? Number(v) : undefined;
  if (
    numeric &&
    (typeof x === 'number' || typeof x === 'string') &&
    (typeof y === 'number' || typeof y === 'string')
  ) {
    const [p, q] = [number(x), number(y)];
    if (p !== undefined || q !== undefined) return p === q;
  }
  return JSON.stringify(x) === JSON.stringify(y);
}

describe('oneOf and normalize properties', () => {
  it('agree with a brute-force reading of the rules', () => {
    const args = fc.dictionary(fc.constantFrom('a', 'b', 'c'), value, { maxKeys: 3 });
    fc.assert(
      fc.property(
        fc.constantFrom('exact', 'superset', 'subset'),
        fc.uniqueArray(value, { minLength: 1, maxLength: 3, selector: (item) => JSON.stringify(item) }),
        fc.dictionary(fc.constantFrom('b', 'c'), value, { maxKeys: 2 }),
        fc.boolean(),
        fc.boolean(),
        args,
        (mode, accepted, expected, numeric, normalize, actual) => {
          const match = { mode, oneOf: { a: accepted }, args: expected, numeric, normalize };
          const outcome = judge(match, actual);
          const eq = (x: JsonValue, y: JsonValue) => same(x, y, numeric, normalize);
          const chosen = Object.hasOwn(actual, 'a')
            ? accepted.some((item) => eq(item, actual.a as JsonValue))
            : accepted.includes('');
          const { a: _, ...rest } = actual;
          const has = (object: Record<string, JsonValue>, key: string) => Object.hasOwn(object, key);
          const within = (inner: Record<string, JsonValue>, outer: Record<string, JsonValue>) =>
            Object.keys(inner).every(
              (key) => has(outer, key) && eq(inner[key] as JsonValue, outer[key] as JsonValue),
            );
          const others =
            mode === 'exact'
              ? within(expected, rest) && within(rest, expected)
              : mode === 'superset'
                ? within(expected, rest)
                : within(rest, expected);
          expect(outcome.status).toBe(chosen && others ? 'match' : 'mismatch');
          if (outcome.status === 'mismatch' && !chosen)
            expect(outcome.detail).toMatch(/\ba\b.*expected|missing key a/);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
