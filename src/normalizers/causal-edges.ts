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
import { type AgentRun, Trajectory, type TrajectoryRoot, type Turn } from '../model/trajectory.js';
import {
  type Assembly,
  type CallNode,
  enclosingCall,
  type RunNode,
  type TurnNode,
  toToolCall,
} from './assemble.js';
import type { ShownResult } from './convention.js';

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
  for (const node of assembly.calls) node.vertex = graph.addNode(node.id, callTime(node), true);

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
  for (const run of assembly.runs) addTimeChain(assembly, run, graph);

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
    calls: graph.inListingOrder(assembly.calls, vertexOf).map(toToolCall),
    callsInOrder: true,
    order: graph,
    // Turns in causal order, like calls (spans arrive in any order).
    turns: graph.inListingOrder(assembly.turns, vertexOf).map(toTurn),
    agents: assembly.runs.map(toAgentRun),
    issues: assembly.issues,
    spanCount: assembly.tree.spans.length,
    root: rootOf(assembly),
  });
}

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

  constructor(assembly: Assembly) {
    super();
    this.#collides =
      assembly.calls.some((node) => node.id.charCodeAt(0) === 0) ||
      assembly.runs.some((run) => run.span?.spanId === 'trace');
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
 * Which results each turn was shown: by call id where its input names them; otherwise (input
 * not captured, or results without ids) the results of the previous turn's calls, which is what
 * an agent loop sends back before it asks the model again. Each history repeats every earlier
 * result, so this is the one step that meets (turn, result) pairs by the square of a
 * conversation's length: each pair costs a lookup and a mark, no set.
 */
function linkConsumption(assembly: Assembly): void {
  const byCallId = assembly.callsById;
  // A history read incrementally holds the previous turn's result objects, in the same places:
  // the calls carrying their ids were looked up then, and are taken from there.
  let previousShown: readonly ShownResult[] = [];
  let previousCandidates: (CallNode[] | undefined)[] = [];
  for (const run of assembly.runs) {
    for (let k = 0; k < run.turns.length; k++) {
      const turn = run.turns[k] as TurnNode;
      const shown = turn.draft.shown ?? [];
      const shownCandidates: (CallNode[] | undefined)[] = [];
      let named = 0;
      for (let i = 0; i < shown.length; i++) {
        const result = shown[i] as ShownResult;
        if (result.callId === undefined) {
          shownCandidates.push(undefined);
          continue;
        }
        named++;
        const candidates = previousShown[i] === result ? previousCandidates[i] : byCallId.get(result.callId);
        shownCandidates.push(candidates);
        const node = candidates && shownCall(candidates, turn, k);
        if (!node) continue;
        consume(turn, node);
        learnFromShown(node, result);
      }
      previousShown = shown;
      previousCandidates = shownCandidates;
      const previous = run.turns[k - 1];
      if (named === 0 && previous) {
        const issued = previous.issued.filter((node): node is CallNode => node !== undefined);
        for (const node of issued) if (node.draft.outcome.status !== 'no_result') consume(turn, node);
        fillResultsByTool(shown, issued);
      }
    }
  }
}

/**
 * Which of the calls carrying a shown result's id the turn (at `k` in its run) was shown. One
 * call (the usual case): that one, unless the turn issued it. Ids reused across turns (`call_0`
 * in every turn): the call from the latest earlier turn of this run that this turn has not been
 * shown yet; else one this turn did not issue, from its run first.
 */
function shownCall(candidates: readonly CallNode[], turn: TurnNode, k: number): CallNode | undefined {
  if (candidates.length === 1) {
    const only = candidates[0] as CallNode;
    return only.issuer === turn ? undefined : only;
  }
  const run = turn.run;
  let node: CallNode | undefined;
  let nodeTurn = -1;
  for (const candidate of candidates) {
    const issuer = candidate.issuer;
    if (!issuer || candidate.run !== run || issuer.run !== run) continue;
    const at = issuer.position;
    if (at >= k || at <= nodeTurn || candidate.shownTo === turn) continue;
    node = candidate;
    nodeTurn = at;
  }
  if (node) return node;
  let other: CallNode | undefined;
  for (const candidate of candidates) {
    if (candidate.issuer === turn) continue;
    if (candidate.run === run) return candidate;
    other ??= candidate;
  }
  return other;
}

/** What the turn was shown fills in what the call's own span did not record. */
function learnFromShown(node: CallNode, shown: ShownResult): void {
  if (!node.draft.result.captured && shown.result.captured) node.draft.result = shown.result;
  // A call with no span of its own learns how it ended from what the model was shown.
  if (node.draft.outcome.status === 'no_result' && shown.result.captured) {
    node.draft.outcome = shown.isError
      ? { status: 'error', ...errorMessage(shown.result.value) }
      : { status: 'ok' };
  }
}

/**
 * Records that the turn was shown the call's result, once per turn, and keeps the call's
 * consumption edges: to the first turn of each run that was shown it, for later turns of a run
 * see it too but already come after the first through the run's chain of turns (an edge to each
 * would make the graph quadratic in the length of a conversation for no new order). A turn at or
 * before the call's own issuing turn (reused call ids can link one) cannot stand for the later
 * ones: its edge is kept as well, and the first turn after the issuer is kept apart from it.
 */
function consume(turn: TurnNode, node: CallNode): void {
  if (node.shownTo === turn) return;
  node.shownTo = turn;
  turn.consumed.push(node);
  const list = node.consumers;
  if (!list) {
    node.consumers = [turn];
    return;
  }
  const issuer = node.issuer;
  if (issuer && issuer.run === turn.run && turn.position <= issuer.position) {
    list.push(turn);
    return;
  }
  // The consumer kept for this turn's run, other than those at or before the issuer.
  let k = 0;
  for (; k < list.length; k++) {
    const other = list[k] as TurnNode;
    if (other.run === turn.run && !(issuer && issuer.run === other.run && other.position <= issuer.position))
      break;
  }
  if (k === list.length) list.push(turn);
  else if (turn.position < (list[k] as TurnNode).position) list[k] = turn;
}

/**
 * Results shown without ids (Gemini-style function responses) still name their tool: where
 * exactly one of the previous turn's calls used that tool, the result is that call's.
 */
function fillResultsByTool(shown: readonly ShownResult[], issued: readonly CallNode[]): void {
  for (const result of shown) {
    if (result.callId !== undefined || result.tool === undefined || !result.result.captured) continue;
    const matches = issued.filter((node) => node.draft.tool === result.tool);
    const [node] = matches;
    if (matches.length !== 1 || !node) continue;
    if (!node.draft.result.captured) node.draft.result = result.result;
    const outcome = node.draft.outcome;
    if (result.isError && outcome.status !== 'ok' && !(outcome.status === 'error' && outcome.message)) {
      const errorType = outcome.status === 'error' ? outcome.errorType : undefined;
      node.draft.outcome = {
        status: 'error',
        ...(errorType && { errorType }),
        ...errorMessage(result.result.value),
      };
    }
  }
}

/** The message of an error result: the string itself, or its `error` / `message` field. */
function errorMessage(value: unknown): { message?: string } {
  if (typeof value === 'string') return value === '' ? {} : { message: value };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const inner = (value as Record<string, unknown>).error ?? (value as Record<string, unknown>).message;
    if (typeof inner === 'string' && inner !== '') return { message: inner };
  }
  return {};
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
 * Time order for what no turn orders: a run's calls without an issuing turn, and agent runs
 * started directly under it (handoffs). `a -> b` when a ended before b started; with a
 * millisecond start clock, an end is rounded down to its millisecond and two items that
 * started in the same millisecond are never ordered. Linear in items: ends go to time points
 * chained in order, and each item hangs off the last point at or before its start.
 */
function addTimeChain(assembly: Assembly, run: RunNode, graph: TraceGraph): void {
  const turnless = run.calls.filter((node) => !node.issuer && node.span);
  const childRuns = assembly.runs.filter((child) => child.parent === run && !child.parentCall && child.span);
  if (turnless.length === 0 && childRuns.length === 0) return;
  const items: ChainItem[] = [
    ...run.turns.map((turn) => spanItem(turn.span, turn.vertex, turn.vertex)),
    ...turnless.map((node) => spanItem(node.span as SpanRecord, node.vertex, node.vertex)),
    ...childRuns.map((child) => spanItem(child.span as SpanRecord, child.startVertex, child.endVertex)),
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

// The model's objects are built field by field in their usual key order: spreading optional
// fields into a literal is ten times slower in V8, and these are built for every turn and run.

function toTurn(turn: TurnNode): Turn {
  const out = { id: turn.id, spanId: turn.span.spanId, runId: turn.run.id } as Turn;
  if (turn.draft.model) out.model = turn.draft.model;
  if (turn.draft.usage) out.usage = turn.draft.usage;
  const issued: string[] = [];
  for (const node of turn.issued) if (node !== undefined) issued.push(node.id);
  out.issued = issued;
  const consumed: string[] = [];
  for (const node of turn.consumed) consumed.push(node.id);
  out.consumed = consumed;
  return out;
}

function toAgentRun(run: RunNode): AgentRun {
  const out = { id: run.id } as AgentRun;
  if (run.name) out.name = run.name;
  if (run.span) out.spanId = run.span.spanId;
  if (run.parent) out.parentRunId = run.parent.id;
  if (run.parentCall) out.parentCallId = run.parentCall.id;
  out.turns = run.turns.map((turn) => turn.id);
  out.calls = run.calls.map((node) => node.id);
  return out;
}

function rootOf(assembly: Assembly): TrajectoryRoot | undefined {
  const root = assembly.tree.root();
  if (!root) return undefined;
  const agentName =
    assembly.runs.find((run) => run.span === root)?.name ?? assembly.runs.find((run) => run.name)?.name;
  const out: TrajectoryRoot = { name: root.name, attributes: root.attributes, spanId: root.spanId };
  if (agentName) out.agentName = agentName;
  out.startTimeUnixNano = root.startTimeUnixNano;
  if (root.endTimeUnixNano !== undefined) out.endTimeUnixNano = root.endTimeUnixNano;
  return out;
}

function printable(key: string): string {
  return key.replace('\u0000', '');
}
