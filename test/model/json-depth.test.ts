import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalHash, canonicalJson, type JsonValue } from '../../src/model/json.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src/model/json-depth.js';

/** The brute-force definition: how many containers deep the value nests. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return 0;
  const members = Array.isArray(value) ? value : Object.values(value);
  return 1 + members.reduce((deepest: number, member) => Math.max(deepest, depthOf(member)), 0);
}

/** An array `levels` deep around `inner`, built without recursion. */
function nested(levels: number, inner: JsonValue = 1, key?: string): JsonValue {
  let value = inner;
  for (let level = 0; level < levels; level++) value = key === undefined ? [value] : { [key]: value };
  return value;
}

describe('nestedDeeperThan', () => {
  it('agrees with the brute-force depth, for any value and bound', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(8), (value, max) => {
        expect(nestedDeeperThan(value, max)).toBe(depthOf(value) > max);
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts a byte array as a leaf, and reads a million levels without recursion', () => {
    expect(nestedDeeperThan({ bytes: new Uint8Array(10) }, 1)).toBe(false);
    expect(nestedDeeperThan(nested(1_000_000), MAX_JSON_DEPTH)).toBe(true);
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH, 1, 'k'))).toBe(false);
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH + 1, 1, 'k'))).toBe(true);
  });
});

describe('canonicalJson and canonicalHash on deep values', () => {
  it('write and hash 100,000 levels without overflowing the stack, as they do shallow ones', () => {
    const levels = 100_000;
    expect(canonicalJson(nested(levels))).toBe(`${'['.repeat(levels)}1${']'.repeat(levels)}`);
    const objects = nested(levels, 'x', 'k');
    expect(canonicalJson(objects)).toBe(`${'{"k":'.repeat(levels)}"x"${'}'.repeat(levels)}`);
    expect(canonicalHash(nested(levels))).toBe(canonicalHash(nested(levels)));
    expect(canonicalHash(nested(levels))).not.toBe(canonicalHash(nested(levels - 1)));
    expect(canonicalHash(objects)).not.toBe(canonicalHash(nested(levels)));
  });
});
