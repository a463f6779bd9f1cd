/**
 * From one trace's spans to its Trajectory: read every span through the conventions, merge a
 * call seen by several spans into one node, link each tool call to the turn that asked for it,
 * and hand the pieces to the causal graph. Pure: the same spans give the same trajectory.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { ToolCall, Trajectory, TrajectoryIssue } from '../model/trajectory.js';
import { buildTrajectory } from './causal-edges.js';
import type { Convention, SpanReading, ToolCallDraft, TurnDraft } from './convention.js';
import { CONVENTIONS, readSpan } from './conventions.js';
import { addRequestOnlyCalls, linkByCallId, linkByNameAndArguments } from './link-requests.js';
import { SpanTree } from './span-tree.js';

/** A tool call under assembly. */
export interface CallNode {
  span?: SpanRecord;
  /** Its span's position in the trace's SpanTree; -1 for a call no span records. */
  spanIndex: number;
  /** Every span merged into this node (client + server, tool span + nested MCP span). */
  spanIds: string[];
  draft: ToolCallDraft;
  run: RunNode;
  issuer?: TurnNode;
  requestIndex?: number;
  id: string;
  /** Its node in the causal graph, once that is built. */
  vertex: number;
  /** The turn last found to have been shown its result, while consumption is linked. */
  shownTo?: TurnNode;
  /** The turns its consumption edges go to, once consumption is linked (see causal-edges). */
  consumers?: TurnNode[];
}

/** An LLM turn under assembly. */
export interface TurnNode {
  id: string;
  span: SpanRecord;
  draft: TurnDraft;
  run: RunNode;
  /** Per requested call: the node it became. */
  issued: (CallNode | undefined)[];
  /** The calls whose results it was shown, in the order it was found to have been shown them. */
  consumed: CallNode[];
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
}

/** An agent span. */
export const AGENT_MARK = 1;
/** A turn span. */
export const TURN_MARK = 2;
/** A span a call node holds: set as nodes are made, for merging looks only at calls made before. */
export const CALL_MARK = 4;

const ROOT_RUN = 'run:trace';

/** A reading that puts something in the trajectory (structure-only spans are skipped). */
type ContentReading = Exclude<SpanReading, { kind: 'structure' }>;

/**
 * Builds the Trajectory of one trace, or undefined when no convention claims any span in it
 * (an ordinary HTTP or database trace: nothing to evaluate).
 */
export function assembleTrajectory(
  traceId: string,
  spans: readonly SpanRecord[],
  conventions: readonly Convention[] = CONVENTIONS,
): Trajectory | undefined {
  const tree = new SpanTree(spans);
  // Per span, by position: arrays, not maps keyed by span, for every later step looks them up.
  const readings: (ContentReading | undefined)[] = [];
  let claimed = false;
  for (const span of tree.spans) {
    const reading = readSpan(span, conventions);
    if (reading && reading.kind !== 'structure') {
      readings.push(reading);
      claimed = true;
    } else readings.push(undefined);
  }
  if (!claimed) return undefined;
  const assembly = collect(traceId, tree, readings);
  linkByCallId(assembly);
  linkByNameAndArguments(assembly);
  addRequestOnlyCalls(assembly);
  assignIds(assembly);
  return buildTrajectory(assembly);
}

function collect(traceId: string, tree: SpanTree, readings: (ContentReading | undefined)[]): Assembly {
  const spans = tree.spans;
  const marks: number[] = [];
  for (const reading of readings)
    marks.push(reading?.kind === 'agent' ? AGENT_MARK : reading?.kind === 'turn' ? TURN_MARK : 0);
  const runs = new Runs(tree, readings, marks);
  const nodeOfSpan: (CallNode | undefined)[] = new Array(spans.length).fill(undefined);
  const turnOfSpan: (TurnNode | undefined)[] = new Array(spans.length).fill(undefined);

  // Tool spans nested in a tool span of the same tool (MCP client -> server, execute_tool ->
  // tools/call) are one call: merge inward spans into the outermost.
  const calls: CallNode[] = [];
  const turns: TurnNode[] = [];
  for (const index of outermostFirst(tree, readings)) {
    const span = spans[index] as SpanRecord;
    const reading = readings[index] as ContentReading;
    if (reading.kind === 'agent') {
      runs.of(index);
    } else if (reading.kind === 'turn') {
      const turn = newTurn(span, reading.turn, runs.of(index));
      turns.push(turn);
      turnOfSpan[index] = turn;
    } else {
      // A sub-agent's call of a same-named tool is its own call, not the outer one again.
      const outer = nodeAt(nodeOfSpan, tree.nearestAncestor(index, marks, CALL_MARK | AGENT_MARK));
      marks[index] = (marks[index] as number) | CALL_MARK;
      if (outer && sameCall(outer.draft, reading.call)) {
        mergeInto(outer, reading.call, span);
        nodeOfSpan[index] = outer;
        continue;
      }
      const run = runs.of(index);
      // The reading's own draft, not a copy: each reading is made for this span alone and is
      // read only for its kind from here on.
      const node: CallNode = {
        span,
        spanIndex: index,
        spanIds: [span.spanId],
        draft: reading.call,
        run,
        id: '',
        vertex: -1,
      };
      run.calls.push(node);
      calls.push(node);
      nodeOfSpan[index] = node;
    }
  }
  const issues: TrajectoryIssue[] = [...tree.issues];
  reportUnparsableArguments(calls, issues);
  const assembly: Assembly = {
    traceId,
    tree,
    runs: runs.list,
    turns,
    calls,
    issues,
    marks,
    nodeOfSpan,
    turnOfSpan,
    resolution: startResolution(spans),
    callsById: new Map(),
  };
  for (const run of assembly.runs) finishRun(assembly, run);
  return assembly;
}

function newTurn(span: SpanRecord, draft: TurnDraft, run: RunNode): TurnNode {
  const turn: TurnNode = {
    id: `turn:${span.spanId}`,
    span,
    draft,
    run,
    issued: [],
    consumed: [],
    position: -1,
    vertex: -1,
  };
  run.turns.push(turn);
  return turn;
}

/** Puts a run's turns in conversation order, and finds the call that started it, if any. */
function finishRun(assembly: Assembly, run: RunNode): void {
  // Mostly in order already: checking is cheaper than setting up a sort.
  if (!isSorted(run.turns, turnOrder)) run.turns.sort(turnOrder);
  for (let k = 0; k < run.turns.length; k++) (run.turns[k] as TurnNode).position = k;
  const enclosing = run.spanIndex === -1 ? undefined : enclosingCall(assembly, run.spanIndex);
  if (enclosing) run.parentCall = enclosing;
}

/** The call node whose span is nearest above this span (a call nested in a call), if any. */
export function enclosingCall(assembly: Assembly, spanIndex: number): CallNode | undefined {
  return nodeAt(assembly.nodeOfSpan, assembly.tree.nearestAncestor(spanIndex, assembly.marks, CALL_MARK));
}

/** The node of the span at `index`; undefined for -1 (no such span). */
function nodeAt<T>(nodes: readonly (T | undefined)[], index: number): T | undefined {
  return index === -1 ? undefined : nodes[index];
}

/** The agent runs of a trace, each made when first needed: one per agent span, or the trace-wide run. */
class Runs {
  /** In the order they were made. */
  readonly list: RunNode[] = [];
  readonly #byAgentSpan: (RunNode | undefined)[];
  #traceRun: RunNode | undefined;

  constructor(
    private readonly tree: SpanTree,
    private readonly readings: readonly (ContentReading | undefined)[],
    private readonly marks: readonly number[],
  ) {
    this.#byAgentSpan = new Array(tree.spans.length).fill(undefined);
  }

  /** The span's run: its own if it is an agent span, else its nearest agent ancestor's, else the trace's. */
  of(index: number): RunNode {
    const agent =
      (this.marks[index] as number) & AGENT_MARK
        ? index
        : this.tree.nearestAncestor(index, this.marks, AGENT_MARK);
    const run = agent === -1 ? this.#traceRun : this.#byAgentSpan[agent];
    return run ?? this.#make(agent);
  }

  #make(agent: number): RunNode {
    const span = agent === -1 ? undefined : this.tree.spans[agent];
    const reading = agent === -1 ? undefined : this.readings[agent];
    const name = reading?.kind === 'agent' ? reading.name : undefined;
    const run: RunNode = {
      id: span ? `run:${span.spanId}` : ROOT_RUN,
      spanIndex: agent,
      turns: [],
      calls: [],
      startVertex: -1,
      endVertex: -1,
    };
    if (span) run.span = span;
    if (name) run.name = name;
    if (agent === -1) this.#traceRun = run;
    else this.#byAgentSpan[agent] = run;
    this.list.push(run);
    if (agent !== -1) {
      const parent = this.tree.parent(agent);
      if (parent !== -1) run.parent = this.of(parent);
    }
    return run;
  }
}

/** The spans with readings, nearer the root first (arrival order among equals). */
function outermostFirst(
  tree: SpanTree,
  readings: readonly (ContentReading | undefined)[],
): readonly number[] {
  const read: number[] = [];
  for (let i = 0; i < readings.length; i++) if (readings[i] !== undefined) read.push(i);
  return tree.outermostFirst(read);
}

function sameCall(outer: ToolCallDraft, inner: ToolCallDraft): boolean {
  if (outer.tool !== inner.tool) return false;
  return outer.callId === undefined || inner.callId === undefined || outer.callId === inner.callId;
}

/** The outer span is what the agent saw; the inner one fills what the outer did not record. */
function mergeInto(node: CallNode, inner: ToolCallDraft, span: SpanRecord): void {
  node.spanIds.push(span.spanId);
  const draft = node.draft;
  if (draft.callId === undefined && inner.callId !== undefined) draft.callId = inner.callId;
  if (!draft.args.captured) draft.args = inner.args;
  if (!draft.result.captured) draft.result = inner.result;
  if (draft.outcome.status === 'no_result') draft.outcome = inner.outcome;
}

/** Whether the items are in this order already (then a stable sort would leave them as they are). */
function isSorted<T>(items: readonly T[], order: (a: T, b: T) => number): boolean {
  for (let i = 1; i < items.length; i++) if (order(items[i - 1] as T, items[i] as T) > 0) return false;
  return true;
}

/** Turns of one run in conversation order: start time, then the longer history (ties at ms clocks). */
function turnOrder(a: TurnNode, b: TurnNode): number {
  if (a.span.startTimeUnixNano !== b.span.startTimeUnixNano)
    return a.span.startTimeUnixNano < b.span.startTimeUnixNano ? -1 : 1;
  return a.draft.historyLength - b.draft.historyLength;
}

/**
 * Node ids: the call id when it is unique in the trace, else the span id or the turn and position.
 * Groups the calls by call id on the way, for linking consumption.
 */
function assignIds(assembly: Assembly): void {
  const byCallId = assembly.callsById;
  for (const node of assembly.calls) {
    const callId = node.draft.callId;
    if (callId === undefined) {
      node.id = fallbackId(node);
      continue;
    }
    const list = byCallId.get(callId);
    if (list) list.push(node);
    else byCallId.set(callId, [node]);
  }
  for (const [callId, nodes] of byCallId) {
    if (nodes.length === 1) {
      (nodes[0] as CallNode).id = callId;
      continue;
    }
    for (const node of nodes) node.id = fallbackId(node);
    assembly.issues.push({
      kind: 'call.duplicate_id',
      message: `call id ${callId} is used by ${nodes.length} calls; they are told apart by span id or turn position`,
      spanIds: nodes.flatMap((n) => n.spanIds),
    });
  }
}

function fallbackId(node: CallNode): string {
  return node.span ? `span:${node.span.spanId}` : `${node.issuer?.id ?? 'call'}#${node.requestIndex ?? 0}`;
}

function reportUnparsableArguments(calls: readonly CallNode[], issues: TrajectoryIssue[]): void {
  for (const { draft, span } of calls) {
    if (!draft.args.captured || draft.args.parseError === undefined) continue;
    issues.push({
      kind: 'arguments.unparsable',
      message: `arguments of ${draft.tool}${span ? ` (span ${span.spanId})` : ''} are not valid JSON: ${draft.args.parseError}`,
      spanIds: span ? [span.spanId] : [],
    });
  }
}

/**
 * 1 ms when every start time is a whole millisecond (OTel JS SDKs start spans from Date.now()
 * while ending them from a precise clock), else 1 ns.
 */
function startResolution(spans: readonly SpanRecord[]): bigint {
  const coarse = spans.length > 1 && spans.every((span) => span.startTimeUnixNano % 1_000_000n === 0n);
  return coarse ? 1_000_000n : 1n;
}

/**
 * Finishes a call node into the model's ToolCall. Built field by field: spreading the draft,
 * whose shape changed while linking, was a fifth of normalization time.
 */
export function toToolCall(node: CallNode): ToolCall {
  const { draft, span } = node;
  const call: ToolCall = {
    id: node.id,
    tool: draft.tool,
    args: draft.args,
    result: draft.result,
    outcome: draft.outcome,
    convention: draft.convention,
  };
  if (draft.callId !== undefined) call.callId = draft.callId;
  const agentName = draft.agentName ?? node.run.name;
  if (agentName !== undefined) call.agentName = agentName;
  if (node.issuer) call.turnId = node.issuer.id;
  if (span) {
    call.spanId = span.spanId;
    if (span.parentSpanId !== undefined) call.parentSpanId = span.parentSpanId;
    call.startTimeUnixNano = span.startTimeUnixNano;
    if (span.endTimeUnixNano !== undefined) call.endTimeUnixNano = span.endTimeUnixNano;
  }
  return call;
}
