/**
 * The parent/child structure of one trace's spans, robust to what real pipelines deliver:
 * duplicate span ids, parents that never arrived, cycles in parent ids.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { TrajectoryIssue } from '../model/trajectory.js';

/** One trace's spans indexed by id, with the problems found while indexing. */
export class SpanTree {
  readonly spans: readonly SpanRecord[];
  readonly issues: TrajectoryIssue[] = [];
  readonly #byId = new Map<string, SpanRecord>();

  constructor(spans: readonly SpanRecord[]) {
    const kept: SpanRecord[] = [];
    for (const span of spans) {
      const first = this.#byId.get(span.spanId);
      if (first !== undefined) {
        this.issues.push({
          kind: 'span.duplicate_id',
          message: `span id ${span.spanId} appears more than once; kept the first ("${first.name}"), ignored "${span.name}"`,
          spanIds: [span.spanId],
        });
        continue;
      }
      this.#byId.set(span.spanId, span);
      kept.push(span);
    }
    this.spans = kept;
  }

  /** The span with this id. */
  get(spanId: string | undefined): SpanRecord | undefined {
    return spanId === undefined ? undefined : this.#byId.get(spanId);
  }

  /** The span's parent, when it is in this trace. */
  parent(span: SpanRecord): SpanRecord | undefined {
    return this.get(span.parentSpanId);
  }

  /**
   * Ancestors from the parent upwards. Stops at a missing parent and at a cycle, so a
   * malformed trace never loops.
   */
  ancestors(span: SpanRecord): SpanRecord[] {
    const found: SpanRecord[] = [];
    for (let current = this.parent(span); current; current = this.parent(current)) {
      // More ancestors than spans: the chain loops. Only then is what was passed worth recording.
      if (found.length === this.spans.length) return this.#ancestorsUpToCycle(span);
      found.push(current);
    }
    return found;
  }

  /** `ancestors(span).length`, without building the list. */
  depth(span: SpanRecord): number {
    let depth = 0;
    for (let current = this.parent(span); current; current = this.parent(current)) {
      if (depth === this.spans.length) return this.#ancestorsUpToCycle(span).length;
      depth++;
    }
    return depth;
  }

  /**
   * `ancestors(span).find(test)`, without building the list. In a loop of parent ids every
   * ancestor comes round again once all were passed, or the walk comes back to the span itself:
   * either way nothing new is left to test.
   */
  nearestAncestor(span: SpanRecord, test: (ancestor: SpanRecord) => boolean): SpanRecord | undefined {
    let steps = 0;
    for (let current = this.parent(span); current; current = this.parent(current)) {
      if (current === span || steps === this.spans.length) return undefined;
      if (test(current)) return current;
      steps++;
    }
    return undefined;
  }

  #ancestorsUpToCycle(span: SpanRecord): SpanRecord[] {
    const found: SpanRecord[] = [];
    const seen = new Set<string>([span.spanId]);
    let current = this.parent(span);
    while (current && !seen.has(current.spanId)) {
      found.push(current);
      seen.add(current.spanId);
      current = this.parent(current);
    }
    return found;
  }

  /**
   * The local root: a span without a parent in this trace (the earliest, if several). Spans
   * whose parent is missing count too, so a partial trace still has a root.
   */
  root(): SpanRecord | undefined {
    let best: SpanRecord | undefined;
    for (const span of this.spans) {
      if (this.parent(span) !== undefined) continue;
      if (!best || span.startTimeUnixNano < best.startTimeUnixNano) best = span;
    }
    return best ?? this.spans[0];
  }
}
