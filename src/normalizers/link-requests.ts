/**
 * Linking each tool call to the turn that asked for it: by call id, else by tool name and
 * arguments; and the calls a turn asked for that no span records. Part of assembly.
 */
import { isJsonObject, type JsonValue, jsonEqual } from '../model/json.js';
import { nestedDeeperThan, TOO_DEEP_TEXT } from '../model/json-depth.js';
import type { SpanRecord } from '../model/span-record.js';
import {
  type Assembly,
  type CallNode,
  newCall,
  type RunNode,
  TURN_MARK,
  type TurnNode,
} from './assembly-nodes.js';
import type { RequestedCall, ToolCallDraft } from './convention.js';

/** A call a turn asked for: the turn and the request's position in its `requested`. */
type TurnRequest = { turn: TurnNode; index: number };

/** Up to this many requests in a trace, a call's are found by going through them all: no index is built. */
const SCAN_REQUESTS = 64;

/** Tool spans with a call id: the request carrying that id (see {@link LatestRequest}). */
export function linkByCallId(assembly: Assembly): void {
  let count = 0;
  for (const turn of assembly.turns) count += turn.draft.requested.length;
  if (count === 0) return;
  if (count <= SCAN_REQUESTS) {
    for (const node of assembly.calls) {
      const callId = node.draft.callId;
      if (callId === undefined) continue;
      const pick = new LatestRequest(node, assembly.resolution);
      for (const turn of assembly.turns) {
        const requested = turn.draft.requested;
        for (let index = 0; index < requested.length; index++)
          if ((requested[index] as RequestedCall).callId === callId) pick.consider(turn, index);
      }
      pick.link();
    }
    return;
  }
  const requests = new Map<string, TurnRequest[]>();
  for (const turn of assembly.turns) {
    const requested = turn.draft.requested;
    for (let index = 0; index < requested.length; index++) {
      const callId = (requested[index] as RequestedCall).callId;
      if (callId === undefined) continue;
      const list = requests.get(callId);
      if (list) list.push({ turn, index });
      else requests.set(callId, [{ turn, index }]);
    }
  }
  for (const node of assembly.calls) {
    if (node.draft.callId === undefined) continue;
    const candidates = requests.get(node.draft.callId);
    if (!candidates) continue;
    const pick = new LatestRequest(node, assembly.resolution);
    for (const { turn, index } of candidates) pick.consider(turn, index);
    pick.link();
  }
}

/**
 * Among the requests carrying a call's id that no call has taken yet (offered in turn order), the
 * one its span answered: in the same run, from the latest turn that started before the span did;
 * else the first in the same run; else the first. Providers that number calls per turn (`call_0`
 * in every turn) reuse ids, and the first request with the id would be another turn's.
 */
class LatestRequest {
  readonly #limit: bigint | undefined;
  #best: TurnNode | undefined;
  #bestIndex = -1;
  #firstInRun: TurnNode | undefined;
  #firstInRunIndex = -1;
  #first: TurnNode | undefined;
  #firstIndex = -1;

  constructor(
    private readonly node: CallNode,
    resolution: bigint,
  ) {
    const start = node.span?.startTimeUnixNano;
    this.#limit = start === undefined ? undefined : start + resolution;
  }

  consider(turn: TurnNode, index: number): void {
    if (turn.issued[index]) return;
    if (this.#first === undefined) {
      this.#first = turn;
      this.#firstIndex = index;
    }
    if (turn.run !== this.node.run) return;
    if (this.#firstInRun === undefined) {
      this.#firstInRun = turn;
      this.#firstInRunIndex = index;
    }
    const started = turn.span.startTimeUnixNano;
    if (this.#limit !== undefined && started > this.#limit) return;
    if (this.#best === undefined || started > this.#best.span.startTimeUnixNano) {
      this.#best = turn;
      this.#bestIndex = index;
    }
  }

  /** Links the call to the request picked, if any. */
  link(): void {
    if (this.#best) link(this.node, this.#best, this.#bestIndex);
    else if (this.#firstInRun) link(this.node, this.#firstInRun, this.#firstInRunIndex);
    else if (this.#first) link(this.node, this.#first, this.#firstIndex);
  }
}

/** How far back from the latest eligible request a span without a call id looks (bounds the work on huge traces). */
const LINK_WINDOW = 256;

/**
 * Tool spans without a call id (OpenInference bridges, LangChain, decorators): the turn that
 * asked for a call of that tool, in the same run, started before it; equal arguments first,
 * then a turn under the same parent span, then the latest such turn. Requests are indexed by run
 * and tool in turn order, and each span looks back from the latest turn that started before it.
 */
export function linkByNameAndArguments(assembly: Assembly): void {
  // Most traces have a call id on every tool span: nothing left to link, so no index to build.
  if (assembly.calls.every((node) => node.issuer || !node.span)) return;
  const open = new Map<RunNode, Map<string, TurnRequest[]>>();
  for (const run of assembly.runs) {
    const byTool = new Map<string, TurnRequest[]>();
    for (const turn of run.turns) {
      const requested = turn.draft.requested;
      for (let index = 0; index < requested.length; index++) {
        if (turn.issued[index]) continue;
        const tool = (requested[index] as RequestedCall).tool;
        const list = byTool.get(tool);
        if (list) list.push({ turn, index });
        else byTool.set(tool, [{ turn, index }]);
      }
    }
    open.set(run, byTool);
  }
  for (const node of assembly.calls) {
    if (node.issuer || !node.span) continue;
    const best = bestOpenRequest(
      open.get(node.run)?.get(node.draft.tool) ?? [],
      node,
      node.span,
      assembly.resolution,
    );
    if (best) link(node, best.turn, best.index);
    else linkToEnclosingTurn(assembly, node);
  }
}

function bestOpenRequest(
  list: readonly TurnRequest[],
  node: CallNode,
  span: SpanRecord,
  resolution: bigint,
): TurnRequest | undefined {
  // The last request whose turn started no later than the span (the list is in turn order).
  const limit = span.startTimeUnixNano + resolution;
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((list[middle] as TurnRequest).turn.span.startTimeUnixNano <= limit) low = middle + 1;
    else high = middle;
  }
  let best: (TurnRequest & { score: number }) | undefined;
  for (let at = low - 1, steps = 0; at >= 0 && steps < LINK_WINDOW; at--, steps++) {
    const { turn, index } = list[at] as TurnRequest;
    const request = turn.draft.requested[index];
    if (!request || turn.issued[index]) continue;
    if (request.callId !== undefined && node.draft.callId !== undefined) continue;
    const score =
      argumentScore(request.args, node.draft.args) * 2 +
      (turn.span.parentSpanId === span.parentSpanId ? 1 : 0);
    // Looking back: on a tie the later turn (met first) wins; within one turn, the earlier request
    // (requests and tool spans come in the same order when nothing else tells them apart).
    if (!best || score > best.score || (score === best.score && turn === best.turn && index < best.index)) {
      best = { turn, index, score };
    }
  }
  return best;
}

/**
 * A tool span nested in a turn's span that matches none of its requests (the turn's output was
 * not recorded) was still issued by that turn (Vercel legacy nests tool spans in the model call).
 * It goes next after the last node the turn issued so far: where a request no span answered is
 * left, that place is taken, and the request is not a call of its own as well.
 */
function linkToEnclosingTurn(assembly: Assembly, node: CallNode): void {
  if (node.spanIndex === -1) return;
  const ancestor = assembly.tree.nearestAncestor(node.spanIndex, assembly.marks, TURN_MARK);
  const turn = ancestor === -1 ? precedingSilentTurn(node) : assembly.turnOfSpan[ancestor];
  if (!turn) return;
  node.issuer = turn;
  let last = turn.issued.length - 1;
  while (last >= 0 && turn.issued[last] === undefined) last--;
  turn.issued[last + 1] = node;
}

/**
 * A tool span beside the turns of its run (same parent span) that matches no request: issued by
 * the latest turn of the run that ended before it started, when that turn's output was recorded
 * with its roles only (smolagents through OpenInference) and it shares the span's parent. An
 * agent loop runs the calls of the generation just before; a turn whose output was not read, or
 * was read and asked for nothing, issued nothing.
 */
function precedingSilentTurn(node: CallNode): TurnNode | undefined {
  const span = node.span;
  if (!span) return undefined;
  // The latest turn that ended by the time the span started (smolagents starts the tool at the
  // instant the generation ends, and the next generation at the instant the tool ends).
  let latest: TurnNode | undefined;
  for (const turn of node.run.turns) {
    const end = turn.span.endTimeUnixNano;
    if (end !== undefined && end <= span.startTimeUnixNano) latest = turn;
  }
  if (!latest || latest.span.parentSpanId !== span.parentSpanId) return undefined;
  const draft = latest.draft;
  return draft.outputOnlyRoles && draft.requested.length === 0 ? latest : undefined;
}

function argumentScore(a: ToolCallDraft['args'], b: ToolCallDraft['args']): number {
  if (!a.captured || !b.captured) return 1;
  if (isCollapsedForm(b.value, a.value)) return 2;
  return jsonEqual(a.value, b.value) ? 2 : 0;
}

/**
 * Some tracers record a one-key argument object as its bare string value (OpenInference's
 * LangChain tracer: `{order_id: "A-1001"}` becomes `"A-1001"`); the tool got the object.
 */
function isCollapsedForm(recorded: JsonValue, requested: JsonValue): boolean {
  if (typeof recorded !== 'string' || !isJsonObject(requested)) return false;
  const values = Object.values(requested);
  return values.length === 1 && values[0] === recorded;
}

function link(node: CallNode, turn: TurnNode, index: number): void {
  node.issuer = turn;
  node.requestIndex = index;
  turn.issued[index] = node;
  const request = turn.draft.requested[index];
  if (!request) return;
  if (node.draft.callId === undefined && request.callId !== undefined) node.draft.callId = request.callId;
  if (node.draft.handoff === undefined && request.handoff !== undefined) node.draft.handoff = request.handoff;
  const recorded = node.draft.args;
  if (!recorded.captured) {
    node.draft.args = request.args;
    return;
  }
  const asked = request.args;
  if (!asked.captured || asked.parseError !== undefined) return;
  if (isCollapsedForm(recorded.value, asked.value)) {
    node.draft.args = asked;
    return;
  }
  // Two readings of one call that disagree (a tracer's repr of the arguments, a wrapper around
  // them, a framework's rewrite): the structured one the model asked for is read, and the span's
  // own is kept for `toolpath inspect` to show. One too deep to read stays, to be said so.
  if (recorded.value === TOO_DEEP_TEXT || nestedDeeperThan(recorded.value)) return;
  if (recorded.parseError !== undefined || !jsonEqual(recorded.value, asked.value)) {
    node.recordedArgs = recorded;
    node.draft.args = asked;
  }
}

/** A call the model asked for that no tool span records (untraced tools, server-side tools) is still a call. */
export function addRequestOnlyCalls(assembly: Assembly): void {
  for (const turn of assembly.turns) {
    const requested = turn.draft.requested;
    for (let index = 0; index < requested.length; index++) {
      if (turn.issued[index]) continue;
      const request = requested[index] as RequestedCall;
      const draft = { tool: request.tool } as ToolCallDraft;
      if (request.callId !== undefined) draft.callId = request.callId;
      draft.args = request.args;
      draft.result = request.ended ? request.ended.result : { captured: false };
      draft.outcome = request.ended ? request.ended.outcome : { status: 'no_result' };
      if (turn.run.name) draft.agentName = turn.run.name;
      if (request.mcpServer) draft.mcpServer = request.mcpServer;
      if (request.handoff) draft.handoff = request.handoff;
      draft.convention = turn.draft.convention;
      const node = newCall(undefined, -1, draft, turn.run);
      node.issuer = turn;
      node.requestIndex = index;
      turn.issued[index] = node;
      turn.run.calls.push(node);
      assembly.calls.push(node);
    }
  }
}
