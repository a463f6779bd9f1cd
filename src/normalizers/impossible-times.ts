/**
 * Timestamps no clock wrote: a span starting at 0 (an unset field) in a trace whose other spans
 * carry wall-clock times, beyond the year 2200 (u64-max, a bad conversion), or ending before it
 * starts. (A trace whose times all count from 0, as tests write them, is ordered by them alone.) Where nothing else orders two
 * calls, time does (causal-edges.ts), so such a span could put a call before or after any other:
 * the trace says so with one `span.impossible_time` issue naming the spans, and the evaluator
 * lets no rule that depends on order or duration decide (evaluate/impossible-times.ts).
 */
import type { SpanRecord } from '../model/span-record.js';
import { IMPOSSIBLE_TIME } from '../model/trajectory.js';
import type { Assembly } from './assembly-nodes.js';

/** 2200-01-01T00:00:00Z in nanoseconds: later than any clock that recorded an agent. */
const LATEST = 7_258_118_400_000_000_000n;
/** 2001-01-01T00:00:00Z in nanoseconds: a time past it is a wall clock's. */
const WALL_CLOCK = 978_307_200_000_000_000n;
/** Span ids named in the issue at most. */
const MAX_NAMED = 100;

/** Reports the call, turn and agent spans whose times are impossible; nothing is moved. */
export function reportImpossibleTimes(assembly: Assembly): void {
  const found: string[] = [];
  let count = 0;
  let wallClock = false;
  for (const span of assembly.tree.spans)
    if (span.startTimeUnixNano > WALL_CLOCK && span.startTimeUnixNano <= LATEST) {
      wallClock = true;
      break;
    }
  const check = (span: SpanRecord | undefined) => {
    if (!span || !isImpossible(span, wallClock)) return;
    count++;
    if (found.length < MAX_NAMED) found.push(span.spanId);
  };
  for (const node of assembly.calls) check(node.span);
  for (const turn of assembly.turns) check(turn.span);
  for (const run of assembly.runs) check(run.span);
  if (count === 0) return;
  assembly.issues.push({
    kind: IMPOSSIBLE_TIME,
    message: `${count} span${count === 1 ? '' : 's'} of calls, turns or runs ${count === 1 ? 'has' : 'have'} a time no clock wrote (0, after 2200, or an end before the start), so time cannot order them (first: span ${found[0]})`,
    spanIds: found,
  });
}

function isImpossible(span: SpanRecord, wallClock: boolean): boolean {
  const start = span.startTimeUnixNano;
  if ((wallClock && start <= 0n) || start > LATEST) return true;
  const end = span.endTimeUnixNano;
  return end !== undefined && (end > LATEST || end < start);
}
