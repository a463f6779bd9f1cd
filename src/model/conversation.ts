/**
 * A conversation: every trace that carries one conversation id, judged as one trajectory. Its
 * calls are the cumulative list of every trace's calls; inside a trace they keep that trace's
 * order, and a trace that started after another ended comes after all of it
 * (conversation-order.ts). Pure: the same traces give the same trajectory.
 */
import { ConversationOrder, type JoinedCall, type TracePlace } from './conversation-order.js';
import {
  type AgentRun,
  type ToolCall,
  Trajectory,
  type TrajectoryIssue,
  type TrajectoryRoot,
  type Turn,
} from './trajectory.js';

/**
 * Joins the traces of one conversation into one trajectory. `traces` in any order: they are
 * listed by start time. Its `traceId` is the latest trace's (the one whose evaluation span gets
 * the findings); `traceIds` lists them all, and `traceIdOf` says where each call came from. An id
 * (call, turn, run) that two traces both use is prefixed with its trace id in the joined one.
 */
export function joinConversation(conversationId: string, traces: readonly Trajectory[]): Trajectory {
  if (traces.length === 0) throw new Error(`conversation ${conversationId}: no traces to join`);
  const resolution = clockResolution(traces);
  const listed = traces
    .map((trajectory, index) => ({ trajectory, index, extent: extentOf(trajectory, resolution) }))
    .sort((a, b) => compareStarts(a.extent.start, b.extent.start) || a.index - b.index);
  const clashes = {
    calls: sharedIds(listed.map(({ trajectory }) => trajectory.calls.map((call) => call.id))),
    turns: sharedIds(listed.map(({ trajectory }) => trajectory.turns.map((turn) => turn.id))),
    runs: sharedIds(listed.map(({ trajectory }) => trajectory.agents.map((run) => run.id))),
  };
  const places: TracePlace[] = [];
  const joined: JoinedCall[] = [];
  const traceIds: string[] = [];
  const calls: ToolCall[] = [];
  const turns: Turn[] = [];
  const agents: AgentRun[] = [];
  const issues: TrajectoryIssue[] = [];
  let spanCount = 0;
  for (const [trace, { trajectory, extent }] of listed.entries()) {
    places.push({ order: trajectory.causalOrder, ...extent });
    traceIds.push(trajectory.traceId);
    const prefix = `${trajectory.traceId}/`;
    const callId = (id: string) => (clashes.calls.has(id) ? prefix + id : id);
    const turnId = (id: string) => (clashes.turns.has(id) ? prefix + id : id);
    const runId = (id: string) => (clashes.runs.has(id) ? prefix + id : id);
    for (const inner of trajectory.calls) {
      const call = copyCall(inner, callId, turnId, runId);
      joined.push({ trace, inner, rank: calls.length });
      calls.push(call);
    }
    for (const turn of trajectory.turns) {
      const copy: Turn = { ...turn, id: turnId(turn.id), issued: turn.issued.map(callId) };
      copy.consumed = turn.consumed.map(callId);
      if (turn.runId !== undefined) copy.runId = runId(turn.runId);
      turns.push(copy);
    }
    for (const run of trajectory.agents) agents.push(copyRun(run, callId, turnId, runId));
    for (const issue of trajectory.issues) issues.push(issue);
    spanCount += trajectory.spanCount;
  }
  const latest = listed[listed.length - 1] as (typeof listed)[number];
  const order = new ConversationOrder(places, calls, joined);
  const traceOfCall = (call: ToolCall) => {
    const rank = order.listingRankOfCall(call);
    return rank === -1 ? undefined : traceIds[(joined[rank] as JoinedCall).trace];
  };
  const root = conversationRoot(listed.map(({ trajectory }) => trajectory));
  return new Trajectory({
    traceId: latest.trajectory.traceId,
    calls,
    callsInOrder: true,
    depthBounded: true,
    order,
    turns,
    agents,
    issues,
    spanCount,
    ...(root && { root }),
    conversationId,
    conversation: { traceIds, traceOf: traceOfCall },
  });
}

/** The ids that appear in more than one of the lists. */
function sharedIds(lists: readonly (readonly string[])[]): Set<string> {
  const seenIn = new Map<string, number>();
  const shared = new Set<string>();
  for (const [list, ids] of lists.entries()) {
    for (const id of ids) {
      const first = seenIn.get(id);
      if (first === undefined) seenIn.set(id, list);
      else if (first !== list) shared.add(id);
    }
  }
  return shared;
}

type Rename = (id: string) => string;

/** A copy of the call for the joined trajectory (its own object: the trace's keeps its order's stamp). */
function copyCall(call: ToolCall, callId: Rename, turnId: Rename, runId: Rename): ToolCall {
  const copy: ToolCall = { ...call, id: callId(call.id) };
  if (call.turnId !== undefined) copy.turnId = turnId(call.turnId);
  if (call.handoff?.targetRunId !== undefined)
    copy.handoff = { ...call.handoff, targetRunId: runId(call.handoff.targetRunId) };
  return copy;
}

function copyRun(run: AgentRun, callId: Rename, turnId: Rename, runId: Rename): AgentRun {
  const copy: AgentRun = {
    ...run,
    id: runId(run.id),
    turns: run.turns.map(turnId),
    calls: run.calls.map(callId),
  };
  if (run.parentRunId !== undefined) copy.parentRunId = runId(run.parentRunId);
  if (run.parentCallId !== undefined) copy.parentCallId = callId(run.parentCallId);
  if (run.handoffCallId !== undefined) copy.handoffCallId = callId(run.handoffCallId);
  return copy;
}

/** A trace's time span as the conversation orders it. */
function extentOf(trajectory: Trajectory, resolution: bigint): Omit<TracePlace, 'order'> {
  const root = trajectory.root;
  let start = root?.startTimeUnixNano;
  let end = root?.endTimeUnixNano;
  // A root span still open: the trace has not ended, so nothing comes after it yet.
  const open = root?.startTimeUnixNano !== undefined && root.endTimeUnixNano === undefined;
  for (const call of trajectory.calls) {
    const callStart = call.startTimeUnixNano;
    if (callStart !== undefined && (start === undefined || callStart < start)) start = callStart;
    const callEnd = call.endTimeUnixNano;
    if (callEnd !== undefined && (end === undefined || callEnd > end)) end = callEnd;
  }
  if (start === undefined) return { start: undefined, effectiveEnd: undefined };
  if (open || end === undefined) return { start, effectiveEnd: undefined };
  const rounded = end - (end % resolution);
  return { start, effectiveEnd: rounded > start ? rounded : start + 1n };
}

/**
 * 1 ms when every start time of the traces is a whole millisecond (OTel JS SDKs start spans
 * from Date.now()), else 1 ns: an end is compared with a later start at the start clock's grain.
 */
function clockResolution(traces: readonly Trajectory[]): bigint {
  let starts = 0;
  for (const trajectory of traces) {
    const times = [
      trajectory.root?.startTimeUnixNano,
      ...trajectory.calls.map((call) => call.startTimeUnixNano),
    ];
    for (const time of times) {
      if (time === undefined) continue;
      if (time % 1_000_000n !== 0n) return 1n;
      starts++;
    }
  }
  return starts < 2 ? 1n : 1_000_000n;
}

function compareStarts(a: bigint | undefined, b: bigint | undefined): number {
  if (a === b) return 0;
  // A trace without times orders nothing: listed last.
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return a < b ? -1 : 1;
}

/** The first trace's root, stretched over the whole conversation. */
function conversationRoot(traces: readonly Trajectory[]): TrajectoryRoot | undefined {
  const first = traces.find((trajectory) => trajectory.root !== undefined)?.root;
  if (!first) return undefined;
  const root: TrajectoryRoot = { ...first };
  let end: bigint | undefined;
  let open = false;
  for (const trajectory of traces) {
    const own = trajectory.root;
    if (!own) continue;
    if (
      own.startTimeUnixNano !== undefined &&
      (root.startTimeUnixNano === undefined || own.startTimeUnixNano < root.startTimeUnixNano)
    )
      root.startTimeUnixNano = own.startTimeUnixNano;
    if (own.endTimeUnixNano === undefined) open = true;
    else if (end === undefined || own.endTimeUnixNano > end) end = own.endTimeUnixNano;
  }
  if (open || end === undefined) delete root.endTimeUnixNano;
  else root.endTimeUnixNano = end;
  return root;
}
