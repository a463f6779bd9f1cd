import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalHash, canonicalJson, type JsonValue, jsonEqual } from '../../src/model/json.js';
import { jsonValue, reorder } from '../helpers/json-arbitraries.js';

/** The definition canonicalJson writes in one pass: JSON.stringify of a copy with sorted keys. */
function sortedCopyJson(value: JsonValue): string {
  const sortKeys = (v: JsonValue): JsonValue => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v === null || typeof v !== 'object') return v;
    const sorted: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(v).sort()) {
      // defineProperty keeps `__proto__` an ordinary key.
      Object.defineProperty(sorted, key, { value: sortKeys(v[key] as JsonValue), enumerable: true });
    }
    return sorted;
  };
  return JSON.stringify(sortKeys(value));
}

describe('canonicalJson', () => {
  it('writes the same text as JSON.stringify of a key-sorted copy, for any JSON value', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(canonicalJson(value)).toBe(sortedCopyJson(value));
      }),
    );
  });

  it('ignores key order at every depth', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(canonicalJson(reorder(value))).toBe(canonicalJson(value));
      }),
    );
  });

  it('agrees with the sorted copy on objects with numeric-looking keys', () => {
    const keys = fc.constantFrom('0', '1', '9', '10', '01', '-1', '', 'a', 'B', '4294967294', '4294967295');
    const nested = fc.dictionary(keys, fc.oneof(fc.integer(), fc.dictionary(keys, fc.string())), {
      maxKeys: 8,
    });
    fc.assert(
      fc.property(nested, (object) => {
        const value = JSON.parse(JSON.stringify(object));
        expect(canonicalJson(value)).toBe(sortedCopyJson(value));
      }),
      { numRuns: 500 },
    );
  });

  it('writes array-index keys first, in numeric order, as a sorted copy does', () => {
    const value = JSON.parse('{"b":1,"4294967295":2,"4294967294":3,"10":4,"9":5,"01":6,"-1":7,"a":8}');
    expect(canonicalJson(value)).toBe(sortedCopyJson(value));
  });

  it('keeps __proto__ an ordinary key and writes -0 as 0', () => {
    const value = JSON.parse('{"b":[-0,{"__proto__":1,"a":null}],"a":"x"}');
    expect(canonicalJson(value)).toBe('{"a":"x","b":[0,{"__proto__":1,"a":null}]}');
  });
});

describe('canonicalHash', () => {
  it('is the same for values with the same canonical JSON, whatever their key order', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(canonicalHash(reorder(value))).toBe(canonicalHash(value));
        expect(canonicalHash(JSON.parse(JSON.stringify(value)))).toBe(canonicalHash(value));
      }),
    );
  });

  it('agrees with canonicalJson on what it writes alike: -0 and 0, non-finite numbers and null, left-out members', () => {
    const alike: [unknown, unknown][] = [
      [-0, 0],
      [Number.NaN, null],
      [Number.POSITIVE_INFINITY, null],
      [{ a: 1, b: undefined, c: () => 1 }, { a: 1 }],
      [
        [undefined, Symbol('s')],
        [null, null],
      ],
      [{ x: [-0, Number.NaN] }, { x: [0, null] }],
    ];
    for (const [a, b] of alike) {
      expect(canonicalJson(a as JsonValue)).toBe(canonicalJson(b as JsonValue));
      expect(canonicalHash(a as JsonValue)).toBe(canonicalHash(b as JsonValue));
    }
  });

  it('tells apart values that differ, as a rule', () => {
    const values: JsonValue[] = [
      { query: 'damaged item question 1', limit: 2 },
      { query: 'damaged item question 2', limit: 2 },
      { query: 'damaged item question 1', limit: 3 },
      { query: 'damaged item question 1' },
      ['a', 'b'],
      ['b', 'a'],
      '40',
      40,
      40.5,
      true,
      null,
    ];
    expect(new Set(values.map(canonicalHash)).size).toBe(values.length);
  });

  it('throws on a BigInt, as canonicalJson does', () => {
    const value = { n: 1n } as unknown as JsonValue;
    expect(() => canonicalJson(value)).toThrow(TypeError);
    expect(() => canonicalHash(value)).toThrow(TypeError);
  });
});

describe('jsonEqual', () => {
  it('says two values are equal exactly when their canonical texts are (the oracle), for any pair', () => {
    fc.assert(
      fc.property(jsonValue, jsonValue, (a, b) => {
        expect(jsonEqual(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
      }),
    );
  });

  it('finds a value equal to itself reordered, and unequal to it with a key or an item more', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(jsonEqual(value, reorder(value))).toBe(true);
        expect(jsonEqual({ v: value }, { v: value, extra: 1 })).toBe(false);
        expect(jsonEqual([value], [value, null])).toBe(false);
      }),
    );
  });

  it('compares values nested deeper than a call stack goes', () => {
    let deep: JsonValue = 1;
    let other: JsonValue = 2;
    for (let level = 0; level < 100_000; level++) {
      deep = [deep];
      other = [other];
    }
    expect(jsonEqual(deep, deep)).toBe(true);
    expect(jsonEqual(deep, other)).toBe(false);
  });
});
