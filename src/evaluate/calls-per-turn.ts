/**
 * `efficiency.maxCallsPerTurn`: at most N tool calls asked for in one LLM turn (twenty calls in
 * one turn is a runaway, as Phoenix counts them). Read on the turn each call carries: a call with
 * no recorded turn may belong to any turn, so it decides the result only as a doubt.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import { callIds, MAX_LISTED } from './outcome.js';
import { fail, pass, type RuleResult, undecided } from './rule.js';

/**
 * A turn asking for more than `max` calls fails (calls not executed count: they were asked for).
 * Otherwise, where the calls with no recorded turn, all added to the fullest turn, would go over
 * `max`, the result is inconclusive; else it passes.
 */
export function callsPerTurn(trajectory: Trajectory, max: number): RuleResult {
  const rule = 'efficiency.maxCallsPerTurn';
  const byTurn = new Map<string, ToolCall[]>();
  const turnless: ToolCall[] = [];
  for (const call of trajectory.calls) {
    if (call.turnId === undefined) {
      turnless.push(call);
      continue;
    }
    const calls = byTurn.get(call.turnId);
    if (calls) calls.push(call);
    else byTurn.set(call.turnId, [call]);
  }
  let fullest = 0;
  const over: [string, ToolCall[]][] = [];
  for (const entry of byTurn) {
    const count = entry[1].length;
    if (count > fullest) fullest = count;
    if (count > max) over.push(entry);
  }
  if (over.length > 0) {
    const shown = over
      .slice(0, MAX_LISTED)
      .map(([turn, calls]) => `turn ${turn} asked for ${calls.length} calls (${callIds(calls)})`);
    const rest = over.length > MAX_LISTED ? `; and ${over.length - MAX_LISTED} more turns` : '';
    const reason = `at most ${max} calls per turn: ${shown.join('; ')}${rest}`;
    return fail(
      rule,
      'efficiency',
      rule,
      reason,
      over.flatMap(([, calls]) => calls),
    );
  }
  if (turnless.length > 0 && fullest + turnless.length > max) {
    const known = byTurn.size === 0 ? 'no call has one' : `the fullest recorded turn asked for ${fullest}`;
    const reason = `at most ${max} calls per turn, but the trace records no turn for ${callIds(turnless)} (${known}), so how many were asked for in one turn cannot be told`;
    return undecided(rule, 'efficiency', rule, reason, turnless);
  }
  return pass(rule, 'efficiency', rule);
}
