/**
 * `efficiency.repeat` with `outcome: ok | error`: only identical calls of that outcome count, the
 * first of them is not a repeat, and a retry of the identical call just before it is not one
 * either when retries are judged (as in efficiency.ts). A call that never reported a result may or
 * may not count: the repeats are counted once with the calls that surely have the outcome and once
 * with those added; over the limit the first way fails, over it only the second way is undecided.
 */
import { canonicalJson } from '../model/json.js';
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import { type OutcomeRequirement, outcomeAdjective, outcomeAnswer } from './call-outcome.js';
import { renderValue } from './match-args.js';
import { callIds, capList, times } from './outcome.js';
import { fail, pass, type RuleResult, undecided } from './rule.js';
import { callsOfTool } from './trajectory-index.js';

const RULE = 'efficiency.repeat';
const DIMENSION = 'efficiency';

/** Whether `call` retries `previous`, the identical call just before it. */
export type RetryTest = (trajectory: Trajectory, previous: ToolCall, call: ToolCall) => boolean;

/**
 * The repeat check over `groups` (identical captured calls, each group in causal order) and
 * `blind` (per tool, its calls whose arguments were not captured). `isRetry` is given when retries
 * are judged by `efficiency.retries`.
 */
export function repeatsOfOutcome(
  trajectory: Trajectory,
  groups: readonly (readonly ToolCall[])[],
  blind: ReadonlyMap<string, readonly ToolCall[]>,
  max: number,
  outcome: OutcomeRequirement,
  isRetry: RetryTest | undefined,
): RuleResult {
  const kind = outcomeAdjective(outcome);
  const sure = (call: ToolCall) => outcomeAnswer(outcome, call) === 'yes';
  const possible = (call: ToolCall) => outcomeAnswer(outcome, call) !== 'no';
  const problems: string[] = [];
  const involved: ToolCall[] = [];
  const doubts: string[] = [];
  const doubtful: ToolCall[] = [];
  for (const group of groups) {
    const repeated = repeatsWithin(trajectory, group, isRetry, sure);
    const first = group[0] as ToolCall;
    const args = first.args.captured ? renderValue(canonicalJson(first.args.value)) : '';
    const head = `${first.tool} was called ${times(group.length)} with identical arguments ${args} (${callIds(group)})`;
    const counted = `${repeated.length}${kind} ${repeated.length === 1 ? 'repeat' : 'repeats'}`;
    if (repeated.length > max) {
      problems.push(`${head}: ${counted} (${callIds(repeated)}), at most ${max} allowed`);
      involved.push(...group);
      continue;
    }
    const maybe = repeatsWithin(trajectory, group, isRetry, possible);
    if (maybe.length <= max) continue;
    const unknown = group.filter((call) => possible(call) && !sure(call));
    doubts.push(
      `${head}: ${counted}, at most ${max} allowed, but ${callIds(unknown)} never reported a result and could make it ${maybe.length}`,
    );
    doubtful.push(...group);
  }
  if (problems.length > 0) return fail(RULE, DIMENSION, RULE, capList(problems, '; '), involved);
  // A call whose arguments are unknown may repeat any call of its tool that may count.
  for (const [tool, calls] of blind) {
    if (!calls.some(possible)) continue;
    let counting = 0;
    for (const call of callsOfTool(trajectory, tool)) if (possible(call)) counting++;
    if (counting < 2) continue;
    doubts.push(
      `the arguments of ${tool} (${callIds(calls)}) were not captured, so its repeated${kind} calls cannot be told apart`,
    );
    doubtful.push(...calls);
  }
  if (doubts.length > 0) return undecided(RULE, DIMENSION, RULE, capList(doubts, '; '), doubtful);
  return pass(RULE, DIMENSION, RULE);
}

/**
 * The repeats in one group of identical calls among those `counts` keeps: each kept call after the
 * first kept one, unless it retries the identical call just before it.
 */
function repeatsWithin(
  trajectory: Trajectory,
  group: readonly ToolCall[],
  isRetry: RetryTest | undefined,
  counts: (call: ToolCall) => boolean,
): ToolCall[] {
  const repeated: ToolCall[] = [];
  let seenFirst = false;
  for (let index = 0; index < group.length; index++) {
    const call = group[index] as ToolCall;
    if (!counts(call)) continue;
    if (!seenFirst) {
      seenFirst = true;
      continue;
    }
    if (isRetry !== undefined && index > 0 && isRetry(trajectory, group[index - 1] as ToolCall, call))
      continue;
    repeated.push(call);
  }
  return repeated;
}
