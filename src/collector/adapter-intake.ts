/**
 * What the adapter holds before judging: received spans buffered by trace (within its caps, the
 * heap they hold estimated), the traces due and waiting to be judged, and the decisions of judged
 * ones, which their late spans follow. `take` sorts a request's spans into them, or says why it
 * cannot (429: full); in durable mode, `restore` takes back a trace the log holds.
 */
import type { AdapterSettings } from '../config/options.js';
import { DecisionCache } from '../judging/decision-cache.js';
import { BYTES_PER_CHAR, HeldBytes, heldBytes, sharedBytes, TRACE_BYTES } from '../judging/held-bytes.js';
import type { ToolpathMetrics } from '../judging/metrics.js';
import { type BufferedTrace, TraceBuffer } from '../judging/trace-buffer.js';
import { WaitingTraces } from '../judging/waiting-traces.js';
import type { Attributes, ScopeRecord, SpanRecord } from '../model/span-record.js';
import type { ForwardSpans } from './adapter-options.js';
import { admit, notKept } from './admission.js';
import { ContinuedTexts, TraceTexts } from './continued-texts.js';
import type { ReplayedTrace } from './durable-traces.js';
import type { ForwardQueue } from './forward-queue.js';
import type { IngestResult } from './ingest.js';
import { toReadableSpan } from './to-readable-span.js';

/** What a client told "full" waits before retrying. */
export const RETRY_AFTER_SECONDS = 1;

/** What the adapter keeps per buffered trace besides its spans. */
export interface TraceState {
  readonly texts: TraceTexts;
  /** The heap it holds, estimated (held-bytes.ts). */
  bytes: number;
  /** The resource and scope last counted for it: a request's spans share theirs. */
  resource?: Attributes;
  scope?: ScopeRecord;
  /** Still buffered when the adapter stopped: judged as incomplete. */
  cutShort?: true;
}

/** A buffered trace as the adapter holds it. */
export type Buffered = BufferedTrace<SpanRecord, TraceState>;

/** See the module comment. */
export class TraceIntake {
  readonly buffer: TraceBuffer<SpanRecord, TraceState>;
  /** Traces due and waiting to be judged, oldest first; their spans count against the caps. */
  readonly pending = new WaitingTraces<SpanRecord, Buffered>();
  /** What the buffered and waiting traces hold, estimated. */
  readonly held: HeldBytes;
  readonly decisions: DecisionCache;
  readonly waitMs: number;
  readonly waitAfterRootMs: number;
  private readonly lateWindowMs: number;
  /** Spans of traces judged already. */
  late = 0;

  constructor(
    settings: Pick<AdapterSettings, 'decision' | 'limits'>,
    private readonly forwardSpans: ForwardSpans,
    metrics: ToolpathMetrics,
    /** Where late spans kept go. */
    private readonly queue: () => ForwardQueue | undefined,
  ) {
    const { decision, limits } = settings;
    this.waitMs = decision.wait;
    this.waitAfterRootMs = decision.waitAfterRoot;
    this.lateWindowMs = decision.lateWindow;
    this.held = new HeldBytes(limits.maxBufferedBytes);
    this.buffer = new TraceBuffer<SpanRecord, TraceState>(
      {
        maxTraces: limits.maxTraces,
        maxSpansPerTrace: limits.maxSpansPerTrace,
        maxSpans: limits.maxSpans,
        whenFull: 'refuse',
      },
      {
        newState: () => {
          const state = { texts: new TraceTexts(), bytes: 0 };
          this.held.hold(state, TRACE_BYTES);
          return state;
        },
        onDrop: (reason, count) => metrics.recordDrop(reason, count),
        heldElsewhere: () => this.pending.spanCount,
      },
    );
    this.decisions = new DecisionCache({
      capacity: limits.maxJudgedTraceIds,
      windowMs: this.lateWindowMs,
    });
  }

  /** `taken`: told the ids of the traces whose spans were kept to be judged. */
  take(spans: readonly SpanRecord[], now: number, taken?: Set<string>): IngestResult {
    // Refused once at the cap, not before: a request of any size gets in when there is room (the
    // cap is passed by one request at most), so none is refused for ever.
    if (this.held.full()) return this.full(spans.length);
    const { limits } = this.buffer;
    const admission = admit(spans, (id) => this.knows(id), this.lateBefore(), {
      traces: limits.maxTraces - this.buffer.size - this.pending.size,
      spans: limits.maxSpans - this.buffer.spanCount - this.pending.spanCount,
      maxTraces: limits.maxTraces,
      maxSpans: limits.maxSpans,
    });
    // A request refused is retried whole by the client, so none of it is taken.
    if (admission.kind === 'retry') return this.full(spans.length);
    const { rejected, late } = admission;
    const lateKept: SpanRecord[] = [];
    // Long values continuing one of their trace's from an earlier request share its text.
    const texts = new ContinuedTexts();
    /** Spans over limits.maxSpansPerTrace for their trace, and over limits.maxSpans in all. */
    let overTrace = 0;
    let overTotal = 0;
    for (const span of spans) {
      const waiting = this.pending.get(span.traceId);
      if (waiting) {
        // Due but not judged yet: judged with its trace, within its cap.
        if (waiting.spans.length < this.buffer.limits.maxSpansPerTrace) {
          this.pending.addLate(waiting, span);
          this.hold(waiting, span, 0);
          taken?.add(span.traceId);
        } else {
          waiting.spansOverCap++;
          this.buffer.count('trace_too_large', 1);
          overTrace++;
        }
        continue;
      }
      const decided = this.decisions.get(span.traceId);
      if (decided !== undefined) {
        this.late++;
        if (this.forwardSpans === 'all' || (decided && this.forwardSpans === 'sampled')) lateKept.push(span);
        else if (!decided) this.buffer.count('late_sampled_out', 1);
        continue;
      }
      if (rejected.size > 0 && rejected.has(span.traceId)) continue;
      if (late.size > 0 && late.has(span.traceId)) continue;
      const trace = this.buffer.open(span.traceId, now);
      if (!trace) continue; // not reached: checked above
      const full = trace.spans.length >= limits.maxSpansPerTrace;
      if (this.buffer.add(trace, span)) {
        this.hold(trace, span, texts.take(span, trace.state.texts));
        taken?.add(span.traceId);
      } else if (full) overTrace++;
      else overTotal++;
      if (span.parentSpanId === undefined) this.buffer.markRoot(trace, now);
    }
    if (lateKept.length > 0) this.queue()?.push(lateKept.map((span) => toReadableSpan(span)));
    this.buffer.count('too_many_traces', admission.rejectedSpans);
    this.buffer.count('late_unknown', admission.lateSpans);
    // Said to the client as partial success: it must not retry them, but it should know.
    return notKept(admission, overTrace, overTotal, limits);
  }

  /** A trace buffered, waiting to be judged, or judged within the late window. */
  private knows(traceId: string): boolean {
    return (
      this.buffer.get(traceId) !== undefined ||
      this.pending.has(traceId) ||
      this.decisions.get(traceId) !== undefined
    );
  }

  /** The end time (Unix ns) before which a span of a trace the adapter does not know is late. */
  private lateBefore(): bigint {
    return BigInt(Math.floor(Date.now() - this.waitMs - this.lateWindowMs)) * 1_000_000n;
  }

  /** 429: the request does not fit now, and would once judging frees room. */
  private full(spans: number): IngestResult {
    this.buffer.count('buffer_full', spans);
    const mib = (this.held.total / 2 ** 20).toFixed(0);
    return {
      kind: 'unavailable',
      reason: 'full',
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      message: `buffer full (${this.buffer.size} traces, ${this.buffer.spanCount} spans, about ${mib} MiB)`,
    };
  }

  /**
   * Counts what a span taken into `trace` holds: all of it, but the characters it shares with
   * earlier values of the trace (`sharedChars`), and its resource and scope unless the trace's
   * last span had the same.
   */
  private hold(trace: Buffered, span: SpanRecord, sharedChars: number): void {
    const state = trace.state;
    let bytes = heldBytes(span) - BYTES_PER_CHAR * sharedChars;
    if (span.resource !== state.resource || span.scope !== state.scope) {
      bytes += sharedBytes(span.resource, span.scope);
      state.resource = span.resource;
      state.scope = span.scope;
    }
    this.held.hold(state, bytes);
  }

  /**
   * Takes back a trace the log holds that is not done: buffered to wait as a new one would, or
   * (reported already, or past the caps) straight to judging.
   */
  restore(replayed: ReplayedTrace, now: number): void {
    const trace = this.buffer.open(replayed.traceId, now) ?? this.standalone(replayed.traceId, now);
    const buffered = this.buffer.get(replayed.traceId) === trace;
    for (const span of replayed.spans) {
      if (buffered && !this.buffer.add(trace, span)) continue;
      if (!buffered) trace.spans.push(span);
      this.hold(trace, span, 0);
      if (span.parentSpanId === undefined) this.buffer.markRoot(trace, now);
    }
    if (buffered && !replayed.reported) return;
    if (buffered) this.buffer.take(trace.traceId);
    this.pending.add(trace);
  }

  /** A trace held outside the buffer (replayed past its caps). */
  private standalone(traceId: string, now: number): Buffered {
    const state: TraceState = { texts: new TraceTexts(), bytes: 0 };
    this.held.hold(state, TRACE_BYTES);
    return { traceId, spans: [], firstSeenAt: now, openSpans: 0, spansOverCap: 0, state };
  }
}
