/**
 * Pre-execution decisions (`gen_ai.tool.call.decision`: allow, deny, require_approval) put on the
 * calls they name: by call id, else by tool among the calls of the decision's agent run. A
 * decision naming a call no span or request records is still that call: the model asked for it.
 * A call denied or held for approval that no execution span records did not run: `not_executed`.
 * Part of assembly.
 */
import type { DecisionOutcome, ToolCallDecision } from '../model/trajectory.js';
import { AGENT_MARK, type Assembly, type CallNode, newCall, type RunNode } from './assembly-nodes.js';
import type { Convention, DecisionDraft, ToolCallDraft } from './convention.js';

const OUTCOMES: ReadonlySet<string> = new Set<DecisionOutcome>(['allow', 'deny', 'require_approval']);

/** The conventions of a list that read decisions, found once per list (lists are not changed once in use). */
const readersOf = new WeakMap<readonly Convention[], readonly Convention[]>();

/** Reads every span's decisions through the conventions and links each to its call. */
export function linkDecisions(assembly: Assembly, conventions: readonly Convention[]): void {
  let readers = readersOf.get(conventions);
  if (!readers) {
    readers = conventions.filter((convention) => convention.readDecisions !== undefined);
    readersOf.set(conventions, readers);
  }
  if (readers.length === 0) return;
  const spans = assembly.tree.spans;
  for (let index = 0; index < spans.length; index++) {
    const span = spans[index];
    if (!span || span.events.length === 0) continue;
    for (const convention of readers) {
      const drafts = convention.readDecisions?.(span);
      if (!drafts) continue;
      for (const draft of drafts) link(assembly, draft, index);
      break;
    }
  }
  for (const node of assembly.calls) if (node.decisions) settleOutcome(node);
}

function link(assembly: Assembly, draft: DecisionDraft, spanIndex: number): void {
  const span = assembly.tree.spans[spanIndex];
  const spanId = span?.spanId;
  if (!OUTCOMES.has(draft.outcome)) {
    assembly.issues.push({
      kind: 'decision.unreadable',
      message: `a tool call decision on span ${spanId} has outcome ${JSON.stringify(draft.outcome)}; expected allow, deny or require_approval`,
      spanIds: spanId ? [spanId] : [],
    });
    return;
  }
  const run = runOf(assembly, spanIndex);
  const node = decidedCall(assembly, draft, run) ?? callFromDecision(assembly, draft, run);
  if (!node) {
    assembly.issues.push({
      kind: 'decision.unlinked',
      message: `a ${draft.outcome} decision on span ${spanId} names no call id and no tool; it is not on any call`,
      spanIds: spanId ? [spanId] : [],
    });
    return;
  }
  const decision: ToolCallDecision = { outcome: draft.outcome as DecisionOutcome, time: draft.time };
  if (spanId) decision.spanId = spanId;
  if (node.decisions) node.decisions.push(decision);
  else node.decisions = [decision];
}

/** The agent run of the span that recorded the decision (its nearest agent span's run). */
function runOf(assembly: Assembly, spanIndex: number): RunNode | undefined {
  const agent =
    (assembly.marks[spanIndex] as number) & AGENT_MARK
      ? spanIndex
      : assembly.tree.nearestAncestor(spanIndex, assembly.marks, AGENT_MARK);
  for (const run of assembly.runs) if (run.spanIndex === agent) return run;
  return assembly.runs[0];
}

/**
 * The call a decision names: the one with its call id (in its run first); without an id, the
 * first call of its tool in its run, not decided yet, whose span did not start before the
 * decision (a decision comes before the execution it decides).
 */
function decidedCall(
  assembly: Assembly,
  draft: DecisionDraft,
  run: RunNode | undefined,
): CallNode | undefined {
  if (draft.callId !== undefined) {
    let other: CallNode | undefined;
    for (const node of assembly.calls) {
      if (node.draft.callId !== draft.callId) continue;
      if (node.run === run) return node;
      other ??= node;
    }
    return other;
  }
  if (draft.tool === undefined || !run) return undefined;
  for (const node of run.calls) {
    if (node.draft.tool !== draft.tool || node.decisions) continue;
    const start = node.span?.startTimeUnixNano;
    if (start === undefined || start + assembly.resolution > draft.time) return node;
  }
  return undefined;
}

/** A call only its decision records: the model asked for it, and nothing recorded more. */
function callFromDecision(
  assembly: Assembly,
  draft: DecisionDraft,
  run: RunNode | undefined,
): CallNode | undefined {
  if (draft.tool === undefined || !run) return undefined;
  const call: ToolCallDraft = {
    tool: draft.tool,
    args: { captured: false },
    result: { captured: false },
    outcome: { status: 'no_result' },
    convention: draft.convention,
  };
  if (draft.callId !== undefined) call.callId = draft.callId;
  if (run.name) call.agentName = run.name;
  const node = newCall(undefined, -1, call, run);
  run.calls.push(node);
  assembly.calls.push(node);
  return node;
}

/**
 * A call whose last decision denied it or held it for approval, and that no span of its own
 * records, was not executed. A call with a span ran (or started to): its span says how it ended.
 */
function settleOutcome(node: CallNode): void {
  const last = node.decisions?.[node.decisions.length - 1];
  if (!last || node.span || node.draft.outcome.status !== 'no_result') return;
  if (last.outcome === 'deny' || last.outcome === 'require_approval')
    node.draft.outcome = { status: 'not_executed' };
}
