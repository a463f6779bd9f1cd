/**
 * The pairing behind the reference family: reference calls (left) paired with actual calls
 * (right) by maximum bipartite matching, once on the pairs whose arguments were compared and
 * match ("sure"), then grown with the pairs whose arguments could not be compared ("possible").
 */
import type { ToolCall } from '../model/trajectory.js';
import type { ReferenceSection } from '../scenario/native.js';
import { type Matching, maximumMatching } from './bipartite.js';
import { argumentsIgnored, classifyPair, comparePair, type PairVerdict } from './reference-args.js';
import type { NumberedCall } from './reference-messages.js';

/** Which side a pairing must cover completely. */
export interface Needs {
  references: boolean;
  calls: boolean;
}

export const NEEDS: Record<'unordered' | 'superset' | 'subset', Needs> = {
  unordered: { references: true, calls: true },
  superset: { references: true, calls: false },
  subset: { references: false, calls: true },
};
export const BOTH: Needs = NEEDS.unordered;

const NO_INDEXES: readonly number[] = [];

/** The optimal pairing of reference calls with actual calls, and the lookups its reasons use. */
export class Pairing {
  /** Pairs whose arguments were compared and match. */
  readonly sure: Matching;
  /** The possible pairs per reference call, when some pair could not be compared; else the sure ones are all. */
  readonly #possibleEdges: readonly (readonly number[])[] | undefined;
  #possible: Matching | undefined;
  /** Each tool's calls (indexes into `calls`): only calls of the same tool can pair. */
  readonly #callsByTool: Map<string, number[]>;
  #referencesByTool: Map<string, number[]> | undefined;

  /** `scope` is `''`, or ` in this turn` inside a strict turn. */
  constructor(
    readonly references: readonly NumberedCall[],
    readonly calls: readonly ToolCall[],
    readonly section: ReferenceSection,
    readonly scope = '',
  ) {
    this.#callsByTool = indexesByTool(calls);
    const sureEdges: (readonly number[])[] = [];
    let possibleEdges: (readonly number[])[] | undefined;
    for (let left = 0; left < references.length; left++) {
      const reference = references[left] as NumberedCall;
      const candidates = this.#callsByTool.get(reference.tool) ?? NO_INDEXES;
      // Arguments that do not count make every call of the tool a sure match: nothing to compare.
      if (argumentsIgnored(reference, section)) {
        sureEdges.push(candidates);
        possibleEdges?.push(candidates);
        continue;
      }
      const sure: number[] = [];
      const possible: number[] = [];
      for (const right of candidates) {
        const status = classifyPair(calls[right] as ToolCall, reference, section);
        if (status === 'match') sure.push(right);
        if (status !== 'mismatch') possible.push(right);
      }
      sureEdges.push(sure);
      if (possibleEdges === undefined && possible.length !== sure.length)
        possibleEdges = sureEdges.slice(0, -1);
      possibleEdges?.push(possible);
    }
    this.sure = maximumMatching(references.length, calls.length, sureEdges);
    this.#possibleEdges = possibleEdges;
  }

  /**
   * Grown from `sure` with pairs whose arguments could not be compared, found on first use.
   * Without such pairs it is `sure` itself: growing a maximum matching on the same edges finds nothing.
   */
  get possible(): Matching {
    if (this.#possible === undefined) {
      const edges = this.#possibleEdges;
      this.#possible =
        edges === undefined
          ? this.sure
          : maximumMatching(this.references.length, this.calls.length, edges, this.sure);
    }
    return this.#possible;
  }

  /** The explained verdict of one pair (builds text: only for reasons). */
  verdict(left: number, right: number): PairVerdict {
    return comparePair(this.calls[right] as ToolCall, this.references[left] as NumberedCall, this.section);
  }

  differs(left: number, right: number): boolean {
    return (
      classifyPair(this.calls[right] as ToolCall, this.references[left] as NumberedCall, this.section) ===
      'mismatch'
    );
  }

  callsOf(tool: string): readonly number[] {
    return this.#callsByTool.get(tool) ?? NO_INDEXES;
  }

  referencesOf(tool: string): readonly number[] {
    this.#referencesByTool ??= indexesByTool(this.references);
    return this.#referencesByTool.get(tool) ?? NO_INDEXES;
  }

  /** The section's `ignore` paths, for ranking near misses the way pairs are compared. */
  get ignore(): readonly string[] | undefined {
    return this.section.ignore;
  }

  /** Whether `matching` pairs every item of the sides `needs` names. */
  covers(matching: Matching, needs: Needs): boolean {
    return (
      (!needs.references || matching.size === this.references.length) &&
      (!needs.calls || matching.size === this.calls.length)
    );
  }

  /** The calls paired for sure, in their order. */
  pairedCalls(): ToolCall[] {
    const paired: ToolCall[] = [];
    const { leftOf } = this.sure;
    for (let right = 0; right < this.calls.length; right++)
      if (leftOf[right] !== -1) paired.push(this.calls[right] as ToolCall);
    return paired;
  }
}

/** Indexes of the items of each tool, in order. */
function indexesByTool(items: readonly { tool: string }[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  for (let index = 0; index < items.length; index++) {
    const { tool } = items[index] as { tool: string };
    const group = groups.get(tool);
    if (group) group.push(index);
    else groups.set(tool, [index]);
  }
  return groups;
}
