/**
 * Maximum bipartite matching (Hopcroft–Karp). Reference trajectories pair reference calls with
 * actual calls; a greedy first-fit pairing rejects valid pairings when one call could stand for
 * several (duplicates, loose argument modes), so the matcher must be optimal: whenever a pairing
 * that covers a side exists, this finds one. O(E·√V), iterative (no recursion), deterministic.
 */

/** A matching between left items `0..leftCount-1` and right items `0..rightCount-1`. */
export interface Matching {
  /** How many pairs. */
  size: number;
  /** For each left item, the right item it is paired with, or -1. */
  rightOf: Int32Array;
  /** For each right item, the left item it is paired with, or -1. */
  leftOf: Int32Array;
}

const UNREACHED = 0x7fffffff;

/**
 * A maximum matching of the bipartite graph where left item `l` may pair with the right items
 * `neighbors[l]`. `start`, when given, is a valid matching of the same graph (or of a subgraph)
 * that the result grows from: every item it pairs stays paired, so a matching found on sure
 * edges can be completed with doubtful ones.
 */
export function maximumMatching(
  leftCount: number,
  rightCount: number,
  neighbors: readonly (readonly number[])[],
  start?: Matching,
): Matching {
  const rightOf = start ? Int32Array.from(start.rightOf) : new Int32Array(leftCount).fill(-1);
  const leftOf = start ? Int32Array.from(start.leftOf) : new Int32Array(rightCount).fill(-1);
  let size = start?.size ?? 0;
  const layer = new Int32Array(leftCount);
  const queue = new Int32Array(leftCount);
  const nextEdge = new Int32Array(leftCount);
  const stack = new Int32Array(leftCount);
  const via = new Int32Array(leftCount);

  // Breadth-first from every free left item: layers of alternating paths. True when some path
  // reaches a free right item, i.e. the matching can still grow.
  const buildLayers = (): boolean => {
    let head = 0;
    let tail = 0;
    for (let left = 0; left < leftCount; left++) {
      if (rightOf[left] === -1) {
        layer[left] = 0;
        queue[tail++] = left;
      } else layer[left] = UNREACHED;
    }
    let found = false;
    while (head < tail) {
      const left = queue[head++] as number;
      for (const right of neighbors[left] ?? []) {
        const owner = leftOf[right] as number;
        if (owner === -1) found = true;
        else if (layer[owner] === UNREACHED) {
          layer[owner] = (layer[left] as number) + 1;
          queue[tail++] = owner;
        }
      }
    }
    return found;
  };

  // Depth-first along the layers from one free left item, with an explicit stack so a long
  // augmenting path cannot overflow the call stack. Flips the path when it ends at a free right item.
  const augmentFrom = (root: number): boolean => {
    let depth = 0;
    stack[0] = root;
    while (depth >= 0) {
      const left = stack[depth] as number;
      const edges = neighbors[left] ?? [];
      const edge = nextEdge[left] as number;
      if (edge >= edges.length) {
        layer[left] = UNREACHED; // a dead end for the rest of this phase
        depth--;
        continue;
      }
      nextEdge[left] = edge + 1;
      const right = edges[edge] as number;
      const owner = leftOf[right] as number;
      if (owner === -1) {
        for (let level = depth; level >= 0; level--) {
          const pairedLeft = stack[level] as number;
          const pairedRight = level === depth ? right : (via[level] as number);
          rightOf[pairedLeft] = pairedRight;
          leftOf[pairedRight] = pairedLeft;
        }
        return true;
      }
      if (layer[owner] === (layer[left] as number) + 1) {
        via[depth] = right;
        stack[++depth] = owner;
      }
    }
    return false;
  };

  while (buildLayers()) {
    nextEdge.fill(0);
    const before = size;
    for (let left = 0; left < leftCount; left++) {
      if (rightOf[left] === -1 && augmentFrom(left)) size++;
    }
    // A phase after a successful layering always augments; the check bounds the loop regardless.
    if (size === before) break;
  }
  return { size, rightOf, leftOf };
}
