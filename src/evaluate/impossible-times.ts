/**
 * What the rules' results are worth when some span's time is impossible (the
 * `span.impossible_time` issue, normalizers/impossible-times.ts): where time ordered calls, the
 * order is not known, so no rule about order or duration decides; each says why.
 */
import { IMPOSSIBLE_TIME, type Trajectory, type TrajectoryIssue } from '../model/trajectory.js';
import { type RuleResult, undecidedInstead } from './rule.js';

/** Rules, by name or family prefix, whose result rests on the order or the times of calls. */
const DEPENDS_ON_TIME = ['order.', 'grounding', 'milestones.', 'efficiency.duration'];

/** The trajectory's impossible-time issue, if it has one. */
export function impossibleTimeIssue(trajectory: Trajectory): TrajectoryIssue | undefined {
  for (const issue of trajectory.issues) if (issue.kind === IMPOSSIBLE_TIME) return issue;
  return undefined;
}

/** Replaces, in place, every decided result that rests on order or time by an inconclusive one. */
export function undecidedByImpossibleTimes(results: RuleResult[], issue: TrajectoryIssue): void {
  const spans = issue.spanIds.slice(0, 4).join(', ');
  for (let i = 0; i < results.length; i++) {
    const result = results[i] as RuleResult;
    if (result.status === 'inconclusive') continue;
    if (!DEPENDS_ON_TIME.some((prefix) => result.rule.startsWith(prefix))) continue;
    results[i] = undecidedInstead(
      result,
      `cannot decide: span${issue.spanIds.length === 1 ? '' : 's'} ${spans} ${issue.spanIds.length === 1 ? 'has' : 'have'} a time no clock wrote (0, after 2200, or an end before the start), and the order of the calls rests on times`,
    );
  }
}
