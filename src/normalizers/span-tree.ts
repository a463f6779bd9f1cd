/**
 * The parent/child structure of one trace's spans, robust to what real pipelines deliver:
 * duplicate span ids, parents that never arrived, cycles in parent ids.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { TrajectoryIssue } from '../model/trajectory.js';

/**
 * One trace's spans with each one's parent, and the problems found while indexing. Spans are
 * known by their position in {@link spans}: parents are looked up by id once, here, and every
 * walk up the tree after that is array indexing.
 */
export class SpanTree {
  readonly spans: readonly SpanRecord[];
  readonly issues: TrajectoryIssue[] = [];
  /**
   * Per span, its parent's position in {@link spans}; -1 when the parent is not in this trace.
   * Plain arrays here and in assembly: a typed array this small still costs a backing store.
   */
  readonly #parents: number[];

  constructor(spans: readonly SpanRecord[]) {
    // A trace of a few dozen spans finds ids by comparing them, in no more time than a Map of
    // them takes to build, and without its ~600 bytes for a dozen spans.
    const byId = spans.length > SCAN_LIMIT ? new Map<string, number>() : undefined;
    // The spans as given until one repeats; only then a copy of the ones kept.
    let kept: SpanRecord[] | undefined;
    for (let i = 0; i < spans.length; i++) {
      const span = spans[i] as SpanRecord;
      const first = byId
        ? (byId.get(span.spanId) ?? -1)
        : positionOf(kept ?? spans, kept?.length ?? i, span.spanId);
      if (first === -1) {
        byId?.set(span.spanId, kept?.length ?? i);
        kept?.push(span);
        continue;
      }
      kept ??= spans.slice(0, i);
      this.issues.push({
        kind: 'span.duplicate_id',
        message: `span id ${span.spanId} appears more than once; kept the first ("${(kept[first] as SpanRecord).name}"), ignored "${span.name}"`,
        spanIds: [span.spanId],
      });
    }
    this.spans = kept ?? spans;
    this.#parents = parentPositions(this.spans, byId);
  }

  /** The position of the span's parent, or -1 when it is not in this trace. */
  parent(index: number): number {
    return this.#parents[index] as number;
  }

  /**
   * How many ancestors the span has. Stops at a missing parent and at a cycle (counting the
   * ancestors met before the first repeat), so a malformed trace never loops.
   */
  depth(index: number): number {
    const parents = this.#parents;
    let depth = 0;
    for (let current = parents[index] as number; current !== -1; current = parents[current] as number) {
      // More ancestors than spans: the chain loops. Only then is what was passed worth recording.
      if (depth === parents.length) return this.#depthUpToCycle(index);
      depth++;
    }
    return depth;
  }

  /**
   * The nearest ancestor whose entry in `marks` has any bit of `mask` set, or -1. In a loop of
   * parent ids every ancestor comes round again once all were passed, or the walk comes back to
   * the span itself: either way nothing new is left to test.
   */
  nearestAncestor(index: number, marks: readonly number[], mask: number): number {
    const parents = this.#parents;
    let steps = 0;
    for (let current = parents[index] as number; current !== -1; current = parents[current] as number) {
      if (current === index || steps === parents.length) return -1;
      if (((marks[current] as number) & mask) !== 0) return current;
      steps++;
    }
    return -1;
  }

  /**
   * These span positions, nearer the root first: a stable sort by depth, so spans of one depth
   * keep the order given. Spans mostly arrive parents first, and then nothing is sorted; else
   * a counting sort, depths being small integers.
   */
  outermostFirst(positions: readonly number[]): readonly number[] {
    const depths: number[] = new Array(positions.length);
    let sorted = true;
    let deepest = 0;
    for (let k = 0; k < positions.length; k++) {
      const depth = this.depth(positions[k] as number);
      if (k > 0 && depth < (depths[k - 1] as number)) sorted = false;
      if (depth > deepest) deepest = depth;
      depths[k] = depth;
    }
    if (sorted) return positions;
    // starts[d]: where the spans of depth d go, once the spans of every lower depth are placed.
    const starts: number[] = new Array(deepest + 2).fill(0);
    for (const depth of depths) starts[depth + 1] = (starts[depth + 1] as number) + 1;
    for (let d = 1; d < starts.length; d++) starts[d] = (starts[d] as number) + (starts[d - 1] as number);
    const out: number[] = new Array(positions.length).fill(0);
    for (let k = 0; k < positions.length; k++) {
      const depth = depths[k] as number;
      out[starts[depth] as number] = positions[k] as number;
      starts[depth] = (starts[depth] as number) + 1;
    }
    return out;
  }

  #depthUpToCycle(index: number): number {
    const parents = this.#parents;
    const seen: boolean[] = new Array(parents.length).fill(false);
    seen[index] = true;
    let depth = 0;
    for (let current = parents[index] as number; current !== -1 && !seen[current]; ) {
      seen[current] = true;
      depth++;
      current = parents[current] as number;
    }
    return depth;
  }

  /**
   * The local root: a span without a parent in this trace (the earliest, if several). Spans
   * whose parent is missing count too, so a partial trace still has a root.
   */
  root(): SpanRecord | undefined {
    let best: SpanRecord | undefined;
    for (let i = 0; i < this.spans.length; i++) {
      if (this.#parents[i] !== -1) continue;
      const span = this.spans[i] as SpanRecord;
      if (!best || span.startTimeUnixNano < best.startTimeUnixNano) best = span;
    }
    return best ?? this.spans[0];
  }
}

/** Up to this many spans, ids are found by comparing them (see the SpanTree constructor). */
const SCAN_LIMIT = 32;

/** Per span, its parent's position in `spans`, or -1; parents found in `byId`, else by comparing ids. */
function parentPositions(
  spans: readonly SpanRecord[],
  byId: ReadonlyMap<string, number> | undefined,
): number[] {
  const parents: number[] = new Array(spans.length);
  // Siblings mostly arrive together: the previous span's parent id is tried before a lookup.
  let lastId: string | undefined;
  let last = -1;
  for (let i = 0; i < spans.length; i++) {
    const parentId = (spans[i] as SpanRecord).parentSpanId;
    if (parentId !== lastId && parentId !== undefined) {
      lastId = parentId;
      last = byId ? (byId.get(parentId) ?? -1) : positionOf(spans, spans.length, parentId);
    }
    parents[i] = parentId === undefined ? -1 : last;
  }
  return parents;
}

/** The position of the first of the first `count` spans with this id, or -1. */
function positionOf(spans: readonly SpanRecord[], count: number, spanId: string): number {
  for (let i = 0; i < count; i++) if ((spans[i] as SpanRecord).spanId === spanId) return i;
  return -1;
}
