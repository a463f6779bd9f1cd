/**
 * Reachability as sorted intervals of call numbers: exact, and linear in nodes and edges on the
 * shapes agents make. Calls are numbered in the postorder of one depth-first walk that starts
 * from the sources in listing order and takes each node's latest child (by listing) first. What
 * a node reaches is then the calls its own walk finished (one interval) and what its children
 * reach below that; on a chain of turns, a wide parallel group, sub-agents nested in calls and
 * traces one after another, that is one interval per level of nesting. A DAG whose lists grow
 * past a budget is not one of those shapes: {@link intervalReach} gives up and the caller falls
 * back (see call-reach.ts). Measured costs are in docs/causal-order.md.
 */
import type { CallReach, DagView } from './call-reach.js';

/**
 * The intervals of every node, or undefined when they would hold more than `maxIntervals` in all.
 * O(nodes + edges + intervals met on edges), and a sort where a node merges several lists.
 * Everything is indexed by listing rank rather than node number: on a chain, a node's children
 * sit next to it in rank, so the walk reads memory nearly in order.
 */
export function intervalReach(dag: DagView, maxIntervals: number): IntervalReach | undefined {
  const { nodes } = dag;
  const children = childrenByRank(dag);
  const { start: childStart, child } = children;
  const isCall = new Uint8Array(nodes);
  for (let r = 0; r < nodes; r++)
    isCall[r] = (dag.callSlot[dag.byRank[r] as number] as number) === -1 ? 0 : 1;
  const lists = new IntervalLists(nodes, maxIntervals);
  /** Per rank, the call number it finished with; -1 for nodes that are not calls. */
  const callNumber = new Int32Array(nodes).fill(-1);
  /** Per rank, how many calls had finished when its walk began: its subtree's calls come after. */
  const entryCalls = new Int32Array(nodes).fill(-1);
  const cursor = new Int32Array(nodes);
  const stack = new Int32Array(nodes);
  let finishedCalls = 0;
  for (let root = 0; root < nodes; root++) {
    if (entryCalls[root] !== -1) continue;
    let top = 0;
    stack[0] = root;
    entryCalls[root] = finishedCalls;
    cursor[root] = (childStart[root + 1] as number) - 1;
    while (top >= 0) {
      const node = stack[top] as number;
      const at = cursor[node] as number;
      if (at >= (childStart[node] as number)) {
        cursor[node] = at - 1;
        const next = child[at] as number;
        if (entryCalls[next] === -1) {
          entryCalls[next] = finishedCalls;
          cursor[next] = (childStart[next + 1] as number) - 1;
          stack[++top] = next;
        }
        continue;
      }
      top--;
      const own = isCall[node] === 1 ? finishedCalls : -1;
      if (!lists.finish(node, entryCalls[node] as number, finishedCalls, own, children)) return undefined;
      if (own !== -1) callNumber[node] = finishedCalls++;
    }
  }
  // Asked by node number from here on; the growing array's unused end is let go.
  const byNode = new Int32Array(2 * nodes);
  const numberOfNode = new Int32Array(nodes);
  for (let r = 0; r < nodes; r++) {
    const node = dag.byRank[r] as number;
    byNode[2 * node] = lists.offset[r] as number;
    byNode[2 * node + 1] = lists.count[r] as number;
    numberOfNode[node] = callNumber[r] as number;
  }
  const bounds = lists.used === lists.bounds.length ? lists.bounds : lists.bounds.slice(0, lists.used);
  return new IntervalReach(bounds, byNode, numberOfNode, finishedCalls);
}

/** Each rank's children, as ranks, in one array, ascending (the walk takes them from the end). */
interface Children {
  /** Rank k's children are `child[start[k] .. start[k + 1] - 1]`. */
  start: Int32Array;
  child: Int32Array;
}

function childrenByRank(dag: DagView): Children {
  const { nodes, byRank, rankOf, start: edgeStart, target } = dag;
  const start = new Int32Array(nodes + 1);
  for (let r = 0; r < nodes; r++) {
    const node = byRank[r] as number;
    let degree = 0;
    for (let e = edgeStart[node] as number; e < (edgeStart[node + 1] as number); e++)
      if ((target[e] as number) !== -1) degree++;
    start[r + 1] = (start[r] as number) + degree;
  }
  const child = new Int32Array(start[nodes] as number);
  for (let r = 0; r < nodes; r++) {
    const node = byRank[r] as number;
    let at = start[r] as number;
    for (let e = edgeStart[node] as number; e < (edgeStart[node + 1] as number); e++) {
      const t = target[e] as number;
      if (t !== -1) child[at++] = rankOf[t] as number;
    }
    sortRange(child, start[r] as number, at);
  }
  return { start, child };
}

/** Sorts `values[from .. to - 1]` ascending: insertion sort for the few children most nodes have. */
function sortRange(values: Int32Array, from: number, to: number): void {
  if (to - from > 16) {
    values.subarray(from, to).sort();
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const value = values[i] as number;
    let j = i - 1;
    while (j >= from && (values[j] as number) > value) {
      values[j + 1] = values[j] as number;
      j--;
    }
    values[j + 1] = value;
  }
}

/**
 * Per node, the calls it reaches and, for a call, itself: sorted disjoint intervals `[low, high]`
 * of call numbers in one growing array. A list is written once and never changed, so a node
 * whose list is another's shares it.
 */
class IntervalLists {
  /** Pairs low, high. */
  bounds: Int32Array;
  used = 0;
  readonly offset: Int32Array;
  readonly count: Int32Array;
  readonly #maxInts: number;
  /** Where a node's merge collects its children's intervals before sorting them. */
  #scratch = new Int32Array(64);

  constructor(nodes: number, maxIntervals: number) {
    this.bounds = new Int32Array(Math.max(64, 4 * nodes));
    this.offset = new Int32Array(nodes);
    this.count = new Int32Array(nodes);
    this.#maxInts = 2 * maxIntervals;
  }

  /**
   * Writes a finished node's list: the intervals of its children below `entry` (what its own
   * walk did not finish), then `[entry, finished - 1]` (what it did), then itself (`own`, its
   * call number, -1 for no call). False once the lists outgrow the budget.
   */
  finish(node: number, entry: number, finished: number, own: number, children: Children): boolean {
    const { start, child } = children;
    let collected = 0;
    let sources = 0;
    let only = -1;
    for (let k = start[node] as number; k < (start[node + 1] as number); k++) {
      const from = child[k] as number;
      const n = this.count[from] as number;
      if (n === 0) continue;
      const base = this.offset[from] as number;
      if ((this.bounds[base] as number) >= entry) continue;
      sources++;
      only = from;
      for (let i = 0; i < n; i++) {
        const low = this.bounds[base + 2 * i] as number;
        if (low >= entry) break;
        const high = this.bounds[base + 2 * i + 1] as number;
        this.#collect(collected++, low, high < entry ? high : entry - 1);
      }
    }
    const inner = finished > entry;
    // The common case on a chain: one child's list below, nothing else: share it.
    if (sources === 1 && !inner && own === -1) {
      const whole = this.count[only] as number;
      const last = (this.bounds[(this.offset[only] as number) + 2 * whole - 1] as number) < entry;
      if (last && whole === collected) {
        this.offset[node] = this.offset[only] as number;
        this.count[node] = whole;
        return true;
      }
    }
    if (sources > 1) this.#sortCollected(collected);
    if (inner) this.#collect(collected++, entry, finished - 1);
    if (own !== -1) this.#collect(collected++, own, own);
    return this.#store(node, collected);
  }

  #collect(at: number, low: number, high: number): void {
    if (2 * at + 2 > this.#scratch.length) {
      const grown = new Int32Array(2 * this.#scratch.length);
      grown.set(this.#scratch);
      this.#scratch = grown;
    }
    this.#scratch[2 * at] = low;
    this.#scratch[2 * at + 1] = high;
  }

  /** Sorts the collected pairs by their low end: insertion sort for a few, else by index. */
  #sortCollected(collected: number): void {
    const scratch = this.#scratch;
    if (collected <= 16) {
      for (let i = 1; i < collected; i++) {
        const low = scratch[2 * i] as number;
        const high = scratch[2 * i + 1] as number;
        let j = i - 1;
        while (j >= 0 && (scratch[2 * j] as number) > low) {
          scratch[2 * j + 2] = scratch[2 * j] as number;
          scratch[2 * j + 3] = scratch[2 * j + 1] as number;
          j--;
        }
        scratch[2 * j + 2] = low;
        scratch[2 * j + 3] = high;
      }
      return;
    }
    const order = Array.from({ length: collected }, (_, i) => i);
    order.sort((x, y) => (scratch[2 * x] as number) - (scratch[2 * y] as number));
    const copy = scratch.slice(0, 2 * collected);
    order.forEach((from, to) => {
      scratch[2 * to] = copy[2 * from] as number;
      scratch[2 * to + 1] = copy[2 * from + 1] as number;
    });
  }

  /** Coalesces the sorted pairs (overlapping or adjacent) into the node's list. */
  #store(node: number, collected: number): boolean {
    const scratch = this.#scratch;
    const base = this.used;
    if (base + 2 * collected > this.#maxInts) return false;
    if (base + 2 * collected > this.bounds.length) {
      const grown = new Int32Array(Math.max(2 * this.bounds.length, base + 2 * collected));
      grown.set(this.bounds);
      this.bounds = grown;
    }
    const bounds = this.bounds;
    let n = 0;
    for (let i = 0; i < collected; i++) {
      const low = scratch[2 * i] as number;
      const high = scratch[2 * i + 1] as number;
      if (n > 0 && low <= (bounds[base + 2 * n - 1] as number) + 1) {
        if (high > (bounds[base + 2 * n - 1] as number)) bounds[base + 2 * n - 1] = high;
        continue;
      }
      bounds[base + 2 * n] = low;
      bounds[base + 2 * n + 1] = high;
      n++;
    }
    this.offset[node] = base;
    this.count[node] = n;
    this.used = base + 2 * n;
    return true;
  }
}

/** Happens-before questions on the interval lists. */
export class IntervalReach implements CallReach {
  readonly #bounds: Int32Array;
  readonly #list: Int32Array;
  readonly #callNumber: Int32Array;
  readonly #calls: number;

  /**
   * By node number: `list` holds each node's offset into `bounds` and its count of pairs (low,
   * high); `callNumber` its call number, -1 for nodes that are not calls; `calls` how many there are.
   */
  constructor(bounds: Int32Array, list: Int32Array, callNumber: Int32Array, calls: number) {
    this.#bounds = bounds;
    this.#list = list;
    this.#callNumber = callNumber;
    this.#calls = calls;
  }

  /** How many intervals all lists hold (shared lists once): for measuring. */
  get size(): number {
    return this.#bounds.length / 2;
  }

  reaches(from: number, to: number): boolean {
    // A node's own number is in its list; `from !== to` is the caller's, and no other node has it.
    if (from === to) return false;
    const list = this.#list;
    return contains(
      this.#bounds,
      list[2 * from] as number,
      list[2 * from + 1] as number,
      this.#callNumber[to] as number,
    );
  }

  reachedByAny(from: readonly number[]): (to: number) => boolean {
    const bounds = this.#bounds;
    const list = this.#list;
    const callNumber = this.#callNumber;
    // What each node reaches, without itself: its own number is the top of its list.
    let pairs = 0;
    for (const node of from) pairs += list[2 * node + 1] as number;
    const lows = new Int32Array(pairs);
    const highs = new Int32Array(pairs);
    pairs = 0;
    for (const node of from) {
      const base = list[2 * node] as number;
      const n = list[2 * node + 1] as number;
      const own = callNumber[node] as number;
      for (let i = 0; i < n; i++) {
        const low = bounds[base + 2 * i] as number;
        const high = i === n - 1 && own !== -1 ? own - 1 : (bounds[base + 2 * i + 1] as number);
        if (high < low) continue;
        lows[pairs] = low;
        highs[pairs++] = high;
      }
    }
    const covered =
      pairs * 8 < this.#calls
        ? sortedUnion(lows, highs, pairs)
        : coveredCalls(lows, highs, pairs, this.#calls);
    return (to) => {
      const number = callNumber[to] ?? -1;
      return number !== -1 && covered(number);
    };
  }
}

/** A test for membership in the union of a few intervals: sorted and merged, then a binary search. */
function sortedUnion(lows: Int32Array, highs: Int32Array, pairs: number): (number: number) => boolean {
  const order = Array.from({ length: pairs }, (_, i) => i).sort(
    (x, y) => (lows[x] as number) - (lows[y] as number),
  );
  const union: number[] = [];
  for (const i of order) {
    const low = lows[i] as number;
    const high = highs[i] as number;
    const last = union.length - 1;
    if (last !== -1 && low <= (union[last] as number) + 1) {
      if (high > (union[last] as number)) union[last] = high;
    } else union.push(low, high);
  }
  const merged = Int32Array.from(union);
  return (number) => contains(merged, 0, merged.length / 2, number);
}

/** A test for membership in the union of many intervals: one flag per call, by a running count of open intervals. */
function coveredCalls(
  lows: Int32Array,
  highs: Int32Array,
  pairs: number,
  calls: number,
): (number: number) => boolean {
  const delta = new Int32Array(calls + 1);
  for (let i = 0; i < pairs; i++) {
    delta[lows[i] as number] = (delta[lows[i] as number] as number) + 1;
    delta[(highs[i] as number) + 1] = (delta[(highs[i] as number) + 1] as number) - 1;
  }
  const flags = new Uint8Array(calls);
  let open = 0;
  for (let number = 0; number < calls; number++) {
    open += delta[number] as number;
    flags[number] = open > 0 ? 1 : 0;
  }
  return (number) => flags[number] === 1;
}

/** Whether `number` is in one of the `count` sorted intervals from `base`. */
function contains(bounds: Int32Array, base: number, count: number, number: number): boolean {
  let low = 0;
  let high = count;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((bounds[base + 2 * middle + 1] as number) < number) low = middle + 1;
    else high = middle;
  }
  return low < count && (bounds[base + 2 * low] as number) <= number;
}
