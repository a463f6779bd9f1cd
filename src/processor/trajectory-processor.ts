/**
 * The in-process front door: a SpanProcessor that wraps the app's exporting processor. It
 * buffers the spans of traces that have agent spans, sees each trace complete (its local root
 * ended and nothing it started here still open), judges it, writes the findings into the trace
 * and passes on, by risk, the traces worth exporting. Spans of other traces pass straight through.
 *
 * Never throws into the app: every hook catches and reports to `diag`.
 */
import { type Context, diag } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import { conversationLimitsOf, type ProcessorSettings, parseProcessorOptions } from '../config/options.js';
import { fromEndingSpan, fromReadableSpan } from '../io/readable-span.js';
import { DecisionCache } from '../judging/decision-cache.js';
import { HeldBytes, heldBytes } from '../judging/held-bytes.js';
import { TraceBuffer } from '../judging/trace-buffer.js';
import type { JudgementSinks } from '../judging/trace-judge.js';
import { WaitingTraces } from '../judging/waiting-traces.js';
import { warnOfSecondApiCopy } from './api-copies.js';
import { AppThreadDrain } from './app-thread-drain.js';
import { type Buffered, isAgentSpan, isLocalRoot, type LiveTrace } from './live-trace.js';
import { type OpenTrace, OpenTraces } from './open-traces.js';
import type {
  AppThreadOptions,
  ProcessorStats,
  TrajectoryProcessorOptions,
  WorkerOptions,
} from './processor-options.js';
import { SpanOutlet } from './span-outlet.js';
import type { TraceDrain } from './trace-drain.js';
import { WorkerDrain } from './worker-drain.js';

export type {
  AppThreadOptions,
  ProcessorLimits,
  ProcessorStats,
  TrajectoryProcessorOptions,
  WorkerOptions,
} from './processor-options.js';

/**
 * Creates the processor: `new NodeTracerProvider({ spanProcessors: [trajectoryProcessor({ scenarios, export })] })`.
 * With `worker: true`, traces are judged on a worker thread ({@link WorkerOptions}).
 */
export function trajectoryProcessor(options: AppThreadOptions): TrajectoryProcessor;
export function trajectoryProcessor(options: WorkerOptions): TrajectoryProcessor;
export function trajectoryProcessor(options: TrajectoryProcessorOptions): TrajectoryProcessor;
export function trajectoryProcessor(options: TrajectoryProcessorOptions): TrajectoryProcessor {
  return new TrajectoryProcessor(options);
}

/**
 * See {@link trajectoryProcessor}. Implements the SpanProcessor of the 2.x and 3.x SDK lines.
 *
 * A trace lives in one place at a time: followed in `openTraces` until its first agent span
 * ends (its spans pass straight through: the fast path), then buffered in `buffer` until it
 * completes, then `waiting` until judged (here or on a worker), then remembered in `decisions`
 * (its late spans follow the decision). Each place is capped, and what leaves one unjudged is counted.
 * Judging is the {@link TraceDrain}'s (on the app's thread or a worker); the way out, the {@link SpanOutlet}'s.
 */
export class TrajectoryProcessor implements SpanProcessor {
  /** Where waiting traces are judged, and the conversation state kept. */
  private readonly drain: TraceDrain;
  /** Judging on the app's thread (without `worker`): the same drain, for judging in `onEnding`. */
  private readonly appThread?: AppThreadDrain;
  /** Where judgements' metrics, log records and `onReport` calls go, wherever they were made. */
  private readonly sinks: JudgementSinks;
  private readonly output: SpanOutlet;
  private readonly next?: SpanProcessor;
  private readonly limits: ProcessorSettings['limits'];
  private readonly openTraces: OpenTraces;
  private readonly buffer: TraceBuffer<ReadableSpan, LiveTrace>;
  private readonly waiting = new WaitingTraces<ReadableSpan, Buffered>();
  private readonly decisions: DecisionCache;
  private closed = false;
  private readonly sweepTimer: ReturnType<typeof setInterval>;
  private readonly stopGauges: () => void;
  /** What the buffered and waiting traces' spans take, estimated (held-bytes.ts). */
  private readonly held: HeldBytes;
  /** Whether the process's OpenTelemetry registry was compared with toolpath's API copy (api-copies.ts). */
  private apiCopiesChecked: boolean;

  /**
   * Throws a ConfigError for a bad option and a ScenarioError when a scenario cannot be loaded:
   * setup mistakes, shown at once.
   */
  constructor(options: AppThreadOptions);
  constructor(options: WorkerOptions);
  constructor(options: TrajectoryProcessorOptions);
  constructor(options: TrajectoryProcessorOptions) {
    const settings = parseProcessorOptions(options);
    this.limits = settings.limits;
    const conversations =
      settings.conversations === false ? false : conversationLimitsOf(settings.conversations);
    this.held = new HeldBytes(this.limits.maxBufferedBytes);
    this.next = options.export;
    this.decisions = new DecisionCache({
      capacity: this.limits.maxJudgedTraceIds,
      windowMs: this.limits.lateWindow,
    });
    this.output = new SpanOutlet({
      next: this.next,
      decisions: this.decisions,
      held: this.held,
      stampSampling: options.sampling !== undefined,
      count: (reason, count) => this.buffer.count(reason, count),
      maxConversations: conversations === false ? 1 : conversations.maxConversations,
    });
    if (options.worker) {
      const { workerTimeout } = this.limits;
      this.drain = new WorkerDrain({ ...options, conversations }, this.waiting, this.output, workerTimeout);
    } else {
      this.appThread = new AppThreadDrain({ ...options, conversations }, this.waiting, this.output);
      this.drain = this.appThread;
    }
    this.sinks = this.drain.sinks;
    this.openTraces = new OpenTraces(this.limits.maxOpenTraces);
    this.buffer = new TraceBuffer<ReadableSpan, LiveTrace>(
      {
        maxTraces: this.limits.maxTraces,
        maxSpansPerTrace: this.limits.maxSpansPerTrace,
        maxSpans: this.limits.maxSpans,
        whenFull: 'evict-oldest',
      },
      {
        newState: () => ({ localRootEnded: false, flushed: 0, bytes: 0 }),
        onDrop: (reason, count) => this.sinks.metrics.recordDrop(reason, count),
        onEvict: (trace) => this.output.letGo(trace),
        heldElsewhere: () => this.waiting.spanCount,
      },
    );
    this.stopGauges = this.sinks.metrics.observeBuffer(() => ({
      traces: this.buffer.size + this.waiting.size,
      spans: this.buffer.spanCount + this.waiting.spanCount,
      bytes: this.held.total,
    }));
    this.sweepTimer = setInterval(
      () => this.sweep(),
      Math.min(this.limits.traceTimeout, conversations === false ? 1_000 : conversations.idleMs, 1_000),
    );
    this.sweepTimer.unref?.();
    // The app's provider is usually registered after the processor is made: looked at again at the first span.
    this.apiCopiesChecked = warnOfSecondApiCopy();
  }

  onStart(span: Span, parentContext: Context): void {
    try {
      this.next?.onStart(span, parentContext);
    } catch (error) {
      diag.error('toolpath: the wrapped processor threw in onStart', error);
    }
    if (this.closed) return;
    try {
      if (!this.apiCopiesChecked) {
        this.apiCopiesChecked = true;
        warnOfSecondApiCopy();
      }
      const traceId = span.spanContext().traceId;
      const buffered = this.buffer.get(traceId);
      if (buffered) {
        buffered.openSpans++;
        return;
      }
      // An open trace is neither waiting nor judged (it leaves `openTraces` before either), so only
      // a trace's first span here asks the decision cache, the one large map.
      let open = this.openTraces.get(traceId);
      if (!open) {
        // A judged (or waiting) trace's later spans follow it; they do not start a new trace.
        if (this.waiting.has(traceId) || this.decisions.get(traceId) !== undefined) return;
        open = this.openTraces.open(traceId, performance.now());
      }
      open.open++;
      // An agent span starting: buffer from now on, so the spans under it (database and HTTP calls
      // inside tools) follow the trace's sampling decision.
      if (isAgentSpan(span)) this.promote(traceId, open);
    } catch (error) {
      diag.error('toolpath: onStart failed', error);
    }
  }

  onEnding(span: Span): void {
    // On a worker, a judgement comes back after the root has ended: its events go on an evaluation span.
    const judge = this.appThread;
    if (this.closed || !judge) return;
    try {
      if (!isLocalRoot(span)) return;
      const traceId = span.spanContext().traceId;
      let trace = this.buffer.get(traceId);
      if (!trace) {
        // An agent root with no agent span under it: start buffering with the root itself.
        const open = this.openTraces.get(traceId);
        if (open?.open !== 1 || !isAgentSpan(span)) return;
        trace = this.promote(traceId, open);
        if (!trace) return;
      }
      // Only when this root is the last open span of its trace, and the trace is small enough.
      if (trace.openSpans !== 1 || trace.spans.length + 1 > this.limits.inlineMaxSpans) return;
      const records = trace.spans.map(fromReadableSpan);
      records.push(fromEndingSpan(span));
      const judgement = judge.judgeNow(trace, records);
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
      if (this.closed) {
        this.forward(span);
        return;
      }
      const traceId = span.spanContext().traceId;
      let trace = this.buffer.get(traceId);
      if (!trace) {
        const open = this.openTraces.get(traceId);
        if (open) {
          if (!isAgentSpan(span)) {
            // The fast path: no agent span in this trace yet, so nothing to hold.
            open.open--;
            if (isLocalRoot(span)) open.localRootEnded = true;
            // Done: forgotten, not remembered as decided (that would crowd agent decisions out of the cache).
            if (open.localRootEnded && open.open <= 0) this.openTraces.delete(traceId);
            this.forward(span);
            return;
          }
          trace = this.promote(traceId, open);
        }
      }
      if (!trace) {
        this.endOutsideBuffer(traceId, span);
        return;
      }
      trace.openSpans--;
      const bytes = heldBytes(span);
      if (this.roomFor(trace, bytes) && this.buffer.add(trace, span)) this.held.hold(trace.state, bytes);
      else this.forward(span);
      if (isLocalRoot(span)) trace.state.localRootEnded = true;
      if (trace.state.localRootEnded && trace.openSpans <= 0) this.complete(trace);
    } catch (error) {
      diag.error('toolpath: onEnd failed', error);
    }
  }

  /**
   * Judges the traces waiting to be judged, then passes on every span still held, as the spec asks
   * of a flush (a serverless app flushes before it freezes): the spans of traces still in flight go
   * on unjudged. Such a trace is still judged when it completes, and then passed on whole, whatever
   * its sampling decision, since part of it is already downstream.
   */
  async forceFlush(): Promise<void> {
    try {
      this.drain.drainAll();
      // Before waiting for the worker: a trace completing meanwhile leaves the buffer for the worker.
      for (const trace of this.buffer.live()) this.output.passOnHeld(trace);
      await this.drain.settled();
      await this.sinks.judgesSettled();
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
      this.stopGauges();
      try {
        for (const trace of this.buffer.takeAll()) this.closeIncomplete(trace, 'shutdown');
        this.drain.drainAll();
        await this.drain.close();
        await this.sinks.judgesSettled();
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
      bufferedSpans: this.buffer.spanCount + this.waiting.spanCount,
      pendingTraces: this.waiting.size,
      openTraces: this.openTraces.size,
      judgedTraces: this.drain.judged,
      flushedBeforeJudging: this.output.flushedBeforeJudging,
      untrackedTraces: this.openTraces.untracked,
      bufferedBytes: this.held.total,
      workerRestarts: this.drain.restarts,
      conversationsLost: this.drain.conversationsLost,
      conversationsCoalesced: this.drain.conversationsCoalesced,
      decisionsForgottenEarly: this.decisions.forgottenEarly,
      dropped: this.buffer.droppedCounts(),
    };
  }

  /** The trace's first agent span ended: from now on its spans are buffered. */
  private promote(traceId: string, open: OpenTrace): Buffered | undefined {
    this.openTraces.delete(traceId);
    const trace = this.buffer.open(traceId, open.firstSeenAt);
    if (!trace) return undefined;
    trace.openSpans = open.open;
    trace.state.localRootEnded = open.localRootEnded;
    if (open.followedLate) trace.state.followedLate = true;
    return trace;
  }

  /** A span of a trace that is not buffered: waiting to be judged, judged, or not followed. */
  private endOutsideBuffer(traceId: string, span: ReadableSpan): void {
    const waiting = this.waiting.get(traceId);
    if (waiting) {
      // Ended before its trace was judged: judged with it, room permitting.
      if (
        this.waiting.spanCount + this.buffer.spanCount < this.limits.maxSpans &&
        waiting.spans.length < this.limits.maxSpansPerTrace
      ) {
        this.waiting.addLate(waiting, span);
        // Counted, not made room for: the trace is judged soon, and only buffered ones can go.
        this.held.hold(waiting.state, heldBytes(span));
      } else {
        waiting.spansOverCap++;
        this.buffer.count('buffer_full', 1);
        this.output.forward(span);
      }
      return;
    }
    if (this.decisions.get(traceId) === false) this.buffer.count('late_sampled_out', 1);
    else this.output.forward(span);
  }

  /** The trace's root ended and nothing is open: pass it on if judged in onEnding, else judge it soon. */
  private complete(trace: Buffered): void {
    this.buffer.take(trace.traceId);
    if (trace.state.judgedInline) {
      this.output.finish(trace, trace.state.judgedInline, trace.state.eventsOnRoot === true);
      return;
    }
    this.defer(trace);
  }

  /** Judging waits for the event loop, off the span's end; waiting traces count against the caps. */
  private defer(trace: Buffered): void {
    if (
      this.waiting.size >= this.limits.maxTraces ||
      this.waiting.spanCount + this.buffer.spanCount + trace.spans.length > this.limits.maxSpans
    ) {
      this.buffer.count('evicted', 1);
      this.output.letGo(trace);
      return;
    }
    this.waiting.add(trace);
    this.drain.schedule();
  }

  /** Closes traces open longer than the timeout, as incomplete; forgets ordinary ones. */
  private sweep(): void {
    if (this.closed) return;
    try {
      const now = performance.now();
      for (const trace of this.buffer.takeDue(now, this.limits.traceTimeout))
        this.closeIncomplete(trace, 'timeout');
      this.openTraces.forgetOlderThan(now, this.limits.traceTimeout);
      this.decisions.expire(now);
      this.drain.sweep(now);
    } catch (error) {
      diag.error('toolpath: timeout sweep failed', error);
    }
  }

  private closeIncomplete(trace: Buffered, why: string): void {
    const open =
      trace.openSpans > 0 ? `: ${trace.openSpans} span${trace.openSpans === 1 ? '' : 's'} still open` : '';
    trace.state.incomplete = `${why}${open}`;
    this.defer(trace);
  }

  /**
   * Makes room for `bytes` more under `limits.maxBufferedBytes` by letting the oldest other
   * traces go; false (counted `buffer_full`, the trace judged as incomplete) when that cannot make
   * enough room: traces waiting to be judged and this one are not let go for it.
   */
  private roomFor(trace: Buffered, bytes: number): boolean {
    if (!this.held.wouldPass(bytes)) return true;
    let others = 0;
    for (const live of this.buffer.live()) if (live !== trace) others += live.state.bytes;
    if (this.held.wouldPass(bytes - others)) {
      trace.spansOverCap++;
      this.buffer.count('buffer_full', 1);
      return false;
    }
    while (this.held.wouldPass(bytes) && this.buffer.evictOldestBut(trace));
    return true;
  }

  private forward(span: ReadableSpan): void {
    this.output.forward(span);
  }
}
