/**
 * `tools.count` with `outcome: ok | error`: only the calls that ended that way count. A call that
 * never reported a result may or may not count, and the check is inconclusive only where that
 * could change it.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import { outcomeAdjective, outcomeAnswer } from './call-outcome.js';
import { callIds, times } from './outcome.js';
import { fail, pass, type RuleResult, undecided, untilMoreCalls } from './rule.js';
import { callsOfTool } from './trajectory-index.js';

/**
 * `tools.count` for calls of one outcome. A call that never reported a result may or may not
 * count, so the count lies between the calls that surely count and those plus the unknown ones:
 * the check passes when the bounds hold over that whole range, fails when they hold nowhere in
 * it, and is inconclusive otherwise (the reason says how many of the unknown calls would have
 * to have had the outcome).
 */
export function countOfOutcome(
  trajectory: Trajectory,
  tool: string,
  min: number | undefined,
  max: number | undefined,
  outcome: 'ok' | 'error',
): RuleResult {
  const rule = 'tools.count';
  const name = `tools.count:${tool}`;
  const counted: ToolCall[] = [];
  const unknown: ToolCall[] = [];
  for (const call of callsOfTool(trajectory, tool)) {
    const answer = outcomeAnswer(outcome, call);
    if (answer === 'yes') counted.push(call);
    else if (answer === 'unknown') unknown.push(call);
  }
  const least = counted.length;
  const most = least + unknown.length;
  const low = min ?? 0;
  const high = max ?? Number.POSITIVE_INFINITY;
  if (least >= low && most <= high) return pass(rule, 'structure', name, counted);
  const verb = outcome === 'ok' ? 'succeeded' : 'failed';
  const ids = least > 0 ? ` (${callIds(counted)})` : '';
  const pending =
    unknown.length > 0 ? `, and ${unknown.length} more never reported a result (${callIds(unknown)})` : '';
  const single = (min === undefined && max === 1) || (max === undefined && min === 1);
  const expected = `expected ${bounds(min, max)}${outcomeAdjective(outcome)} ${single ? 'call' : 'calls'}`;
  const seen = `${tool} ${verb} ${times(least)}${ids}${pending}; ${expected}`;
  // No count the unknown calls allow is within the bounds (the bounds may even contradict each other).
  if (Math.max(least, low) > Math.min(most, high)) {
    const result = fail(rule, 'structure', name, seen, least > 0 ? counted : unknown);
    // Too few can still be made up by later calls; too many cannot be undone.
    return least <= high ? untilMoreCalls(result) : result;
  }
  // Some number of the unknown calls having the outcome makes the count hold: say how many.
  const fewest = Math.max(0, low - least);
  const atMost = Math.min(unknown.length, high - least);
  const needed =
    fewest === atMost
      ? fewest === 0
        ? 'none'
        : fewest === unknown.length
          ? 'all'
          : `exactly ${fewest}`
      : fewest === 0
        ? `at most ${atMost}`
        : atMost === unknown.length
          ? `at least ${fewest}`
          : `between ${fewest} and ${atMost}`;
  const reason = `${seen}: it holds only if ${needed} of the calls without a result ${verb}`;
  return undecided(rule, 'structure', name, reason, [...counted, ...unknown]);
}

/** `between 1 and 3`, `at least 1`, `at most 3`. */
function bounds(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `between ${min} and ${max}`;
  return min !== undefined ? `at least ${min}` : `at most ${max}`;
}
