import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Matching, maximumMatching } from '../../src/evaluate/bipartite.js';

/** The largest matching, by trying every choice for every left item. */
function bruteForceSize(
  neighbors: readonly (readonly number[])[],
  left = 0,
  used = new Set<number>(),
): number {
  if (left === neighbors.length) return 0;
  let best = bruteForceSize(neighbors, left + 1, used);
  for (const right of neighbors[left] ?? []) {
    if (used.has(right)) continue;
    used.add(right);
    best = Math.max(best, 1 + bruteForceSize(neighbors, left + 1, used));
    used.delete(right);
  }
  return best;
}

/** The matching pairs only along edges, each item at most once, and both views agree with `size`. */
function expectValid(matching: Matching, neighbors: readonly (readonly number[])[]): void {
  let pairs = 0;
  matching.rightOf.forEach((right, left) => {
    if (right === -1) return;
    pairs++;
    expect(neighbors[left]).toContain(right);
    expect(matching.leftOf[right]).toBe(left);
  });
  expect(matching.leftOf.filter((left) => left !== -1).length).toBe(pairs);
  expect(matching.size).toBe(pairs);
}

const graph = fc
  .tuple(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 6 }))
  .chain(([leftCount, rightCount]) =>
    fc.record({
      rightCount: fc.constant(rightCount),
      neighbors: fc.array(
        fc.uniqueArray(fc.integer({ min: 0, max: Math.max(rightCount - 1, 0) }), {
          maxLength: rightCount,
        }),
        { minLength: leftCount, maxLength: leftCount },
      ),
    }),
  )
  .map(({ rightCount, neighbors }) => ({
    rightCount,
    neighbors: rightCount === 0 ? neighbors.map(() => []) : neighbors,
  }));

describe('maximumMatching', () => {
  it('matches nothing in an empty graph', () => {
    expect(maximumMatching(0, 0, []).size).toBe(0);
    const none = maximumMatching(2, 3, [[], []]);
    expect([...none.rightOf]).toEqual([-1, -1]);
    expect([...none.leftOf]).toEqual([-1, -1, -1]);
  });

  it('re-pairs an earlier item when first fit would leave a later one out', () => {
    // First fit gives left 0 the right 0, and left 1 (which can only take right 0) is stuck.
    const matching = maximumMatching(2, 2, [[0, 1], [0]]);
    expect(matching.size).toBe(2);
    expect([...matching.rightOf]).toEqual([1, 0]);
  });

  it('grows a start matching without unpairing any item it paired', () => {
    const start = maximumMatching(3, 3, [[0], [], []]);
    const grown = maximumMatching(3, 3, [[0, 1], [0], [1, 2]], start);
    expect(grown.size).toBe(3);
    expect(grown.rightOf[0]).not.toBe(-1);
    expect(grown.leftOf[0]).not.toBe(-1);
    expect(start.size).toBe(1); // the start matching is not modified
  });

  it('follows an augmenting path through 100,000 pairs without overflowing the stack', () => {
    const count = 100_000;
    // Left i pairs with right i; the extra left item can only take right 0, so the only
    // augmenting path shifts every pair by one.
    const neighbors = Array.from({ length: count + 1 }, (_, left) =>
      left === count ? [0] : [left, left + 1],
    );
    const start = maximumMatching(
      count + 1,
      count + 1,
      neighbors.map((edges, left) => (left === count ? [] : [edges[0] as number])),
    );
    expect(start.size).toBe(count);
    const matching = maximumMatching(count + 1, count + 1, neighbors, start);
    expect(matching.size).toBe(count + 1);
    expect(matching.rightOf[count]).toBe(0);
    expect(matching.rightOf[count - 1]).toBe(count);
  });

  it('always finds a matching as large as exhaustive search does', () => {
    fc.assert(
      fc.property(graph, ({ rightCount, neighbors }) => {
        const matching = maximumMatching(neighbors.length, rightCount, neighbors);
        expectValid(matching, neighbors);
        expect(matching.size).toBe(bruteForceSize(neighbors));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps every item of a start matching paired and still reaches the maximum', () => {
    fc.assert(
      fc.property(graph, fc.infiniteStream(fc.boolean()), ({ rightCount, neighbors }, keep) => {
        // A start matching on a random subgraph.
        const subgraph = neighbors.map((edges) => edges.filter(() => keep.next().value));
        const start = maximumMatching(neighbors.length, rightCount, subgraph);
        const matching = maximumMatching(neighbors.length, rightCount, neighbors, start);
        expectValid(matching, neighbors);
        expect(matching.size).toBe(bruteForceSize(neighbors));
        start.rightOf.forEach((right, left) => {
          if (right !== -1) expect(matching.rightOf[left]).not.toBe(-1);
        });
        start.leftOf.forEach((left, right) => {
          if (left !== -1) expect(matching.leftOf[right]).not.toBe(-1);
        });
      }),
      { numRuns: 300 },
    );
  });
});
