/**
 * The collector adapter's core, behind the receivers: buffers received spans by trace, decides
 * when a trace is complete (a wait after its root span arrived, or a maximum wait), judges it
 * with the same TraceJudge as the in-process processor, and forwards the evaluation span (and,
 * as configured, the trace's spans) to the next hop. Late spans of judged traces follow the
 * decision cache. Bounded throughout; what it turns away it counts, and what it could not
 * deliver it adds to its {@link Losses}.
 */
import { diag } from '@opentelemetry/api';
import { conversationLimitsOf, parseAdapterOptions } from '../config/options.js';
import { LaterOnce } from '../judging/later-once.js';
import { type Judgement, TraceJudge } from '../judging/trace-judge.js';
import type { SpanRecord } from '../model/span-record.js';
import { AdapterConversations } from './adapter-conversations.js';
import { type Buffered, RETRY_AFTER_SECONDS, TraceIntake } from './adapter-intake.js';
import type { AdapterOptions, AdapterStats } from './adapter-options.js';
import { AdapterStorage } from './adapter-storage.js';
import type { DurableTraces, RawRequest, Replay } from './durable-traces.js';
import { takeOnce } from './durable-traces.js';
import type { HeldTexts } from './extending-texts.js';
import { type ForwardDropReason, ForwardQueue } from './forward-queue.js';
import type { IngestResult, TraceIngest } from './ingest.js';
import { JudgedOutput } from './judged-output.js';
import { Losses } from './losses.js';
import type { DecodeResult } from './otlp-json.js';

export type { AdapterOptions, AdapterStats, ForwardSpans, StorageStats } from './adapter-options.js';

/** Judging yields to the event loop after this long, so receivers keep answering during a burst. */
const JUDGE_SLICE_MS = 20;

/** The forward queue's drops, as the adapter counts them. */
const FORWARD_DROPS = {
  queue_full: 'forward_queue_full',
  export_failed: 'forward_failed',
  unsent_at_shutdown: 'forward_unsent_at_shutdown',
} as const satisfies Record<ForwardDropReason, string>;

/** See the module comment. */
export class TraceAdapter implements TraceIngest {
  readonly judge: TraceJudge;
  /** What it could not deliver, by what and why. */
  readonly losses: Losses;
  /** What is held before judging: the buffer, the traces waiting, the decisions. */
  private readonly intake: TraceIntake;
  private readonly queue?: ForwardQueue;
  /** Where judged traces' output goes. */
  private readonly output: JudgedOutput;
  private readonly sweepTimer: ReturnType<typeof setInterval>;
  private judged = 0;
  /** Judging waits for a later turn of the event loop, off the span's end and the receivers' path. */
  private readonly laterDrain = new LaterOnce(() => this.drain(JUDGE_SLICE_MS), 'toolpath: judging failed');
  /** Judging waits for the log's next fsync (durable mode). */
  private waitingForDisk = false;
  /** Stopping, the log's last attempt made: traces it could not write are not judged. */
  private lastWriteTried = false;
  private closing = false;
  private stopped: Promise<void> | undefined;
  private readonly stopGauges: () => void;
  /** Durable mode: the span log and what is owed for each trace in it. */
  private readonly durable: DurableTraces | undefined;
  private readonly storage: AdapterStorage | undefined;
  private readonly conversations: AdapterConversations;

  /** Throws a ConfigError for a bad option, a ScenarioError for a scenario that cannot be loaded (setup, not runtime). */
  constructor(options: AdapterOptions) {
    const settings = parseAdapterOptions(options);
    const { conversations, forwardSpans } = settings;
    this.judge = new TraceJudge({
      ...options,
      conversations: conversations === false ? false : conversationLimitsOf(conversations),
    });
    this.losses = options.losses ?? new Losses();
    this.intake = new TraceIntake(settings, forwardSpans, this.judge.sinks.metrics, () => this.queue);
    const { buffer, pending, held } = this.intake;
    if (options.exporter) {
      this.queue = new ForwardQueue(options.exporter, {
        ...options.queue,
        // With storage, findings wait for the next hop however long it is down: a batch is tried
        // until it lands, what comes meanwhile waits in the log, and a full log answers 429.
        ...(options.storage && { maxAttempts: Number.POSITIVE_INFINITY }),
        onDrop: (count, why, findings) => {
          // Durable mode sends them after the restart: not lost.
          if (this.storage && why === 'unsent_at_shutdown') {
            this.storage.counts.keptForRestart += count;
            return;
          }
          const reason = FORWARD_DROPS[why];
          buffer.count(reason, count);
          this.losses.add('findings', reason, findings);
          this.losses.add('spans', reason, count - findings);
          options.queue?.onDrop?.(count, why, findings);
        },
      });
    }
    this.stopGauges = this.judge.sinks.metrics.observeBuffer(() => ({
      traces: buffer.size + pending.size,
      spans: buffer.spanCount + pending.spanCount,
      bytes: held.total,
    }));
    const maxConversations = conversations === false ? 1 : conversations.maxConversations;
    const opened =
      options.storage &&
      settings.storage &&
      AdapterStorage.open({ ...options.storage, maxBytes: settings.storage.maxBytes, maxConversations });
    this.storage = opened ? opened.storage : undefined;
    this.durable = this.storage?.traces;
    if (opened) {
      const { damage } = opened.replay;
      this.judge.sinks.metrics.recordStorageDamage('tail_cut', damage.bytes);
      this.judge.sinks.metrics.recordStorageDamage('record_skipped', damage.skippedBytes);
    }
    this.conversations = new AdapterConversations({
      judge: this.judge,
      losses: this.losses,
      maxConversations,
      ...(this.queue && { queue: this.queue }),
      ...(this.durable && { durable: this.durable }),
      ...(options.onConversationJudged && { onConversationJudged: options.onConversationJudged }),
    });
    if (opened) this.replay(opened.replay);
    this.output = new JudgedOutput({
      ...(this.queue && { queue: this.queue }),
      ...(this.durable && { durable: this.durable }),
      forwardSpans,
      // Forwarding a sample: say why each trace is in it and what it stands for.
      stampSampling: options.sampling !== undefined || forwardSpans === 'sampled',
      ...(options.onJudged && { onJudged: options.onJudged }),
    });
    this.sweepTimer = setInterval(() => this.sweep(), settings.sweepInterval);
    this.sweepTimer.unref?.();
  }

  /** Takes back what the log holds: done traces' decisions, conversations, traces not done. */
  private replay(replay: Replay): void {
    const now = performance.now();
    for (const [traceId, keep] of replay.done) this.intake.decisions.set(traceId, keep, now);
    this.storage?.restored(this.conversations.restore(replay, now));
    for (const trace of replay.traces) this.intake.restore(trace, now);
  }

  /** False while stopping, and while the span log cannot be written (durable mode refuses spans then). */
  ready(): boolean {
    return !this.closing && this.durable?.log.failed === undefined;
  }

  /** See {@link TraceIngest.heldTexts}. */
  heldTexts(traceId: string): HeldTexts | undefined {
    return this.intake.buffer.get(traceId)?.state.texts;
  }

  ingest(decoded: DecodeResult, raw?: RawRequest): IngestResult {
    if (this.closing) {
      return { kind: 'unavailable', reason: 'shutting_down', retryAfterSeconds: 5, message: 'shutting down' };
    }
    try {
      if (!this.storage) return this.intake.take(decoded.spans, performance.now());
      return this.takeDurably(decoded.spans, raw, this.storage);
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
    storage: AdapterStorage,
  ): IngestResult {
    const refused = storage.refusal(raw, RETRY_AFTER_SECONDS);
    if (refused) {
      if (refused.kind === 'unavailable' && refused.reason === 'full')
        this.intake.buffer.count('buffer_full', spans.length);
      return refused;
    }
    const taken = new Set<string>();
    const result = this.intake.take(spans, performance.now(), taken);
    if (result.kind !== 'accepted') return result;
    return { ...result, committed: storage.traces.logRequest(raw as RawRequest, taken) };
  }

  /** Judges every buffered trace now, as if its wait were over (tests, benchmarks). */
  judgeAllNow(): void {
    this.wait(this.intake.buffer.takeAll());
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
    const { buffer, pending } = this.intake;
    for (const trace of buffer.takeAll()) {
      trace.state.cutShort = true;
      pending.add(trace);
    }
    await this.durable?.settled();
    this.lastWriteTried = true;
    while (pending.size > 0) {
      this.drain(JUDGE_SLICE_MS);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const kept = this.conversations.shutdown();
    if (this.storage) this.storage.counts.keptConversations = kept;
    await this.judge.sinks.judgesSettled();
    this.stopGauges();
    // What still waits in the log is sent after the next start.
    if (this.storage) this.storage.counts.keptForRestart += this.output.waiting().spans;
    await this.queue?.shutdown();
    await this.durable?.close();
  }

  /** Exports what is queued for the next hop. */
  async flush(): Promise<void> {
    await this.judge.sinks.judgesSettled();
    await this.queue?.flush();
  }

  stats(): AdapterStats {
    const { buffer, pending, held, decisions } = this.intake;
    return {
      bufferedTraces: buffer.size,
      bufferedSpans: buffer.spanCount + pending.spanCount,
      bufferedBytes: held.total,
      judgedTraces: this.judged,
      lateSpans: this.intake.late,
      decisionsForgottenEarly: decisions.forgottenEarly,
      conversationsCoalesced: this.judge.conversations?.coalesced ?? 0,
      dropped: buffer.droppedCounts(),
      ...(this.queue && { forward: this.queue.counts() }),
      ...(this.storage && {
        storage: this.storage.stats(
          { parked: this.output.parkedTotal, ...this.output.waiting() },
          this.conversations.finalsWaiting(),
        ),
      }),
    };
  }

  private sweep(): void {
    try {
      const now = performance.now();
      const { buffer, decisions, waitMs, waitAfterRootMs } = this.intake;
      this.wait(buffer.takeDue(now, waitMs, waitAfterRootMs));
      decisions.expire(now);
      this.drain(JUDGE_SLICE_MS);
      // Finals first: trace outputs leave them a tenth of the queue, and they cannot wait in the log.
      this.conversations.sendWaiting();
      this.output.sendParked();
      this.conversations.sweep(now);
    } catch (error) {
      diag.error('toolpath: judging failed', error);
    }
  }

  private wait(traces: readonly Buffered[]): void {
    for (const trace of traces) this.intake.pending.add(trace);
  }

  /** Judges waiting traces for up to `budgetMs`, then yields to the receivers and comes back at once. */
  private drain(budgetMs: number): void {
    const deadline = performance.now() + budgetMs;
    const { pending, held, waitMs } = this.intake;
    for (;;) {
      const next = pending.peekOldest();
      if (next === undefined) return;
      if (this.durable && !this.durable.onDisk(next.traceId)) {
        if (this.lastWriteTried && this.durable.log.failed) {
          // Its clients were answered 503 and send it again; what the log has of it is replayed.
          held.release((pending.takeOldest() as Buffered).state);
          if (this.storage) this.storage.counts.unwrittenAtStop++;
          continue;
        }
        // Judged once its spans are on disk: the next fsync is at most one batch away (while the
        // log is failed, the next attempt a second away).
        if (!this.waitingForDisk) {
          this.waitingForDisk = true;
          void this.durable.settled().then(() => {
            this.waitingForDisk = false;
            this.laterDrain.schedule();
          });
        }
        return;
      }
      const trace = pending.takeOldest() as Buffered;
      const reasons = [
        trace.state.cutShort
          ? 'shutdown'
          : trace.rootSeenAt === undefined
            ? `no root span within ${waitMs} ms`
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
      held.release(trace.state);
      if (performance.now() >= deadline && pending.size > 0) {
        this.laterDrain.schedule();
        return;
      }
    }
  }

  private finish(trace: Buffered, judgement: Judgement): void {
    const { decision } = judgement;
    const member = this.conversations.afterTrace(trace.spans, judgement);
    this.intake.decisions.set(trace.traceId, decision.keep, performance.now());
    if (!decision.keep) this.intake.buffer.count('sampled_out', 1);
    this.output.send(trace, judgement, member);
  }
}
