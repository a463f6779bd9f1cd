/**
 * The ordered-subsequence search behind `tool_sequence`: find the longest prefix of steps that
 * some chain of calls c1 -> c2 -> … satisfies, where each arrow is `happensBefore`.
 *
 * Exact: a dynamic program over steps keeps, for each step, every call that ends some valid chain
 * of the steps so far (a "layer"). Greedy first fit is not enough on a partial order: the first A
 * may still be running when B is issued while a later, shorter A finished before it.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';

/** How far a sequence search got. */
export interface SequenceSearch {
  /** How many leading steps some chain satisfies (all of them when the sequence holds). */
  reached: number;
  /** One witness chain for the `reached` steps. */
  chain: ToolCall[];
  /** Every call that ends some valid chain of `reached` steps, in causal order. */
  frontier: ToolCall[];
  /** True when some frontier call happens-before `call`: it could have continued the chain. */
  follows(call: ToolCall): boolean;
}

/** A step predicate: does this call satisfy the step (tool and arguments)? */
export type StepAccepts = (call: ToolCall) => boolean;

interface LayerEntry {
  call: ToolCall;
  /** Index of the predecessor in the previous layer, -1 in the first layer. */
  back: number;
}

/**
 * Exact, on any happens-before relation: each layer is every accepted call that comes after some
 * call of the previous layer, found with one "after any of these" test per layer, so a step costs
 * one pass over the calls (plus one OR of reachability sets on a causal graph), whatever the width
 * of a parallel batch.
 */
export function searchSequence(trajectory: Trajectory, accepts: readonly StepAccepts[]): SequenceSearch {
  const layers: ToolCall[][] = [];
  for (const accept of accepts) {
    const previous = layers[layers.length - 1];
    const after = previous ? trajectory.afterAny(previous) : undefined;
    const layer = trajectory.calls.filter((call) => accept(call) && (after === undefined || after(call)));
    if (layer.length === 0) break;
    layers.push(layer);
  }
  return new FoundSequence(
    trajectory,
    layers.length,
    chainBack(trajectory, layers),
    layers[layers.length - 1] ?? [],
  );
}

/** A search's outcome; the "after any frontier call" test is built on first use (only a failure's reason asks it). */
class FoundSequence implements SequenceSearch {
  #after: ((call: ToolCall) => boolean) | undefined;

  constructor(
    private readonly trajectory: Trajectory,
    readonly reached: number,
    readonly chain: ToolCall[],
    readonly frontier: ToolCall[],
  ) {}

  follows(call: ToolCall): boolean {
    if (this.frontier.length === 0) return false;
    this.#after ??= this.trajectory.afterAny(this.frontier);
    return this.#after(call);
  }
}

/** One witness chain, from the first call of the last layer back through predecessors that exist by construction. */
function chainBack(trajectory: Trajectory, layers: readonly (readonly ToolCall[])[]): ToolCall[] {
  const last = layers[layers.length - 1]?.[0];
  if (!last) return [];
  const chain = [last];
  for (let step = layers.length - 2; step >= 0; step--) {
    const next = chain[0] as ToolCall;
    const before = layers[step]?.find((call) => trajectory.happensBefore(call, next));
    if (!before) break;
    chain.unshift(before);
  }
  return chain;
}

/**
 * The same search pair by pair: each candidate is tested against the previous layer. Worst case
 * calls² per step (a wide parallel batch): the plain reference the tests hold the search to.
 */
export function searchSequenceByPairs(
  trajectory: Trajectory,
  accepts: readonly StepAccepts[],
): SequenceSearch {
  const layers: LayerEntry[][] = [];
  for (const accept of accepts) {
    const previous = layers[layers.length - 1];
    const layer: LayerEntry[] = [];
    for (const call of trajectory.calls) {
      if (!accept(call)) continue;
      if (!previous) {
        layer.push({ call, back: -1 });
        continue;
      }
      const back = previous.findIndex((entry) => trajectory.happensBefore(entry.call, call));
      if (back >= 0) layer.push({ call, back });
    }
    if (layer.length === 0) break;
    layers.push(layer);
  }
  const frontier = (layers[layers.length - 1] ?? []).map((entry) => entry.call);
  const follows = (call: ToolCall) => frontier.some((end) => trajectory.happensBefore(end, call));
  return { reached: layers.length, chain: witness(layers), frontier, follows };
}

function witness(layers: readonly (readonly LayerEntry[])[]): ToolCall[] {
  const chain: ToolCall[] = [];
  let back = 0;
  for (let step = layers.length - 1; step >= 0; step--) {
    const entry = layers[step]?.[back];
    if (!entry) break;
    chain.unshift(entry.call);
    back = entry.back;
  }
  return chain;
}
