/**
 * Which tool results each LLM turn was shown, from its input history: the calls it consumed,
 * and what their results were when their own spans did not record them. Part of building the
 * causal graph (a call -> each turn that was shown its result).
 */
import type { Assembly, CallNode, TurnNode } from './assembly-nodes.js';
import type { ShownResult } from './convention.js';

/**
 * Which results each turn was shown: by call id where its input names them; otherwise (input
 * not captured, or results without ids) the results of the previous turn's calls, which is what
 * an agent loop sends back before it asks the model again. Each history repeats every earlier
 * result, so this is the one step that meets (turn, result) pairs by the square of a
 * conversation's length: each pair costs a lookup and a mark, no set.
 */
export function linkConsumption(assembly: Assembly): void {
  const byCallId = assembly.callsById;
  // A history read incrementally holds the previous turn's result objects, in the same places:
  // the calls carrying their ids were looked up then, and are taken from there. One buffer, for
  // each place is read for the previous turn before it is written for this one.
  let previousShown: readonly ShownResult[] = NO_RESULTS;
  const candidatesAt: (CallNode[] | undefined)[] = [];
  // Consumption is linked turn by turn: a turn's consumed ids gather here, then are copied out
  // at their size (an array grown by push reserves room for 17).
  const consumed: string[] = [];
  for (const run of assembly.runs) {
    for (let k = 0; k < run.turns.length; k++) {
      const turn = run.turns[k] as TurnNode;
      const shown = turn.draft.shown ?? NO_RESULTS;
      let named = 0;
      let count = 0;
      for (let i = 0; i < shown.length; i++) {
        const result = shown[i] as ShownResult;
        if (result.callId === undefined) {
          candidatesAt[i] = undefined;
          continue;
        }
        named++;
        const candidates = previousShown[i] === result ? candidatesAt[i] : byCallId.get(result.callId);
        candidatesAt[i] = candidates;
        const node = candidates && shownCall(candidates, turn, k);
        if (!node) continue;
        if (consume(turn, node)) consumed[count++] = node.id;
        learnFromShown(node, result);
      }
      previousShown = shown;
      const previous = run.turns[k - 1];
      if (named === 0 && previous) {
        // Results first: a call no span records is known to have returned once one is shown.
        fillResultsByTool(shown, previous.issued);
        for (const node of previous.issued)
          if (node && node.draft.outcome.status !== 'no_result' && consume(turn, node))
            consumed[count++] = node.id;
      }
      if (count > 0) turn.consumed = consumed.slice(0, count);
    }
  }
}

const NO_RESULTS: readonly ShownResult[] = [];

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
 * Records that the turn was shown the call's result, once per turn (false when it already was),
 * and keeps the call's consumption edges: to the first turn of each run that was shown it, for
 * later turns of a run see it too but already come after the first through the run's chain of
 * turns (an edge to each would make the graph quadratic in the length of a conversation for no
 * new order). A turn at or
 * before the call's own issuing turn (reused call ids can link one) cannot stand for the later
 * ones: its edge is kept as well, and the first turn after the issuer is kept apart from it.
 */
function consume(turn: TurnNode, node: CallNode): boolean {
  if (node.shownTo === turn) return false;
  node.shownTo = turn;
  const list = node.consumers;
  if (!list) {
    node.consumers = [turn];
    return true;
  }
  const issuer = node.issuer;
  if (issuer && issuer.run === turn.run && turn.position <= issuer.position) {
    list.push(turn);
    return true;
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
  return true;
}

/**
 * Results shown without ids (Gemini-style function responses) still name their tool: where
 * exactly one of the previous turn's calls used that tool, the result is that call's. A lone
 * result naming no tool is the previous turn's one call's, when it made one.
 */
function fillResultsByTool(shown: readonly ShownResult[], issued: readonly (CallNode | undefined)[]): void {
  for (const result of shown) {
    if (result.callId !== undefined || !result.result.captured) continue;
    // A result naming no tool either (an agent's `Observation:` text) is the one call's, if one.
    if (result.tool === undefined && shown.length !== 1) continue;
    let node: CallNode | undefined;
    let matches = 0;
    for (const candidate of issued) {
      if (!candidate || (result.tool !== undefined && candidate.draft.tool !== result.tool)) continue;
      node ??= candidate;
      matches++;
    }
    if (matches !== 1 || !node) continue;
    if (!node.draft.result.captured) node.draft.result = result.result;
    const outcome = node.draft.outcome;
    // A call with no span of its own learns that it returned from what the model was shown.
    if (!result.isError && outcome.status === 'no_result') node.draft.outcome = { status: 'ok' };
    if (
      result.isError &&
      (outcome.status === 'no_result' || (outcome.status === 'error' && !outcome.message))
    ) {
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
