/**
 * One LLM generation recorded by several conventions at once is one turn: Google ADK's `call_llm`
 * around its `generate_content` span around OpenLLMetry's `openai.chat`, or pydantic-ai's MCP
 * sampling model around the client's own `chat` span. The inner span is the same model call seen
 * from closer to the provider; nothing else nests a turn's span directly in another's (a model
 * called by a tool sits under the tool's span, a sub-agent's under its agent span). Part of
 * assembly, as merging a tool call seen twice is.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { TurnNode } from './assembly-nodes.js';
import type { RequestedCall, TurnDraft } from './convention.js';

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
