/**
 * The in-process front door: a SpanProcessor that wraps the app's exporting processor. It
 * buffers the spans of traces that have agent spans, sees each trace complete (its local root
 * ended and nothing it started here still open), judges it, writes the findings into the trace
 * and passes on, by risk, the traces worth exporting. Spans of other traces pass straight through.
 *
 * Never throws into the app: every hook catches and reports to `diag`.
 */
import { type Context, diag } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanRecord } from '../model/span-record.js';
import { mayBeAgentSpan } from './agent-span-filter.js';
import { evaluationSpan, hrTimeFromMillis } from './evaluation-span.js';
import { fromEndingSpan, fromReadableSpan } from './readable-span.js';
import type { SamplingDecision } from './risk-sampler.js';
import { type BufferedTrace, DecisionCache, TraceBuffer } from './trace-buffer.js';
import { type Judgement, type JudgeOptions, TraceJudge } from './trace-judge.js';

/** Caps and waits of the processor. */
export interface ProcessorLimits {
  /** Traces tracked at once (default 1,000); when full the oldest goes on unjudged (counted `evicted`). */
  maxTraces?: number;
  /** Spans buffered per trace (default 10,000); the rest pass straight on (counted `trace_too_large`). */
  maxSpansPerTrace?: number;
  /** Spans buffered in all (default 100,000, about 100 MB of SDK spans); the oldest traces make room. */
  maxSpans?: number;
  /** A trace still open this long after its first span (default 300,000 ms) is judged as incomplete. */
  traceTimeoutMs?: number;
  /**
   * A trace of at most this many spans (default 256) is judged in `onEnding` of its local root,
   * so its events go onto that span; larger ones are judged after span end, off the app's path.
   */
  inlineMaxSpans?: number;
  /** Decisions remembered for late spans of judged traces (default 10,000). */
  decisionCacheSize?: number;
}

/** Options of {@link trajectoryProcessor}. */
export interface TrajectoryProcessorOptions extends JudgeOptions {
  /** The processor toolpath wraps and forwards kept spans to (e.g. a BatchSpanProcessor). */
  export?: SpanProcessor;
  limits?: ProcessorLimits;
}

/** What the processor holds and has let go, for tests, health checks and debugging. */
export interface ProcessorStats {
  bufferedTraces: number;
  bufferedSpans: number;
  /** Completed traces waiting to be judged. */
  pendingTraces: number;
  /** Traces judged (each at most once). */
  judgedTraces: number;
  dropped: ReturnType<TraceBuffer<unknown>['droppedCounts']>;
}

/** Per-trace state beside the buffered spans. */
interface LiveTrace {
  /** A span some convention may claim ended: from then on the trace's spans are buffered. */
  claimed: boolean;
  localRootEnded: boolean;
  /** Judged in `onEnding` of the local root. */
  judgedInline?: Judgement;
  /** The evaluated span was that root: its events are already on it. */
  eventsOnRoot?: boolean;
}

type Buffered = BufferedTrace<ReadableSpan, LiveTrace>;

const DEFAULTS = {
  maxTraces: 1_000,
  maxSpansPerTrace: 10_000,
  maxSpans: 100_000,
  traceTimeoutMs: 300_000,
  inlineMaxSpans: 256,
  decisionCacheSize: 10_000,
} as const;
/** Deferred judging yields to the event loop after this long, so a burst cannot stall the app. */
const JUDGE_SLICE_MS = 10;

/** Creates the processor: `new NodeTracerProvider({ spanProcessors: [trajectoryProcessor({ scenarios, export })] })`. */
export function trajectoryProcessor(options: TrajectoryProcessorOptions): TrajectoryProcessor {
  return new TrajectoryProcessor(options);
}

/** See {@link trajectoryProcessor}. Implements the SpanProcessor of the 2.x and 3.x SDK lines. */
export class TrajectoryProcessor implements SpanProcessor {
  private readonly judge: TraceJudge;
  private readonly next?: SpanProcessor;
  private readonly limits: Required<ProcessorLimits>;
  private readonly buffer: TraceBuffer<ReadableSpan, LiveTrace>;
  private readonly decisions: DecisionCache;
  private readonly stampSampling: boolean;
  private pending: Buffered[] = [];
  private drainScheduled = false;
  private judged = 0;
  private closed = false;
  private readonly sweepTimer: ReturnType<typeof setInterval>;

  /** Throws a ScenarioError when a scenario cannot be loaded: a setup mistake, shown at once. */
  constructor(options: TrajectoryProcessorOptions) {
    this.judge = new TraceJudge(options);
    this.next = options.export;
    this.limits = { ...DEFAULTS, ...definedOnly(options.limits ?? {}) };
    this.stampSampling = options.sampling !== undefined;
    this.buffer = new TraceBuffer<ReadableSpan, LiveTrace>(
      {
        maxTraces: this.limits.maxTraces,
        maxSpansPerTrace: this.limits.maxSpansPerTrace,
        maxSpans: this.limits.maxSpans,
        whenFull: 'evict-oldest',
      },
      {
        newState: () => ({ claimed: false, localRootEnded: false }),
        onDrop: (reason, count) => this.judge.metrics.recordDrop(reason, count),
        onEvict: (trace) => this.letGo(trace),
      },
    );
    this.decisions = new DecisionCache(this.limits.decisionCacheSize);
    this.sweepTimer = setInterval(() => this.sweep(), Math.min(this.limits.traceTimeoutMs, 1_000));
    this.sweepTimer.unref?.();
  }

  onStart(span: Span, parentContext: Context): void {
    try {
      this.next?.onStart(span, parentContext);
    } catch (error) {
      diag.error('toolpath: the wrapped processor threw in onStart', error);
    }
    if (this.closed) return;
    try {
      const traceId = span.spanContext().traceId;
      // A judged trace's later spans follow its decision; they do not start a new trace.
      if (this.decisions.get(traceId) !== undefined) return;
      const trace = this.buffer.open(traceId, performance.now());
      if (trace) trace.openSpans++;
    } catch (error) {
      diag.error('toolpath: onStart failed', error);
    }
  }

  onEnding(span: Span): void {
    if (this.closed) return;
    try {
      if (!isLocalRoot(span)) return;
      const trace = this.buffer.get(span.spanContext().traceId);
      // Only when this root is the last open span of its trace, and the trace is small enough.
      if (trace?.openSpans !== 1 || trace.spans.length + 1 > this.limits.inlineMaxSpans) return;
      const claimsRoot = mayBeAgentSpan(span.name, span.instrumentationScope.name, span.attributes);
      if (!trace.state.claimed && !claimsRoot) return;
      const records = trace.spans.map(fromReadableSpan);
      records.push(fromEndingSpan(span));
      const judgement = this.judgeOnce(trace.traceId, records);
      trace.state.judgedInline = judgement;
      if (judgement.evaluatedSpanId === span.spanContext().spanId) {
        for (const event of judgement.events) span.addEvent(event.name, event.attributes, span.endTime);
        trace.state.eventsOnRoot = true;
      }
    } catch (error) {
      diag.error('toolpath: onEnding failed', error);
    }
  }

  onEnd(span: ReadableSpan): void {
    try {
      const traceId = span.spanContext().traceId;
      const trace = this.closed ? undefined : this.buffer.get(traceId);
      if (!trace) {
        if (this.decisions.get(traceId) === false) this.buffer.count('late_sampled_out', 1);
        else this.forward(span);
        return;
      }
      trace.openSpans--;
      if (!trace.state.claimed && mayBeAgentSpan(span.name, span.instrumentationScope.name, span.attributes))
        trace.state.claimed = true;
      // Before the trace's first agent span ends, its spans pass straight on (the fast path).
      if (!trace.state.claimed || !this.buffer.add(trace, span)) this.forward(span);
      if (isLocalRoot(span)) trace.state.localRootEnded = true;
      if (trace.state.localRootEnded && trace.openSpans <= 0) this.complete(trace);
    } catch (error) {
      diag.error('toolpath: onEnd failed', error);
    }
  }

  async forceFlush(): Promise<void> {
    try {
      this.drain(Number.POSITIVE_INFINITY);
    } catch (error) {
      diag.error('toolpath: forceFlush failed', error);
    }
    await this.next
      ?.forceFlush()
      .catch((error) => diag.error('toolpath: the wrapped processor failed to flush', error));
  }

  /** Judges every trace still buffered (marked incomplete), passes them on, then shuts the wrapped processor down. */
  async shutdown(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      clearInterval(this.sweepTimer);
      try {
        for (const trace of this.buffer.takeAll()) this.closeIncomplete(trace, 'shutdown');
        this.drain(Number.POSITIVE_INFINITY);
      } catch (error) {
        diag.error('toolpath: shutdown failed', error);
      }
    }
    await this.next
      ?.shutdown()
      .catch((error) => diag.error('toolpath: the wrapped processor failed to shut down', error));
  }

  /** What the processor holds and has let go. */
  stats(): ProcessorStats {
    return {
      bufferedTraces: this.buffer.size,
      bufferedSpans: this.buffer.spanCount,
      pendingTraces: this.pending.length,
      judgedTraces: this.judged,
      dropped: this.buffer.droppedCounts(),
    };
  }

  /** The trace's root ended and nothing is open: judge it now if onEnding did not, else pass it on. */
  private complete(trace: Buffered): void {
    this.buffer.take(trace.traceId);
    if (!trace.state.claimed) return;
    if (trace.state.judgedInline) {
      this.finish(trace, trace.state.judgedInline, trace.state.eventsOnRoot === true);
      return;
    }
    this.defer(trace);
  }

  /** Judging waits for the event loop, off the span's end; the queue is bounded like the buffer. */
  private defer(trace: Buffered, incomplete?: string): void {
    if (this.pending.length >= this.limits.maxTraces) {
      this.buffer.count('evicted', 1);
      this.letGo(trace);
      return;
    }
    if (incomplete !== undefined) pendingReasons.set(trace, incomplete);
    this.pending.push(trace);
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => {
        this.drainScheduled = false;
        try {
          this.drain(JUDGE_SLICE_MS);
        } catch (error) {
          diag.error('toolpath: judging failed', error);
        }
      });
    }
  }

  /** Judges pending traces for up to `budgetMs`, then yields (rescheduling the rest). */
  private drain(budgetMs: number): void {
    const deadline = performance.now() + budgetMs;
    while (this.pending.length > 0) {
      const trace = this.pending.shift() as Buffered;
      const incomplete = pendingReasons.get(trace);
      const records = trace.spans.map(fromReadableSpan);
      this.finish(trace, this.judgeOnce(trace.traceId, records, incomplete), false);
      if (performance.now() >= deadline && this.pending.length > 0) {
        const rest = this.pending;
        this.pending = [];
        for (const next of rest) this.defer(next, pendingReasons.get(next));
        return;
      }
    }
  }

  private judgeOnce(traceId: string, records: SpanRecord[], incomplete?: string): Judgement {
    this.judged++;
    return this.judge.judge(traceId, records, incomplete);
  }

  /** Applies the decision: kept traces go on (with the evaluation span when needed), others are dropped. */
  private finish(trace: Buffered, judgement: Judgement, eventsWritten: boolean): void {
    const { decision } = judgement;
    this.decisions.set(trace.traceId, decision.keep);
    if (!decision.keep) {
      this.buffer.count('sampled_out', 1);
      return;
    }
    for (const span of trace.spans) this.forward(this.stampSampling ? stamped(span, decision) : span);
    const parentSpanId = judgement.evaluatedSpanId;
    if (eventsWritten || parentSpanId === undefined || judgement.events.length === 0) return;
    const evaluated =
      trace.spans.find((span) => span.spanContext().spanId === parentSpanId) ?? trace.spans[0];
    if (!evaluated) return;
    const attributes = {
      'toolpath.trace.spans': trace.spans.length,
      'toolpath.evaluations': judgement.reports.length,
      ...(this.stampSampling ? samplingAttributes(decision) : {}),
    };
    this.forward(
      evaluationSpan({
        traceId: trace.traceId,
        parentSpanId,
        resource: evaluated.resource,
        startTime: hrTimeFromMillis(judgement.startedAtMs),
        endTime: hrTimeFromMillis(judgement.endedAtMs),
        attributes,
        events: judgement.events,
      }),
    );
  }

  /** Closes traces open longer than the timeout, as incomplete. */
  private sweep(): void {
    if (this.closed) return;
    try {
      for (const trace of this.buffer.takeDue(performance.now(), this.limits.traceTimeoutMs))
        this.closeIncomplete(trace, 'timeout');
    } catch (error) {
      diag.error('toolpath: timeout sweep failed', error);
    }
  }

  private closeIncomplete(trace: Buffered, why: string): void {
    if (!trace.state.claimed) return;
    const open =
      trace.openSpans > 0 ? `: ${trace.openSpans} span${trace.openSpans === 1 ? '' : 's'} still open` : '';
    this.defer(trace, `${why}${open}`);
  }

  /** A trace let go unjudged (evicted): its spans go on, and so do its later spans. */
  private letGo(trace: Buffered): void {
    this.decisions.set(trace.traceId, true);
    for (const span of trace.spans) this.forward(span);
  }

  private forward(span: ReadableSpan): void {
    try {
      this.next?.onEnd(span);
    } catch (error) {
      diag.error('toolpath: the wrapped processor threw in onEnd', error);
    }
  }
}

/** Why a pending trace is judged early, beside it without widening the buffer's type. */
const pendingReasons = new WeakMap<Buffered, string>();

function isLocalRoot(span: ReadableSpan): boolean {
  const parent = span.parentSpanContext;
  return parent === undefined || parent.isRemote === true;
}

function samplingAttributes(decision: SamplingDecision): Record<string, string | number> {
  return {
    'toolpath.sampling.reason': decision.reason,
    'toolpath.sampling.adjusted_count': decision.adjustedCount,
  };
}

/**
 * The span as exported, with the sampling stamp. The span has ended and must not be mutated, so
 * a view over it carries the extra attributes; everything else reads through to the span.
 */
function stamped(span: ReadableSpan, decision: SamplingDecision): ReadableSpan {
  return Object.create(span, {
    attributes: { value: { ...span.attributes, ...samplingAttributes(decision) }, enumerable: true },
  }) as ReadableSpan;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
