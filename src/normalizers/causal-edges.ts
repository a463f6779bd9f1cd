/**
 * The causal graph of an assembled trace. Edges mean "could have caused":
 * - a turn -> each call it issued; a call -> each turn that was shown its result;
 * - consecutive turns of one agent run (the conversation history only grows);
 * - an agent run started by a tool call sits between that call's issuing turn and the turns
 *   that consumed its result; so does any call nested in another call's span;
 * - where there are no turns to go by (turnless conventions, handoffs between agent runs),
 *   an item that ended before another started, on the trace's clock resolution.
 * Calls issued by one turn get no edge between them: they are concurrent.
 */
import { CausalGraph } from '../model/causal-order.js';
import type { SpanRecord } from '../model/span-record.js';
import { Trajectory } from '../model/trajectory.js';
import {
  type Assembly,
  type CallNode,
  enclosingCall,
  type RunNode,
  type StepNode,
  type TurnNode,
} from './assembly-nodes.js';
import { rootOf, toAgentRun, toToolCall, toTurn } from './finish-nodes.js';
import { linkConsumption } from './link-consumption.js';
import { addStepEdges, linkHandoffs } from './step-edges.js';

/** Builds the graph over the assembled pieces and wraps everything into a Trajectory. */
export function buildTrajectory(assembly: Assembly): Trajectory {
  const graph = new TraceGraph(assembly);
  // Edges go between node numbers: building a key string per edge was most of the graph's cost.
  for (const run of assembly.runs) {
    const start = run.span?.startTimeUnixNano ?? 0n;
    run.startVertex = graph.addInternal(`\u0000start:${run.id}`, start);
    run.endVertex = graph.addInternal(`\u0000end:${run.id}`, run.span?.endTimeUnixNano ?? start);
  }
  for (const turn of assembly.turns)
    turn.vertex = graph.addInternal(`\u0000${turn.id}`, turn.span.startTimeUnixNano);
  for (const node of assembly.calls) node.vertex = graph.addCall(node.id, callTime(node));

  for (const run of assembly.runs) {
    const turns = run.turns;
    for (const turn of turns) {
      graph.addEdgeBetween(run.startVertex, turn.vertex);
      graph.addEdgeBetween(turn.vertex, run.endVertex);
    }
    for (const node of run.calls) {
      graph.addEdgeBetween(run.startVertex, node.vertex);
      graph.addEdgeBetween(node.vertex, run.endVertex);
    }
    for (let k = 1; k < turns.length; k++)
      graph.addEdgeBetween((turns[k - 1] as TurnNode).vertex, (turns[k] as TurnNode).vertex);
  }
  for (const node of assembly.calls) if (node.issuer) graph.addEdgeBetween(node.issuer.vertex, node.vertex);
  linkConsumption(assembly);
  // The graph's order and reachability depend on which edges there are, not on the order they came in.
  for (const node of assembly.calls)
    if (node.consumers) for (const turn of node.consumers) graph.addEdgeBetween(node.vertex, turn.vertex);
  addNestingEdges(assembly, graph);
  // Structure before clocks: steps and handoffs order what time alone could not.
  addStepEdges(assembly, graph);
  linkHandoffs(assembly, graph);
  const handoffs = handoffsByRun(assembly);
  const steps = stepsByRun(assembly);
  for (const run of assembly.runs)
    addTimeChain(assembly, run, graph, handoffs?.get(run) ?? NONE, steps?.get(run) ?? NONE);

  for (const [from, to] of graph.droppedEdges()) {
    assembly.issues.push({
      kind: 'order.cycle',
      message: `the trace's links contradict each other (a cycle through ${printable(from)} and ${printable(to)}); one link was ignored`,
      spanIds: [],
    });
  }
  return new Trajectory({
    traceId: assembly.traceId,
    // Put in causal order here by node number, so the Trajectory need not sort them again by id.
    // Each carrying its node, so happens-before questions need no lookup by id.
    calls: graph
      .inListingOrder(assembly.calls, vertexOf)
      .map((node) => graph.numberCall(toToolCall(node), node.vertex)),
    callsInOrder: true,
    order: graph,
    // Turns in causal order, like calls (spans arrive in any order).
    turns: graph.inListingOrder(assembly.turns, vertexOf).map(toTurn),
    agents: assembly.runs.map(toAgentRun),
    issues: assembly.issues,
    spanCount: assembly.tree.spans.length,
    root: rootOf(assembly),
    // Undefined when the trace carries none: a spread of a condition is slow in V8.
    conversationId: assembly.conversationId,
  });
}

/** No runs or steps (shared: never written). */
const NONE: readonly never[] = [];

/** A node's number in the causal graph (for sorting by it without a closure per sort). */
const vertexOf = (node: { vertex: number }): number => node.vertex;

/**
 * The causal graph of one trace, with a way to add nodes that are not calls. Their labels start
 * with NUL, which keeps them apart from call ids, and they are unique, so they need no index
 * (hashing them was a tenth of the graph's cost). Only a trace whose own ids could collide with
 * them (a call id starting with NUL, an agent span with id `trace` beside the trace-wide run)
 * gets them as keys, deduplicated as keys are.
 */
class TraceGraph extends CausalGraph {
  readonly #collides: boolean;
  /** Every call's node id is its own call id, so no two call keys are alike. */
  readonly #ownIds: boolean;

  constructor(assembly: Assembly) {
    const { runs, turns, calls } = assembly;
    // Each run's start and end, and the turns and calls; per run, its start and end to each turn
    // and call and the chain of its turns; per call, mostly, its issuer and one consumer.
    super({
      nodes: 2 * runs.length + turns.length + calls.length,
      edges: 3 * turns.length + 4 * calls.length,
    });
    this.#collides =
      assembly.calls.some((node) => node.id.charCodeAt(0) === 0) ||
      assembly.runs.some((run) => run.span?.spanId === 'trace');
    this.#ownIds = !this.#collides && calls.every((node) => node.id === node.draft.callId);
  }

  /**
   * Adds a call's node. Where no two call keys can be alike, its key is left for the graph to
   * index if anything asks by key (the trajectory's questions go by call object): one hash less
   * per call.
   */
  addCall(key: string, time: bigint): number {
    return this.#ownIds ? this.addUnindexedNode(key, time, true) : this.addNode(key, time, true);
  }

  /** Adds a node for something that is not a call (a turn, a run's start or end, a time point). */
  addInternal(label: string, time: bigint): number {
    return this.#collides ? this.addNode(label, time, false) : this.addLabelledNode(label, time);
  }
}

function callTime(node: CallNode): bigint {
  return (
    node.span?.startTimeUnixNano ??
    node.issuer?.span.endTimeUnixNano ??
    node.issuer?.span.startTimeUnixNano ??
    0n
  );
}

/**
 * A call's span may enclose a whole sub-agent run or other calls (an agent used as a tool, a
 * tool that calls a tool). What runs inside came after the call was issued and before its
 * result was consumed.
 */
function addNestingEdges(assembly: Assembly, graph: CausalGraph): void {
  for (const run of assembly.runs)
    if (run.parentCall) addAround(graph, run.parentCall, run.startVertex, run.endVertex);
  for (const node of assembly.calls) {
    const outer = node.spanIndex === -1 ? undefined : enclosingCall(assembly, node.spanIndex);
    if (outer && outer !== node && outer.run === node.run) addAround(graph, outer, node.vertex, node.vertex);
  }
}

/** What runs inside `outer` (from `start` to `end`) comes after its issuing turn and before its consumers. */
function addAround(graph: CausalGraph, outer: CallNode, start: number, end: number): void {
  if (outer.issuer) graph.addEdgeBetween(outer.issuer.vertex, start);
  if (outer.consumers) for (const turn of outer.consumers) graph.addEdgeBetween(end, turn.vertex);
}

interface ChainItem {
  startVertex: number;
  endVertex: number;
  start: bigint;
  end?: bigint;
}

/**
 * Time order for what no turn orders: a run's calls without an issuing turn or a turn shown
 * their result, and agent runs started directly under it (handoffs). `a -> b` when a ended before b started; with a
 * millisecond start clock, an end is rounded down to its millisecond and two items that
 * started in the same millisecond are never ordered. Linear in items: ends go to time points
 * chained in order, and each item hangs off the last point at or before its start.
 */
function addTimeChain(
  assembly: Assembly,
  run: RunNode,
  graph: TraceGraph,
  childRuns: readonly RunNode[],
  steps: readonly StepNode[],
): void {
  if (!hasTimeOrdered(run, childRuns)) return;
  // A call in a step is ordered by its step, which takes its place on the clock. A call no turn
  // was shown (a run's last, `final_answer`) is ordered by nothing after it but its time.
  const turnless = run.calls.filter(
    (node) =>
      node.span && !node.step && (!node.issuer || (node.consumers === undefined && node.issuer.run === run)),
  );
  const items: ChainItem[] = [
    ...run.turns.map((turn) => spanItem(turn.span, turn.vertex, turn.vertex)),
    ...turnless.map((node) => spanItem(node.span as SpanRecord, node.vertex, node.vertex)),
    ...childRuns.map((child) => spanItem(child.span as SpanRecord, child.startVertex, child.endVertex)),
    ...steps.map((step) => spanItem(step.span, step.startVertex, step.endVertex)),
  ];
  const resolution = assembly.resolution;
  const ends = new Map<bigint, number[]>();
  for (const item of items) {
    if (item.end === undefined) continue;
    const rounded = item.end - (item.end % resolution);
    const effective = rounded > item.start ? rounded : item.start + 1n;
    const list = ends.get(effective);
    if (list) list.push(item.endVertex);
    else ends.set(effective, [item.endVertex]);
  }
  const points = [...ends.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const pointVertices = points.map((time) => graph.addInternal(`\u0000time:${run.id}:${time}`, time));
  points.forEach((time, i) => {
    const point = pointVertices[i] as number;
    for (const vertex of ends.get(time) ?? []) graph.addEdgeBetween(vertex, point);
    if (i > 0) graph.addEdgeBetween(pointVertices[i - 1] as number, point);
  });
  for (const item of items) {
    const at = lastAtOrBefore(points, item.start);
    if (at !== -1) graph.addEdgeBetween(pointVertices[at] as number, item.startVertex);
  }
}

/** Whether the run has a call without a turn or a handoff to order: asked before any list is made. */
function hasTimeOrdered(run: RunNode, childRuns: readonly RunNode[]): boolean {
  for (const node of run.calls) if (!node.issuer && node.span) return true;
  return childRuns.length > 0;
}

/**
 * Per run, the agent runs started directly under it (handoffs: no call started them), in the
 * order of the runs: found in one pass, where asking every run of every run was quadratic in
 * sub-agents. Undefined when there are none (most traces).
 */
function handoffsByRun(assembly: Assembly): Map<RunNode, RunNode[]> | undefined {
  let byParent: Map<RunNode, RunNode[]> | undefined;
  for (const child of assembly.runs) {
    if (!child.parent || child.parentCall || !child.span) continue;
    byParent ??= new Map();
    const list = byParent.get(child.parent);
    if (list) list.push(child);
    else byParent.set(child.parent, [child]);
  }
  return byParent;
}

/** Per run, its steps (the OpenAI Agents SDK's turn spans), in one pass; undefined when there are none. */
function stepsByRun(assembly: Assembly): Map<RunNode, StepNode[]> | undefined {
  if (assembly.steps.length === 0) return undefined;
  const byRun = new Map<RunNode, StepNode[]>();
  for (const step of assembly.steps) {
    const list = byRun.get(step.run);
    if (list) list.push(step);
    else byRun.set(step.run, [step]);
  }
  return byRun;
}

function spanItem(span: SpanRecord, startVertex: number, endVertex: number): ChainItem {
  const item: ChainItem = { startVertex, endVertex, start: span.startTimeUnixNano };
  if (span.endTimeUnixNano !== undefined) item.end = span.endTimeUnixNano;
  return item;
}

/** The position of the last time at or before `time` in a sorted list, or -1. */
function lastAtOrBefore(sorted: readonly bigint[], time: bigint): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((sorted[middle] as bigint) <= time) low = middle + 1;
    else high = middle;
  }
  return low - 1;
}

function printable(key: string): string {
  return key.replace('\u0000', '');
}
