/** The processor's state per buffered trace, and the span checks it decides by. */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { BufferedTrace } from '../judging/trace-buffer.js';
import type { Judgement } from '../judging/trace-judge.js';
import { mayBeAgentSpan } from './agent-span-filter.js';

/** Per-trace state beside the buffered spans. */
export interface LiveTrace {
  localRootEnded: boolean;
  /** Judged in `onEnding` of the local root. */
  judgedInline?: Judgement;
  /** The evaluated span was that root: its events are already on it. */
  eventsOnRoot?: boolean;
  /** Why the trace is judged before it completed (timeout, shutdown). */
  incomplete?: string;
  /** The first `flushed` buffered spans went on at a `forceFlush`, before the trace was judged. */
  flushed: number;
  /** Followed again after it was let go: spans that started before may be missing from the judgement. */
  followedLate?: boolean;
  /** The heap its held spans take, estimated (held-bytes.ts); 0 once it is finished or let go. */
  bytes: number;
}

export type Buffered = BufferedTrace<ReadableSpan, LiveTrace>;

/** Why a trace is judged as incomplete: closed early, spans left out over the caps, or followed late. */
export function incompleteReason(trace: Buffered): string | undefined {
  const { state, spansOverCap: over } = trace;
  let why = state.incomplete;
  if (over > 0) why = joined(why, `${over} span${over === 1 ? '' : 's'} over the buffer's caps not judged`);
  if (state.followedLate) why = joined(why, FOLLOWED_LATE);
  return why;
}

const FOLLOWED_LATE =
  'followed late (limits.maxOpenTraces or traceTimeoutMs): spans that started before may be missing';

const joined = (first: string | undefined, next: string) =>
  first === undefined ? next : `${first}; ${next}`;

export function isAgentSpan(span: ReadableSpan): boolean {
  return mayBeAgentSpan(span.name, span.instrumentationScope.name, span.attributes);
}

export function isLocalRoot(span: ReadableSpan): boolean {
  const parent = span.parentSpanContext;
  return parent === undefined || parent.isRemote === true;
}
