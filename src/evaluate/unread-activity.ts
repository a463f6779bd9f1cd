/**
 * What the rules' results are worth when the trajectory shows tool use toolpath did not read
 * (the `unread_tool_activity` issue): the calls it holds may not be all the agent made. A check
 * that passed on them could have failed on the rest, so it is inconclusive; a failure the
 * calls seen already prove (a forbidden tool called, a call after a terminal one) stays a
 * failure, as no further call can undo it; a failure for want of something (a required tool,
 * a step of a sequence, a grounding source) may be among the unread calls, so it is
 * inconclusive too. Checks that do not look at calls (durations, tokens, outcome hooks) keep
 * their results.
 */
import { type Trajectory, type TrajectoryIssue, UNREAD_TOOL_ACTIVITY } from '../model/trajectory.js';
import { type RuleResult, undecidedInstead } from './rule.js';

/** Failures that more calls cannot turn into a pass: what the calls seen show is enough. */
const PROVEN_BY_CALLS_SEEN = new Set([
  'tools.allowed',
  'tools.forbidden',
  'order.terminal',
  'milestones.never',
  'safety.irreversible',
  'safety.failed_result',
  'safety.tenant',
  'safety.approval.denied',
  'mcp.servers',
  'mcp.annotations.destructive.denied',
  'efficiency.budget',
  'efficiency.maxCallsPerTurn',
  'efficiency.repeat',
  'efficiency.retry',
]);
/** Checks whose answer does not depend on the calls. */
const INDEPENDENT_OF_CALLS = new Set(['efficiency.duration', 'efficiency.tokens', 'outcome.check']);
/** Span ids named in a reason at most. */
const NAMED_SPANS = 4;

/** The trajectory's unread-activity issue, if it has one. */
export function unreadActivityIssue(trajectory: Trajectory): TrajectoryIssue | undefined {
  for (const issue of trajectory.issues) if (issue.kind === UNREAD_TOOL_ACTIVITY) return issue;
  return undefined;
}

/**
 * Replaces, in place, every result the unread activity makes undecidable by an inconclusive one
 * saying why (alwaysHard kept: a safety gate that cannot be decided is still a gate).
 */
export function undecidedByUnreadActivity(results: RuleResult[], issue: TrajectoryIssue): void {
  const spans = spanList(issue.spanIds);
  for (let i = 0; i < results.length; i++) {
    const result = results[i] as RuleResult;
    if (result.status === 'inconclusive' || INDEPENDENT_OF_CALLS.has(result.rule)) continue;
    if (result.status === 'fail' && PROVEN_BY_CALLS_SEEN.has(result.rule)) continue;
    const reason =
      result.status === 'pass'
        ? `cannot pass: the trace shows tool activity toolpath could not read (${spans}), and the calls it could read may not be all the agent made`
        : `${result.reason}; but the trace shows tool activity toolpath could not read (${spans}), which may hold what is missing`;
    results[i] = undecidedInstead(result, reason);
  }
}

function spanList(spanIds: readonly string[]): string {
  const shown = spanIds.slice(0, NAMED_SPANS).join(', ');
  const more = spanIds.length > NAMED_SPANS ? ` and ${spanIds.length - NAMED_SPANS} more` : '';
  return `span${spanIds.length === 1 ? '' : 's'} ${shown}${more}`;
}
