/**
 * What every rule family hands the evaluator: one result per check, with the calls it is about.
 * Families are pure functions of a trajectory and their section of the scenario.
 */
import type { AssertionResult, Dimension, ReferenceScores, Severity } from '../model/report.js';
import type { ToolCall, Trajectory } from '../model/trajectory.js';

/** The outcome of one check. */
export interface RuleResult {
  /** Stable dotted id of the rule (`order.before`, `grounding.source`); findings carry it. */
  rule: string;
  dimension: Dimension;
  /** The name the check reports under in `assertions` (`tool_sequence`, `order.before[0]`). */
  name: string;
  status: 'pass' | 'fail' | 'inconclusive';
  /** Empty on pass; otherwise what was expected and what was seen. */
  reason: string;
  /** The calls the result is about: the offending calls, the matched chain. */
  calls: readonly ToolCall[];
  /** Severity when the scenario does not set one; `hard` when absent. */
  severity?: Severity | undefined;
  /** Safety gates: hard whatever the scenario says. */
  alwaysHard?: boolean | undefined;
  /** The reference rule's graded scores, for the report. */
  referenceScores?: ReferenceScores | undefined;
  /**
   * A failure calls yet to come could still turn into a pass (a required tool not called yet, a
   * sequence not finished): while a conversation may go on, it is `pending`, not failed.
   */
  couldStillPass?: boolean | undefined;
  /** For a rule of `agents`: the agent it judged (its rule id is then `agents.NAME.rule`). */
  agent?: string | undefined;
}

/**
 * A rule family: checks one section of a scenario against a trajectory. Adds its results to
 * `results` and returns it: the evaluator gathers every family's results in one list rather
 * than a list per family. Without `results`, a fresh list.
 */
export type RuleFamily<Section> = (
  trajectory: Trajectory,
  section: Section,
  results?: RuleResult[],
) => RuleResult[];

/**
 * The calls of a result about none, one list for all: a result's calls are never changed, and
 * most passing checks name none.
 */
export const NO_CALLS: readonly ToolCall[] = Object.freeze([]);

/** A passing result. */
export function pass(
  rule: string,
  dimension: Dimension,
  name: string,
  calls: readonly ToolCall[] = NO_CALLS,
): RuleResult {
  return makeResult(rule, dimension, name, 'pass', '', calls);
}

/** A failing result with its reason. */
export function fail(
  rule: string,
  dimension: Dimension,
  name: string,
  reason: string,
  calls: readonly ToolCall[],
): RuleResult {
  return makeResult(rule, dimension, name, 'fail', reason, calls);
}

/** A result that could not be decided (data missing from the trace), with the reason. */
export function undecided(
  rule: string,
  dimension: Dimension,
  name: string,
  reason: string,
  calls: readonly ToolCall[],
): RuleResult {
  return makeResult(rule, dimension, name, 'inconclusive', reason, calls);
}

/** The result undecided instead, for `reason`: its severity kept, and whether it is always hard. */
export function undecidedInstead(result: RuleResult, reason: string): RuleResult {
  const replaced = undecided(result.rule, result.dimension, result.name, reason, result.calls);
  replaced.severity = result.severity;
  replaced.alwaysHard = result.alwaysHard;
  return replaced;
}

/**
 * Every result is made here, with all its fields, the optional ones undefined: results of one
 * shape keep the evaluator's reads of them monomorphic, where a severity or a safety flag added
 * to some results would give them other shapes (the fold over results is most of what the
 * evaluator does beside the families).
 */
function makeResult(
  rule: string,
  dimension: Dimension,
  name: string,
  status: RuleResult['status'],
  reason: string,
  calls: readonly ToolCall[],
): RuleResult {
  return {
    rule,
    dimension,
    name,
    status,
    reason,
    calls,
    severity: undefined,
    alwaysHard: undefined,
    referenceScores: undefined,
    couldStillPass: undefined,
    agent: undefined,
  };
}

/**
 * Marks a failure as one later calls could still mend (see {@link RuleResult.couldStillPass});
 * a pass or an undecided result is left as it is. Sets the flag on the result itself, as
 * {@link alwaysHard} does.
 */
export function untilMoreCalls(result: RuleResult): RuleResult {
  if (result.status === 'fail') result.couldStillPass = true;
  return result;
}

/**
 * Marks a result as a safety gate: hard whatever the scenario says. Sets the flag on the result
 * itself (fresh from {@link pass}, {@link fail} or {@link undecided}): copying it with a spread
 * plus a new key is a slow path in V8, about a microsecond per result.
 */
export function alwaysHard(result: RuleResult): RuleResult {
  result.alwaysHard = true;
  return result;
}

/**
 * A rule result from an assertion's result (the trajectory-assertion checks): its fields copied one by one,
 * as a spread into a literal with more keys is a slow path in V8.
 */
export function ruleResult(
  rule: string,
  dimension: Dimension,
  assertion: AssertionResult,
  calls: readonly ToolCall[],
): RuleResult {
  // The checks never say `pending`: only a provisional report's assertions do.
  const status = assertion.status === 'pending' ? 'inconclusive' : assertion.status;
  return makeResult(rule, dimension, assertion.name, status, assertion.reason, calls);
}
