/**
 * Structure before clocks: what a convention's spans say about order, added to the causal graph
 * before time is asked.
 * - Steps (a span per model turn and the calls it asked for, such as the `turn` spans of the
 *   OpenAI Agents SDK): a run's steps follow one another, so everything in one happened before
 *   anything in the next, however close their times. Calls in one step that no turn issued were
 *   asked for by that step's one model response: they are concurrent.
 * - Handoffs: the target agent's run comes after the call that handed control to it.
 * Part of building the causal graph (see causal-edges).
 */
import type { CausalGraph } from '../model/causal-order.js';
import {
  type Assembly,
  type CallNode,
  enclosingCall,
  enclosingStep,
  type RunNode,
  type StepNode,
  type TurnNode,
} from './assembly-nodes.js';

/** A graph that can hold nodes that are not calls (causal-edges' TraceGraph). */
interface StepGraph extends CausalGraph {
  addInternal(label: string, time: bigint): number;
}

/**
 * Adds each step's start and end, the chain of each run's steps, and puts what each step holds
 * (turns, calls, runs started inside it) between its start and end. Marks each call with its step.
 */
export function addStepEdges(assembly: Assembly, graph: StepGraph): void {
  const steps = assembly.steps;
  if (steps.length === 0) return;
  for (const step of steps) {
    const span = step.span;
    step.startVertex = graph.addInternal(`\u0000step:${span.spanId}`, span.startTimeUnixNano);
    step.endVertex = graph.addInternal(
      `\u0000step-end:${span.spanId}`,
      span.endTimeUnixNano ?? span.startTimeUnixNano,
    );
    graph.addEdgeBetween(step.run.startVertex, step.startVertex);
    graph.addEdgeBetween(step.startVertex, step.endVertex);
    graph.addEdgeBetween(step.endVertex, step.run.endVertex);
  }
  for (const run of stepsByRun(steps).values()) {
    run.sort(stepOrder);
    for (let k = 1; k < run.length; k++)
      graph.addEdgeBetween((run[k - 1] as StepNode).endVertex, (run[k] as StepNode).startVertex);
  }
  const stepOfTurn = new Map<TurnNode, StepNode>();
  const turnOfSpan = assembly.turnOfSpan;
  for (let index = 0; index < turnOfSpan.length; index++) {
    const turn = turnOfSpan[index];
    const step = turn && enclosingStep(assembly, index);
    if (!turn || !step || step.run !== turn.run) continue;
    stepOfTurn.set(turn, step);
    hang(graph, step, turn.vertex, turn.vertex);
  }
  for (const node of assembly.calls) {
    // A call's step is its span's; a call only a request records is in its issuing turn's.
    const step =
      node.spanIndex !== -1
        ? enclosingStep(assembly, node.spanIndex)
        : node.issuer && stepOfTurn.get(node.issuer);
    if (!step || step.run !== node.run) continue;
    node.step = step;
    hang(graph, step, node.vertex, node.vertex);
  }
  for (const run of assembly.runs) {
    const step = enclosingStep(assembly, run.spanIndex);
    if (step && step.run === run.parent) hang(graph, step, run.startVertex, run.endVertex);
  }
}

/** Puts `start`..`end` inside the step. */
function hang(graph: StepGraph, step: StepNode, start: number, end: number): void {
  graph.addEdgeBetween(step.startVertex, start);
  graph.addEdgeBetween(end, step.endVertex);
}

function stepsByRun(steps: readonly StepNode[]): Map<RunNode, StepNode[]> {
  const byRun = new Map<RunNode, StepNode[]>();
  for (const step of steps) {
    const list = byRun.get(step.run);
    if (list) list.push(step);
    else byRun.set(step.run, [step]);
  }
  return byRun;
}

/**
 * A run's steps in the order they ran: by the convention's number where both have one, else by
 * start, then end (steps do not overlap: of two that started together, the one that ended first
 * came first), then arrival (spans end, and so arrive, in the order their steps ran).
 */
function stepOrder(a: StepNode, b: StepNode): number {
  if (a.index !== undefined && b.index !== undefined && a.index !== b.index) return a.index - b.index;
  const aStart = a.span.startTimeUnixNano;
  const bStart = b.span.startTimeUnixNano;
  if (aStart !== bStart) return aStart < bStart ? -1 : 1;
  const aEnd = a.span.endTimeUnixNano ?? aStart;
  const bEnd = b.span.endTimeUnixNano ?? bStart;
  if (aEnd !== bEnd) return aEnd < bEnd ? -1 : 1;
  return a.spanIndex - b.spanIndex;
}

/**
 * Each handoff call's target run: the run of the target agent started inside the call (control
 * returned to the caller), else the first run of that agent, outside the caller's own line of
 * runs, that started no earlier than the call. Control passes at the call: the target's run comes
 * after it.
 */
export function linkHandoffs(assembly: Assembly, graph: CausalGraph): void {
  for (const node of assembly.calls) {
    const handoff = node.draft.handoff;
    if (!handoff) continue;
    const target = handoffTarget(assembly, node, handoff.targetName);
    if (!target) continue;
    node.handoffTarget = target;
    target.handoffFrom ??= node;
    if (target.parentCall !== node) graph.addEdgeBetween(node.vertex, target.startVertex);
  }
}

function handoffTarget(assembly: Assembly, node: CallNode, name: string): RunNode | undefined {
  let best: RunNode | undefined;
  const start = node.span?.startTimeUnixNano ?? node.issuer?.span.startTimeUnixNano;
  for (const run of assembly.runs) {
    if (run.name === undefined || !sameAgent(run.name, name) || !run.span) continue;
    if (run.spanIndex !== -1 && enclosingCall(assembly, run.spanIndex) === node) return run;
    if (isLineOf(node.run, run, assembly.runs.length) || run.handoffFrom) continue;
    const runStart = run.span.startTimeUnixNano;
    if (start !== undefined && runStart + assembly.resolution <= start) continue;
    if (!best || runStart < (best.span as NonNullable<RunNode['span']>).startTimeUnixNano) best = run;
  }
  return best;
}

/**
 * Whether a handoff naming `target` names the agent `name`: the name itself, or the name as a
 * framework's transfer tool spells it (`transfer_to_Billing_Agent`: non-alphanumerics as `_`,
 * lower-cased by the Python SDK), where that is all a request records.
 */
function sameAgent(name: string, target: string): boolean {
  return name === target || name.replace(/[^a-zA-Z0-9]/g, '_').toLowerCase() === target.toLowerCase();
}

/**
 * Whether `run` is `of` or one of its enclosing runs (a handoff never goes back up its own line).
 * At most `runs` steps up: parent ids that loop make runs whose parents loop.
 */
function isLineOf(of: RunNode, run: RunNode, runs: number): boolean {
  let current: RunNode | undefined = of;
  for (let steps = 0; current && steps <= runs; steps++, current = current.parent)
    if (current === run) return true;
  return false;
}
