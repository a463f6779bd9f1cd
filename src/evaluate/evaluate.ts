/**
 * The evaluator: runs every assertion family of a scenario over one trajectory and folds the
 * results into a {@link Report}. Pure: no I/O, no clock, so replaying a trace gives the same report.
 */
import type { AssertionResult, Dimension, Finding, Report, ReportStats, Verdict } from '../model/report.js';
import type { Trajectory, TrajectoryIssue } from '../model/trajectory.js';
import type { Scenario } from '../scenario/scenario.js';
import { checkAllowedTools } from './allowed-tools.js';
import { checkExpectedToolCalls } from './expected-tool-calls.js';
import type { AssertionOutcome } from './outcome.js';
import { checkToolCallArgs } from './tool-call-args.js';
import { checkToolSequence } from './tool-sequence.js';

/** One family's outcomes with the rule id and dimension they report under. */
interface FamilyOutcomes {
  rule: string;
  dimension: Dimension;
  outcomes: AssertionOutcome[];
}

/**
 * Evaluates `trajectory` against `scenario`. Assertions come out in the seed's order of families
 * (arguments, sequence, allowlist, presence), each family in the order the scenario lists them.
 * Every failed or inconclusive assertion is also a hard finding naming its calls and spans.
 */
export function evaluate(trajectory: Trajectory, scenario: Scenario): Report {
  const { assertions } = scenario;
  const families: FamilyOutcomes[] = [];
  if (assertions.tool_call_args && assertions.tool_call_args.length > 0) {
    const outcomes = assertions.tool_call_args.map((assertion) => checkToolCallArgs(trajectory, assertion));
    families.push({ rule: 'arguments.match', dimension: 'arguments', outcomes });
  }
  // An empty sequence asserts nothing, like an omitted one.
  if (assertions.expected_tool_sequence && assertions.expected_tool_sequence.length > 0) {
    const outcomes = [checkToolSequence(trajectory, assertions.expected_tool_sequence)];
    families.push({ rule: 'order.sequence', dimension: 'order', outcomes });
  }
  if (assertions.allowed_tools) {
    const outcomes = [checkAllowedTools(trajectory, assertions.allowed_tools)];
    families.push({ rule: 'tools.allowed', dimension: 'structure', outcomes });
  }
  if (assertions.expected_tool_calls && assertions.expected_tool_calls.length > 0) {
    const outcomes = checkExpectedToolCalls(trajectory, assertions.expected_tool_calls);
    families.push({ rule: 'tools.required', dimension: 'structure', outcomes });
  }

  const results: AssertionResult[] = [];
  const findings: Finding[] = [];
  const tally = new Map<Dimension, { passed: number; total: number }>();
  for (const { rule, dimension, outcomes } of families) {
    const counts = tally.get(dimension) ?? { passed: 0, total: 0 };
    tally.set(dimension, counts);
    for (const { result, calls } of outcomes) {
      results.push(result);
      counts.total++;
      if (result.status === 'pass') {
        counts.passed++;
        continue;
      }
      const finding: Finding = {
        rule,
        severity: 'hard',
        message: result.reason,
        calls: calls.map((call) => call.id),
        spans: calls.flatMap((call) => (call.spanId === undefined ? [] : [call.spanId])),
        assertion: result.name,
      };
      if (result.status === 'inconclusive') finding.inconclusive = true;
      findings.push(finding);
    }
  }

  findings.push(...trajectory.issues.map(issueFinding));

  const scores: Partial<Record<Dimension, number>> = {};
  for (const [dimension, { passed, total }] of tally) scores[dimension] = total === 0 ? 1 : passed / total;
  const verdict = decideVerdict(findings);
  const report: Report = {
    traceId: trajectory.traceId,
    scenario:
      scenario.version === undefined ? { id: scenario.id } : { id: scenario.id, version: scenario.version },
    verdict,
    pass: verdict === 'pass',
    scores,
    findings,
    assertions: results,
    stats: computeStats(trajectory),
  };
  return report;
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

/** A hard failure fails the verdict; otherwise anything undecided makes it inconclusive. */
function decideVerdict(findings: readonly Finding[]): Verdict {
  if (findings.some((finding) => finding.severity === 'hard' && !finding.inconclusive)) return 'fail';
  if (findings.some((finding) => finding.inconclusive)) return 'inconclusive';
  return 'pass';
}

function computeStats(trajectory: Trajectory): ReportStats {
  return {
    calls: trajectory.calls.length,
    turns: trajectory.turns.length,
    errors: trajectory.calls.filter((call) => call.outcome.status === 'error').length,
    durationMs: durationMs(trajectory),
  };
}

/** The root span's duration, else first call start to last call end, else 0 (e.g. event files). */
function durationMs(trajectory: Trajectory): number {
  const { root } = trajectory;
  if (root?.startTimeUnixNano !== undefined && root.endTimeUnixNano !== undefined) {
    return nanosToMs(root.endTimeUnixNano - root.startTimeUnixNano);
  }
  let start: bigint | undefined;
  let end: bigint | undefined;
  for (const call of trajectory.calls) {
    const callStart = call.startTimeUnixNano;
    const callEnd = call.endTimeUnixNano;
    if (callStart !== undefined && (start === undefined || callStart < start)) start = callStart;
    if (callEnd !== undefined && (end === undefined || callEnd > end)) end = callEnd;
  }
  return start !== undefined && end !== undefined && end > start ? nanosToMs(end - start) : 0;
}

/** Milliseconds with microsecond precision; dividing as bigint first keeps long spans exact. */
function nanosToMs(nanos: bigint): number {
  if (nanos <= 0n) return 0;
  return Number(nanos / 1000n) / 1000;
}
