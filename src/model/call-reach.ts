/**
 * Which calls each node of a causal DAG reaches, three ways: a bit mask per node for at most 32
 * calls (most traces), sorted intervals of call numbers (long trajectories of the shapes agents
 * make, see interval-reach.ts), and a bitset per node for any other DAG.
 */

/** A DAG as a causal graph holds it. */
export interface DagView {
  readonly nodes: number;
  readonly calls: number;
  /** Node k's out-edges go to `target[start[k] .. start[k + 1] - 1]`. */
  readonly start: readonly number[];
  /** -1 for an edge dropped to break a cycle. */
  readonly target: readonly number[];
  /** Per node, its number among the calls, -1 for nodes that are not calls. */
  readonly callSlot: readonly number[];
  /** The nodes in a topological order (the causal listing). */
  readonly byRank: readonly number[];
  /** Per node, its place in that order. */
  readonly rankOf: readonly number[];
}

/** Reachability from any node to the calls. */
export interface CallReach {
  /** `from` reaches the call `to` by at least one edge (`to` must be a call node). */
  reaches(from: number, to: number): boolean;
  /** A test for "some node of `from` reaches this call node", built once. */
  reachedByAny(from: readonly number[]): (to: number) => boolean;
}

/** One bit mask per node in one array: for at most 32 calls, no array per node. */
export class MaskReach implements CallReach {
  readonly #masks: Int32Array;

  constructor(private readonly dag: DagView) {
    const { byRank, start, target, callSlot } = dag;
    const reach = new Int32Array(dag.nodes);
    for (let r = dag.nodes - 1; r >= 0; r--) {
      const node = byRank[r] as number;
      let mask = 0;
      for (let e = start[node] as number; e < (start[node + 1] as number); e++) {
        const t = target[e] as number;
        if (t === -1) continue;
        const slot = callSlot[t] as number;
        if (slot !== -1) mask |= 1 << slot;
        mask |= reach[t] as number;
      }
      reach[node] = mask;
    }
    this.#masks = reach;
  }

  reaches(from: number, to: number): boolean {
    return ((this.#masks[from] as number) & (1 << (this.dag.callSlot[to] as number))) !== 0;
  }

  reachedByAny(from: readonly number[]): (to: number) => boolean {
    let union = 0;
    for (const node of from) union |= this.#masks[node] as number;
    const callSlot = this.dag.callSlot;
    return (to) => {
      const slot = callSlot[to] ?? -1;
      return slot !== -1 && (union & (1 << slot)) !== 0;
    };
  }
}

/**
 * One bitset of reachable calls per node, in reverse topological order: O((nodes + edges) x
 * calls / 32) time and nodes x calls bits. Exact on any DAG: the fallback for one whose interval
 * lists would grow past their budget.
 */
export class BitsetReach implements CallReach {
  readonly #sets: Uint32Array[];
  readonly #words: number;

  constructor(private readonly dag: DagView) {
    const { byRank, start, target, callSlot } = dag;
    const words = Math.max(1, Math.ceil(dag.calls / 32));
    const reach: Uint32Array[] = new Array(dag.nodes);
    for (let r = dag.nodes - 1; r >= 0; r--) {
      const node = byRank[r] as number;
      const bits = new Uint32Array(words);
      for (let e = start[node] as number; e < (start[node + 1] as number); e++) {
        const t = target[e] as number;
        if (t === -1) continue;
        const slot = callSlot[t] as number;
        if (slot !== -1) bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
        const inner = reach[t] as Uint32Array;
        for (let w = 0; w < words; w++) bits[w] = (bits[w] as number) | (inner[w] as number);
      }
      reach[node] = bits;
    }
    this.#sets = reach;
    this.#words = words;
  }

  reaches(from: number, to: number): boolean {
    const slot = this.dag.callSlot[to] as number;
    const bits = this.#sets[from] as Uint32Array;
    return ((bits[slot >>> 5] as number) & (1 << (slot & 31))) !== 0;
  }

  reachedByAny(from: readonly number[]): (to: number) => boolean {
    const union = new Uint32Array(this.#words);
    for (const node of from) {
      const bits = this.#sets[node] as Uint32Array;
      for (let w = 0; w < union.length; w++) union[w] = (union[w] as number) | (bits[w] as number);
    }
    const callSlot = this.dag.callSlot;
    return (to) => {
      const slot = callSlot[to] ?? -1;
      return slot !== -1 && ((union[slot >>> 5] as number) & (1 << (slot & 31))) !== 0;
    };
  }
}
