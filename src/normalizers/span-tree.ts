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
    const byId = new Map<string, number>();
    const kept: SpanRecord[] = [];
    for (const span of spans) {
      const first = byId.get(span.spanId);
      if (first === undefined) {
        byId.set(span.spanId, kept.length);
        kept.push(span);
      } else {
        this.issues.push({
          kind: 'span.duplicate_id',
          message: `span id ${span.spanId} appears more than once; kept the first ("${(kept[first] as SpanRecord).name}"), ignored "${span.name}"`,
          spanIds: [span.spanId],
        });
      }
    }
    this.spans = kept;
    this.#parents = parentPositions(kept, byId);
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
    const depths: number[] = [];
    let sorted = true;
    let deepest = 0;
    for (const index of positions) {
      const depth = this.depth(index);
      if (depth < (depths[depths.length - 1] ?? 0)) sorted = false;
      if (depth > deepest) deepest = depth;
      depths.push(depth);
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

/** Per span, its parent's position in `spans`, or -1. */
function parentPositions(spans: readonly SpanRecord[], byId: ReadonlyMap<string, number>): number[] {
  const parents: number[] = [];
  // Siblings mostly arrive together: the previous span's parent id is tried before the map.
  let lastId: string | undefined;
  let last = -1;
  for (const span of spans) {
    const parentId = span.parentSpanId;
    if (parentId !== lastId && parentId !== undefined) {
      lastId = parentId;
      last = byId.get(parentId) ?? -1;
    }
    parents.push(parentId === undefined ? -1 : last);
  }
  return parents;
}
