/**
 * Happens-before between the calls of a trajectory. Two ways to know it: a causal graph of
 * turns and calls (what a turn issued, what results it had been shown), or, for sources with no
 * turns, positions on one clock (an event list's order).
 */
import { BitsetReach, type CallReach, type DagView, MaskReach } from './call-reach.js';
import { stampedNode, stampNode } from './graph-calls.js';
import { intervalReach } from './interval-reach.js';
import { earlier, NodeHeap } from './node-heap.js';

export { type CallTiming, TimingOrder } from './timing-order.js';

/** A strict partial order on call ids, plus a linear extension of it for listing calls. */
export interface CausalOrder {
  /** `a -> b`: b could have depended on a's result. */
  happensBefore(a: string, b: string): boolean;
  /** Negative when a comes first in a causal listing (a topological order, ties by time). */
  compare(a: string, b: string): number;
  /**
   * A test for "some call in `ids` happened before this one", built once so that asking it of
   * every call costs no more than one pass (a sequence search asks it of whole layers).
   */
  afterAny(ids: readonly string[]): (id: string) => boolean;
  /**
   * `happensBefore(a.id, b.id)`, for an order that can answer from the call objects themselves
   * without looking their ids up (a causal graph, for the calls it numbered).
   */
  happensBeforeCall?(a: CallKey, b: CallKey): boolean;
  /** `afterAny(calls' ids)`, tested on call objects, for the same orders. */
  afterAnyCall?(calls: readonly CallKey[]): (call: CallKey) => boolean;
  /**
   * The call's place in the causal listing (a number that only orders: not a position among
   * the calls), -1 for a call not in the order; for the same orders.
   */
  listingRankOfCall?(call: CallKey): number;
}

/** What an order needs of a call object: its id. */
export interface CallKey {
  readonly id: string;
}

/**
 * A DAG over calls, turns and any other events the normalizer needs, with reachability between
 * calls. Edges say "could have caused". Reachability is computed once, lazily: a bit mask per
 * node when there are at most 32 calls; else sorted intervals of calls per node, linear in the
 * graph on chains of turns, parallel groups, nested sub-agents and traces one after another
 * (interval-reach.ts); a DAG whose intervals outgrow their budget falls back to one bitset per
 * node, O((nodes + edges) x calls / 32).
 */
export class CausalGraph implements CausalOrder {
  /**
   * Per node: its key or label, its time and its call slot. Made at the expected size (see the
   * constructor), so places past {@link #nodes} may be empty.
   */
  readonly #keys: string[];
  readonly #time: bigint[];
  /** Per node, its bit in the reachability masks and sets: -1 for nodes that are not calls. */
  readonly #callSlot: number[];
  #nodes = 0;
  /**
   * Node numbers by key, made on first need (a trajectory's questions go by call object, so a
   * graph of unindexed and labelled nodes never needs it); keys of nodes added by
   * {@link addUnindexedNode} go in on first need too.
   */
  #keyed: Map<string, number> | undefined;
  #unindexed: number[] = [];
  /**
   * Edges as they come, one pair per edge in two shared arrays (an array per node was most of
   * what building a trace's graph allocated); made at the expected size, like the node arrays.
   */
  readonly #edgeFrom: number[];
  readonly #edgeTo: number[];
  #edges = 0;
  #calls = 0;
  /**
   * The edges by source, built once they are all there: one walk reads a node's out-edges side
   * by side, where following a list through the edges in the order they came jumps across all of
   * them. A dropped edge keeps its place with target -1.
   */
  #adjacency: Adjacency | undefined;
  /**
   * Per node, its place in the causal listing. Plain arrays for per-trace sizes: a typed array
   * of a few dozen entries still costs a backing store of its own.
   */
  #rank: number[] | undefined;
  /** The nodes in the order of {@link #rank} (its inverse), made by the same sort. */
  #byRank: number[] | undefined;
  #reach: CallReach | undefined;
  /** Made at the first dropped edge, or when asked for. */
  #dropped: [string, string][] | undefined;
  readonly #intervalBudget: number | undefined;

  /**
   * `expected`: about how many nodes and edges there will be, so the graph's arrays are made at
   * that size instead of grown (an array grown by push is reallocated at every half again, from
   * 17 places). Any number may be added all the same. `intervalBudget`: how many intervals the
   * reachability lists may hold in all before falling back to bitsets (a knob for tests; by
   * default 16 per node, and 1,024 whatever the size).
   */
  constructor(
    expected: { nodes: number; edges: number } = { nodes: 0, edges: 0 },
    { intervalBudget }: { intervalBudget?: number } = {},
  ) {
    this.#intervalBudget = intervalBudget;
    this.#keys = new Array(expected.nodes);
    this.#time = new Array(expected.nodes);
    this.#callSlot = new Array(expected.nodes);
    this.#edgeFrom = new Array(expected.edges);
    this.#edgeTo = new Array(expected.edges);
  }

  /**
   * Adds a node once; `time` breaks ties in the causal listing. Calls are the nodes happens-before
   * is asked about. Returns the node's number, for {@link addEdgeBetween} (the existing node's
   * number when the key is already there).
   */
  addNode(key: string, time: bigint, isCall: boolean): number {
    const existing = this.#index().get(key);
    if (existing !== undefined) return existing;
    const node = this.#newNode(key, time, isCall ? this.#calls++ : -1);
    this.#index().set(key, node);
    return node;
  }

  /**
   * Adds a node as {@link addNode} does, for a caller that knows its key is new: its key is
   * indexed only when something first asks by key (with call objects numbered by
   * {@link numberCall}, a trajectory's questions never do), so building the graph hashes no key.
   */
  addUnindexedNode(key: string, time: bigint, isCall: boolean): number {
    const node = this.#newNode(key, time, isCall ? this.#calls++ : -1);
    this.#unindexed.push(node);
    return node;
  }

  /** The key index, with the keys of unindexed nodes put in first (the earliest node of a key wins). */
  #index(): Map<string, number> {
    this.#keyed ??= new Map();
    const keyed = this.#keyed;
    if (this.#unindexed.length > 0) {
      for (const node of this.#unindexed) {
        const key = this.#keys[node] as string;
        if (!keyed.has(key)) keyed.set(key, node);
      }
      this.#unindexed = [];
    }
    return keyed;
  }

  /**
   * Adds a node no one asks about by key (a turn, a run's start or end, a time point): it is not
   * indexed, so nothing hashes its label, which only names it in {@link droppedEdges}. Never a
   * call. The caller keeps labels apart from each other and from the keys of {@link addNode}.
   */
  addLabelledNode(label: string, time: bigint): number {
    return this.#newNode(label, time, -1);
  }

  #newNode(key: string, time: bigint, callSlot: number): number {
    const node = this.#nodes++;
    this.#keys[node] = key;
    this.#time[node] = time;
    this.#callSlot[node] = callSlot;
    this.#changed();
    return node;
  }

  #changed(): void {
    this.#adjacency = undefined;
    this.#rank = undefined;
    this.#byRank = undefined;
    this.#reach = undefined;
  }

  /** Whether the node exists. */
  has(key: string): boolean {
    return this.#index().has(key);
  }

  /** Adds `from -> to`; unknown keys and self-loops are ignored. */
  addEdge(from: string, to: string): void {
    const a = this.#index().get(from);
    const b = this.#index().get(to);
    if (a !== undefined && b !== undefined) this.addEdgeBetween(a, b);
  }

  /**
   * Adds `from -> to` between node numbers from {@link addNode}; self-loops and numbers of nodes
   * not added are ignored. The normalizer's way in: no key to look up per edge.
   */
  addEdgeBetween(from: number, to: number): void {
    if (from === to || !(from >= 0 && from < this.#nodes && to >= 0 && to < this.#nodes)) return;
    const edge = this.#edges++;
    this.#edgeFrom[edge] = from;
    this.#edgeTo[edge] = to;
    if (this.#adjacency) this.#changed();
  }

  /**
   * Edges that closed a cycle (possible only with contradictory input, e.g. reused call ids),
   * dropped to keep the order a DAG; for the normalizer to report.
   */
  droppedEdges(): readonly [string, string][] {
    this.#ranks();
    this.#dropped ??= [];
    return this.#dropped;
  }

  happensBefore(a: string, b: string): boolean {
    const from = this.#index().get(a);
    const to = this.#index().get(b);
    if (from === undefined || to === undefined || from === to) return false;
    if (this.#callSlot[to] === -1) throw new Error(`${b} is not a call`);
    return this.#reachability().reaches(from, to);
  }

  afterAny(ids: readonly string[]): (id: string) => boolean {
    const nodes: number[] = [];
    for (const id of ids) {
      const node = this.#index().get(id);
      if (node !== undefined) nodes.push(node);
    }
    const test = this.#reachability().reachedByAny(nodes);
    return (id) => test(this.#index().get(id) ?? -1);
  }

  /**
   * Gives `call` (the call object of the node keyed `call.id`) the node's number, so questions
   * about it go straight to the node: see graph-calls.ts. Returns the call.
   */
  numberCall<T extends CallKey>(call: T, node: number): T {
    stampNode(call, this, node);
    return call;
  }

  happensBeforeCall(a: CallKey, b: CallKey): boolean {
    const from = this.#nodeOfCall(a);
    const to = this.#nodeOfCall(b);
    if (from === -1 || to === -1 || from === to) return false;
    if (this.#callSlot[to] === -1) throw new Error(`${b.id} is not a call`);
    return this.#reachability().reaches(from, to);
  }

  afterAnyCall(calls: readonly CallKey[]): (call: CallKey) => boolean {
    const nodes: number[] = [];
    for (const call of calls) {
      const node = this.#nodeOfCall(call);
      if (node !== -1) nodes.push(node);
    }
    const test = this.#reachability().reachedByAny(nodes);
    return (call) => test(this.#nodeOfCall(call));
  }

  listingRankOfCall(call: CallKey): number {
    const node = this.#nodeOfCall(call);
    return node === -1 ? -1 : (this.#ranks()[node] as number);
  }

  /** The call's node: stamped on it by {@link numberCall}, else looked up by its id; -1 for none. */
  #nodeOfCall(call: CallKey): number {
    const stamped = stampedNode(this, call);
    return stamped !== -1 ? stamped : (this.#index().get(call.id) ?? -1);
  }

  compare(a: string, b: string): number {
    const rank = this.#ranks();
    return (rank[this.#index().get(a) ?? -1] ?? 0) - (rank[this.#index().get(b) ?? -1] ?? 0);
  }

  /**
   * The items sorted by the causal listing of their node numbers (a stable sort): the array
   * itself when it is in that order already, as it mostly is, without a sort.
   */
  inListingOrder<T>(items: readonly T[], nodeOf: (item: T) => number): readonly T[] {
    const rank = this.#ranks();
    for (let i = 1; i < items.length; i++) {
      if ((rank[nodeOf(items[i - 1] as T)] ?? 0) > (rank[nodeOf(items[i] as T)] ?? 0))
        return [...items].sort((a, b) => (rank[nodeOf(a)] ?? 0) - (rank[nodeOf(b)] ?? 0));
    }
    return items;
  }

  /** The out-edges by source (a counting sort of the edges, in the order they came). */
  #edgesBySource(): Adjacency {
    if (this.#adjacency) return this.#adjacency;
    const n = this.#nodes;
    // Counted per source, summed into where each source's edges end, then filled from the last
    // edge back, each source's place moving down to where its edges begin.
    const start: number[] = new Array(n + 1).fill(0);
    for (let e = 0; e < this.#edges; e++) {
      const from = this.#edgeFrom[e] as number;
      start[from] = (start[from] as number) + 1;
    }
    for (let k = 1; k <= n; k++) start[k] = (start[k] as number) + (start[k - 1] as number);
    const target: number[] = new Array(this.#edges);
    for (let e = this.#edges - 1; e >= 0; e--) {
      const from = this.#edgeFrom[e] as number;
      const at = (start[from] as number) - 1;
      start[from] = at;
      target[at] = this.#edgeTo[e] as number;
    }
    this.#adjacency = { start, target };
    return this.#adjacency;
  }

  /**
   * A topological order, earliest time first among ready nodes. Edges that would close a cycle
   * (possible only with contradictory input, e.g. reused call ids) are dropped and recorded.
   */
  #ranks(): number[] {
    if (this.#rank) return this.#rank;
    const { start, target } = this.#edgesBySource();
    const n = this.#nodes;
    // One array for both: a node not placed yet holds -1 minus its in-edges still to follow (so
    // -1 when it is ready), a placed node its rank.
    const rank: number[] = new Array(n).fill(-1);
    for (let e = 0; e < this.#edges; e++) {
      const t = target[e] as number;
      if (t !== -1) rank[t] = (rank[t] as number) - 1;
    }
    const byRank: number[] = new Array(n);
    const ready = new NodeHeap(this.#time, n);
    for (let i = 0; i < n; i++) if (rank[i] === -1) ready.push(i);
    let next = 0;
    while (next < n) {
      let node = ready.pop();
      if (node === undefined) {
        // A cycle: release the earliest unplaced node and drop the edges still pointing at it.
        node = this.#earliestUnplaced(rank);
        this.#dropEdgesInto(node, rank);
      }
      byRank[next] = node;
      rank[node] = next++;
      for (let e = start[node] as number; e < (start[node + 1] as number); e++) {
        const t = target[e] as number;
        if (t === -1 || (rank[t] as number) >= 0) continue;
        const left = (rank[t] as number) + 1;
        rank[t] = left;
        if (left === -1) ready.push(t);
      }
    }
    this.#rank = rank;
    this.#byRank = byRank;
    return rank;
  }

  /** The earliest node not placed yet (one whose entry in `rank` is negative). */
  #earliestUnplaced(rank: readonly number[]): number {
    let best = -1;
    for (let i = 0; i < rank.length; i++)
      if ((rank[i] as number) < 0 && (best === -1 || earlier(this.#time, i, best))) best = i;
    return best;
  }

  #dropEdgesInto(node: number, rank: readonly number[]): void {
    const { start, target } = this.#edgesBySource();
    for (let from = 0; from < this.#nodes; from++) {
      if ((rank[from] as number) >= 0) continue;
      let dropped = false;
      for (let e = start[from] as number; e < (start[from + 1] as number); e++) {
        if (target[e] !== node) continue;
        target[e] = -1;
        dropped = true;
      }
      if (dropped) {
        this.#dropped ??= [];
        this.#dropped.push([this.#keys[from] as string, this.#keys[node] as string]);
      }
    }
  }

  /**
   * Which calls each node reaches, worked out on the first question: bit masks for at most 32
   * calls, else interval lists, else (a DAG unlike the shapes agents make) bitsets.
   */
  #reachability(): CallReach {
    if (this.#reach) return this.#reach;
    const rank = this.#ranks();
    const n = this.#nodes;
    const byRank = this.#byRank as number[];
    const { start, target } = this.#edgesBySource();
    const dag: DagView = {
      nodes: n,
      calls: this.#calls,
      start,
      target,
      callSlot: this.#callSlot,
      byRank,
      rankOf: rank,
    };
    this.#reach =
      this.#calls <= 32
        ? new MaskReach(dag)
        : (intervalReach(dag, this.#intervalBudget ?? INTERVALS_PER_NODE * n + MIN_INTERVALS) ??
          new BitsetReach(dag));
    return this.#reach;
  }
}

/** Out-edges by source: node k's targets are `target[start[k] .. start[k + 1] - 1]`, -1 where dropped. */
interface Adjacency {
  start: number[];
  target: number[];
}

/**
 * The interval lists' budget: per node on average (a node nested this deep in parallel branches
 * is far past the shapes agents make), and whatever the graph's size.
 */
const INTERVALS_PER_NODE = 16;
const MIN_INTERVALS = 1024;
