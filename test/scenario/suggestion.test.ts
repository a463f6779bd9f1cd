import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { suggestion } from '../../src/scenario/suggestion.js';

/** Brute-force oracle: edit distance by its recursive definition, memoized. */
function edits(a: string, b: string): number {
  const memo = new Map<string, number>();
  const go = (i: number, j: number): number => {
    if (i === 0) return j;
    if (j === 0) return i;
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const found = Math.min(
      go(i - 1, j) + 1,
      go(i, j - 1) + 1,
      go(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1),
    );
    memo.set(key, found);
    return found;
  };
  return go(a.length, b.length);
}

/** Oracle for one slip: `b` is `a` with two neighbouring letters swapped, tried at every position. */
function swapped(a: string, b: string): boolean {
  for (let i = 0; i + 1 < a.length; i++) {
    if (a[i] !== a[i + 1] && `${a.slice(0, i)}${a[i + 1]}${a[i]}${a.slice(i + 2)}` === b) return true;
  }
  return false;
}

/** The distance suggestion uses: edits, with a swap of neighbours counted as one. */
const slips = (a: string, b: string) => (swapped(a, b) ? 1 : edits(a, b));

const normal = (name: string) => name.toLowerCase().replace(/[-_\s]/g, '');
const word = fc.string({
  unit: fc.constantFrom('a', 'b', 'c', 'd', '_', '-', 'A'),
  minLength: 0,
  maxLength: 9,
});

describe('suggestion', () => {
  it('names the nearest candidate within a third of the word in edits, never a whole-word replacement', () => {
    fc.assert(
      fc.property(word, fc.array(word, { maxLength: 6 }), (written, candidates) => {
        const hint = suggestion(written, candidates);
        const w = normal(written);
        const tolerance = Math.min(Math.max(1, Math.floor(w.length / 3)), w.length - 1);
        const distances = candidates.map((candidate) => slips(w, normal(candidate)));
        const nearest = Math.min(Number.POSITIVE_INFINITY, ...distances);
        if (nearest > tolerance) {
          expect(hint).toBe('');
          return;
        }
        const named = /^ \(did you mean (.*)\?\)$/s.exec(hint)?.[1];
        expect(named).toBeDefined();
        expect(candidates).toContain(named);
        expect(slips(w, normal(named as string))).toBe(nearest);
      }),
    );
  });

  it('ignores case, dashes and underscores: the usual slips', () => {
    expect(suggestion('allowed-tools', ['allowed_tools', 'forbidden'])).toBe(
      ' (did you mean allowed_tools?)',
    );
    expect(suggestion('CallIndex', ['callIndex'])).toBe(' (did you mean callIndex?)');
    expect(suggestion('ab', ['xy'])).toBe('');
  });
});
