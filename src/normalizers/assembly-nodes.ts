/**
 * What assembly builds from one trace's spans: a node per tool call, LLM turn and agent run, and
 * the Assembly that holds them for linking and for the causal graph. Each node is made with every
 * field it will have, set or not: a field added later would move to a separately allocated (and
 * regrown) property store.
 */

import type { JsonValue } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { Captured, ToolCallDecision, TrajectoryIssue } from '../model/trajectory.js';
import type { ToolCallDraft, TurnDraft } from './convention.js';
import type { SpanTree } from './span-tree.js';

/** A tool call under assembly. */
export interface CallNode {
  span?: SpanRecord;
  /** Its span's position in the trace's SpanTree; -1 for a call no span records. */
  spanIndex: number;
  /** The spans merged into this node beyond its own (server span in client span, MCP span in tool span). */
  innerSpanIds: string[] | undefined;
  draft: ToolCallDraft;
  /**
   * The arguments its span recorded, where they disagree with the request the model made (then
   * the request's are read): for `toolpath inspect`.
   */
  recordedArgs: Captured<JsonValue> | undefined;
  run: RunNode;
  issuer?: TurnNode;
  requestIndex?: number;
  id: string;
  /** Its node in the causal graph, once that is built. */
  vertex: number;
  /** The turn last found to have been shown its result, while consumption is linked. */
  shownTo?: TurnNode;
  /** The turns its consumption edges go to, once consumption is linked (see link-consumption). */
  consumers?: TurnNode[];
  /** The step it is in, once steps are linked (see step-edges). */
  step?: StepNode;
  /** The run this call handed control to (a handoff), once handoffs are linked (see step-edges). */
  handoffTarget?: RunNode;
  /** Its pre-execution decisions, once they are linked (see link-decisions). */
  decisions?: ToolCallDecision[];
}

/** An LLM turn under assembly. */
export interface TurnNode {
  id: string;
  span: SpanRecord;
  /** The spans of other conventions that recorded the same generation (nested in this one). */
  innerSpans: SpanRecord[] | undefined;
  draft: TurnDraft;
  run: RunNode;
  /**
   * Per requested call: the node it became; made at the number of requests. A call nested in
   * the turn's span that answers none of them comes after (see link-requests).
   */
  issued: (CallNode | undefined)[];
  /**
   * The ids of the calls whose results it was shown, in the order it was found to have been shown
   * them: the Turn's own list, set once consumption is linked (ids are final by then); undefined
   * for none.
   */
  consumed: string[] | undefined;
  /** Its place in its run's turns, once they are in conversation order. */
  position: number;
  /** Its node in the causal graph, once that is built. */
  vertex: number;
}

/** An agent run under assembly: an agent span, or the whole trace when there is none. */
export interface RunNode {
  id: string;
  span?: SpanRecord;
  /** Its agent span's position in the trace's SpanTree; -1 for the trace-wide run. */
  spanIndex: number;
  name?: string;
  parent?: RunNode;
  /** The tool call whose span encloses this run (agent used as a tool). */
  parentCall?: CallNode;
  turns: TurnNode[];
  calls: CallNode[];
  /** Its start and end nodes in the causal graph, once that is built. */
  startVertex: number;
  endVertex: number;
  /** The handoff call that passed control to it, once handoffs are linked. */
  handoffFrom?: CallNode;
  /** Agent spans right inside its own that name the same agent: the same run recorded again. */
  innerSpans: SpanRecord[] | undefined;
}

/** A step span under assembly: one model turn of a run and the calls it asked for. */
export interface StepNode {
  span: SpanRecord;
  /** Its span's position in the trace's SpanTree (its arrival position). */
  spanIndex: number;
  run: RunNode;
  /** The step's number, where the convention gives one. */
  index: number | undefined;
  /** Its start and end nodes in the causal graph, once that is built. */
  startVertex: number;
  endVertex: number;
}

/** Everything assembly found, for the causal graph. Spans are known by their SpanTree position. */
export interface Assembly {
  traceId: string;
  tree: SpanTree;
  runs: RunNode[];
  turns: TurnNode[];
  calls: CallNode[];
  issues: TrajectoryIssue[];
  /** Per span, what it is to assembly (the `*_MARK` bits), for walks up the tree. */
  marks: number[];
  /** Per span, the call node it belongs to (tool spans). */
  nodeOfSpan: (CallNode | undefined)[];
  /** Per span, its turn node (turn spans). */
  turnOfSpan: (TurnNode | undefined)[];
  /** Clock resolution of span start times in ns (1 ms for SDKs that start spans from Date.now()). */
  resolution: bigint;
  /** The call nodes carrying each call id, in call order; filled once ids are final (assignIds). */
  callsById: Map<string, CallNode[]>;
  /** Step spans, in arrival order; empty for conventions without them. */
  steps: StepNode[];
  /** Per span, its step node (step spans). */
  stepOfSpan: readonly (StepNode | undefined)[];
  /** The conversation the trace belongs to (conversation-id.ts), once read. */
  conversationId: string | undefined;
}

/** An agent span. */
export const AGENT_MARK = 1;
/** A turn span. */
export const TURN_MARK = 2;
/** A span a call node holds: set as nodes are made, for merging looks only at calls made before. */
export const CALL_MARK = 4;
/** A step span. */
export const STEP_MARK = 8;

/** A call node for the span at `spanIndex` (none, -1: a call only a turn's request records). */
export function newCall(
  span: SpanRecord | undefined,
  spanIndex: number,
  draft: ToolCallDraft,
  run: RunNode,
): CallNode {
  return {
    span,
    spanIndex,
    innerSpanIds: undefined,
    draft,
    recordedArgs: undefined,
    run,
    issuer: undefined,
    requestIndex: undefined,
    id: '',
    vertex: -1,
    shownTo: undefined,
    consumers: undefined,
    step: undefined,
    handoffTarget: undefined,
    decisions: undefined,
  };
}

/** A turn node, added to its run's turns. */
export function newTurn(span: SpanRecord, draft: TurnDraft, run: RunNode): TurnNode {
  const turn: TurnNode = {
    id: `turn:${span.spanId}`,
    span,
    innerSpans: undefined,
    draft,
    run,
    issued: new Array(draft.requested.length).fill(undefined),
    consumed: undefined,
    position: -1,
    vertex: -1,
  };
  run.turns.push(turn);
  return turn;
}

/** The call node whose span is nearest above this span (a call nested in a call), if any. */
export function enclosingCall(assembly: Assembly, spanIndex: number): CallNode | undefined {
  return nodeAt(assembly.nodeOfSpan, assembly.tree.nearestAncestor(spanIndex, assembly.marks, CALL_MARK));
}

/**
 * The step a span is in: its nearest step ancestor, when no agent span comes between (a
 * sub-agent's spans are in the sub-agent's steps, not the caller's).
 */
export function enclosingStep(assembly: Assembly, spanIndex: number): StepNode | undefined {
  if (assembly.steps.length === 0 || spanIndex === -1) return undefined;
  const at = assembly.tree.nearestAncestor(spanIndex, assembly.marks, STEP_MARK | AGENT_MARK);
  return at === -1 ? undefined : assembly.stepOfSpan[at];
}

/** The node of the span at `index`; undefined for -1 (no such span). */
export function nodeAt<T>(nodes: readonly (T | undefined)[], index: number): T | undefined {
  return index === -1 ? undefined : nodes[index];
}
