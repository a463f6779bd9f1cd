/**
 * A sub-agent reached through a call no tool span records (a request read from the turn, whose
 * body another convention recorded as some other span): the run that lies between the request
 * and the next turn of the run that asked is that call's. A call's span, when there is one,
 * says so by enclosing the run (assemble.ts); this says it from the turns. Part of assembly.
 */
import type { Assembly, CallNode, RunNode, TurnNode } from './assembly-nodes.js';

/**
 * Gives each run with no call above it, started under the run of a turn that asked for exactly
 * one call no span records, that call as its parent when the run lies within the call's time:
 * after the asking turn ended, before that run's next turn started.
 */
export function attachRunsToSpanlessCalls(assembly: Assembly): void {
  const resolution = assembly.resolution;
  for (const run of assembly.runs) {
    if (run.parentCall || !run.parent || !run.span) continue;
    const call = spanlessCallAround(run.parent, run, resolution);
    if (call) run.parentCall = call;
  }
}

/** The one spanless call of `parent`'s turns whose time holds `run`'s span, if exactly one does. */
function spanlessCallAround(parent: RunNode, run: RunNode, resolution: bigint): CallNode | undefined {
  const span = run.span;
  if (!span) return undefined;
  const start = span.startTimeUnixNano;
  const end = span.endTimeUnixNano ?? start;
  let found: CallNode | undefined;
  for (let k = 0; k < parent.turns.length; k++) {
    const turn = parent.turns[k] as TurnNode;
    const asked = turn.span.endTimeUnixNano ?? turn.span.startTimeUnixNano;
    if (asked > start + resolution) break;
    const next = parent.turns[k + 1];
    if (next && next.span.startTimeUnixNano + resolution < end) continue;
    for (const node of turn.issued) {
      if (!node || node.span) continue;
      // Two calls of one turn could each hold it: neither is said.
      if (found) return undefined;
      found = node;
    }
  }
  return found;
}
