import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeExpectation, matchArgs, numericKey } from '../../src/evaluate/match-args.js';
import type { JsonValue } from '../../src/model/json.js';
import { compileRegex, type JsonObject } from '../../src/scenario/assertions.js';
import type { ArgsMatchSpec as ArgsMatch } from '../../src/scenario/native.js';
import { jsonObject, jsonValue, reorder } from '../helpers/json-arbitraries.js';

// The options of the comparing modes (ignore, defaults, numeric) and the properties that must
// hold with them; the modes themselves are in match-args.test.ts.

const captured = (value: JsonValue) => ({ captured: true as const, value });

function regexMatch(pattern: string): ArgsMatch {
  const compiled = compileRegex(pattern);
  if (!compiled.ok) throw new Error(compiled.message);
  return { mode: 'regex', pattern, regex: compiled.regex };
}

/** The three comparing modes, for properties that must hold in each. */
const COMPARING_MODES = ['exact', 'superset', 'subset'] as const;

const status = (match: ArgsMatch, value: JsonValue) => matchArgs(match, captured(value)).status;

/** A copy of `object` with `key` set (an own property, even for `__proto__`). */
function withKey(object: JsonObject, key: string, value: JsonValue): JsonObject {
  const copy: JsonObject = {};
  for (const own of [...Object.keys(object).filter((name) => name !== key), key]) {
    const item = own === key ? value : (object[own] as JsonValue);
    Object.defineProperty(copy, own, { value: item, enumerable: true, writable: true });
  }
  return copy;
}

function withoutKey(object: JsonObject, key: string): JsonObject {
  const copy: JsonObject = {};
  for (const own of Object.keys(object).filter((name) => name !== key)) {
    Object.defineProperty(copy, own, { value: object[own], enumerable: true, writable: true });
  }
  return copy;
}

describe('ignore', () => {
  const expected = { order_id: 'ord_42', metadata: { trace: 'a' }, items: [{ sku: 'a', n: 1 }] };

  it('leaves top-level keys and starred paths out of both sides', () => {
    const match: ArgsMatch = { mode: 'exact', args: expected, ignore: ['metadata', 'items.*.sku'] };
    expect(status(match, { order_id: 'ord_42', items: [{ sku: 'zz', n: 1 }] })).toBe('match');
    expect(status(match, { order_id: 'ord_42', metadata: 7, items: [{ n: 1 }] })).toBe('match');
    // What is not ignored is still compared, with the same reasons as without ignore.
    expect(matchArgs(match, captured({ order_id: 'ord_7', items: [{ sku: 'a', n: 2 }] }))).toEqual({
      status: 'mismatch',
      detail: 'order_id: expected "ord_42", saw "ord_7", items[0].n: expected 1, saw 2',
    });
  });

  it('removes an ignored array element, so the elements after it move up', () => {
    const match: ArgsMatch = { mode: 'exact', args: { ids: [1, 2, 3] }, ignore: ['ids.1'] };
    expect(status(match, { ids: [1, 99, 3] })).toBe('match');
    expect(matchArgs(match, captured({ ids: [1, 99] }))).toEqual({
      status: 'mismatch',
      detail: 'ids: expected [1,3], saw [1]',
    });
  });

  it('treats * as a whole segment only, and __proto__ as an ordinary key', () => {
    expect(status({ mode: 'exact', args: {}, ignore: ['*_id'] }, { order_id: 1 })).toBe('mismatch');
    expect(status({ mode: 'exact', args: {}, ignore: ['*_id'] }, { '*_id': 1 })).toBe('match');
    const withProto = JSON.parse('{"__proto__": {"admin": true}, "q": "x"}') as JsonObject;
    expect(status({ mode: 'exact', args: { q: 'x' }, ignore: ['__proto__'] }, withProto)).toBe('match');
    expect(
      matchArgs({ mode: 'exact', args: { q: 'x' }, ignore: ['__proto__.admin'] }, captured(withProto)),
    ).toEqual({ status: 'mismatch', detail: 'extra key __proto__ (saw {})' });
  });

  it('has no effect in regex mode', () => {
    expect(status({ ...regexMatch('secret'), ignore: ['token'] }, { token: 'secret' })).toBe('match');
  });

  it('property: a change under an ignored path never changes the outcome, in any mode, with any option', () => {
    fc.assert(
      fc.property(
        jsonObject,
        jsonObject,
        jsonObject,
        fc.constantFrom('a', '__proto__', 'constructor'),
        fc.constantFrom('c', '*'),
        jsonValue,
        fc.constantFrom(...COMPARING_MODES),
        fc.boolean(),
        fc.option(jsonObject, { nil: undefined }),
        (args, call, inside, key, innerKey, replacement, mode, numeric, defaults) => {
          const ignore = [key, `b.${innerKey}`];
          const spec = (expected: JsonObject, declared = defaults): ArgsMatch => ({
            mode,
            args: expected,
            ignore,
            numeric,
            ...(declared && { defaults: declared }),
          });
          const base = withKey(call, 'b', inside);
          const before = status(spec(args), base);
          // The ignored key, changed or removed on the call, changed in the expectation and the defaults.
          expect(status(spec(args), withKey(base, key, replacement))).toBe(before);
          expect(status(spec(args), withoutKey(base, key))).toBe(before);
          expect(status(spec(withKey(args, key, replacement)), base)).toBe(before);
          expect(status(spec(args, withKey(defaults ?? {}, key, replacement)), base)).toBe(before);
          // Below b: the ignored child (any child, for *) changed on the call.
          const child = innerKey === '*' ? 'x y' : innerKey;
          expect(status(spec(args), withKey(base, 'b', withKey(inside, child, replacement)))).toBe(before);
          // ... and in a default for b, which is compared without the ignored child too.
          const declared = withKey(defaults ?? {}, 'b', inside);
          const changedDefault = withKey(declared, 'b', withKey(inside, child, replacement));
          expect(status(spec(args, changedDefault), base)).toBe(status(spec(args, declared), base));
        },
      ),
    );
  });
});

describe('defaults', () => {
  const defaults = { page: 1, cursor: '*' };

  it('counts an argument equal to its default as absent, on either side, in every mode', () => {
    for (const mode of COMPARING_MODES) {
      expect(status({ mode, args: { q: 'x' }, defaults }, { q: 'x', page: 1 })).toBe('match');
      expect(status({ mode, args: { q: 'x', page: 1 }, defaults }, { q: 'x' })).toBe('match');
    }
  });

  it('fails exact on a non-default value, saying what the default is', () => {
    expect(matchArgs({ mode: 'exact', args: { q: 'x' }, defaults }, captured({ q: 'x', page: 2 }))).toEqual({
      status: 'mismatch',
      detail: 'extra key page (saw 2, not its default 1)',
    });
    expect(matchArgs({ mode: 'exact', args: { q: 'x', page: 2 }, defaults }, captured({ q: 'x' }))).toEqual({
      status: 'mismatch',
      detail: 'missing key page (expected 2; absent means the default 1)',
    });
  });

  it('still requires an expected default value in superset mode when the call sets another', () => {
    expect(matchArgs({ mode: 'superset', args: { page: 1 }, defaults }, captured({ page: 3 }))).toEqual({
      status: 'mismatch',
      detail: 'page: expected 1, saw 3',
    });
    expect(status({ mode: 'superset', args: { q: 'x' }, defaults }, { q: 'x', page: 3 })).toBe('match');
    expect(status({ mode: 'subset', args: { q: 'x' }, defaults }, { page: 3 })).toBe('mismatch');
  });

  it('reads "*" as the literal string, never as a wildcard (promptfoo #9842)', () => {
    expect(
      matchArgs({ mode: 'exact', args: { q: 'x' }, defaults }, captured({ q: 'x', cursor: 'abc' })),
    ).toEqual({
      status: 'mismatch',
      detail: 'extra key cursor (saw "abc", not its default "*")',
    });
    expect(status({ mode: 'exact', args: { q: 'x' }, defaults }, { q: 'x', cursor: '*' })).toBe('match');
  });

  it('compares whole top-level values, and __proto__ is an ordinary argument name', () => {
    const nested = { opts: { verbose: false } };
    expect(status({ mode: 'exact', args: {}, defaults: nested }, { opts: { verbose: false } })).toBe('match');
    expect(status({ mode: 'exact', args: {}, defaults: nested }, { opts: {} })).toBe('mismatch');
    const protoDefault = JSON.parse('{"__proto__": 1}') as JsonObject;
    expect(status({ mode: 'exact', args: {}, defaults: protoDefault }, JSON.parse('{"__proto__": 1}'))).toBe(
      'match',
    );
    expect(status({ mode: 'exact', args: {}, defaults: protoDefault }, JSON.parse('{"__proto__": 2}'))).toBe(
      'mismatch',
    );
    // A default named like an Object.prototype member is not found through the prototype chain.
    expect(status({ mode: 'exact', args: {}, defaults: {} }, JSON.parse('{"constructor": {}}'))).toBe(
      'mismatch',
    );
  });

  it('compares defaults by value with numeric', () => {
    expect(status({ mode: 'exact', args: {}, defaults, numeric: true }, { page: '1.0' })).toBe('match');
    expect(status({ mode: 'exact', args: {}, defaults }, { page: '1.0' })).toBe('mismatch');
  });
});

describe('numeric', () => {
  const numeric = (args: JsonObject): ArgsMatch => ({ mode: 'exact', args, numeric: true });

  it('compares numbers and numeric strings by value, at any depth', () => {
    for (const same of [1, 1.0, '1', '1.0', '1e0', '10e-1', '0.1e1']) {
      expect(status(numeric({ n: 1 }), { n: same })).toBe('match');
    }
    expect(status(numeric({ a: [{ n: '2.50' }] }), { a: [{ n: 2.5 }] })).toBe('match');
    expect(status({ mode: 'exact', args: { n: 1 } }, { n: '1' })).toBe('mismatch');
  });

  it('does not read zero-padded, signed, spaced or non-decimal strings as numbers', () => {
    for (const other of ['01', '+1', ' 1', '1.', '.5', '0x1', 'NaN', 'Infinity', '1,0', '']) {
      expect(matchArgs(numeric({ n: 1 }), captured({ n: other }))).toEqual({
        status: 'mismatch',
        detail: `n: expected 1, saw ${JSON.stringify(other)}`,
      });
    }
    expect(status(numeric({ zip: '01234' }), { zip: '01234' })).toBe('match');
    expect(status(numeric({ zip: '01234' }), { zip: 1234 })).toBe('mismatch');
    expect(status(numeric({ s: 'abc' }), { s: 'ABC' })).toBe('mismatch');
  });

  it('compares decimal strings exactly, not as doubles', () => {
    expect(status(numeric({ id: '9007199254740993' }), { id: '9007199254740992' })).toBe('mismatch');
    expect(status(numeric({ id: '9007199254740993' }), { id: '9007199254740993.000' })).toBe('match');
    expect(numericKey(1.5)).toBe('15e-1');
    expect(numericKey('150e-2')).toBe('15e-1');
    expect(numericKey('-0.0')).toBe('0');
    expect(numericKey(1e21)).toBe('1e21');
    expect(numericKey('1e400')).toBe('1e400');
    expect(numericKey('01')).toBeUndefined();
    expect(numericKey(true)).toBeUndefined();
  });

  it('is linear on long digit strings', () => {
    const long = `1${'0'.repeat(200_000)}1`;
    const started = performance.now();
    expect(status(numeric({ n: long }), { n: `${long}.0` })).toBe('match');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('property: an equivalence on numbers and numeric strings, agreeing with the decimal value', () => {
    // A value base × 10^scale, written as a number or as one of several decimal strings.
    const written = fc
      .record({
        base: fc.integer({ min: -12, max: 12 }),
        scale: fc.integer({ min: -2, max: 2 }),
        form: fc.constantFrom('number', 'exponent', 'decimal', 'padded'),
      })
      .map(({ base, scale, form }) => {
        const exponent = `${base}e${scale}`;
        const decimal = String(Number(exponent));
        const value: JsonValue =
          form === 'number'
            ? Number(exponent)
            : form === 'exponent'
              ? exponent
              : form === 'decimal'
                ? decimal
                : `${decimal}${decimal.includes('.') ? '' : '.'}000`;
        return { value, exact: Number(exponent) };
      });
    const anyNumber = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      written.map((w) => w.value),
    );
    fc.assert(
      fc.property(written, written, ({ value: a, exact: x }, { value: b, exact: y }) => {
        expect(status(numeric({ n: a }), { n: b }) === 'match').toBe(x === y);
      }),
    );
    fc.assert(
      fc.property(anyNumber, anyNumber, anyNumber, (a, b, c) => {
        const equal = (x: JsonValue, y: JsonValue) => status(numeric({ n: x }), { n: y }) === 'match';
        expect(equal(a, a)).toBe(true);
        expect(equal(a, String(a))).toBe(true); // a number equals its own decimal text
        expect(equal(a, b)).toBe(equal(b, a));
        if (equal(a, b) && equal(b, c)) expect(equal(a, c)).toBe(true);
      }),
    );
  });
});

describe('properties of the comparing modes, with options', () => {
  const options = fc.record(
    {
      numeric: fc.boolean(),
      defaults: fc.dictionary(fc.constantFrom('a', 'b', '__proto__'), fc.constantFrom(0, 1, '1', 'x')),
      ignore: fc.array(fc.constantFrom('c', 'a.x', '*.x', 'constructor'), { maxLength: 2 }),
    },
    { requiredKeys: [] },
  );
  const small = fc
    .dictionary(
      fc.constantFrom('a', 'b', 'c', '__proto__', 'constructor'),
      fc.oneof(
        fc.constantFrom(0, 1, '1', '1.0', 'x', null),
        fc.dictionary(fc.constantFrom('x', 'y'), fc.constantFrom(0, 1, '1')),
      ),
      { maxKeys: 4 },
    )
    .map((value) => JSON.parse(JSON.stringify(value)) as JsonObject);
  const defaultsOf = (value: { defaults?: JsonObject }) =>
    value.defaults && JSON.parse(JSON.stringify(value.defaults));

  it('property: exact is reflexive, symmetric and blind to key order', () => {
    fc.assert(
      fc.property(small, small, options, (a, b, option) => {
        const spec = (args: JsonObject): ArgsMatch => ({
          mode: 'exact',
          args,
          ...option,
          defaults: defaultsOf(option),
        });
        expect(status(spec(a), a)).toBe('match');
        expect(status(spec(a), reorder(a))).toBe('match');
        expect(status(spec(a), b)).toBe(status(spec(b), a));
        expect(status(spec(a), reorder(b))).toBe(status(spec(a), b));
      }),
    );
  });

  it('property: superset(x, x) and subset(x, x) hold; subset(a, b) is superset(b, a); exact is both', () => {
    fc.assert(
      fc.property(small, small, options, (a, b, option) => {
        const spec = (mode: ArgsMatch['mode'], args: JsonObject): ArgsMatch => ({
          mode,
          args,
          ...option,
          defaults: defaultsOf(option),
        });
        expect(status(spec('superset', a), a)).toBe('match');
        expect(status(spec('subset', a), a)).toBe('match');
        const within = status(spec('subset', b), a);
        expect(within).toBe(status(spec('superset', a), b));
        const both = within === 'match' && status(spec('superset', b), a) === 'match';
        expect(status(spec('exact', b), a) === 'match').toBe(both);
      }),
    );
  });
});

describe('describeExpectation', () => {
  it('names the options in use', () => {
    expect(
      describeExpectation({
        mode: 'exact',
        args: { q: 'x' },
        ignore: ['metadata', 'items.*.sku'],
        defaults: { page: 1 },
        numeric: true,
      }),
    ).toBe(
      'exactly the arguments {"q":"x"} (ignoring metadata, items.*.sku; defaults {"page":1}; numbers compared by value)',
    );
    expect(describeExpectation({ mode: 'subset', args: { q: 'x' } })).toBe('no arguments beyond {"q":"x"}');
    expect(describeExpectation({ mode: 'schema', schema: { type: 'object' } })).toBe(
      'the JSON Schema {"type":"object"}',
    );
  });
});
