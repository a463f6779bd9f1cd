/**
 * Turns and calls left outside every agent run because their span chain stops at a parent the
 * trace does not hold (an exporter that kept only some spans): said, not guessed. Part of assembly.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { Assembly } from './assembly-nodes.js';
import type { SpanTree } from './span-tree.js';

/** The issue kind for turns and calls whose run is unknown because an ancestor span is missing. */
export const PARENT_MISSING = 'span.parent_missing';

/**
 * When the trace has an agent run but some turns or calls sit in no run because their chain of
 * parents breaks off, one issue names their spans: which run they belong to is not recorded, so
 * they stay where the spans put them (the trace's own run) rather than in a run picked by time.
 */
export function reportDetachedSpans(assembly: Assembly): void {
  const traceRun = assembly.runs.find((run) => run.spanIndex === -1);
  if (!traceRun || !assembly.runs.some((run) => run.spanIndex !== -1)) return;
  const detached: string[] = [];
  const { tree, nodeOfSpan, turnOfSpan } = assembly;
  for (let index = 0; index < tree.spans.length; index++) {
    const node = nodeOfSpan[index] ?? turnOfSpan[index];
    if (node?.run === traceRun && chainBreaksOff(tree, index)) {
      detached.push((tree.spans[index] as SpanRecord).spanId);
    }
  }
  if (detached.length === 0) return;
  assembly.issues.push({
    kind: PARENT_MISSING,
    message: `${detached.length} turn and call spans lie under parent spans the trace does not hold, so no agent run holds them (first: span ${detached[0]})`,
    spanIds: detached,
  });
}

/** Whether the outermost ancestor of the span (itself included) names a parent absent from the trace. */
function chainBreaksOff(tree: SpanTree, index: number): boolean {
  let current = index;
  // depth() is bounded on cycles: walk no further than it counts.
  for (let steps = tree.depth(index); steps > 0; steps--) current = tree.parent(current);
  if (tree.parent(current) !== -1) return false;
  const parentId = tree.spans[current]?.parentSpanId;
  return parentId !== undefined && parentId !== '';
}
