/**
 * The assembled nodes finished into the model's objects: ToolCall, Turn, AgentRun and the
 * trajectory's root. Built field by field in their usual key order (spreading optional fields
 * into a literal takes a slow path in V8, and these are built for every call, turn and run).
 */
import type { SpanRecord } from '../model/span-record.js';
import type { AgentRun, ToolCall, TrajectoryRoot, Turn } from '../model/trajectory.js';
import type { Assembly, CallNode, RunNode, TurnNode } from './assembly-nodes.js';

/**
 * Finishes a call node into the model's ToolCall. Built field by field: spreading the draft,
 * whose shape changed while linking, was a fifth of normalization time.
 */
export function toToolCall(node: CallNode): ToolCall {
  const { draft, span } = node;
  const agentName = draft.agentName ?? node.run.name;
  const issuer = node.issuer;
  // A call with everything recorded (the usual one) in one literal: fields added one by one go
  // to a separate property store, regrown as they come.
  if (
    draft.callId !== undefined &&
    agentName !== undefined &&
    issuer &&
    span?.parentSpanId !== undefined &&
    span.endTimeUnixNano !== undefined &&
    !node.decisions &&
    !draft.handoff &&
    !draft.mcpServer
  ) {
    return {
      id: node.id,
      tool: draft.tool,
      args: draft.args,
      result: draft.result,
      outcome: draft.outcome,
      convention: draft.convention,
      callId: draft.callId,
      agentName,
      turnId: issuer.id,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId,
      startTimeUnixNano: span.startTimeUnixNano,
      endTimeUnixNano: span.endTimeUnixNano,
    };
  }
  const call: ToolCall = {
    id: node.id,
    tool: draft.tool,
    args: draft.args,
    result: draft.result,
    outcome: draft.outcome,
    convention: draft.convention,
  };
  if (draft.callId !== undefined) call.callId = draft.callId;
  if (agentName !== undefined) call.agentName = agentName;
  if (issuer) call.turnId = issuer.id;
  if (span) {
    call.spanId = span.spanId;
    if (span.parentSpanId !== undefined) call.parentSpanId = span.parentSpanId;
    call.startTimeUnixNano = span.startTimeUnixNano;
    if (span.endTimeUnixNano !== undefined) call.endTimeUnixNano = span.endTimeUnixNano;
  }
  if (node.decisions) call.decisions = node.decisions;
  if (draft.handoff) {
    call.handoff = { ...draft.handoff };
    if (node.handoffTarget) call.handoff.targetRunId = node.handoffTarget.id;
  }
  if (draft.mcpServer) call.mcpServer = draft.mcpServer;
  if (draft.mcpAnnotations) call.mcpAnnotations = draft.mcpAnnotations;
  return call;
}

export function toTurn(turn: TurnNode): Turn {
  const { model, usage, answer } = turn.draft;
  // The usual turn, with model and usage, in one literal (as for calls, see toToolCall).
  if (model && usage) {
    if (answer === undefined)
      return {
        id: turn.id,
        spanId: turn.span.spanId,
        runId: turn.run.id,
        model,
        usage,
        issued: idsOf(turn.issued),
        consumed: turn.consumed ?? [],
      };
    return {
      id: turn.id,
      spanId: turn.span.spanId,
      runId: turn.run.id,
      model,
      usage,
      answer,
      issued: idsOf(turn.issued),
      consumed: turn.consumed ?? [],
    };
  }
  const out = { id: turn.id, spanId: turn.span.spanId, runId: turn.run.id } as Turn;
  if (turn.draft.model) out.model = turn.draft.model;
  if (turn.draft.usage) out.usage = turn.draft.usage;
  if (answer !== undefined) out.answer = answer;
  out.issued = idsOf(turn.issued);
  out.consumed = turn.consumed ?? [];
  return out;
}

/** A node's id (for mapping without a closure per list). */
const idOf = (node: { id: string }): string => node.id;

/** The ids of the nodes, skipping requests no node took: counted first, so the array is made at its size. */
function idsOf(nodes: readonly (CallNode | undefined)[]): string[] {
  let count = 0;
  for (const node of nodes) if (node !== undefined) count++;
  const ids: string[] = new Array(count);
  let k = 0;
  for (const node of nodes) if (node !== undefined) ids[k++] = node.id;
  return ids;
}

export function toAgentRun(run: RunNode): AgentRun {
  const out = { id: run.id } as AgentRun;
  if (run.name) out.name = run.name;
  if (run.span) out.spanId = run.span.spanId;
  if (run.parent) out.parentRunId = run.parent.id;
  if (run.parentCall) out.parentCallId = run.parentCall.id;
  if (run.handoffFrom) out.handoffCallId = run.handoffFrom.id;
  out.turns = run.turns.map(idOf);
  out.calls = run.calls.map(idOf);
  return out;
}

export function rootOf(assembly: Assembly): TrajectoryRoot | undefined {
  const root = assembly.tree.root();
  if (!root) return undefined;
  const agentName = rootAgentName(assembly.runs, root);
  const out: TrajectoryRoot = { name: root.name, attributes: root.attributes, spanId: root.spanId };
  if (agentName) out.agentName = agentName;
  out.startTimeUnixNano = root.startTimeUnixNano;
  if (root.endTimeUnixNano !== undefined) out.endTimeUnixNano = root.endTimeUnixNano;
  return out;
}

/** The root span's agent's name, else the first named agent's. */
function rootAgentName(runs: readonly RunNode[], root: SpanRecord): string | undefined {
  for (const run of runs) if (run.span === root && run.name !== undefined) return run.name;
  for (const run of runs) if (run.name !== undefined) return run.name;
  return undefined;
}
