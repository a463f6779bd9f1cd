/** Completed traces between completing and their judgement, in either front door. */

/** What a held trace needs to be: an id and its spans (late ones are appended). */
interface HeldTrace<S> {
  traceId: string;
  spans: S[];
}

/**
 * Completed traces waiting for their turn to be judged, oldest first, and (judging on a worker)
 * those posted to the worker and not yet answered. Both are held, and their spans counted, until
 * the judgement is applied; their late spans join them.
 */
export class WaitingTraces<S, T extends HeldTrace<S> = HeldTrace<S>> {
  private readonly queued = new Map<string, T>();
  private readonly onWorker = new Map<string, T>();
  /** Spans held by all of them. */
  spanCount = 0;

  /** Traces held, queued or on the worker. */
  get size(): number {
    return this.queued.size + this.onWorker.size;
  }

  /** Traces waiting for their turn. */
  get queuedCount(): number {
    return this.queued.size;
  }

  get(traceId: string): T | undefined {
    return this.queued.get(traceId) ?? this.onWorker.get(traceId);
  }

  has(traceId: string): boolean {
    return this.queued.has(traceId) || this.onWorker.has(traceId);
  }

  add(trace: T): void {
    this.queued.set(trace.traceId, trace);
    this.spanCount += trace.spans.length;
  }

  /** A span of a held trace that ended late: judged with it if still queued, else following its decision. */
  addLate(trace: T, span: S): void {
    trace.spans.push(span);
    this.spanCount++;
  }

  /** The oldest queued trace, left queued. */
  peekOldest(): T | undefined {
    for (const trace of this.queued.values()) return trace;
    return undefined;
  }

  /** The oldest queued trace, to be judged here and now: no longer held. */
  takeOldest(): T | undefined {
    const trace = this.oldestQueued();
    if (trace) this.release(trace);
    return trace;
  }

  /** The oldest queued trace, posted to the worker: held until {@link release}. */
  sendOldest(): T | undefined {
    const trace = this.oldestQueued();
    if (trace) this.onWorker.set(trace.traceId, trace);
    return trace;
  }

  /** The trace's judgement is applied (or it is let go): no longer held. */
  release(trace: T): void {
    this.queued.delete(trace.traceId);
    this.onWorker.delete(trace.traceId);
    this.spanCount -= trace.spans.length;
  }

  private oldestQueued(): T | undefined {
    for (const trace of this.queued.values()) {
      this.queued.delete(trace.traceId);
      return trace;
    }
    return undefined;
  }
}
