/**
 * A sub-agent with no span of its own: a code agent's managed agent runs inside one of the
 * manager's calls (read from its code, so no span records it), and the only spans are the model
 * calls of both, side by side in one run. Each keeps its own conversation (TurnDraft.thread):
 * the turns of other conversations that lie between the call's turn and the next turn of the
 * conversation that made it ran inside that call, so they are a run of their own under it, named
 * for the tool called. Part of assembly, after the calls are linked to their turns.
 */
import type { Assembly, CallNode, RunNode, TurnNode } from './assembly-nodes.js';

/** Splits off, in every run whose turns hold several conversations, the runs its spanless calls held. */
export function splitConversations(assembly: Assembly): void {
  // Most traces: no convention keys its turns, or one conversation per run.
  if (!assembly.turns.some((turn) => turn.draft.thread !== undefined)) return;
  for (const run of [...assembly.runs]) {
    if (run.turns.length < 3 || !severalThreads(run.turns)) continue;
    splitRun(assembly, run);
  }
}

function severalThreads(turns: readonly TurnNode[]): boolean {
  const first = turns[0]?.draft.thread;
  for (const turn of turns) if (turn.draft.thread !== first) return true;
  return false;
}

function splitRun(assembly: Assembly, run: RunNode): void {
  // Turns in start order (positions are not set yet).
  const turns = [...run.turns].sort((a, b) =>
    a.span.startTimeUnixNano < b.span.startTimeUnixNano
      ? -1
      : a.span.startTimeUnixNano > b.span.startTimeUnixNano
        ? 1
        : 0,
  );
  const moved = new Set<TurnNode>();
  for (let k = 0; k < turns.length; k++) {
    const asker = turns[k] as TurnNode;
    if (moved.has(asker) || asker.draft.thread === undefined) continue;
    const call = onlySpanlessCall(asker);
    if (!call) continue;
    const next = turns.find((turn, at) => at > k && turn.draft.thread === asker.draft.thread);
    if (!next) continue;
    const from = asker.span.endTimeUnixNano ?? asker.span.startTimeUnixNano;
    const until = next.span.startTimeUnixNano;
    const inside = turns.filter(
      (turn) =>
        !moved.has(turn) &&
        turn.draft.thread !== asker.draft.thread &&
        turn.span.startTimeUnixNano >= from &&
        (turn.span.endTimeUnixNano ?? turn.span.startTimeUnixNano) <= until,
    );
    if (inside.length === 0) continue;
    const child = childRun(run, call, inside[0] as TurnNode);
    for (const turn of inside) {
      moved.add(turn);
      moveTurn(turn, run, child);
    }
    assembly.runs.push(child);
    renumber(child);
  }
  if (moved.size > 0) renumber(run);
}

/** Each turn's place in its run, the turns being in start order. */
function renumber(run: RunNode): void {
  for (let k = 0; k < run.turns.length; k++) (run.turns[k] as TurnNode).position = k;
}

/** The one call of the turn that no span records, if it made exactly one such call. */
function onlySpanlessCall(turn: TurnNode): CallNode | undefined {
  let found: CallNode | undefined;
  for (const node of turn.issued) {
    if (!node || node.span) continue;
    if (found) return undefined;
    found = node;
  }
  return found;
}

function childRun(parent: RunNode, call: CallNode, first: TurnNode): RunNode {
  return {
    id: `run:${first.span.spanId}`,
    span: undefined,
    spanIndex: -1,
    name: call.draft.tool,
    parent,
    parentCall: call,
    turns: [],
    calls: [],
    startVertex: -1,
    endVertex: -1,
    handoffFrom: undefined,
    innerSpans: undefined,
  };
}

/** Moves the turn, and the calls it asked for, from one run to the other. */
function moveTurn(turn: TurnNode, from: RunNode, to: RunNode): void {
  from.turns.splice(from.turns.indexOf(turn), 1);
  to.turns.push(turn);
  turn.run = to;
  for (const node of turn.issued) {
    if (!node || node.run !== from) continue;
    from.calls.splice(from.calls.indexOf(node), 1);
    to.calls.push(node);
    node.run = to;
    if (node.draft.agentName === undefined || node.draft.agentName === from.name)
      node.draft.agentName = to.name;
  }
}
