import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  deepEqualJson,
  diffExact,
  diffSubset,
  matchArgs,
  REGEX_INPUT_LIMIT,
} from '../../src/evaluate/match-args.js';
import type { JsonValue } from '../../src/model/json.js';
import { compileRegex, type JsonObject } from '../../src/scenario/assertions.js';
import type { ArgsMatchSpec as ArgsMatch } from '../../src/scenario/native.js';
import { jsonObject, jsonValue, reorder } from '../helpers/json-arbitraries.js';

const captured = (value: JsonValue) => ({ captured: true as const, value });

function regexMatch(pattern: string, flags = ''): ArgsMatch {
  const compiled = compileRegex(pattern, flags);
  if (!compiled.ok) throw new Error(compiled.message);
  return { mode: 'regex', pattern, flags, regex: compiled.regex };
}

describe('exact', () => {
  it('passes on deep-equal arguments whatever the key order', () => {
    const outcome = matchArgs(
      { mode: 'exact', args: { order_id: 'ord_42', items: [{ sku: 'a', n: 1 }] } },
      captured({ items: [{ n: 1, sku: 'a' }], order_id: 'ord_42' }),
    );
    expect(outcome).toEqual({ status: 'match' });
  });

  it('fails on an extra key, a missing key and a differing value, naming each with expected and seen', () => {
    const outcome = matchArgs(
      { mode: 'exact', args: { order_id: 'ord_42', amount_cents: 5000, items: [{ sku: 'a' }] } },
      captured({ order_id: 'ord_42', amount_cents: 4000, items: [{ sku: 'b' }], note: 'rush' }),
    );
    expect(outcome).toEqual({
      status: 'mismatch',
      detail:
        'amount_cents: expected 5000, saw 4000, items[0].sku: expected "a", saw "b", extra key note (saw "rush")',
    });
    expect(diffExact({ a: 1 }, {})).toEqual(['missing key a (expected 1)']);
    expect(diffExact([1, 2], [1])).toEqual(['expected [1,2], saw [1]']);
  });

  it('treats __proto__ and constructor as ordinary keys', () => {
    const expected = JSON.parse('{"__proto__": {"admin": true}}') as JsonObject;
    expect(diffExact(expected, JSON.parse('{"__proto__": {"admin": true}}'))).toEqual([]);
    expect(diffExact(expected, {})).toEqual(['missing key __proto__ (expected {"admin":true})']);
    expect(diffExact(expected, JSON.parse('{"__proto__": {"admin": false}}'))).toEqual([
      '__proto__.admin: expected true, saw false',
    ]);
    // Missing on the actual side: must not read Object.prototype.constructor through the prototype chain.
    expect(deepEqualJson({ constructor: {} } as JsonObject, {})).toBe(false);
    expect(diffExact({}, JSON.parse('{"constructor": 1}'))).toEqual(['extra key constructor (saw 1)']);
  });

  it('property: reflexive, symmetric, and blind to key order', () => {
    fc.assert(
      fc.property(jsonValue, jsonValue, (a, b) => {
        expect(deepEqualJson(a, a)).toBe(true);
        expect(deepEqualJson(a, reorder(a))).toBe(true);
        expect(deepEqualJson(a, b)).toBe(deepEqualJson(b, a));
        expect(diffExact(a, b).length === 0).toBe(deepEqualJson(a, b));
      }),
    );
    fc.assert(
      fc.property(jsonObject, (a) => {
        expect(matchArgs({ mode: 'exact', args: a }, captured(reorder(a)))).toEqual({ status: 'match' });
      }),
    );
  });
});

describe("superset (the call has at least these arguments; seed 001's subset)", () => {
  it('passes when every expected key deep-equals, ignoring extra keys', () => {
    const outcome = matchArgs(
      { mode: 'superset', args: { order_id: 'ord_42', amount_cents: 5000 } },
      captured({ order_id: 'ord_42', amount_cents: 5000, reason: 'damaged' }),
    );
    expect(outcome).toEqual({ status: 'match' });
  });

  it('fails naming the differing and the missing key with expected and seen values', () => {
    const outcome = matchArgs(
      { mode: 'superset', args: { order_id: 'ord_42', amount_cents: 5000 } },
      captured({ amount_cents: 4000, reason: 'damaged' }),
    );
    expect(outcome).toEqual({
      status: 'mismatch',
      detail: 'missing key order_id (expected "ord_42"), amount_cents: expected 5000, saw 4000',
    });
  });

  it('compares values in full below the top level', () => {
    expect(diffSubset({ address: { city: 'Oslo' } }, { address: { city: 'Oslo', zip: '0150' } })).toEqual([
      'extra key address.zip (saw "0150")',
    ]);
  });

  it('fails on arguments that are not an object', () => {
    expect(diffSubset({ a: 1 }, ['a'])).toEqual(['expected an object of arguments, saw ["a"]']);
  });
});

describe('subset (the call has nothing beyond these arguments)', () => {
  it('passes when the call has fewer keys, all equal', () => {
    expect(matchArgs({ mode: 'subset', args: { a: 1, b: 2 } }, captured({ a: 1 }))).toEqual({
      status: 'match',
    });
  });

  it('fails naming an extra key and a differing value', () => {
    expect(matchArgs({ mode: 'subset', args: { a: 1 } }, captured({ a: 2, c: 3 }))).toEqual({
      status: 'mismatch',
      detail: 'a: expected 1, saw 2, extra key c (saw 3)',
    });
  });

  it('property: subset(a, b) holds exactly when superset(b, a) does', () => {
    const object = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.constantFrom(0, 1, 'x'));
    fc.assert(
      fc.property(object, object, (a, b) => {
        const within = matchArgs({ mode: 'subset', args: b }, captured(a)).status === 'match';
        const contains = matchArgs({ mode: 'superset', args: a }, captured(b)).status === 'match';
        expect(within).toBe(contains);
      }),
    );
  });

  it('property: subset(x, x), subset(pick(x), x), and never with a changed value', () => {
    fc.assert(
      fc.property(jsonObject, fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }), (x, keep) => {
        expect(diffSubset(x, x)).toEqual([]);
        // Rebuilt through JSON text: assigning a __proto__ entry would set a prototype instead of a key.
        const picked = JSON.parse(
          `{${Object.keys(x)
            .filter((_, index) => keep[index])
            .map((key) => `${JSON.stringify(key)}:${JSON.stringify(x[key])}`)
            .join(',')}}`,
        ) as JsonObject;
        expect(diffSubset(picked, x)).toEqual([]);
      }),
    );
    fc.assert(
      fc.property(jsonObject, jsonValue, (x, other) => {
        const keys = Object.keys(x);
        fc.pre(keys.length > 0);
        const key = keys[0] as string;
        fc.pre(!deepEqualJson(x[key] as JsonValue, other));
        const changed = JSON.parse(JSON.stringify(x)) as JsonObject;
        Object.defineProperty(changed, key, { value: other, enumerable: true, writable: true });
        expect(diffSubset(x, changed).length).toBeGreaterThan(0);
        expect(matchArgs({ mode: 'superset', args: x }, captured(changed)).status).toBe('mismatch');
      }),
    );
  });
});

describe('regex', () => {
  it('tests the pattern against JSON.stringify of the input, with flags', () => {
    expect(matchArgs(regexMatch('refund policy', 'i'), captured({ q: 'Refund Policy 2024' }))).toEqual({
      status: 'match',
    });
    // The JSON text, quotes and all, is what the pattern sees.
    expect(matchArgs(regexMatch('^\\{"q":"'), captured({ q: 'x' })).status).toBe('match');
  });

  it('fails saying the pattern and the text seen', () => {
    expect(matchArgs(regexMatch('refund policy', 'i'), captured({ q: 'billing' }))).toEqual({
      status: 'mismatch',
      detail: '/refund policy/i did not match {"q":"billing"}',
    });
  });

  it('runs JS syntax RE2 lacks natively (\\u escapes, named groups) and lookbehinds', () => {
    expect(matchArgs(regexMatch('\\u0041(?<rest>BC)'), captured('ABC')).status).toBe('match');
    expect(matchArgs(regexMatch('(?<=order_)\\d+'), captured({ id: 'order_42' })).status).toBe('match');
    expect(matchArgs(regexMatch('(?<=order_)\\d+'), captured({ id: 'refund_42' })).status).toBe('mismatch');
  });

  it('is undecided, not failed, when the input is longer than the cap and the prefix does not match', () => {
    const long = { blob: 'x'.repeat(REGEX_INPUT_LIMIT), tail: 'needle' };
    const outcome = matchArgs(regexMatch('needle'), captured(long));
    expect(outcome.status).toBe('undecided');
    if (outcome.status === 'undecided') expect(outcome.detail).toMatch(/only the first 1048576 were tested/);
    expect(matchArgs(regexMatch('"blob"'), captured(long)).status).toBe('match');
  });

  it('does not count a match that only reaches the cut: an end anchor there is not the end of the input', () => {
    const long = { q: `${'a'.repeat(REGEX_INPUT_LIMIT)}; DROP TABLE users` };
    const outcome = matchArgs(regexMatch('^\\{"q":"[a-z]*$'), captured(long));
    expect(outcome.status).toBe('undecided');
    if (outcome.status === 'undecided') expect(outcome.detail).toMatch(/matched only up to the cut/);
    expect(matchArgs(regexMatch('^\\{"q":"[a-z]*$'), captured({ q: 'abc; DROP TABLE users' })).status).toBe(
      'mismatch',
    );
  });

  it('finishes fast on a catastrophic-backtracking shape', () => {
    const match = regexMatch('(a+)+$');
    const input = `${'a'.repeat(100_000)}!`;
    const started = performance.now();
    expect(matchArgs(match, captured(input)).status).toBe('mismatch');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('arguments that cannot be judged', () => {
  it('is undecided when the arguments were not captured, in every mode and with every option', () => {
    for (const match of [
      { mode: 'exact', args: {} },
      { mode: 'superset', args: {} },
      { mode: 'subset', args: {} },
      { mode: 'exact', args: {}, ignore: ['*'], defaults: { a: 1 }, numeric: true },
      regexMatch('.*'),
      { mode: 'schema', schema: {} },
    ] satisfies ArgsMatch[]) {
      expect(matchArgs(match, { captured: false })).toEqual({
        status: 'undecided',
        detail: 'arguments were not captured',
      });
    }
  });

  it('is undecided when the arguments are not valid JSON, and tests the raw text with a regex', () => {
    const raw = { captured: true as const, value: '{"order_id": "ord_4', parseError: 'Unterminated string' };
    expect(matchArgs({ mode: 'subset', args: { order_id: 'ord_42' } }, raw)).toEqual({
      status: 'undecided',
      detail: 'arguments are not valid JSON (Unterminated string), so they cannot be compared',
    });
    expect(matchArgs(regexMatch('"order_id": "ord_4'), raw).status).toBe('match');
    expect(matchArgs(regexMatch('ord_99'), raw).status).toBe('undecided');
    expect(matchArgs({ mode: 'schema', schema: {} }, raw)).toEqual({
      status: 'undecided',
      detail: 'arguments are not valid JSON (Unterminated string), so they cannot be compared',
    });
  });
});
