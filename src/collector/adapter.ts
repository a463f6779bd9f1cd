/**
 * The collector adapter's core, behind the receivers: buffers received spans by trace, decides
 * when a trace is complete (a wait after its root span arrived, or a maximum wait), judges it
 * with the same TraceJudge as the in-process processor, and forwards the evaluation span (and,
 * as configured, the trace's spans) to the next hop. Late spans of judged traces follow the
 * decision cache. Bounded throughout; what it turns away it counts, and what it could not
 * deliver it adds to its {@link Losses}.
 */
import { diag } from '@opentelemetry/api';
import { ConversationAnchors } from '../judging/conversation-anchors.js';
import type { ConversationJudgement } from '../judging/conversation-judge.js';
import { DecisionCache } from '../judging/decision-cache.js';
import {
  BYTES_PER_CHAR,
  defaultMaxBufferedBytes,
  HeldBytes,
  heldBytes,
  sharedBytes,
  TRACE_BYTES,
} from '../judging/held-bytes.js';
import { LaterOnce } from '../judging/later-once.js';
import { type BufferedTrace, TraceBuffer } from '../judging/trace-buffer.js';
import { type Judgement, TraceJudge } from '../judging/trace-judge.js';
import { WaitingTraces } from '../judging/waiting-traces.js';
import type { Attributes, ScopeRecord, SpanRecord } from '../model/span-record.js';
import type { AdapterOptions, AdapterStats, ForwardSpans } from './adapter-options.js';
import { admit, notKept } from './admission.js';
import { ContinuedTexts, TraceTexts } from './continued-texts.js';
import { DurableTraces, type RawRequest, type ReplayedTrace, takeOnce } from './durable-traces.js';
import { type ForwardDropReason, ForwardQueue } from './forward-queue.js';
import type { IngestResult, TraceIngest } from './ingest.js';
import { JudgedOutput } from './judged-output.js';
import { Losses } from './losses.js';
import type { DecodeResult } from './otlp-json.js';
import { resourceOf, toReadableSpan } from './to-readable-span.js';

export type { AdapterOptions, AdapterStats, ForwardSpans, StorageStats } from './adapter-options.js';

/** Judging yields to the event loop after this long, so receivers keep answering during a burst. */
const JUDGE_SLICE_MS = 20;
/** What a client told "full" waits before retrying. */
const RETRY_AFTER_SECONDS = 1;

/** The forward queue's drops, as the adapter counts them. */
const FORWARD_DROPS = {
  queue_full: 'forward_queue_full',
  export_failed: 'forward_failed',
  unsent_at_shutdown: 'forward_unsent_at_shutdown',
} as const satisfies Record<ForwardDropReason, string>;

/** What the adapter keeps per buffered trace besides its spans. */
interface TraceState {
  readonly texts: TraceTexts;
  /** The heap it holds, estimated (held-bytes.ts). */
  bytes: number;
  /** The resource and scope last counted for it: a request's spans share theirs. */
  resource?: Attributes;
  scope?: ScopeRecord;
  /** Still buffered when the adapter stopped: judged as incomplete. */
  cutShort?: true;
}

type Buffered = BufferedTrace<SpanRecord, TraceState>;

/** See the module comment. */
export class TraceAdapter implements TraceIngest {
  readonly judge: TraceJudge;
  /** What it could not deliver, by what and why. */
  readonly losses: Losses;
  private readonly buffer: TraceBuffer<SpanRecord, TraceState>;
  /** What the buffered and waiting traces hold, estimated. */
  private readonly held: HeldBytes;
  private readonly decisions: DecisionCache;
  private readonly queue?: ForwardQueue;
  private readonly waitMs: number;
  private readonly waitAfterRootMs: number;
  private readonly lateWindowMs: number;
  private readonly forwardSpans: ForwardSpans;
  /** Where judged traces' output goes. */
  private readonly output: JudgedOutput;
  private readonly sweepTimer: ReturnType<typeof setInterval>;
  /** Traces due and waiting to be judged, oldest first; their spans count against the caps. */
  private readonly pending = new WaitingTraces<SpanRecord, Buffered>();
  private judged = 0;
  /** Judging waits for a later turn of the event loop, off the span's end and the receivers' path. */
  private readonly laterDrain = new LaterOnce(() => this.drain(JUDGE_SLICE_MS), 'toolpath: judging failed');
  private late = 0;
  /** Judging waits for the log's next fsync (durable mode). */
  private waitingForDisk = false;
  private closing = false;
  private stopped: Promise<void> | undefined;
  private readonly stopGauges: () => void;
  /** Durable mode: the span log and what is owed for each trace in it. */
  private readonly durable?: DurableTraces;
  private readonly storageCounts = {
    replayedTraces: 0,
    replayedReported: 0,
    cutSegments: 0,
    cutBytes: 0,
    keptForRestart: 0,
    refusedFull: 0,
  };
  /** The latest trace's resource per conversation in progress, for its final evaluation span. */
  private readonly anchors: ConversationAnchors;
  private readonly onConversationJudged: AdapterOptions['onConversationJudged'];

  /** Throws a ScenarioError for a scenario that cannot be loaded (setup, not runtime). */
  constructor(options: AdapterOptions) {
    this.judge = new TraceJudge(options);
    this.anchors = new ConversationAnchors(
      options.conversations === false ? 1 : (options.conversations?.maxConversations ?? 10_000),
    );
    this.onConversationJudged = options.onConversationJudged;
    this.waitMs = options.decision?.waitMs ?? 30_000;
    this.waitAfterRootMs = options.decision?.waitAfterRootMs ?? 2_000;
    this.lateWindowMs = options.decision?.lateWindowMs ?? 600_000;
    this.losses = options.losses ?? new Losses();
    this.forwardSpans = options.forwardSpans ?? 'none';
    // Default: 512 MiB, or half the heap V8 may grow to when that is less.
    this.held = new HeldBytes(
      options.limits?.maxBufferedBytes ?? defaultMaxBufferedBytes(512 * 2 ** 20, 1 / 2),
    );
    this.buffer = new TraceBuffer<SpanRecord, TraceState>(
      {
        maxTraces: options.limits?.maxTraces ?? 10_000,
        maxSpansPerTrace: options.limits?.maxSpansPerTrace ?? 10_000,
        maxSpans: options.limits?.maxSpans ?? 1_000_000,
        whenFull: 'refuse',
      },
      {
        newState: () => {
          const state = { texts: new TraceTexts(), bytes: 0 };
          this.held.hold(state, TRACE_BYTES);
          return state;
        },
        onDrop: (reason, count) => this.judge.sinks.metrics.recordDrop(reason, count),
        heldElsewhere: () => this.pending.spanCount,
      },
    );
    this.decisions = new DecisionCache({
      capacity: options.limits?.maxJudgedTraceIds ?? 1_000_000,
      windowMs: this.lateWindowMs,
    });
    if (options.exporter) {
      this.queue = new ForwardQueue(options.exporter, {
        ...options.queue,
        onDrop: (count, why, findings) => {
          // Durable mode sends them after the restart: not lost.
          if (this.durable && why === 'unsent_at_shutdown') {
            this.storageCounts.keptForRestart += count;
            return;
          }
          const reason = FORWARD_DROPS[why];
          this.buffer.count(reason, count);
          this.losses.add('findings', reason, findings);
          this.losses.add('spans', reason, count - findings);
          options.queue?.onDrop?.(count, why, findings);
        },
      });
    }
    this.stopGauges = this.judge.sinks.metrics.observeBuffer(() => ({
      traces: this.buffer.size + this.pending.size,
      spans: this.buffer.spanCount + this.pending.spanCount,
      bytes: this.held.total,
    }));
    if (options.storage) {
      const { traces, replay } = DurableTraces.open(options.storage);
      this.durable = traces;
      this.storageCounts.cutSegments = replay.damage.segments;
      this.storageCounts.cutBytes = replay.damage.bytes;
      const now = performance.now();
      for (const [traceId, keep] of replay.done) this.decisions.set(traceId, keep, now);
      for (const trace of replay.traces) this.restore(trace, now);
    }
    this.output = new JudgedOutput({
      ...(this.queue && { queue: this.queue }),
      ...(this.durable && { durable: this.durable }),
      forwardSpans: this.forwardSpans,
      // Forwarding a sample: say why each trace is in it and what it stands for.
      stampSampling: options.sampling !== undefined || this.forwardSpans === 'sampled',
      ...(options.onJudged && { onJudged: options.onJudged }),
    });
    this.sweepTimer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 100);
    this.sweepTimer.unref?.();
  }

  /**
   * Takes back a trace the log holds that is not done: buffered to wait as a new one would, or
   * (reported already, or past the caps) straight to judging.
   */
  private restore(replayed: ReplayedTrace, now: number): void {
    this.storageCounts.replayedTraces++;
    if (replayed.reported) this.storageCounts.replayedReported++;
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

  ready(): boolean {
    return !this.closing;
  }

  ingest(decoded: DecodeResult, raw?: RawRequest): IngestResult {
    if (this.closing) {
      return { kind: 'unavailable', reason: 'shutting_down', retryAfterSeconds: 5, message: 'shutting down' };
    }
    try {
      if (!this.durable) return this.take(decoded.spans, performance.now());
      return this.takeDurably(decoded.spans, raw, this.durable);
    } catch (error) {
      // Never lose the receiver over a bug here: the client retries.
      diag.error('toolpath: ingest failed', error);
      return {
        kind: 'unavailable',
        reason: 'full',
        retryAfterSeconds: RETRY_AFTER_SECONDS,
        message: 'internal error',
      };
    }
  }

  /** Takes the spans and logs the request; the answer waits until it is on disk. */
  private takeDurably(
    spans: readonly SpanRecord[],
    raw: RawRequest | undefined,
    durable: DurableTraces,
  ): IngestResult {
    const failed = durable.log.failed;
    if (failed || raw === undefined) {
      const message = failed
        ? `storage: the span log in ${durable.log.dir} cannot be written (${failed.message})`
        : 'storage: durable mode needs the request body';
      return { kind: 'unavailable', reason: 'shutting_down', retryAfterSeconds: 5, message };
    }
    if (durable.full()) {
      this.storageCounts.refusedFull++;
      this.buffer.count('buffer_full', spans.length);
      const mib = (durable.log.bytes / 2 ** 20).toFixed(0);
      return {
        kind: 'unavailable',
        reason: 'full',
        retryAfterSeconds: RETRY_AFTER_SECONDS,
        message: `storage full (about ${mib} MiB in ${durable.log.dir}, storage.maxBytes ${durable.maxBytes})`,
      };
    }
    const taken = new Set<string>();
    const result = this.take(spans, performance.now(), taken);
    if (result.kind !== 'accepted') return result;
    return { ...result, committed: durable.logRequest(raw, taken) };
  }

  /** `taken`: told the ids of the traces whose spans were kept to be judged. */
  private take(spans: readonly SpanRecord[], now: number, taken?: Set<string>): IngestResult {
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
    if (lateKept.length > 0) this.queue?.push(lateKept.map((span) => toReadableSpan(span)));
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

  /** Judges every buffered trace now, as if its wait were over (tests, benchmarks). */
  judgeAllNow(): void {
    this.wait(this.buffer.takeAll());
    this.drain(Number.POSITIVE_INFINITY);
  }

  /**
   * Stops taking spans (requests are answered as unavailable from now on), judges what is
   * buffered (marked incomplete), makes one last attempt to forward what is queued, and shuts the
   * exporter down; what could not be sent is counted in {@link losses}. Judging yields to the
   * event loop between slices, so the receivers keep answering while it runs.
   */
  shutdown(): Promise<void> {
    this.closing = true;
    this.stopped ??= this.stop();
    return this.stopped;
  }

  private async stop(): Promise<void> {
    clearInterval(this.sweepTimer);
    for (const trace of this.buffer.takeAll()) {
      trace.state.cutShort = true;
      this.pending.add(trace);
    }
    await this.durable?.settled();
    while (this.pending.size > 0) {
      this.drain(JUDGE_SLICE_MS);
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.writeConversations(this.judge.closeConversations());
    this.stopGauges();
    await this.queue?.shutdown();
    await this.durable?.close();
  }

  /** Exports what is queued for the next hop. */
  async flush(): Promise<void> {
    await this.queue?.flush();
  }

  stats(): AdapterStats {
    return {
      bufferedTraces: this.buffer.size,
      bufferedSpans: this.buffer.spanCount + this.pending.spanCount,
      bufferedBytes: this.held.total,
      judgedTraces: this.judged,
      lateSpans: this.late,
      decisionsForgottenEarly: this.decisions.forgottenEarly,
      dropped: this.buffer.droppedCounts(),
      ...(this.queue && { forward: this.queue.counts() }),
      ...(this.durable && { storage: { ...this.durable.stats(), ...this.storageCounts } }),
    };
  }

  private sweep(): void {
    try {
      const now = performance.now();
      this.wait(this.buffer.takeDue(now, this.waitMs, this.waitAfterRootMs));
      this.decisions.expire(now);
      this.drain(JUDGE_SLICE_MS);
      this.writeConversations(this.judge.expireConversations(now));
    } catch (error) {
      diag.error('toolpath: judging failed', error);
    }
  }

  private wait(traces: readonly Buffered[]): void {
    for (const trace of traces) this.pending.add(trace);
  }

  /** Judges waiting traces for up to `budgetMs`, then yields to the receivers and comes back at once. */
  private drain(budgetMs: number): void {
    const deadline = performance.now() + budgetMs;
    for (;;) {
      const next = this.pending.peekOldest();
      if (next === undefined) return;
      if (this.durable && !this.durable.onDisk(next.traceId)) {
        // Judged once its spans are on disk: the next fsync is at most one batch away.
        if (!this.waitingForDisk) {
          this.waitingForDisk = true;
          void this.durable.settled().then(() => {
            this.waitingForDisk = false;
            this.laterDrain.schedule();
          });
        }
        return;
      }
      const trace = this.pending.takeOldest() as Buffered;
      const reasons = [
        trace.state.cutShort
          ? 'shutdown'
          : trace.rootSeenAt === undefined
            ? `no root span within ${this.waitMs} ms`
            : undefined,
        trace.spansOverCap > 0
          ? `${trace.spansOverCap} spans over limits.maxSpansPerTrace not judged`
          : undefined,
      ].filter((reason) => reason !== undefined);
      const incomplete = reasons.length > 0 ? reasons.join('; ') : undefined;
      this.judged++;
      // A request retried after a crash may bring spans the log gave back already.
      if (this.durable) takeOnce(trace.spans);
      try {
        this.finish(trace, this.judge.judge(trace.traceId, trace.spans, incomplete));
      } catch (error) {
        diag.error(`toolpath: could not finish trace ${trace.traceId}`, error);
      }
      this.held.release(trace.state);
      if (performance.now() >= deadline && this.pending.size > 0) {
        this.laterDrain.schedule();
        return;
      }
    }
  }

  private finish(trace: Buffered, judgement: Judgement): void {
    const { decision } = judgement;
    if (judgement.conversations) this.writeConversations(judgement.conversations);
    if (judgement.reports.some((report) => report.conversationId !== undefined)) {
      const evaluated =
        trace.spans.find((span) => span.spanId === judgement.evaluatedSpanId) ?? trace.spans[0];
      this.anchors.remember(judgement.reports, evaluated && resourceOf(evaluated));
    }
    this.decisions.set(trace.traceId, decision.keep, performance.now());
    if (!decision.keep) this.buffer.count('sampled_out', 1);
    this.output.send(trace, judgement);
  }

  /** Conversations judged final: their findings go on an evaluation span under their latest trace. */
  private writeConversations(judged: readonly ConversationJudgement[]): void {
    for (const judgement of judged) {
      try {
        this.onConversationJudged?.(judgement);
      } catch (error) {
        diag.error('toolpath: onConversationJudged failed', error);
      }
      const span = this.anchors.spanOf(judgement);
      if (span && this.queue) this.queue.push([span], [span]);
    }
  }
}
