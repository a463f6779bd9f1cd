/** The processor's state per buffered trace, and the span checks it decides by. */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { mayBeAgentSpan } from './agent-span-filter.js';
import type { BufferedTrace } from './trace-buffer.js';
import type { Judgement } from './trace-judge.js';

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
}

export type Buffered = BufferedTrace<ReadableSpan, LiveTrace>;

/** Why a trace is judged as incomplete: closed early, or spans left out over the caps. */
export function incompleteReason(trace: Buffered): string | undefined {
  const over = trace.spansOverCap;
  const left =
    over > 0 ? `${over} span${over === 1 ? '' : 's'} over the buffer's caps not judged` : undefined;
  const why = trace.state.incomplete;
  return why !== undefined && left !== undefined ? `${why}; ${left}` : (why ?? left);
}

export function isAgentSpan(span: ReadableSpan): boolean {
  return mayBeAgentSpan(span.name, span.instrumentationScope.name, span.attributes);
}

export function isLocalRoot(span: ReadableSpan): boolean {
  const parent = span.parentSpanContext;
  return parent === undefined || parent.isRemote === true;
}
