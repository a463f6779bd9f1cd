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
  /** Every span merged into this node (client + server, tool span + nested MCP span). */
  spanIds: string[];
  draft: ToolCallDraft;
  run: RunNode;
  issuer?: TurnNode;
  requestIndex?: number;
  id: string;
  /** Its node in the causal graph, once that is built. */
  vertex: number;
}

/** An LLM turn under assembly. */
export interface TurnNode {
  id: string;
  span: SpanRecord;
  draft: TurnDraft;
  run: RunNode;
  /** Per requested call: the node it became. */
  issued: (CallNode | undefined)[];
  consumed: Set<CallNode>;
  /** Its place in its run's turns, once they are in conversation order. */
  position: number;
  /** Its node in the causal graph, once that is built. */
  vertex: number;
}

/** An agent run under assembly: an agent span, or the whole trace when there is none. */
export interface RunNode {
  id: string;
  span?: SpanRecord;
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

/** Everything assembly found, for the causal graph. */
export interface Assembly {
  traceId: string;
  tree: SpanTree;
  runs: RunNode[];
  turns: TurnNode[];
  calls: CallNode[];
  issues: TrajectoryIssue[];
  /** The call node enclosing a span, for nesting edges. */
  enclosingCall(span: SpanRecord): CallNode | undefined;
  /** Clock resolution of span start times in ns (1 ms for SDKs that start spans from Date.now()). */
  resolution: bigint;
  turnOfSpan: Map<SpanRecord, TurnNode>;
}

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
  const readings = new Map<SpanRecord, ContentReading>();
  for (const span of tree.spans) {
    const reading = readSpan(span, conventions);
    if (reading && reading.kind !== 'structure') readings.set(span, reading);
  }
  if (readings.size === 0) return undefined;
  const assembly = collect(traceId, tree, readings);
  linkByCallId(assembly);
  linkByNameAndArguments(assembly);
  addRequestOnlyCalls(assembly);
  assignIds(assembly);
  return buildTrajectory(assembly);
}

function collect(traceId: string, tree: SpanTree, readings: Map<SpanRecord, ContentReading>): Assembly {
  const issues: TrajectoryIssue[] = [...tree.issues];
  const runs = new Map<SpanRecord | undefined, RunNode>();
  const isAgent = (span: SpanRecord) => readings.get(span)?.kind === 'agent';
  const runOf = (span: SpanRecord): RunNode => {
    const agentSpan = isAgent(span) ? span : tree.nearestAncestor(span, isAgent);
    let run = runs.get(agentSpan);
    if (run) return run;
    const reading = agentSpan && readings.get(agentSpan);
    const name = reading?.kind === 'agent' ? reading.name : undefined;
    run = {
      id: agentSpan ? `run:${agentSpan.spanId}` : ROOT_RUN,
      turns: [],
      calls: [],
      startVertex: -1,
      endVertex: -1,
    };
    if (agentSpan) run.span = agentSpan;
    if (name) run.name = name;
    runs.set(agentSpan, run);
    if (agentSpan) {
      const parentSpan = tree.parent(agentSpan);
      if (parentSpan) run.parent = runOf(parentSpan);
    }
    return run;
  };

  // Tool spans nested in a tool span of the same tool (MCP client -> server, execute_tool ->
  // tools/call) are one call: merge inward spans into the outermost.
  const nodeOfSpan = new Map<SpanRecord, CallNode>();
  const calls: CallNode[] = [];
  const turns: TurnNode[] = [];
  for (const { span, reading } of outermostFirst(tree, readings)) {
    if (reading.kind === 'agent') {
      runOf(span);
    } else if (reading.kind === 'turn') {
      const run = runOf(span);
      const turn: TurnNode = {
        id: `turn:${span.spanId}`,
        span,
        draft: reading.turn,
        run,
        issued: [],
        consumed: new Set(),
        position: -1,
        vertex: -1,
      };
      run.turns.push(turn);
      turns.push(turn);
    } else {
      const outer = enclosingToolNode(tree, readings, nodeOfSpan, span, true);
      if (outer && sameCall(outer.draft, reading.call)) {
        mergeInto(outer, reading.call, span);
        nodeOfSpan.set(span, outer);
        continue;
      }
      const run = runOf(span);
      // The reading's own draft, not a copy: each reading is made for this span alone and is
      // read only for its kind from here on.
      const node: CallNode = {
        span,
        spanIds: [span.spanId],
        draft: reading.call,
        run,
        id: '',
        vertex: -1,
      };
      run.calls.push(node);
      calls.push(node);
      nodeOfSpan.set(span, node);
    }
  }
  for (const run of runs.values()) {
    run.turns.sort(turnOrder);
    run.turns.forEach((turn, k) => {
      turn.position = k;
    });
    if (run.span) {
      const enclosing = enclosingToolNode(tree, readings, nodeOfSpan, run.span);
      if (enclosing) run.parentCall = enclosing;
    }
  }
  reportUnparsableArguments(calls, issues);
  const turnOfSpan = new Map<SpanRecord, TurnNode>();
  for (const turn of turns) turnOfSpan.set(turn.span, turn);
  return {
    traceId,
    tree,
    runs: [...runs.values()],
    turns,
    calls,
    issues,
    enclosingCall: (span) => enclosingToolNode(tree, readings, nodeOfSpan, span),
    resolution: startResolution(tree.spans),
    turnOfSpan,
  };
}

/** The readings, spans nearer the root first (a stable sort by depth: arrival order among equals). */
function outermostFirst(
  tree: SpanTree,
  readings: Map<SpanRecord, ContentReading>,
): { span: SpanRecord; reading: ContentReading; depth: number }[] {
  const byDepth: { span: SpanRecord; reading: ContentReading; depth: number }[] = [];
  let sorted = true;
  for (const [span, reading] of readings) {
    const depth = tree.depth(span);
    if (byDepth.length > 0 && depth < (byDepth[byDepth.length - 1] as { depth: number }).depth)
      sorted = false;
    byDepth.push({ span, reading, depth });
  }
  // Spans mostly arrive parents first, and then there is nothing to sort.
  if (!sorted) byDepth.sort((a, b) => a.depth - b.depth);
  return byDepth;
}

/**
 * The nearest tool-call node above a span. With `stopAtAgent`, an agent span in between ends
 * the search: a sub-agent's call of a same-named tool is its own call, not the outer one again.
 */
function enclosingToolNode(
  tree: SpanTree,
  readings: Map<SpanRecord, ContentReading>,
  nodeOfSpan: Map<SpanRecord, CallNode>,
  span: SpanRecord,
  stopAtAgent = false,
): CallNode | undefined {
  const found = tree.nearestAncestor(
    span,
    (ancestor) => nodeOfSpan.has(ancestor) || (stopAtAgent && readings.get(ancestor)?.kind === 'agent'),
  );
  return found && nodeOfSpan.get(found);
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

/** Turns of one run in conversation order: start time, then the longer history (ties at ms clocks). */
function turnOrder(a: TurnNode, b: TurnNode): number {
  if (a.span.startTimeUnixNano !== b.span.startTimeUnixNano)
    return a.span.startTimeUnixNano < b.span.startTimeUnixNano ? -1 : 1;
  return a.draft.historyLength - b.draft.historyLength;
}

/** Node ids: the call id when it is unique in the trace, else the span id or the turn and position. */
function assignIds(assembly: Assembly): void {
  const counts = new Map<string, number>();
  for (const { draft } of assembly.calls)
    if (draft.callId !== undefined) counts.set(draft.callId, (counts.get(draft.callId) ?? 0) + 1);
  for (const node of assembly.calls) {
    const callId = node.draft.callId;
    if (callId !== undefined && counts.get(callId) === 1) node.id = callId;
    else if (node.span) node.id = `span:${node.span.spanId}`;
    else node.id = `${node.issuer?.id ?? 'call'}#${node.requestIndex ?? 0}`;
  }
  for (const [callId, count] of counts) {
    if (count < 2) continue;
    assembly.issues.push({
      kind: 'call.duplicate_id',
      message: `call id ${callId} is used by ${count} calls; they are told apart by span id or turn position`,
      spanIds: assembly.calls.filter((n) => n.draft.callId === callId).flatMap((n) => n.spanIds),
    });
  }
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
