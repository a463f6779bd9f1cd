/**
 * `tool_sequence` (the trajectory-assertion JSON's `expected_tool_sequence`): the steps must appear as an ordered
 * subsequence on the causal order - step i+1's call happens-after step i's call. Other calls
 * may interleave; calls issued together (one turn, a parallel batch) never satisfy "A then B".
 * The search is in sequence-search.ts; this module judges and explains. The `exact` mode (the
 * calls are the steps, one after the other, nothing else) is {@link checkExactToolSequence}.
 * A step with `outcome: ok | error` takes only calls that ended that way; a call that never
 * reported a result is undecided for it, like a call whose arguments were not captured.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import type { OrderSection } from '../scenario/native.js';

type SequenceStep = NonNullable<OrderSection['sequence']>['steps'][number];

import { withOutcome } from './call-outcome.js';
import { describeExpectation, type MatchOutcome, matchArgs } from './match-args.js';
import { type AssertionOutcome, callIds, capList, failed, passed, times, undecided } from './outcome.js';
import { type SequenceSearch, searchSequence } from './sequence-search.js';
import { callsOfTool } from './trajectory-index.js';

/** The trajectory-assertion JSON's result name of the sequence assertion. */
export const TOOL_SEQUENCE = 'tool_sequence';

/** Evaluates `expected_tool_sequence` against the trajectory. */
export function checkToolSequence(trajectory: Trajectory, steps: readonly SequenceStep[]): AssertionOutcome {
  // Each call's arguments are checked once per step, then shared by both searches below. A step
  // without `match` takes every call of its tool: it needs no outcomes, only the tool.
  const judgedSteps = steps.map((step) =>
    step.match === undefined && !asksOutcome(step) ? undefined : matchOutcomes(trajectory, step),
  );
  const certain = searchSequence(
    trajectory,
    steps.map((step, index) => {
      const byCall = judgedSteps[index];
      return byCall === undefined
        ? (call: ToolCall) => call.tool === step.tool
        : (call: ToolCall) => byCall.get(call)?.status === 'match';
    }),
  );
  if (certain.reached === steps.length) return passed(TOOL_SEQUENCE, certain.chain);

  const outcomes = steps.map((step, index) => judgedSteps[index] ?? matchOutcomes(trajectory, step));
  // Would the sequence hold if every call we could not judge matched? Then it is undecided, not failed.
  const judged = outcomes.every((byCall) =>
    [...byCall.values()].every((outcome) => outcome.status !== 'undecided'),
  );
  if (!judged) {
    const possible = searchSequence(
      trajectory,
      outcomes.map((byCall) => (call: ToolCall) => {
        const status = byCall.get(call)?.status;
        return status === 'match' || status === 'undecided';
      }),
    );
    if (possible.reached === steps.length) {
      const unknown = possible.chain.flatMap((call, index) => {
        const outcome = outcomes[index]?.get(call);
        return outcome?.status === 'undecided' ? [`${call.tool} (call ${call.id}) ${outcome.detail}`] : [];
      });
      const reason =
        `could not decide: ${progress(certain, steps)}; the rest holds only if these calls match: ` +
        unknown.join('; ');
      return undecided(TOOL_SEQUENCE, reason, possible.chain);
    }
  }

  const { reason, calls } = diagnose(trajectory, steps, certain, outcomes[certain.reached]);
  return failed(TOOL_SEQUENCE, `${progress(certain, steps)}; ${reason}`, [...certain.chain, ...calls]);
}

const MATCHED: MatchOutcome = { status: 'match' };

/** How each call of the step's tool matches its `match` and `outcome` (every call matches a step with neither). */
function matchOutcomes(trajectory: Trajectory, step: SequenceStep): Map<ToolCall, MatchOutcome> {
  const byCall = new Map<ToolCall, MatchOutcome>();
  for (const call of callsOfTool(trajectory, step.tool)) byCall.set(call, stepOutcome(step, call));
  return byCall;
}

/** Whether a step asks for an outcome other than `any`. */
function asksOutcome(step: SequenceStep): boolean {
  return step.outcome !== undefined && step.outcome !== 'any';
}

/** How one call of the step's tool matches the step: its arguments (when it has a `match`), then its outcome. */
function stepOutcome(step: SequenceStep, call: ToolCall): MatchOutcome {
  return withOutcome(step.match ? matchArgs(step.match, call.args) : MATCHED, step.outcome, call);
}

/** What a step asks beyond its tool: ` that succeeded with the expected arguments {…}`, or ''. */
function wantedOf(step: SequenceStep): string {
  const outcome = asksOutcome(step) ? ` that ${step.outcome === 'ok' ? 'succeeded' : 'failed'}` : '';
  const match = step.match ? ` with ${describeExpectation(step.match)}` : '';
  return outcome === '' || match === '' ? `${outcome}${match}` : `${outcome},${match}`;
}

/** `matched 2 of 4 steps: lookup_account (call c1), check_refund_eligibility (call c3)`. */
function progress(search: SequenceSearch, steps: readonly SequenceStep[]): string {
  return progressOf(search.chain, steps.length);
}

/** Why the first unmatched step has no call: never called, called too early or alongside, other arguments. */
function diagnose(
  trajectory: Trajectory,
  steps: readonly SequenceStep[],
  search: SequenceSearch,
  outcomes: Map<ToolCall, MatchOutcome> | undefined,
): { reason: string; calls: ToolCall[] } {
  const step = steps[search.reached];
  if (!step || !outcomes) return { reason: 'the sequence is incomplete', calls: [] };
  const { tool } = step;
  const candidates = [...outcomes.keys()];
  if (candidates.length === 0) return { reason: `${tool} was never called`, calls: [] };
  const wanted = wantedOf(step);
  const withArguments = (calls: readonly ToolCall[]) =>
    capList(
      calls.map((call) => {
        const outcome = outcomes.get(call);
        return `call ${call.id}${outcome && outcome.status !== 'match' ? `: ${outcome.detail}` : ''}`;
      }),
      '; ',
    );

  const previous = search.chain[search.chain.length - 1];
  if (!previous) {
    // The first step failed, so every call of its tool was rejected on its arguments.
    const none = asksOutcome(step) ? 'none' : 'not';
    const reason = `${tool} was called ${times(candidates.length)}, but ${none}${wanted}: ${withArguments(candidates)}`;
    return { reason, calls: candidates };
  }

  const before: ToolCall[] = [];
  const alongside: ToolCall[] = [];
  const afterWithOtherArguments: ToolCall[] = [];
  const reused: ToolCall[] = []; // a step repeating the previous tool: its call cannot count twice
  const frontier = new Set(search.frontier);
  for (const call of candidates) {
    if (search.follows(call)) afterWithOtherArguments.push(call);
    else if (frontier.has(call)) reused.push(call);
    else if (trajectory.happensBefore(call, previous)) before.push(call);
    else alongside.push(call);
  }
  const parts: string[] = [];
  if (reused.length > 0) parts.push(`only as the previous step (${callIds(reused)})`);
  if (before.length > 0) parts.push(`before it (${callIds(before)})`);
  if (alongside.length > 0) parts.push(`concurrently with it, not after (${callIds(alongside)})`);
  if (afterWithOtherArguments.length > 0) {
    const other = asksOutcome(step) ? 'after it, but not as the step asks' : 'after it with other arguments';
    parts.push(`${other} (${withArguments(afterWithOtherArguments)})`);
  }
  const after = `after ${previous.tool} (call ${previous.id})`;
  return {
    reason: `no ${tool} call${wanted} ${after}: ${tool} was called ${parts.join(', ')}`,
    calls: candidates,
  };
}

/**
 * `tool_sequence` in `exact` mode: the trajectory's calls are exactly the steps, in order - as
 * many calls as steps, each happening-after the one before it, so no step may share a turn with
 * the next (or overlap it). A call whose arguments were not captured, where its step needs them,
 * makes the result inconclusive unless the sequence diverges elsewhere. The reason of a failure
 * says where the calls diverged from the steps.
 */
export function checkExactToolSequence(
  trajectory: Trajectory,
  steps: readonly SequenceStep[],
): AssertionOutcome {
  const { calls } = trajectory;
  const matched: ToolCall[] = [];
  const unknown: string[] = [];
  const stop = (reason: string, more: readonly ToolCall[]) =>
    failed(TOOL_SEQUENCE, `${progressOf(matched, steps.length)}; ${reason}`, [...matched, ...more]);
  for (let index = 0; index < Math.max(steps.length, calls.length); index++) {
    const step = steps[index];
    const call = calls[index];
    if (!call) {
      const expected = step ? `${step.tool}${wantedOf(step)}` : '';
      return stop(
        index === 0
          ? `no tool was called; expected ${expected} first`
          : `the calls ended there; expected ${expected} next`,
        [],
      );
    }
    if (!step) {
      const rest = calls.slice(index);
      const listed = capList(rest.map((extra) => `${extra.tool} (call ${extra.id})`));
      return stop(
        `then ${rest.length} more ${rest.length === 1 ? 'call' : 'calls'}, expected none: ${listed}`,
        rest,
      );
    }
    // Order before identity: "the next call" exists only if one call comes before all the rest.
    // Checked first, so which of two calls issued together is listed first never changes the
    // verdict or the step the reason says it diverged at.
    const next = calls[index + 1];
    if (next && !trajectory.happensBefore(call, next)) {
      const alongside = calls.slice(index + 1).filter((other) => !trajectory.happensBefore(call, other));
      return stop(`diverged at step ${index + 1}: ${unordered(call, alongside)}`, [call, ...alongside]);
    }
    const wanted = wantedOf(step);
    if (call.tool !== step.tool) {
      return stop(
        `diverged at step ${index + 1}: expected ${step.tool}${wanted}, saw ${call.tool} (call ${call.id})`,
        [call],
      );
    }
    const outcome = step.match || asksOutcome(step) ? stepOutcome(step, call) : undefined;
    if (outcome?.status === 'mismatch') {
      return stop(
        `diverged at step ${index + 1}: expected ${step.tool}${wanted}, saw call ${call.id}: ${outcome.detail}`,
        [call],
      );
    }
    if (outcome?.status === 'undecided') unknown.push(`${call.tool} (call ${call.id}) ${outcome.detail}`);
    matched.push(call);
  }
  if (unknown.length > 0) {
    const reason = `could not decide: the calls are the steps only if these calls match: ${capList(unknown, '; ')}`;
    return undecided(TOOL_SEQUENCE, reason, matched);
  }
  return passed(TOOL_SEQUENCE, matched);
}

/** Why `call` and the calls `alongside` it cannot be told apart as consecutive steps. */
function unordered(call: ToolCall, alongside: readonly ToolCall[]): string {
  const others = capList(alongside.map((other) => `${other.tool} (call ${other.id})`));
  if (call.outcome.status === 'no_result') {
    return `${call.tool} (call ${call.id}) never reported a result, so ${others} did not come after it`;
  }
  if (call.outcome.status === 'not_executed') {
    return `${call.tool} (call ${call.id}) was not executed, so ${others} did not come after it`;
  }
  const sameTurn = call.turnId !== undefined && alongside.every((other) => other.turnId === call.turnId);
  const how = sameTurn ? 'concurrently, in the same turn' : 'concurrently';
  return `${call.tool} (call ${call.id}) and ${others} happened ${how}, not one after the other`;
}

/** `matched 2 of 4 steps: lookup_account (call c1), check_refund_eligibility (call c3)`. */
function progressOf(chain: readonly ToolCall[], total: number): string {
  const head = `matched ${chain.length} of ${total} steps`;
  if (chain.length === 0) return head;
  // Not capped: the chain is at most as long as the steps the scenario wrote, and the trajectory-assertion JSON's
  // messages list it whole.
  return `${head}: ${chain.map((call) => `${call.tool} (call ${call.id})`).join(', ')}`;
}
