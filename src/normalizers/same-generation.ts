/**
 * One LLM generation recorded by several conventions at once is one turn: Google ADK's `call_llm`
 * around its `generate_content` span around OpenLLMetry's `openai.chat`, or pydantic-ai's MCP
 * sampling model around the client's own `chat` span. The inner span is the same model call seen
 * from closer to the provider; nothing else nests a turn's span directly in another's (a model
 * called by a tool sits under the tool's span, a sub-agent's under its agent span).
 *
 * The provider's layer does not always nest: its client span may start a trace branch of its own
 * (a sibling under the root, when the framework ran the call in another thread). Such a span is
 * still the same generation when it lies within the framework's turn in time, comes from another
 * instrumentation scope, sits under no call the framework's turn is not under, and says the same
 * thing: the same requests, or the same answer. Part of assembly, as merging a tool call seen
 * twice is.
 */
import { jsonEqual } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import { CALL_MARK, type TurnNode } from './assembly-nodes.js';
import type { RequestedCall, TurnDraft } from './convention.js';
import type { SpanTree } from './span-tree.js';

/**
 * Folds the reading of a nested span of the same generation into the outer turn. The outer span
 * is what the agent framework saw; the inner one fills what it did not record (requests with
 * their ids, the results shown, model, usage, the answer).
 */
export function mergeSameGeneration(turn: TurnNode, inner: TurnDraft, span: SpanRecord): void {
  if (turn.innerSpans) turn.innerSpans.push(span);
  else turn.innerSpans = [span];
  const draft = turn.draft;
  if (draft.requested.length === 0 && inner.requested.length > 0) {
    draft.requested = inner.requested;
    turn.issued = new Array(inner.requested.length).fill(undefined);
  } else if (inner.requested.length > 0 && !fillRequests(draft.requested, inner.requested)) {
    // Two readings of one generation that disagree: neither is dropped in silence.
    const tools = inner.requested.map((request) => request.tool).join(', ');
    const unread = `span ${span.spanId} records the same generation asking for ${tools}, which this span's reading does not show`;
    draft.unreadRequests = [...(draft.unreadRequests ?? []), unread];
  }
  if (draft.shown === undefined || (draft.shown.length === 0 && (inner.shown?.length ?? 0) > 0))
    draft.shown = inner.shown;
  if (inner.historyLength > draft.historyLength) draft.historyLength = inner.historyLength;
  if (draft.model === undefined && inner.model !== undefined) draft.model = inner.model;
  if (draft.usage === undefined && inner.usage !== undefined) draft.usage = inner.usage;
  if (draft.answer === undefined && inner.answer !== undefined) draft.answer = inner.answer;
  if (inner.unreadRequests) draft.unreadRequests = [...(draft.unreadRequests ?? []), ...inner.unreadRequests];
}

/**
 * Request by request, where both list the same tools: the id and arguments the outer one lacks.
 * False when they do not list the same tools.
 */
function fillRequests(outer: RequestedCall[], inner: readonly RequestedCall[]): boolean {
  if (outer.length !== inner.length) return false;
  for (let k = 0; k < outer.length; k++) if (outer[k]?.tool !== inner[k]?.tool) return false;
  for (let k = 0; k < outer.length; k++) {
    const mine = outer[k] as RequestedCall;
    const theirs = inner[k] as RequestedCall;
    if (mine.callId === undefined && theirs.callId !== undefined) mine.callId = theirs.callId;
    if (!mine.args.captured && theirs.args.captured) mine.args = theirs.args;
  }
  return true;
}

/**
 * Folds each turn that is another layer's record of a turn it lies within (see the header) into
 * that turn, outermost first; removes it from `turns` and its run, and points its span's entry of
 * `turnOfSpan` at the turn it joined. `turnIndex[k]` is the span position of `turns[k]`.
 */
export function foldSameGenerations(
  tree: SpanTree,
  marks: readonly number[],
  turns: TurnNode[],
  turnIndex: number[],
  turnOfSpan: (TurnNode | undefined)[],
): void {
  if (turns.length < 2 || !severalScopes(turns)) return;
  // By start, the longer first on a tie: a container comes before what it contains.
  const order = turns.map((_, k) => k);
  order.sort((a, b) => {
    const x = (turns[a] as TurnNode).span;
    const y = (turns[b] as TurnNode).span;
    if (x.startTimeUnixNano !== y.startTimeUnixNano)
      return x.startTimeUnixNano < y.startTimeUnixNano ? -1 : 1;
    const xEnd = endOf(x);
    const yEnd = endOf(y);
    return xEnd > yEnd ? -1 : xEnd < yEnd ? 1 : a - b;
  });
  const folded = new Set<TurnNode>();
  // Turns still open at the current start: few at a time, as generations seldom overlap.
  const open: number[] = [];
  for (const k of order) {
    const inner = turns[k] as TurnNode;
    for (let at = open.length - 1; at >= 0; at--)
      if (endOf((turns[open[at] as number] as TurnNode).span) < inner.span.startTimeUnixNano)
        open.splice(at, 1);
    const outerAt = open.find((candidate) =>
      isSameGeneration(
        tree,
        marks,
        turns[candidate] as TurnNode,
        turnIndex[candidate] as number,
        inner,
        turnIndex[k] as number,
      ),
    );
    if (outerAt === undefined) {
      open.push(k);
      continue;
    }
    const outer = turns[outerAt] as TurnNode;
    mergeSameGeneration(outer, inner.draft, inner.span);
    if (inner.innerSpans) for (const span of inner.innerSpans) outer.innerSpans?.push(span);
    for (let i = 0; i < turnOfSpan.length; i++) if (turnOfSpan[i] === inner) turnOfSpan[i] = outer;
    folded.add(inner);
  }
  if (folded.size === 0) return;
  for (let k = turns.length - 1; k >= 0; k--) {
    const turn = turns[k] as TurnNode;
    if (!folded.has(turn)) continue;
    turns.splice(k, 1);
    turnIndex.splice(k, 1);
    const own = turn.run.turns;
    own.splice(own.indexOf(turn), 1);
  }
}

/** A span's end; its start when it has not ended (then it contains nothing). */
function endOf(span: SpanRecord): bigint {
  return span.endTimeUnixNano ?? span.startTimeUnixNano;
}

/** Whether the turns come from more than one instrumentation scope (else no layer repeats another). */
function severalScopes(turns: readonly TurnNode[]): boolean {
  const first = (turns[0] as TurnNode).span.scope.name;
  for (const turn of turns) if (turn.span.scope.name !== first) return true;
  return false;
}

function isSameGeneration(
  tree: SpanTree,
  marks: readonly number[],
  outer: TurnNode,
  outerIndex: number,
  inner: TurnNode,
  innerIndex: number,
): boolean {
  const a = outer.span;
  const b = inner.span;
  if (a.scope.name === b.scope.name) return false;
  if (b.startTimeUnixNano < a.startTimeUnixNano || endOf(b) > endOf(a)) return false;
  // A model called from inside a tool is that tool's, not the turn that asked for the tool.
  const call = tree.nearestAncestor(innerIndex, marks, CALL_MARK);
  if (call !== -1 && call !== tree.nearestAncestor(outerIndex, marks, CALL_MARK)) return false;
  return saySameThing(outer.draft, inner.draft);
}

/** The same requests (tools, ids where both have them, arguments where both parsed), or the same answer. */
function saySameThing(a: TurnDraft, b: TurnDraft): boolean {
  if (a.requested.length !== b.requested.length) return false;
  if (a.requested.length === 0) return a.answer !== undefined && a.answer !== '' && a.answer === b.answer;
  for (let k = 0; k < a.requested.length; k++) {
    const x = a.requested[k] as RequestedCall;
    const y = b.requested[k] as RequestedCall;
    if (x.tool !== y.tool) return false;
    if (x.callId !== undefined && y.callId !== undefined) {
      if (x.callId !== y.callId) return false;
    } else if (
      !x.args.captured ||
      !y.args.captured ||
      x.args.parseError !== undefined ||
      y.args.parseError !== undefined ||
      !jsonEqual(x.args.value, y.args.value)
    )
      return false;
  }
  return true;
}
