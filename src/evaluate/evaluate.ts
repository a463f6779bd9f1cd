/**
 * The evaluator: runs every rule family a scenario uses over one trajectory and folds the
 * results into a {@link Report}. Pure: no I/O, no clock, so replaying a trace gives the same report.
 */
import {
  type AssertionResult,
  DIMENSIONS,
  type Dimension,
  type Finding,
  type ReferenceScores,
  type Report,
  type ReportStats,
  type Severity,
  type Verdict,
} from '../model/report.js';
import {
  type ToolCall,
  type Trajectory,
  type TrajectoryIssue,
  UNREAD_TOOL_ACTIVITY,
} from '../model/trajectory.js';
import { TOOLPATH_VERSION } from '../model/version.js';
import type { Rules } from '../scenario/native.js';
import type { Scenario } from '../scenario/scenario.js';
import { agentResults, agentRulePrefix } from './agents.js';
import { FAMILIES } from './families.js';
import { impossibleTimeIssue, undecidedByImpossibleTimes } from './impossible-times.js';
import { type OutcomeResult, outcomeHookResults } from './outcome-hooks.js';
import type { RuleFamily, RuleResult } from './rule.js';
import { releaseIndex } from './trajectory-index.js';
import { undecidedByUnreadActivity, unreadActivityIssue } from './unread-activity.js';

/** What a caller adds to an evaluation beyond the trajectory and the scenario. */
export interface EvaluateOptions {
  /**
   * Results of the scenario's outcome hooks, by hook name, obtained by the caller (running
   * them is I/O, so `evaluate` never does: see `evaluateWithOutcomes`). A hook with no result
   * here is inconclusive.
   */
  outcomes?: Readonly<Record<string, OutcomeResult>>;
  /**
   * The trajectory may still grow (a conversation whose next trace may come): a failure that later
   * calls could mend is `pending` instead of failed (see `Finding.pending`).
   */
  provisional?: boolean;
}

/**
 * Evaluates `trajectory` against `scenario`. Every failed or inconclusive check is a finding
 * naming its calls and spans; a hard finding fails the verdict whatever the scores say.
 * Outcome hooks report under the `outcome` dimension, from `options.outcomes`.
 */
export function evaluate(trajectory: Trajectory, scenario: Scenario, options: EvaluateOptions = {}): Report {
  // Every family adds to one list, in the families' order.
  const results: RuleResult[] = [];
  try {
    // Indexed, not destructured by for-of: the pair iteration allocated per family and evaluation.
    for (let f = 0; f < FAMILY_LIST.length; f++) {
      const [section, family] = FAMILY_LIST[f] as [keyof Rules, RuleFamily<unknown>];
      const config = scenario.rules[section];
      if (config === undefined) continue;
      const returned = family(trajectory, config, results);
      // A family that builds its own list (the signature allows leaving `results` out) is kept too.
      if (returned !== results)
        for (let r = 0; r < returned.length; r++) results.push(returned[r] as RuleResult);
    }
    // Each agent's rules, by the same families on its own calls (agents.ts).
    const agents = scenario.rules.agents;
    if (agents !== undefined) agentResults(trajectory, agents, FAMILY_LIST, results);
  } finally {
    // The families are done with the trajectory: its index must not keep it alive.
    releaseIndex(trajectory);
  }
  // Tool use seen but not read: nothing that depends on the calls may pass.
  const unread = unreadActivityIssue(trajectory);
  if (unread) undecidedByUnreadActivity(results, unread);
  // Times no clock wrote: nothing that rests on order or duration decides.
  const impossible = impossibleTimeIssue(trajectory);
  if (impossible) undecidedByImpossibleTimes(results, impossible);
  // After the trajectory's families: the final state is judged apart from what the agent attempted.
  const hooks = scenario.rules.outcome;
  if (hooks !== undefined)
    for (const result of outcomeHookResults(hooks, options.outcomes)) results.push(result);

  const provisional = options.provisional === true;
  const findings: Finding[] = [];
  let referenceScores: ReferenceScores | undefined;
  for (let r = 0; r < results.length; r++) {
    const result = results[r] as RuleResult;
    if (result.status !== 'pass')
      findings.push(findingOf(result, scenario.severity, trajectory, provisional));
    if (result.referenceScores !== undefined) referenceScores = result.referenceScores;
  }
  const { issues } = trajectory;
  for (let i = 0; i < issues.length; i++)
    findings.push(issueFinding(issues[i] as TrajectoryIssue, trajectory));
  const verdict = decideVerdict(findings);
  const report: Report = {
    traceId: trajectory.traceId,
    ...(trajectory.traceIds && {
      conversationId: trajectory.conversationId as string,
      traceIds: [...trajectory.traceIds],
    }),
    scenario:
      scenario.version === undefined ? { id: scenario.id } : { id: scenario.id, version: scenario.version },
    toolpathVersion: TOOLPATH_VERSION,
    verdict,
    pass: verdict === 'pass',
    scores: scoresOf(results),
    findings,
    assertions: results.map(provisional ? provisionalAssertionOf : assertionOf),
    stats: computeStats(trajectory),
  };
  if (referenceScores !== undefined) report.referenceScores = referenceScores;
  return report;
}

function assertionOf(result: RuleResult): AssertionResult {
  return { name: result.name, status: result.status, reason: result.reason };
}

function provisionalAssertionOf(result: RuleResult): AssertionResult {
  const status = isPending(result, true) ? 'pending' : result.status;
  return { name: result.name, status, reason: result.reason };
}

function isPending(result: RuleResult, provisional: boolean): boolean {
  return provisional && result.status === 'fail' && result.couldStillPass === true;
}

/** The finding of a failed or undecided result. */
function findingOf(
  result: RuleResult,
  severities: Readonly<Record<string, Severity>>,
  trajectory: Trajectory,
  provisional: boolean,
): Finding {
  const finding: Finding = {
    rule: result.rule,
    severity: severityOf(result, severities),
    message: result.reason,
    calls: result.calls.map(idOf),
    spans: spanIdsOf(result.calls),
  };
  if (trajectory.traceIds) finding.traceIds = result.calls.map((call) => trajectory.traceIdOf(call));
  finding.assertion = result.name;
  if (result.agent !== undefined) finding.agent = result.agent;
  if (result.status === 'inconclusive') finding.inconclusive = true;
  if (isPending(result, provisional)) finding.pending = true;
  return finding;
}

function idOf(call: ToolCall): string {
  return call.id;
}

/** The span ids of the calls that came from spans. */
function spanIdsOf(calls: readonly ToolCall[]): string[] {
  const spans: string[] = [];
  for (const call of calls) if (call.spanId !== undefined) spans.push(call.spanId);
  return spans;
}

/** Per dimension checked, in order of first appearance, the share of its checks that passed. */
function scoresOf(results: readonly RuleResult[]): Partial<Record<Dimension, number>> {
  const scores: Partial<Record<Dimension, number>> = {};
  // Counted at each dimension's place in DIMENSIONS: the checks at 2 x slot, the passes after.
  const counts: number[] = new Array(2 * DIMENSIONS.length).fill(0);
  for (let r = 0; r < results.length; r++) {
    const result = results[r] as RuleResult;
    const slot = DIMENSIONS.indexOf(result.dimension);
    if (slot === -1) continue;
    counts[2 * slot] = (counts[2 * slot] as number) + 1;
    if (result.status === 'pass') counts[2 * slot + 1] = (counts[2 * slot + 1] as number) + 1;
  }
  // Each score set once, in the order of its dimension's first check (a bit per slot says set).
  let set = 0;
  for (let r = 0; r < results.length; r++) {
    const dimension = (results[r] as RuleResult).dimension;
    const slot = DIMENSIONS.indexOf(dimension);
    if (slot === -1 || (set & (1 << slot)) !== 0) continue;
    set |= 1 << slot;
    scores[dimension] = (counts[2 * slot + 1] as number) / (counts[2 * slot] as number);
  }
  return scores;
}

/** The families as a list, in {@link FAMILIES}' order: read once, not per evaluation. */
const FAMILY_LIST = Object.entries(FAMILIES) as [keyof Rules, RuleFamily<unknown>][];

/**
 * The scenario's severity for the rule (by its id, else its family: `efficiency`), else the
 * rule's default. Safety gates stay hard: no scenario can average away an unauthorized call.
 */
function severityOf(result: RuleResult, overrides: Readonly<Record<string, Severity>>): Severity {
  if (result.alwaysHard) return 'hard';
  const own = overrides[result.rule];
  if (own !== undefined) return own;
  // An agent's rule (`agents.NAME.tools.count`): by its own id and family too.
  const rule =
    result.agent === undefined ? result.rule : result.rule.slice(agentRulePrefix(result.agent).length);
  if (rule !== result.rule && overrides[rule] !== undefined) return overrides[rule];
  const dot = rule.indexOf('.');
  const family = dot === -1 ? rule : rule.slice(0, dot);
  return overrides[family] ?? result.severity ?? 'hard';
}

/**
 * What the normalizer could not read or link (unparsable arguments, contradictory ids, a
 * duplicate span) is reported with every evaluation of the trace, as a warning: it does not
 * decide the verdict, but a reader of a surprising verdict needs to see it. Unread tool use is
 * hard and inconclusive instead.
 */
function issueFinding(issue: TrajectoryIssue, trajectory: Trajectory): Finding {
  const finding: Finding = {
    rule: `trajectory.${issue.kind}`,
    severity: 'warning',
    message: issue.message,
    calls: [],
    spans: issue.spanIds,
  };
  if (trajectory.traceIds) finding.traceIds = [];
  // Unread tool use is the one issue that decides: while it stands the verdict cannot be `pass`.
  if (issue.kind === UNREAD_TOOL_ACTIVITY) {
    finding.severity = 'hard';
    finding.inconclusive = true;
  }
  return finding;
}

/** A hard failure fails the verdict; otherwise a hard check that could not be decided makes it inconclusive. */
function decideVerdict(findings: readonly Finding[]): Verdict {
  let verdict: Verdict = 'pass';
  for (let f = 0; f < findings.length; f++) {
    const finding = findings[f] as Finding;
    if (finding.severity !== 'hard') continue;
    if (!finding.inconclusive && !finding.pending) return 'fail';
    verdict = 'inconclusive';
  }
  return verdict;
}

function computeStats(trajectory: Trajectory): ReportStats {
  let errors = 0;
  const { calls } = trajectory;
  for (let c = 0; c < calls.length; c++) if ((calls[c] as ToolCall).outcome.status === 'error') errors++;
  return {
    calls: trajectory.calls.length,
    turns: trajectory.turns.length,
    errors,
    durationMs: trajectory.duration()?.ms ?? 0,
  };
}
