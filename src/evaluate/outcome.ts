/** What every assertion family hands the evaluator, and the phrasing helpers reasons share. */
import type { AssertionResult } from '../model/report.js';
import type { ToolCall } from '../model/trajectory.js';
import { NO_CALLS } from './rule.js';

/** One assertion's result plus the calls it concerns, so findings can name calls and spans. */
export interface AssertionOutcome {
  result: AssertionResult;
  /** The calls the result is about: the mismatching calls, the matched chain, the forbidden calls. */
  calls: readonly ToolCall[];
}

/** A passed assertion: empty reason, as the trajectory-assertion JSON's result shape has it. */
export function passed(name: string, calls: readonly ToolCall[] = NO_CALLS): AssertionOutcome {
  return { result: { name, status: 'pass', reason: '' }, calls };
}

/** A failed assertion with its reason. */
export function failed(name: string, reason: string, calls: readonly ToolCall[]): AssertionOutcome {
  return { result: { name, status: 'fail', reason }, calls };
}

/** An assertion that could not be decided (e.g. arguments not captured), with the reason. */
export function undecided(name: string, reason: string, calls: readonly ToolCall[]): AssertionOutcome {
  return { result: { name, status: 'inconclusive', reason }, calls };
}

/**
 * A reason lists at most this many items (calls, tools); the rest are counted. A trace with
 * thousands of forbidden calls still gets a readable, bounded message; findings keep every id.
 */
export const MAX_LISTED = 10;

/** Joins items, keeping the first {@link MAX_LISTED} and counting the rest. */
export function capList(items: readonly string[], separator = ', '): string {
  const shown = items.slice(0, MAX_LISTED).join(separator);
  const rest = items.length - MAX_LISTED;
  return rest > 0 ? `${shown}${separator}and ${rest} more` : shown;
}

/** `call c3`, `calls c3, c5`: how calls are named in reasons. */
export function callIds(calls: readonly ToolCall[]): string {
  return `${calls.length === 1 ? 'call' : 'calls'} ${capList(calls.map((call) => call.id))}`;
}

/** `1 time`, `2 times`. */
export function times(count: number): string {
  return `${count} ${count === 1 ? 'time' : 'times'}`;
}
