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
 * Searches on the interval structure of happens-before, in O(steps x calls x log calls), and
 * falls back to {@link searchSequenceByPairs} if the trajectory ever contradicts that structure.
 */
export function searchSequence(trajectory: Trajectory, accepts: readonly StepAccepts[]): SequenceSearch {
  return searchByIntervals(trajectory, accepts) ?? searchSequenceByPairs(trajectory, accepts);
}

/**
 * The same search for any happens-before relation: each candidate is tested against the
 * previous layer pair by pair. Worst case calls² per step (a wide parallel batch); the
 * reference the fast search is checked against.
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

/**
 * The fast search. It rests on what `happensBefore` means in the model: b was issued at or after
 * a's result was available, on one ordering scale, and `trajectory.calls` is sorted by issue
 * time. So the calls a given call happens-before form a suffix of `calls` (leaving the call
 * itself out), found by binary search; and a layer's successors are the union of those suffixes,
 * decided by the two entries whose suffixes start earliest. Every link it makes is re-checked
 * with `happensBefore`; a failed check means the structure does not hold, and it returns undefined.
 */
function searchByIntervals(
  trajectory: Trajectory,
  accepts: readonly StepAccepts[],
): SequenceSearch | undefined {
  const { calls } = trajectory;
  const position = new Map<ToolCall, number>(calls.map((call, index) => [call, index]));
  const firstSuccessors = new Map<ToolCall, number>();

  /** Index in `calls` where the suffix of calls that `call` happens-before starts (calls.length if none). */
  const firstSuccessor = (call: ToolCall): number => {
    const cached = firstSuccessors.get(call);
    if (cached !== undefined) return cached;
    const self = position.get(call) ?? 0;
    // Binary search over `calls` with `call` itself removed: virtual index v is real v or v + 1.
    const real = (virtual: number) => (virtual < self ? virtual : virtual + 1);
    let low = 0;
    let high = calls.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (trajectory.happensBefore(call, calls[real(middle)] as ToolCall)) high = middle;
      else low = middle + 1;
    }
    const first = real(low);
    firstSuccessors.set(call, first);
    return first;
  };

  /** Does the suffix of `call` start before index `bound`? One probe: the last call before `bound` (not itself). */
  const startsBefore = (call: ToolCall, bound: number): boolean => {
    const self = position.get(call);
    const probe = self === bound - 1 ? bound - 2 : bound - 1;
    return probe >= 0 && trajectory.happensBefore(call, calls[probe] as ToolCall);
  };

  /**
   * The two entries of a layer whose successor suffixes start earliest: together they decide
   * every call. Most entries are ruled out by one probe, without a binary search.
   */
  const earliestTwo = (layer: readonly LayerEntry[]) => {
    let best: { index: number; from: number } | undefined;
    let second: { index: number; from: number } | undefined;
    layer.forEach((entry, index) => {
      if (second && !startsBefore(entry.call, second.from)) return;
      const from = firstSuccessor(entry.call);
      if (!best || from < best.from) {
        second = best;
        best = { index, from };
      } else if (!second || from < second.from) second = { index, from };
    });
    return [best, second].filter((entry) => entry !== undefined);
  };

  /** The layer entry `call` can follow, or -1. The call itself is never its own predecessor. */
  const predecessor = (
    layer: readonly LayerEntry[],
    ends: ReturnType<typeof earliestTwo>,
    call: ToolCall,
  ) => {
    const at = position.get(call) ?? -1;
    for (const end of ends) {
      if (layer[end.index]?.call !== call && at >= end.from) return end.index;
    }
    return -1;
  };

  const layers: LayerEntry[][] = [];
  for (const accept of accepts) {
    const previous = layers[layers.length - 1];
    const ends = previous ? earliestTwo(previous) : [];
    const layer: LayerEntry[] = [];
    for (const call of calls) {
      if (!accept(call)) continue;
      if (!previous) {
        layer.push({ call, back: -1 });
        continue;
      }
      const back = predecessor(previous, ends, call);
      if (back < 0) continue;
      if (!trajectory.happensBefore((previous[back] as LayerEntry).call, call)) return undefined;
      layer.push({ call, back });
    }
    if (layer.length === 0) break;
    layers.push(layer);
  }
  const last = layers[layers.length - 1] ?? [];
  const frontierEnds = earliestTwo(last);
  return {
    reached: layers.length,
    chain: witness(layers),
    frontier: last.map((entry) => entry.call),
    follows: (call) => predecessor(last, frontierEnds, call) >= 0,
  };
}

/** Walks back from the first entry of the last layer: one valid chain for the steps reached. */
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
