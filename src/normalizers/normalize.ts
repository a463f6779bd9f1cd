/**
 * From spans to Trajectories: group spans by trace, let each convention claim its tool spans,
 * assign node ids and causal timing. Pure: the same spans give the same trajectory.
 */
import type { SpanRecord } from '../model/span-record.js';
import { type CallTiming, type ToolCall, Trajectory, type TrajectoryIssue } from '../model/trajectory.js';
import type { ToolCallDraft } from './convention.js';
import { genAiAgentName, isGenAiToolSpan, readGenAiToolCall } from './otel-genai.js';
import { SpanTree } from './span-tree.js';

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

/** Reads the tool call a span records, or undefined when no known convention claims it. */
function readToolCall(span: SpanRecord): ToolCallDraft | undefined {
  if (isGenAiToolSpan(span)) return readGenAiToolCall(span);
  return undefined;
}

/**
 * Builds the Trajectory of one trace, or undefined when no convention claims any span in it
 * (an ordinary HTTP/DB trace: nothing to evaluate).
 */
export function normalizeTrace(traceId: string, spans: readonly SpanRecord[]): Trajectory | undefined {
  const tree = new SpanTree(spans);
  const found: { span: SpanRecord; draft: ToolCallDraft }[] = [];
  for (const span of tree.spans) {
    const draft = readToolCall(span);
    if (draft) found.push({ span, draft });
  }
  if (found.length === 0 && !tree.spans.some((span) => genAiAgentName(span) !== undefined)) return undefined;

  const issues: TrajectoryIssue[] = [...tree.issues];
  const idCounts = new Map<string, number>();
  for (const { draft } of found) {
    if (draft.callId !== undefined) idCounts.set(draft.callId, (idCounts.get(draft.callId) ?? 0) + 1);
  }
  for (const [callId, count] of idCounts) {
    if (count > 1) {
      issues.push({
        kind: 'call.duplicate_id',
        message: `call id ${callId} is used by ${count} tool spans; they are told apart by span id`,
        spanIds: found.filter(({ draft }) => draft.callId === callId).map(({ span }) => span.spanId),
      });
    }
  }

  const calls: ToolCall[] = [];
  const timing = new Map<string, CallTiming>();
  for (const { span, draft } of found) {
    const id =
      draft.callId !== undefined && idCounts.get(draft.callId) === 1 ? draft.callId : `span:${span.spanId}`;
    if (draft.args.captured && draft.args.parseError !== undefined) {
      issues.push({
        kind: 'arguments.unparsable',
        message: `arguments of ${draft.tool} (span ${span.spanId}) are not valid JSON: ${draft.args.parseError}`,
        spanIds: [span.spanId],
      });
    }
    calls.push({
      ...draft,
      id,
      agentName: draft.agentName ?? nearestAgentName(tree, span),
      spanId: span.spanId,
      ...(span.parentSpanId !== undefined && { parentSpanId: span.parentSpanId }),
      startTimeUnixNano: span.startTimeUnixNano,
      ...(span.endTimeUnixNano !== undefined && { endTimeUnixNano: span.endTimeUnixNano }),
    });
    // Without turns (this normalizer's first version), a result is known from the moment the
    // tool span ended; a call with no result never orders anything after it.
    timing.set(id, {
      issuedAt: span.startTimeUnixNano,
      ...(draft.outcome.status !== 'no_result' && { completedAt: span.endTimeUnixNano }),
    });
  }

  const root = tree.root();
  return new Trajectory({
    traceId,
    calls,
    timing,
    issues,
    spanCount: tree.spans.length,
    ...(root && {
      root: {
        name: root.name,
        spanId: root.spanId,
        agentName: genAiAgentName(root) ?? firstAgentName(tree.spans),
        startTimeUnixNano: root.startTimeUnixNano,
        ...(root.endTimeUnixNano !== undefined && { endTimeUnixNano: root.endTimeUnixNano }),
      },
    }),
  });
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

function nearestAgentName(tree: SpanTree, span: SpanRecord): string | undefined {
  for (const ancestor of tree.ancestors(span)) {
    const name = genAiAgentName(ancestor);
    if (name !== undefined) return name;
  }
  return undefined;
}

function firstAgentName(spans: readonly SpanRecord[]): string | undefined {
  for (const span of spans) {
    const name = genAiAgentName(span);
    if (name !== undefined) return name;
  }
  return undefined;
}
