/**
 * Per-trace buffering shared by the in-process processor and the collector adapter: spans of
 * each live trace, held until the trace is judged. Bounded by construction: a cap on traces and
 * on spans per trace, each next to the counter of what it turned away.
 */

/** Why something was not buffered (or was let go before it was judged). */
export type DropReason =
  /** The buffer held `maxTraces` traces: the oldest was let go unjudged to make room. */
  | 'evicted'
  /** The buffer held `maxTraces` traces and refuses new ones (the adapter answers 429). */
  | 'buffer_full'
  /** The trace already held `maxSpansPerTrace` spans: this span was not buffered. */
  | 'trace_too_large'
  /** A span arrived after its trace was judged and dropped by sampling. */
  | 'late_sampled_out'
  /**
   * A span of no trace being buffered or remembered, ended longer ago than the wait plus the late
   * window: its trace was judged and forgotten, so it is dropped rather than judged again.
   */
  | 'late_unknown'
  /** A request brought more new traces than `maxTraces` can ever hold: the spans of those past it were rejected. */
  | 'too_many_traces'
  /** The trace was judged and not kept by sampling. */
  | 'sampled_out'
  /** Spans for the next hop did not fit the adapter's forward queue. */
  | 'forward_queue_full'
  /** Spans for the next hop dropped after every export attempt failed. */
  | 'forward_failed'
  /** Spans for the next hop still unsent when the last attempt at shutdown failed. */
  | 'forward_unsent_at_shutdown';

/** One trace being buffered. `T` is what the front door keeps per span, `S` its own per-trace state. */
export interface BufferedTrace<T, S = undefined> {
  readonly traceId: string;
  /** Buffered spans, in arrival order; at most `maxSpansPerTrace`. */
  readonly spans: T[];
  /** When the first span of the trace was seen (ms, the owner's clock). */
  readonly firstSeenAt: number;
  /** When a root span of the trace was seen (ms), if one was. */
  rootSeenAt?: number;
  /** Spans started here and not yet ended (in-process only). */
  openSpans: number;
  /** Spans not buffered because the trace was full. */
  spansOverCap: number;
  /** The front door's own state for this trace. */
  readonly state: S;
}

/** Caps of a {@link TraceBuffer}. */
export interface TraceBufferLimits {
  /** Traces buffered at once. */
  maxTraces: number;
  /** Spans buffered per trace. */
  maxSpansPerTrace: number;
  /** Spans buffered over all traces. */
  maxSpans: number;
  /** What to do with a new trace when full: let the oldest go (in process) or refuse (the adapter). */
  whenFull: 'evict-oldest' | 'refuse';
}

/**
 * Live traces by id, oldest first. A Map keeps insertion order, so the oldest trace (for
 * eviction and for time-based completion) is always at the front: no sorting, no scans past
 * the first trace that is not due.
 */
export class TraceBuffer<T, S = undefined> {
  private readonly traces = new Map<string, BufferedTrace<T, S>>();
  /** Traces whose root arrived, in arrival order (for a wait after the root). */
  private readonly rooted = new Map<string, BufferedTrace<T, S>>();
  private readonly dropped = new Map<DropReason, number>();
  private spanTotal = 0;

  constructor(
    readonly limits: TraceBufferLimits,
    private readonly hooks: {
      /** A new trace's own state. */
      newState: () => S;
      /** Told of every drop, for metrics. */
      onDrop?: (reason: DropReason, count: number) => void;
      /** Given each trace let go to make room, for the owner to pass its spans on unjudged. */
      onEvict?: (trace: BufferedTrace<T, S>) => void;
      /** Spans the owner holds outside the buffer (traces waiting to be judged) that count against `maxSpans`. */
      heldElsewhere?: () => number;
    },
  ) {
    if (!(limits.maxTraces >= 1) || !(limits.maxSpansPerTrace >= 1) || !(limits.maxSpans >= 1))
      throw new RangeError('TraceBuffer limits must be at least 1');
  }

  /** The live trace with this id. */
  get(traceId: string): BufferedTrace<T, S> | undefined {
    return this.traces.get(traceId);
  }

  /**
   * Starts buffering a trace (or returns it, if live). When `maxTraces` are live, either lets the
   * oldest go (to `onEvict`) or refuses (undefined); both counted.
   */
  open(traceId: string, now: number): BufferedTrace<T, S> | undefined {
    const existing = this.traces.get(traceId);
    if (existing) return existing;
    if (this.traces.size >= this.limits.maxTraces) {
      if (this.limits.whenFull === 'refuse') {
        this.count('buffer_full', 1);
        return undefined;
      }
      this.evictOldest();
    }
    const trace: BufferedTrace<T, S> = {
      traceId,
      spans: [],
      firstSeenAt: now,
      openSpans: 0,
      spansOverCap: 0,
      state: this.hooks.newState(),
    };
    this.traces.set(traceId, trace);
    return trace;
  }

  /**
   * Buffers a span of a live trace. False (and counted) when the trace holds `maxSpansPerTrace`,
   * or when `maxSpans` are buffered and the buffer refuses; when it evicts, older traces go first.
   */
  add(trace: BufferedTrace<T, S>, span: T): boolean {
    if (trace.spans.length >= this.limits.maxSpansPerTrace) {
      trace.spansOverCap++;
      this.count('trace_too_large', 1);
      return false;
    }
    while (this.spanTotal + (this.hooks.heldElsewhere?.() ?? 0) >= this.limits.maxSpans) {
      const oldest = this.traces.values().next().value as BufferedTrace<T, S> | undefined;
      if (this.limits.whenFull === 'refuse' || oldest === undefined || oldest === trace) {
        trace.spansOverCap++;
        this.count('buffer_full', 1);
        return false;
      }
      this.evictOldest();
    }
    trace.spans.push(span);
    this.spanTotal++;
    return true;
  }

  /**
   * Lets the oldest trace other than `keep` go (to `onEvict`, counted `evicted`): false when there
   * is none. For the owner's own caps (the processor's bytes).
   */
  evictOldestBut(keep: BufferedTrace<T, S>): boolean {
    for (const trace of this.traces.values()) {
      if (trace === keep) continue;
      this.evict(trace);
      return true;
    }
    return false;
  }

  private evictOldest(): void {
    this.evict(this.traces.values().next().value as BufferedTrace<T, S>);
  }

  private evict(trace: BufferedTrace<T, S>): void {
    this.take(trace.traceId);
    this.count('evicted', 1);
    this.hooks.onEvict?.(trace);
  }

  /** Notes that the trace's root span arrived (once; later roots keep the first time). */
  markRoot(trace: BufferedTrace<T, S>, now: number): void {
    if (trace.rootSeenAt !== undefined || !this.traces.has(trace.traceId)) return;
    trace.rootSeenAt = now;
    this.rooted.set(trace.traceId, trace);
  }

  /** Removes a trace and returns it, to be judged. */
  take(traceId: string): BufferedTrace<T, S> | undefined {
    const trace = this.traces.get(traceId);
    if (!trace) return undefined;
    this.traces.delete(traceId);
    this.rooted.delete(traceId);
    this.spanTotal -= trace.spans.length;
    return trace;
  }

  /**
   * Removes and returns the traces that are due: first seen at least `maxWaitMs` ago, or whose
   * root arrived at least `waitAfterRootMs` ago. Oldest first; stops at the first that is not due.
   */
  takeDue(now: number, maxWaitMs: number, waitAfterRootMs = Number.POSITIVE_INFINITY): BufferedTrace<T, S>[] {
    const due: BufferedTrace<T, S>[] = [];
    for (const trace of this.traces.values()) {
      if (now - trace.firstSeenAt < maxWaitMs) break;
      due.push(trace);
    }
    for (const trace of this.rooted.values()) {
      if (now - (trace.rootSeenAt as number) < waitAfterRootMs) break;
      due.push(trace);
    }
    const taken: BufferedTrace<T, S>[] = [];
    for (const trace of due) {
      // A trace can be due both ways; take it once.
      const removed = this.take(trace.traceId);
      if (removed) taken.push(removed);
    }
    return taken;
  }

  /** Live traces, oldest first, left in place. */
  live(): IterableIterator<BufferedTrace<T, S>> {
    return this.traces.values();
  }

  /** Removes and returns every trace (shutdown). */
  takeAll(): BufferedTrace<T, S>[] {
    const all = [...this.traces.values()];
    this.traces.clear();
    this.rooted.clear();
    this.spanTotal = 0;
    return all;
  }

  /** Counts spans or traces let go for `reason` (also for drops decided by the owner). */
  count(reason: DropReason, n: number): void {
    if (n <= 0) return;
    this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + n);
    this.hooks.onDrop?.(reason, n);
  }

  /** Live traces. */
  get size(): number {
    return this.traces.size;
  }

  /** Spans buffered over all live traces. */
  get spanCount(): number {
    return this.spanTotal;
  }

  /** Everything let go so far, by reason. */
  droppedCounts(): Readonly<Record<DropReason, number>> {
    return {
      evicted: this.dropped.get('evicted') ?? 0,
      buffer_full: this.dropped.get('buffer_full') ?? 0,
      trace_too_large: this.dropped.get('trace_too_large') ?? 0,
      late_sampled_out: this.dropped.get('late_sampled_out') ?? 0,
      late_unknown: this.dropped.get('late_unknown') ?? 0,
      too_many_traces: this.dropped.get('too_many_traces') ?? 0,
      sampled_out: this.dropped.get('sampled_out') ?? 0,
      forward_queue_full: this.dropped.get('forward_queue_full') ?? 0,
      forward_failed: this.dropped.get('forward_failed') ?? 0,
      forward_unsent_at_shutdown: this.dropped.get('forward_unsent_at_shutdown') ?? 0,
    };
  }
}
