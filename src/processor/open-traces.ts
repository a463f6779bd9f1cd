/**
 * Completion tracking for traces that have no agent span yet: how many of their spans are open
 * and whether their local root ended. Tiny per trace (no spans held), so it can follow every
 * request of an app; capped all the same, and what it stops following is counted.
 */
import { DecisionCache } from '../judging/decision-cache.js';

/** What is known of a trace no convention has claimed yet. */
export interface OpenTrace {
  /** Spans started here and not yet ended. */
  open: number;
  localRootEnded: boolean;
  readonly firstSeenAt: number;
  /**
   * Followed again after it was let go (the map was full, or it was open too long): spans that
   * started before are not counted, so the trace may look complete while some are still open.
   */
  readonly followedLate: boolean;
}

/** Ids of traces let go, remembered so that a trace followed again is known as such. */
const LET_GO_REMEMBERED = 10_000;

/** See the module comment. Oldest first, like the TraceBuffer. */
export class OpenTraces {
  private readonly traces = new Map<string, OpenTrace>();
  /** Traces no longer followed because the map was full. */
  untracked = 0;
  private readonly letGo = new DecisionCache(LET_GO_REMEMBERED);

  constructor(private readonly capacity: number) {}

  get(traceId: string): OpenTrace | undefined {
    return this.traces.get(traceId);
  }

  /** Starts following a trace; when full, the oldest is no longer followed (its spans pass through). */
  open(traceId: string, now: number): OpenTrace {
    if (this.traces.size >= this.capacity) {
      const oldest = this.traces.keys().next().value as string;
      this.traces.delete(oldest);
      this.letGo.set(oldest, true);
      this.untracked++;
    }
    // Usually nothing was let go: no lookup on the fast path then.
    const followedLate = this.letGo.size > 0 && this.letGo.get(traceId) !== undefined;
    const trace: OpenTrace = { open: 0, localRootEnded: false, firstSeenAt: now, followedLate };
    this.traces.set(traceId, trace);
    return trace;
  }

  delete(traceId: string): void {
    this.traces.delete(traceId);
  }

  /** Forgets traces first seen at least `maxAgeMs` ago (leaked spans): there is nothing to judge. */
  forgetOlderThan(now: number, maxAgeMs: number): void {
    for (const [traceId, trace] of this.traces) {
      if (now - trace.firstSeenAt < maxAgeMs) break;
      this.traces.delete(traceId);
      this.letGo.set(traceId, true);
    }
  }

  get size(): number {
    return this.traces.size;
  }
}
