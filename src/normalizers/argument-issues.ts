/**
 * The issues a call's arguments raise once linking has chosen them: a wrapper that could not be
 * unwrapped (`arguments.wrapped`), arguments that are not valid JSON (`arguments.unparsable`).
 * After linking, as a request the model made can stand in for a span's unreadable arguments.
 */
import { TOO_DEEP_TEXT } from '../model/json-depth.js';
import type { TrajectoryIssue } from '../model/trajectory.js';
import type { CallNode } from './assembly-nodes.js';

/** Adds the argument issues of the calls to `issues`. */
export function reportArgumentIssues(calls: readonly CallNode[], issues: TrajectoryIssue[]): void {
  for (const { draft, span } of calls) {
    if (draft.argsProblem !== undefined)
      issues.push({
        kind: 'arguments.wrapped',
        message: `arguments of ${draft.tool}${span ? ` (span ${span.spanId})` : ''}: ${draft.argsProblem}`,
        spanIds: span ? [span.spanId] : [],
      });
    // A call no span records has the arguments its turn's reading has (said there, if at all).
    if (!span) continue;
    // Too deep is said once the Trajectory is made, for every call (model/trajectory.ts).
    if (!draft.args.captured || draft.args.parseError === undefined || draft.args.value === TOO_DEEP_TEXT)
      continue;
    issues.push({
      kind: 'arguments.unparsable',
      message: `arguments of ${draft.tool}${span ? ` (span ${span.spanId})` : ''} are not valid JSON: ${draft.args.parseError}`,
      spanIds: span ? [span.spanId] : [],
    });
  }
}
