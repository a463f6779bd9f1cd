/**
 * The adapter's way out: a bounded queue of spans in front of an OTLP exporter. Batches go out
 * one at a time; a failed batch goes back to the front and is retried with exponential backoff,
 * so findings produced while the next hop is down arrive once it is back, as far as the queue
 * holds them. What does not fit is dropped and counted.
 */
import { diag } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/**
 * Why spans for the next hop were dropped: no room in the queue, the export kept failing, or
 * they were still unsent when the last attempt at shutdown failed.
 */
export type ForwardDropReason = 'queue_full' | 'export_failed' | 'unsent_at_shutdown';

/** Settings of a {@link ForwardQueue}. */
export interface ForwardQueueOptions {
  /** Spans held at most (default 20,000). */
  maxQueueSize?: number;
  /** Spans per export (default 512). */
  maxBatchSize?: number;
  /** How long spans may wait for a fuller batch (default 200 ms). */
  flushDelayMs?: number;
  /** First retry delay after a failed export, doubled each time up to `maxBackoffMs` (default 250 ms). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * Attempts per batch (default 10, with the default backoff about a minute and a half of outage); then
   * the batch is dropped and counted, so one the next hop rejects for good cannot block the rest.
   * `Infinity` retries until it lands (durable mode: what waits meanwhile waits in the log).
   */
  maxAttempts?: number;
  /** Told how many spans were dropped, why, and how many of them were findings (pushed as such). */
  onDrop?: (count: number, why: ForwardDropReason, findings: number) => void;
}

/** See the module comment. */
export class ForwardQueue {
  private readonly queue: ReadableSpan[] = [];
  /** The queued spans that carry findings (evaluation spans), told apart when some are dropped. */
  private readonly findings = new WeakSet<ReadableSpan>();
  /** The pushes that asked to be told when all their spans are through, by span. */
  private readonly groups = new WeakMap<ReadableSpan, { left: number; settled: () => void }>();
  private readonly options: Required<Omit<ForwardQueueOptions, 'onDrop'>>;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private exporting: Promise<void> | undefined;
  private backoffMs = 0;
  /** Failed attempts of the batch at the front. */
  private attempts = 0;
  private droppedSpans = 0;
  private exportedSpans = 0;
  /** Spans of the export in flight (back in the queue if it fails). */
  private inFlight = 0;
  private closed = false;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly settings: ForwardQueueOptions = {},
  ) {
    this.options = {
      maxQueueSize: settings.maxQueueSize ?? 20_000,
      maxBatchSize: settings.maxBatchSize ?? 512,
      flushDelayMs: settings.flushDelayMs ?? 200,
      initialBackoffMs: settings.initialBackoffMs ?? 250,
      maxBackoffMs: settings.maxBackoffMs ?? 30_000,
      maxAttempts: settings.maxAttempts ?? 10,
    };
  }

  /**
   * Queues spans for export (`findings`: those that carry findings); those over the cap are
   * dropped and counted. `settled` is called once every one of them is exported or dropped for
   * good (not when still unsent at shutdown: durable mode sends those after a restart).
   */
  push(spans: readonly ReadableSpan[], findings: readonly ReadableSpan[] = [], settled?: () => void): void {
    for (const span of findings) this.findings.add(span);
    if (settled) {
      const group = { left: spans.length, settled };
      for (const span of spans) this.groups.set(span, group);
    }
    // The export in flight counts: a failed one comes back in front, and the cap holds it too.
    const taken = this.closed ? 0 : Math.min(this.room, spans.length);
    for (let i = 0; i < taken; i++) this.queue.push(spans[i] as ReadableSpan);
    this.drop(spans.slice(taken));
    this.schedule(this.backoffMs || this.options.flushDelayMs);
  }

  /** Spans waiting. */
  get size(): number {
    return this.queue.length;
  }

  /** Spans held at most. */
  get capacity(): number {
    return this.options.maxQueueSize;
  }

  /** Spans that can be pushed now without any being dropped, the export in flight counted. */
  get room(): number {
    return Math.max(0, this.options.maxQueueSize - this.queue.length - this.inFlight);
  }

  /** Totals so far. */
  counts(): { exported: number; dropped: number; queued: number } {
    return { exported: this.exportedSpans, dropped: this.droppedSpans, queued: this.queue.length };
  }

  /** Exports everything queued now (one attempt per batch; what fails stays queued). Flushes run one after another. */
  flush(): Promise<void> {
    // A failed flush must not poison the ones after it.
    this.flushing = this.flushing.catch(() => undefined).then(() => this.flushOnce());
    return this.flushing;
  }

  private flushing: Promise<void> = Promise.resolve();

  private async flushOnce(): Promise<void> {
    // One export at a time: wait for the one in flight, and keep the timer from starting another.
    await this.exporting;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0) {
      const attempt = this.exportBatch();
      this.exporting = attempt.then(() => undefined);
      const ok = await attempt;
      this.exporting = undefined;
      this.backoffMs = ok ? 0 : this.nextBackoff();
      if (!ok) break;
    }
    this.schedule(this.backoffMs || this.options.flushDelayMs);
  }

  private nextBackoff(): number {
    const { initialBackoffMs, maxBackoffMs } = this.options;
    return Math.min(maxBackoffMs, this.backoffMs === 0 ? initialBackoffMs : this.backoffMs * 2);
  }

  /** Flushes (one last attempt per batch), drops and counts what the next hop did not take, shuts the exporter down. */
  async shutdown(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.flush();
    this.drop(this.queue.splice(0), 'unsent_at_shutdown');
    await this.exporter.shutdown();
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.exporting || this.queue.length === 0) return;
    const full = this.queue.length >= this.options.maxBatchSize && this.backoffMs === 0;
    this.timer = setTimeout(() => this.run(), full ? 0 : delayMs);
    this.timer.unref?.();
  }

  private run(): void {
    this.timer = undefined;
    this.exporting = this.exportBatch()
      .catch((error) => {
        diag.error('toolpath: forwarding failed', error);
        return false;
      })
      .then((ok) => {
        this.exporting = undefined;
        this.backoffMs = ok ? 0 : this.nextBackoff();
        this.schedule(this.backoffMs || this.options.flushDelayMs);
      });
  }

  /** Exports the first batch; on failure puts it back in front. */
  private async exportBatch(): Promise<boolean> {
    const batch = this.queue.splice(0, this.options.maxBatchSize);
    if (batch.length === 0) return true;
    this.inFlight = batch.length;
    const ok = await new Promise<boolean>((resolve) => {
      try {
        this.exporter.export(batch, (result) => {
          if (result.code !== 0)
            diag.warn('toolpath: export to the next hop failed; will retry', result.error);
          resolve(result.code === 0);
        });
      } catch (error) {
        diag.error('toolpath: the exporter threw', error);
        resolve(false);
      }
    });
    this.inFlight = 0;
    if (ok) {
      this.exportedSpans += batch.length;
      this.through(batch);
      this.attempts = 0;
      return true;
    }
    if (++this.attempts >= this.options.maxAttempts) {
      diag.error(`toolpath: dropping ${batch.length} spans after ${this.attempts} failed exports`);
      this.attempts = 0;
      this.drop(batch, 'export_failed');
      return false;
    }
    // Back in front, within the cap: what arrived meanwhile may have to give way.
    this.queue.unshift(...batch);
    if (this.queue.length > this.options.maxQueueSize)
      this.drop(this.queue.splice(this.options.maxQueueSize));
    return false;
  }

  /** Tells the pushes whose last spans these were. */
  private through(spans: readonly ReadableSpan[]): void {
    for (const span of spans) {
      const group = this.groups.get(span);
      if (group === undefined) continue;
      this.groups.delete(span);
      if (--group.left > 0) continue;
      try {
        group.settled();
      } catch (error) {
        diag.error('toolpath: settled threw', error);
      }
    }
  }

  private drop(spans: readonly ReadableSpan[], why: ForwardDropReason = 'queue_full'): void {
    if (spans.length === 0) return;
    this.droppedSpans += spans.length;
    let findings = 0;
    for (const span of spans) if (this.findings.has(span)) findings++;
    if (why !== 'unsent_at_shutdown') this.through(spans);
    try {
      this.settings.onDrop?.(spans.length, why, findings);
    } catch (error) {
      diag.error('toolpath: onDrop threw', error);
    }
  }
}
