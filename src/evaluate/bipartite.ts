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
  rightOf: number[];
  /** For each right item, the left item it is paired with, or -1. */
  leftOf: number[];
}

/**
 * Beyond every layer. Plain arrays of small integers throughout, not typed arrays: allocating a
 * typed array costs several times more, and a reference matching is small and made per evaluation.
 */
const UNREACHED = 0x3fffffff;

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
  const rightOf = start ? start.rightOf.slice() : filled(leftCount, -1);
  const leftOf = start ? start.leftOf.slice() : filled(rightCount, -1);
  const matcher = new Matcher(leftCount, neighbors, rightOf, leftOf);
  let size = start?.size ?? 0;
  while (matcher.buildLayers()) {
    matcher.nextEdge.fill(0);
    const before = size;
    for (let left = 0; left < leftCount; left++) {
      if (rightOf[left] === -1 && matcher.augmentFrom(left)) size++;
    }
    // A phase after a successful layering always augments; the check bounds the loop regardless.
    if (size === before) break;
  }
  return { size, rightOf, leftOf };
}

/** The state of one search: the matching being grown and the scratch of its phases (methods, not closures made per search). */
class Matcher {
  readonly layer: number[];
  readonly queue: number[];
  readonly nextEdge: number[];
  readonly stack: number[];
  readonly via: number[];

  constructor(
    readonly leftCount: number,
    readonly neighbors: readonly (readonly number[])[],
    readonly rightOf: number[],
    readonly leftOf: number[],
  ) {
    this.layer = filled(leftCount, 0);
    this.queue = filled(leftCount, 0);
    this.nextEdge = filled(leftCount, 0);
    this.stack = filled(leftCount, 0);
    this.via = filled(leftCount, 0);
  }

  /**
   * Breadth-first from every free left item: layers of alternating paths. True when some path
   * reaches a free right item, i.e. the matching can still grow.
   */
  buildLayers(): boolean {
    const { layer, queue, neighbors, rightOf, leftOf, leftCount } = this;
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
  }

  /**
   * Depth-first along the layers from one free left item, with an explicit stack so a long
   * augmenting path cannot overflow the call stack. Flips the path when it ends at a free right item.
   */
  augmentFrom(root: number): boolean {
    const { layer, nextEdge, stack, via, neighbors, rightOf, leftOf } = this;
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
  }
}

/** `length` copies of `value`, as a packed array. */
function filled(length: number, value: number): number[] {
  const array: number[] = [];
  for (let index = 0; index < length; index++) array.push(value);
  return array;
}
