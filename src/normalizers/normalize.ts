/** From spans to Trajectories: group spans by trace, then assemble each trace. */
import type { SpanRecord } from '../model/span-record.js';
import type { Trajectory } from '../model/trajectory.js';
import { assembleTrajectory } from './assemble.js';

/** Groups spans by trace id, keeping each trace's spans in arrival order. */
export function groupByTrace(spans: Iterable<SpanRecord>): Map<string, SpanRecord[]> {
  const traces = new Map<string, SpanRecord[]>();
  for (const span of spans) {
    const list = traces.get(span.traceId);
    if (list) list.push(span);
    else traces.set(span.traceId, [span]);
  }
  return traces;
}

/**
 * Builds the Trajectory of one trace, or undefined when no convention claims any span in it
 * (an ordinary HTTP or database trace: nothing to evaluate).
 */
export function normalizeTrace(traceId: string, spans: readonly SpanRecord[]): Trajectory | undefined {
  return assembleTrajectory(traceId, spans);
}

/** Builds the Trajectory of every trace among these spans that an agent convention claims. */
export function normalizeSpans(spans: Iterable<SpanRecord>): Trajectory[] {
  const out: Trajectory[] = [];
  for (const [traceId, traceSpans] of groupByTrace(spans)) {
    const trajectory = normalizeTrace(traceId, traceSpans);
    if (trajectory) out.push(trajectory);
  }
  return out;
}
