/**
 * From one trace's spans to its Trajectory: read every span through the conventions, merge a
 * call seen by several spans into one node, link each tool call to the turn that asked for it,
 * and hand the pieces to the causal graph. Pure: the same spans give the same trajectory.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { Trajectory } from '../model/trajectory.js';
import { reportArgumentIssues } from './argument-issues.js';
import {
  AGENT_MARK,
  type Assembly,
  CALL_MARK,
  type CallNode,
  enclosingCall,
  newCall,
  newTurn,
  nodeAt,
  type RunNode,
  STEP_MARK,
  type StepNode,
  TURN_MARK,
  type TurnNode,
} from './assembly-nodes.js';
import { buildTrajectory } from './causal-edges.js';
import type { Convention, SpanReading, ToolCallDraft } from './convention.js';
import { CONVENTIONS, readSpan } from './conventions.js';
import {
  noteOwnKeys,
  type OwnKeysOfSpan,
  ownConversationKeys,
  readConversationId,
} from './conversation-id.js';
import { splitConversations } from './conversation-threads.js';
import { reportDetachedSpans } from './detached-spans.js';
import { reportImpossibleTimes } from './impossible-times.js';
import { linkDecisions } from './link-decisions.js';
import { addRequestOnlyCalls, linkByCallId, linkByNameAndArguments } from './link-requests.js';
import { attachMcpListings } from './mcp-listings.js';
import { mergeMcpServer } from './mcp-server.js';
import { attachRunsToSpanlessCalls } from './run-parents.js';
import { foldSameGenerations, mergeSameGeneration } from './same-generation.js';
import { SpanTree } from './span-tree.js';
import { unreadOnlyTrajectory, unreadToolActivity } from './unread-activity.js';

const ROOT_RUN = 'run:trace';
/** The step of each span, for a trace without steps (shared: never written). */
const NO_STEPS: readonly (StepNode | undefined)[] = [];

/** A reading that puts something in the trajectory (structure-only spans are skipped). */
type ContentReading = Exclude<SpanReading, { kind: 'structure' }>;

/**
 * Builds the Trajectory of one trace, or undefined when no convention claims any span in it and
 * none looks like a tool span (an ordinary HTTP or database trace: nothing to evaluate).
 */
export function assembleTrajectory(
  traceId: string,
  spans: readonly SpanRecord[],
  conventions: readonly Convention[] = CONVENTIONS,
): Trajectory | undefined {
  return readTrace(traceId, spans, conventions).trajectory;
}

/** A trace as assembly read it: the trajectory, and, for `toolpath inspect`, what each span went into. */
export interface TraceReading {
  trajectory: Trajectory | undefined;
  /** The trace's spans, duplicates dropped; positions in it index the assembly's per-span lists. */
  tree: SpanTree;
  /** Undefined when no convention claimed any span. */
  assembly: Assembly | undefined;
}

/** {@link assembleTrajectory}, keeping what each span was assembled into. */
export function readTrace(
  traceId: string,
  spans: readonly SpanRecord[],
  conventions: readonly Convention[] = CONVENTIONS,
): TraceReading {
  const tree = new SpanTree(spans);
  // Per span, by position: arrays, not maps keyed by span, for every later step looks them up.
  // Made at their size, as the other per-span arrays are: one grown by push reserves room for 17.
  const readings: (ContentReading | undefined)[] = new Array(tree.spans.length);
  // Spans no convention claims, not even as structure: where tool use nobody read would show.
  const unclaimed: number[] = [];
  let claimed = 0;
  // Keys a convention reads on its own spans only, structure spans included.
  const own = ownConversationKeys(conventions);
  let ownKeys: OwnKeysOfSpan | undefined;
  for (let i = 0; i < tree.spans.length; i++) {
    const reading = readSpan(tree.spans[i] as SpanRecord, conventions);
    if (reading && own) ownKeys = noteOwnKeys(ownKeys, own, i, reading, tree.spans.length);
    if (reading && reading.kind !== 'structure') {
      readings[i] = reading;
      claimed++;
    } else {
      readings[i] = undefined;
      if (!reading) unclaimed.push(i);
    }
  }
  if (claimed === 0)
    return { trajectory: unreadOnlyTrajectory(traceId, tree, unclaimed), tree, assembly: undefined };
  const assembly = collect(traceId, tree, readings, claimed);
  const conversation = readConversationId(tree, (span) => isAgentSpan(assembly, span), conventions, ownKeys);
  assembly.conversationId = conversation.id;
  for (const issue of conversation.issues) assembly.issues.push(issue);
  linkByCallId(assembly);
  linkByNameAndArguments(assembly);
  addRequestOnlyCalls(assembly);
  splitConversations(assembly);
  attachRunsToSpanlessCalls(assembly);
  attachMcpListings(assembly);
  reportArgumentIssues(assembly.calls, assembly.issues);
  const unread = unreadToolActivity(assembly, unclaimed);
  if (unread) assembly.issues.push(unread);
  linkDecisions(assembly, conventions);
  assignIds(assembly);
  return { trajectory: buildTrajectory(assembly), tree, assembly };
}

function isAgentSpan(assembly: Assembly, span: number): boolean {
  return ((assembly.marks[span] as number) & AGENT_MARK) !== 0;
}

function collect(
  traceId: string,
  tree: SpanTree,
  readings: (ContentReading | undefined)[],
  claimed: number,
): Assembly {
  const spans = tree.spans;
  const marks: number[] = new Array(readings.length);
  for (let i = 0; i < readings.length; i++) {
    const kind = readings[i]?.kind;
    marks[i] = kind === 'agent' ? AGENT_MARK : kind === 'turn' ? TURN_MARK : kind === 'step' ? STEP_MARK : 0;
  }
  const runs = new Runs(tree, readings, marks);
  const nodeOfSpan: (CallNode | undefined)[] = new Array(spans.length).fill(undefined);
  const turnOfSpan: (TurnNode | undefined)[] = new Array(spans.length).fill(undefined);
  // Made at the first step: most conventions have none.
  let stepOfSpan: (StepNode | undefined)[] | undefined;
  const steps: StepNode[] = [];

  // Tool spans nested in a tool span of the same tool (MCP client -> server, execute_tool ->
  // tools/call) are one call: merge inward spans into the outermost.
  const calls: CallNode[] = [];
  const turns: TurnNode[] = [];
  const turnIndex: number[] = [];
  for (const index of outermostFirst(tree, readings, claimed)) {
    const span = spans[index] as SpanRecord;
    const reading = readings[index] as ContentReading;
    if (reading.kind === 'agent') {
      runs.of(index);
    } else if (reading.kind === 'step') {
      const step: StepNode = {
        span,
        spanIndex: index,
        run: runs.of(index),
        index: reading.index,
        startVertex: -1,
        endVertex: -1,
      };
      steps.push(step);
      stepOfSpan ??= new Array(spans.length).fill(undefined);
      stepOfSpan[index] = step;
    } else if (reading.kind === 'turn') {
      // A turn span right inside another turn's span is the same generation (same-generation.ts).
      const outer = nodeAt(
        turnOfSpan,
        tree.nearestAncestor(index, marks, TURN_MARK | CALL_MARK | AGENT_MARK),
      );
      if (outer) {
        mergeSameGeneration(outer, reading.turn, span);
        turnOfSpan[index] = outer;
        continue;
      }
      const turn = newTurn(span, reading.turn, runs.of(index));
      turns.push(turn);
      turnIndex.push(index);
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
      const node = newCall(span, index, reading.call, run);
      run.calls.push(node);
      calls.push(node);
      nodeOfSpan[index] = node;
    }
  }
  foldSameGenerations(tree, marks, turns, turnIndex, turnOfSpan);
  // The tree's own list: nothing reads it after this.
  const issues = tree.issues;
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
    steps,
    stepOfSpan: stepOfSpan ?? NO_STEPS,
    conversationId: undefined,
  };
  for (const run of assembly.runs) finishRun(assembly, run);
  reportDetachedSpans(assembly);
  reportImpossibleTimes(assembly);
  return assembly;
}

/** Puts a run's turns in conversation order, and finds the call that started it, if any. */
function finishRun(assembly: Assembly, run: RunNode): void {
  // Mostly in order already: checking is cheaper than setting up a sort.
  if (!isSorted(run.turns, turnOrder)) run.turns.sort(turnOrder);
  for (let k = 0; k < run.turns.length; k++) (run.turns[k] as TurnNode).position = k;
  const enclosing = run.spanIndex === -1 ? undefined : enclosingCall(assembly, run.spanIndex);
  if (enclosing) run.parentCall = enclosing;
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
    const same = agent === -1 ? undefined : this.#sameRunAbove(agent, name);
    if (same) {
      // One run recorded by two spans (OpenLLMetry's `invoke_agent` around its `workflow`).
      if (same.innerSpans) same.innerSpans.push(span as SpanRecord);
      else same.innerSpans = [span as SpanRecord];
      this.#byAgentSpan[agent] = same;
      return same;
    }
    // Every field in the literal, set or not, as for call nodes.
    const run: RunNode = {
      id: span ? `run:${span.spanId}` : ROOT_RUN,
      span,
      spanIndex: agent,
      name: name || undefined,
      parent: undefined,
      parentCall: undefined,
      turns: [],
      calls: [],
      startVertex: -1,
      endVertex: -1,
      handoffFrom: undefined,
      innerSpans: undefined,
    };
    if (agent === -1) this.#traceRun = run;
    else this.#byAgentSpan[agent] = run;
    this.list.push(run);
    if (agent !== -1) {
      const parent = this.tree.parent(agent);
      if (parent !== -1) run.parent = this.of(parent);
    }
    return run;
  }

  /** The run of the agent span right above, when it names the same agent: the same run again. */
  #sameRunAbove(agent: number, name: string | undefined): RunNode | undefined {
    if (!name) return undefined;
    const parent = this.tree.parent(agent);
    if (parent === -1 || ((this.marks[parent] as number) & AGENT_MARK) === 0) return undefined;
    // Made already when spans come outermost first; never made from here (a loop of parent ids).
    const run = this.#byAgentSpan[parent];
    return run?.name === name ? run : undefined;
  }
}

/** The `claimed` spans with readings, nearer the root first (arrival order among equals). */
function outermostFirst(
  tree: SpanTree,
  readings: readonly (ContentReading | undefined)[],
  claimed: number,
): readonly number[] {
  const read: number[] = new Array(claimed);
  let k = 0;
  for (let i = 0; i < readings.length; i++) if (readings[i] !== undefined) read[k++] = i;
  return tree.outermostFirst(read);
}

function sameCall(outer: ToolCallDraft, inner: ToolCallDraft): boolean {
  if (outer.tool !== inner.tool) return false;
  return outer.callId === undefined || inner.callId === undefined || outer.callId === inner.callId;
}

/** The outer span is what the agent saw; the inner one fills what the outer did not record. */
function mergeInto(node: CallNode, inner: ToolCallDraft, span: SpanRecord): void {
  if (node.innerSpanIds) node.innerSpanIds.push(span.spanId);
  else node.innerSpanIds = [span.spanId];
  const draft = node.draft;
  if (draft.callId === undefined && inner.callId !== undefined) draft.callId = inner.callId;
  if (!draft.args.captured) draft.args = inner.args;
  if (!draft.result.captured) draft.result = inner.result;
  if (draft.outcome.status === 'no_result') draft.outcome = inner.outcome;
  if (draft.handoff === undefined && inner.handoff !== undefined) draft.handoff = inner.handoff;
  if (inner.mcpServer !== undefined) draft.mcpServer = mergeMcpServer(draft.mcpServer, inner.mcpServer);
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
  // Each group where its first call is, which is the order the groups were made in (walking the
  // calls again costs no iterator and no entry array per group, as walking the map would).
  for (const node of assembly.calls) {
    const callId = node.draft.callId;
    const nodes = callId === undefined ? undefined : byCallId.get(callId);
    if (!nodes || nodes[0] !== node) continue;
    if (nodes.length === 1) {
      node.id = callId as string;
      continue;
    }
    for (const other of nodes) other.id = fallbackId(other);
    assembly.issues.push({
      kind: 'call.duplicate_id',
      message: `call id ${callId} is used by ${nodes.length} calls; they are told apart by span id or turn position`,
      spanIds: nodes.flatMap(spanIdsOf),
    });
  }
}

/** Every span merged into the node, its own first; none for a call no span records. */
function spanIdsOf(node: CallNode): string[] {
  if (!node.span) return [];
  return node.innerSpanIds ? [node.span.spanId, ...node.innerSpanIds] : [node.span.spanId];
}

function fallbackId(node: CallNode): string {
  return node.span ? `span:${node.span.spanId}` : `${node.issuer?.id ?? 'call'}#${node.requestIndex ?? 0}`;
}

/**
 * 1 ms when every start time is a whole millisecond (OTel JS SDKs start spans from Date.now()
 * while ending them from a precise clock), else 1 ns.
 */
function startResolution(spans: readonly SpanRecord[]): bigint {
  if (spans.length < 2) return 1n;
  for (const span of spans) if (span.startTimeUnixNano % 1_000_000n !== 0n) return 1n;
  return 1_000_000n;
}
