import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { ForwardQueue } from '../../src/collector/forward-queue.js';
import { eventually } from './next-hop.js';

/** An exporter that fails while `down`, records what it was given and how many exports overlapped. */
class FlakyExporter implements SpanExporter {
  down = true;
  exported: ReadableSpan[] = [];
  calls = 0;
  inFlight = 0;
  maxInFlight = 0;
  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.calls++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    setTimeout(() => {
      this.inFlight--;
      if (this.down) done({ code: 1, error: new Error('next hop down') });
      else {
        this.exported.push(...spans);
        done({ code: 0 });
      }
    }, 5);
  }
  async shutdown(): Promise<void> {}
}

const span = (n: number) => ({ name: `s${n}` }) as unknown as ReadableSpan;

describe('ForwardQueue', () => {
  it('delivers in order once the next hop is back, never two exports at once, even with flush racing the timer', async () => {
    const exporter = new FlakyExporter();
    const queue = new ForwardQueue(exporter, {
      maxBatchSize: 2,
      flushDelayMs: 0,
      initialBackoffMs: 5,
      maxBackoffMs: 10,
    });
    queue.push([1, 2, 3, 4, 5].map(span));
    await queue.flush();
    await new Promise((resolve) => setTimeout(resolve, 40));
    exporter.down = false;
    await Promise.all([queue.flush(), queue.flush()]);
    await eventually(() => exporter.exported.length === 5, 'all five spans');
    expect(exporter.exported.map((s) => s.name)).toEqual(['s1', 's2', 's3', 's4', 's5']);
    expect(exporter.maxInFlight).toBe(1);
    expect(queue.counts()).toEqual({ exported: 5, dropped: 0, queued: 0 });
    await queue.shutdown();
  });

  it('gives up on a batch after maxAttempts and counts it, so the rest can go', async () => {
    const exporter = new FlakyExporter();
    const dropped: number[] = [];
    const queue = new ForwardQueue(exporter, {
      maxBatchSize: 2,
      flushDelayMs: 0,
      initialBackoffMs: 1,
      maxBackoffMs: 2,
      maxAttempts: 3,
      onDrop: (count) => dropped.push(count),
    });
    queue.push([1, 2].map(span));
    await eventually(() => dropped.length > 0, 'the batch given up');
    expect(exporter.calls).toBe(3);
    exporter.down = false;
    queue.push([3].map(span));
    await eventually(() => exporter.exported.length === 1, 'the next batch');
    expect(queue.counts()).toEqual({ exported: 1, dropped: 2, queued: 0 });
    await queue.shutdown();
  });

  it('drops and counts what does not fit', async () => {
    const exporter = new FlakyExporter();
    const queue = new ForwardQueue(exporter, { maxQueueSize: 3, flushDelayMs: 1_000 });
    queue.push([1, 2, 3, 4, 5].map(span));
    expect(queue.counts()).toEqual({ exported: 0, dropped: 2, queued: 3 });
    exporter.down = false;
    await queue.shutdown();
    expect(exporter.exported).toHaveLength(3);
  });

  it('survives an onDrop that throws: no rejection escapes, the queue goes on, flushes resolve', async () => {
    const exporter = new FlakyExporter();
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const queue = new ForwardQueue(exporter, {
        maxBatchSize: 1,
        flushDelayMs: 0,
        initialBackoffMs: 1,
        maxBackoffMs: 2,
        maxAttempts: 2,
        onDrop: () => {
          throw new Error('user onDrop');
        },
      });
      queue.push([span(1)]);
      await eventually(() => queue.counts().dropped === 1, 'the batch given up');
      exporter.down = false;
      queue.push([span(2)]);
      await queue.flush();
      await eventually(() => exporter.exported.length === 1, 'the next span exported');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(rejections).toEqual([]);
      await expect(queue.shutdown()).resolves.toBeUndefined();
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('counts what is still unsent when the last attempt at shutdown fails, telling findings from spans', async () => {
    const exporter = new FlakyExporter();
    const drops: [number, string, number][] = [];
    const queue = new ForwardQueue(exporter, {
      maxQueueSize: 5,
      maxBatchSize: 2,
      flushDelayMs: 60_000,
      onDrop: (count, why, findings) => drops.push([count, why, findings]),
    });
    const findings = [span(1), span(2)];
    queue.push([span(0), ...findings], findings);
    queue.push([span(3), span(4), span(5), span(6)]);
    // Two over the cap (spans 5 and 6, no findings), then at shutdown the next hop is still down.
    await queue.shutdown();
    expect(drops).toEqual([
      [2, 'queue_full', 0],
      [5, 'unsent_at_shutdown', 2],
    ]);
    expect(queue.counts()).toEqual({ exported: 0, dropped: 7, queued: 0 });
  });
});
