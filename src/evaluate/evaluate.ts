/**
 * The evaluator: runs every rule family a scenario uses over one trajectory and folds the
 * results into a {@link Report}. Pure: no I/O, no clock, so replaying a trace gives the same report.
 */
import type {
  AssertionResult,
  Dimension,
  Finding,
  Report,
  ReportStats,
  Severity,
  Verdict,
} from '../model/report.js';
import type { Trajectory, TrajectoryIssue } from '../model/trajectory.js';
import type { Rules } from '../scenario/native.js';
import type { Scenario } from '../scenario/scenario.js';
import { FAMILIES } from './families.js';
import { type OutcomeResult, outcomeHookResults } from './outcome-hooks.js';
import type { RuleFamily, RuleResult } from './rule.js';

/** What a caller adds to an evaluation beyond the trajectory and the scenario. */
export interface EvaluateOptions {
  /**
   * Results of the scenario's outcome hooks, by hook name, obtained by the caller (running
   * them is I/O, so `evaluate` never does: see `evaluateWithOutcomes`). A hook with no result
   * here is inconclusive.
   */
  outcomes?: Readonly<Record<string, OutcomeResult>>;
}

/**
 * Evaluates `trajectory` against `scenario`. Every failed or inconclusive check is a finding
 * naming its calls and spans; a hard finding fails the verdict whatever the scores say.
 * Outcome hooks report under the `outcome` dimension, from `options.outcomes`.
 */
export function evaluate(trajectory: Trajectory, scenario: Scenario, options: EvaluateOptions = {}): Report {
  const results: RuleResult[] = [];
  for (const [section, family] of Object.entries(FAMILIES) as [keyof Rules, RuleFamily<unknown>][]) {
    const config = scenario.rules[section];
    if (config !== undefined) results.push(...family(trajectory, config));
  }
  // After the trajectory's families: the final state is judged apart from what the agent attempted.
  const hooks = scenario.rules.outcome;
  if (hooks !== undefined) results.push(...outcomeHookResults(hooks, options.outcomes));

  const assertions: AssertionResult[] = [];
  const findings: Finding[] = [];
  const tally = new Map<Dimension, { passed: number; total: number }>();
  for (const result of results) {
    assertions.push({ name: result.name, status: result.status, reason: result.reason });
    const counts = tally.get(result.dimension) ?? { passed: 0, total: 0 };
    tally.set(result.dimension, counts);
    counts.total++;
    if (result.status === 'pass') {
      counts.passed++;
      continue;
    }
    const finding: Finding = {
      rule: result.rule,
      severity: severityOf(result, scenario.severity),
      message: result.reason,
      calls: result.calls.map((call) => call.id),
      spans: result.calls.flatMap((call) => (call.spanId === undefined ? [] : [call.spanId])),
      assertion: result.name,
    };
    if (result.status === 'inconclusive') finding.inconclusive = true;
    findings.push(finding);
  }
  findings.push(...trajectory.issues.map(issueFinding));

  const scores: Partial<Record<Dimension, number>> = {};
  for (const [dimension, { passed, total }] of tally) scores[dimension] = total === 0 ? 1 : passed / total;
  const verdict = decideVerdict(findings);
  return {
    traceId: trajectory.traceId,
    scenario:
      scenario.version === undefined ? { id: scenario.id } : { id: scenario.id, version: scenario.version },
    verdict,
    pass: verdict === 'pass',
    scores,
    findings,
    assertions,
    stats: computeStats(trajectory),
  };
}

/**
 * The scenario's severity for the rule (by its id, else its family: `efficiency`), else the
 * rule's default. Safety gates stay hard: no scenario can average away an unauthorized call.
 */
function severityOf(result: RuleResult, overrides: Readonly<Record<string, Severity>>): Severity {
  if (result.alwaysHard) return 'hard';
  const family = result.rule.split('.')[0] ?? result.rule;
  return overrides[result.rule] ?? overrides[family] ?? result.severity ?? 'hard';
}

/**
 * What the normalizer could not read or link (unparsable arguments, contradictory ids, a
 * duplicate span) is reported with every evaluation of the trace, as a warning: it does not
 * decide the verdict, but a reader of a surprising verdict needs to see it.
 */
function issueFinding(issue: TrajectoryIssue): Finding {
  return {
    rule: `trajectory.${issue.kind}`,
    severity: 'warning',
    message: issue.message,
    calls: [],
    spans: issue.spanIds,
  };
}

/** A hard failure fails the verdict; otherwise a hard check that could not be decided makes it inconclusive. */
function decideVerdict(findings: readonly Finding[]): Verdict {
  const hard = findings.filter((finding) => finding.severity === 'hard');
  if (hard.some((finding) => !finding.inconclusive)) return 'fail';
  if (hard.some((finding) => finding.inconclusive)) return 'inconclusive';
  return 'pass';
}

function computeStats(trajectory: Trajectory): ReportStats {
  return {
    calls: trajectory.calls.length,
    turns: trajectory.turns.length,
    errors: trajectory.calls.filter((call) => call.outcome.status === 'error').length,
    durationMs: trajectory.duration()?.ms ?? 0,
  };
}
