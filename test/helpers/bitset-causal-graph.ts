/**
 * The causal graph as it was before interval reachability (commit 8578783), unchanged but for its
 * name: one bitset of reachable calls per node, O((nodes + edges) x calls / 32). The oracle the
 * happens-before property test holds {@link CausalGraph} to.
 */
import type { CausalOrder } from '../../src/model/causal-order.js';
import { earlier, NodeHeap } from '../../src/model/node-heap.js';

export class BitsetCausalGraph implements CausalOrder {
  /**
   * Per node: its key or label, its time, its latest out-edge and its call slot. Made at the
   * expected size (see the constructor), so places past {@link #nodes} may be empty.
   */
  readonly #keys: string[];
  readonly #time: bigint[];
  readonly #lastOut: number[];
  /** Per node, its bit in the reachability sets: -1 for nodes that are not calls. */
  readonly #callSlot: number[];
  #nodes = 0;
  readonly #index = new Map<string, number>();
  /**
   * Out-edges as one linked list per node in shared arrays: per node its latest edge (above),
   * per edge its target and the node's edge before it (-1 ends a list). An array per node was
   * most of what building a trace's graph allocated. A dropped edge keeps its place with target
   * -1. Made at the expected size, like the node arrays.
   */
  readonly #edgeTarget: number[];
  readonly #previousOut: number[];
  #edges = 0;
  #calls = 0;
  /**
   * Per node, its place in the causal listing. Plain arrays for per-trace sizes: a typed array
   * of a few dozen entries still costs a backing store of its own.
   */
  #rank: number[] | undefined;
  #reach: Int32Array | Uint32Array[] | undefined;
  readonly #dropped: [string, string][] = [];

  /**
   * `expected`: about how many nodes and edges there will be, so the graph's arrays are made at
   * that size instead of grown (an array grown by push is reallocated at every half again, from
   * 17 places). Any number may be added all the same.
   */
  constructor(expected: { nodes: number; edges: number } = { nodes: 0, edges: 0 }) {
    this.#keys = new Array(expected.nodes);
    this.#time = new Array(expected.nodes);
    this.#lastOut = new Array(expected.nodes);
    this.#callSlot = new Array(expected.nodes);
    this.#edgeTarget = new Array(expected.edges);
    this.#previousOut = new Array(expected.edges);
  }

  /**
   * Adds a node once; `time` breaks ties in the causal listing. Calls are the nodes happens-before
   * is asked about. Returns the node's number, for {@link addEdgeBetween} (the existing node's
   * number when the key is already there).
   */
  addNode(key: string, time: bigint, isCall: boolean): number {
    const existing = this.#index.get(key);
    if (existing !== undefined) return existing;
    const node = this.#newNode(key, time, isCall ? this.#calls++ : -1);
    this.#index.set(key, node);
    return node;
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
    this.#lastOut[node] = -1;
    this.#callSlot[node] = callSlot;
    this.#rank = undefined;
    this.#reach = undefined;
    return node;
  }

  /** Whether the node exists. */
  has(key: string): boolean {
    return this.#index.has(key);
  }

  /** Adds `from -> to`; unknown keys and self-loops are ignored. */
  addEdge(from: string, to: string): void {
    const a = this.#index.get(from);
    const b = this.#index.get(to);
    if (a !== undefined && b !== undefined) this.addEdgeBetween(a, b);
  }

  /**
   * Adds `from -> to` between node numbers from {@link addNode}; self-loops are ignored. The
   * normalizer's way in: no key to look up per edge.
   */
  addEdgeBetween(from: number, to: number): void {
    // Empty for a node not added: its places are made but not filled.
    const last = this.#lastOut[from];
    if (from === to || last === undefined) return;
    const edge = this.#edges++;
    this.#lastOut[from] = edge;
    this.#edgeTarget[edge] = to;
    this.#previousOut[edge] = last;
    this.#rank = undefined;
    this.#reach = undefined;
  }

  /**
   * Edges that closed a cycle (possible only with contradictory input, e.g. reused call ids),
   * dropped to keep the order a DAG; for the normalizer to report.
   */
  droppedEdges(): readonly [string, string][] {
    this.#ranks();
    return this.#dropped;
  }

  happensBefore(a: string, b: string): boolean {
    const from = this.#index.get(a);
    const to = this.#index.get(b);
    if (from === undefined || to === undefined || from === to) return false;
    const slot = this.#callSlot[to] as number;
    if (slot === -1) throw new Error(`${b} is not a call`);
    const reach = this.#reachability();
    if (reach instanceof Int32Array) return ((reach[from] as number) & (1 << slot)) !== 0;
    const bits = reach[from] as Uint32Array;
    return ((bits[slot >>> 5] as number) & (1 << (slot & 31))) !== 0;
  }

  afterAny(ids: readonly string[]): (id: string) => boolean {
    const reach = this.#reachability();
    if (reach instanceof Int32Array) {
      let union = 0;
      for (const id of ids) {
        const node = this.#index.get(id);
        if (node !== undefined) union |= reach[node] as number;
      }
      return (id) => {
        const slot = this.#callSlot[this.#index.get(id) ?? -1] ?? -1;
        return slot !== -1 && (union & (1 << slot)) !== 0;
      };
    }
    const union = new Uint32Array(Math.max(1, Math.ceil(this.#calls / 32)));
    for (const id of ids) {
      const bits = reach[this.#index.get(id) ?? -1];
      if (bits) for (let w = 0; w < union.length; w++) union[w] = (union[w] as number) | (bits[w] as number);
    }
    return (id) => {
      const slot = this.#callSlot[this.#index.get(id) ?? -1] ?? -1;
      return slot !== -1 && ((union[slot >>> 5] as number) & (1 << (slot & 31))) !== 0;
    };
  }

  compare(a: string, b: string): number {
    const rank = this.#ranks();
    return (rank[this.#index.get(a) ?? -1] ?? 0) - (rank[this.#index.get(b) ?? -1] ?? 0);
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

  /**
   * A topological order, earliest time first among ready nodes. Edges that would close a cycle
   * (possible only with contradictory input, e.g. reused call ids) are dropped and recorded.
   */
  #ranks(): number[] {
    if (this.#rank) return this.#rank;
    const n = this.#nodes;
    const indegree: number[] = new Array(n).fill(0);
    for (let e = 0; e < this.#edges; e++) {
      const t = this.#edgeTarget[e] as number;
      if (t !== -1) indegree[t] = (indegree[t] as number) + 1;
    }
    const rank: number[] = new Array(n).fill(-1);
    const ready = new NodeHeap(this.#time, n);
    for (let i = 0; i < n; i++) if (indegree[i] === 0) ready.push(i);
    let next = 0;
    while (next < n) {
      let node = ready.pop();
      if (node === undefined) {
        // A cycle: release the earliest unplaced node and drop the edges still pointing at it.
        node = this.#earliestUnplaced(rank);
        this.#dropEdgesInto(node, rank);
      }
      rank[node] = next++;
      for (let e = this.#lastOut[node] as number; e !== -1; e = this.#previousOut[e] as number) {
        const t = this.#edgeTarget[e] as number;
        if (t === -1) continue;
        indegree[t] = (indegree[t] as number) - 1;
        if (indegree[t] === 0 && rank[t] === -1) ready.push(t);
      }
    }
    this.#rank = rank;
    return rank;
  }

  #earliestUnplaced(rank: readonly number[]): number {
    let best = -1;
    for (let i = 0; i < rank.length; i++)
      if (rank[i] === -1 && (best === -1 || earlier(this.#time, i, best))) best = i;
    return best;
  }

  #dropEdgesInto(node: number, rank: readonly number[]): void {
    for (let from = 0; from < this.#nodes; from++) {
      if (rank[from] !== -1) continue;
      let dropped = false;
      for (let e = this.#lastOut[from] as number; e !== -1; e = this.#previousOut[e] as number) {
        if (this.#edgeTarget[e] !== node) continue;
        this.#edgeTarget[e] = -1;
        dropped = true;
      }
      if (dropped) this.#dropped.push([this.#keys[from] as string, this.#keys[node] as string]);
    }
  }

  /**
   * Per node, the calls it reaches: one bit mask per node in one array when there are at most 32
   * calls (most traces: no array per node), else one bitset per node.
   */
  #reachability(): Int32Array | Uint32Array[] {
    if (this.#reach) return this.#reach;
    const rank = this.#ranks();
    const n = this.#nodes;
    const byRank: number[] = new Array(n).fill(0);
    for (let i = 0; i < n; i++) byRank[rank[i] as number] = i;
    this.#reach = this.#calls <= 32 ? this.#reachMasks(byRank) : this.#reachSets(byRank);
    return this.#reach;
  }

  #reachMasks(byRank: readonly number[]): Int32Array {
    const reach = new Int32Array(byRank.length);
    for (let r = byRank.length - 1; r >= 0; r--) {
      const node = byRank[r] as number;
      let mask = 0;
      for (let e = this.#lastOut[node] as number; e !== -1; e = this.#previousOut[e] as number) {
        const t = this.#edgeTarget[e] as number;
        if (t === -1) continue;
        const slot = this.#callSlot[t] as number;
        if (slot !== -1) mask |= 1 << slot;
        mask |= reach[t] as number;
      }
      reach[node] = mask;
    }
    return reach;
  }

  #reachSets(byRank: readonly number[]): Uint32Array[] {
    const n = byRank.length;
    const words = Math.ceil(this.#calls / 32);
    const reach: Uint32Array[] = new Array(n);
    for (let r = n - 1; r >= 0; r--) {
      const node = byRank[r] as number;
      const bits = new Uint32Array(words);
      for (let e = this.#lastOut[node] as number; e !== -1; e = this.#previousOut[e] as number) {
        const t = this.#edgeTarget[e] as number;
        if (t === -1) continue;
        const slot = this.#callSlot[t] as number;
        if (slot !== -1) bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
        const inner = reach[t] as Uint32Array;
        for (let w = 0; w < words; w++) bits[w] = (bits[w] as number) | (inner[w] as number);
      }
      reach[node] = bits;
    }
    return reach;
  }
}
