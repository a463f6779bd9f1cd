/**
 * `worker: true` where things go wrong (from a review): an app that never shuts the processor down
 * still exits; a flush passes on a trace that completes while it waits; a meter that throws, with
 * the worker dying, neither throws into the app nor loses spans; a span with odd names costs no
 * other trace its judgement.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type MeterProvider, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { type ReadableSpan, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { type Report, trajectoryProcessor } from '../../src/index.js';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import { packTraces, unpackTraces } from '../../src/processor/span-pack.js';
import { pipeline, workerJudgeOf } from './harness.js';
import { REFUND_SCENARIO } from './vercel-agent.js';

const AGENT = { 'gen_ai.operation.name': 'invoke_agent' };

/** A wrapped processor that logs what reaches it, and when it is flushed. */
function recorder(log: string[]) {
  return {
    onStart() {},
    onEnd: (span: ReadableSpan) => void log.push(span.name),
    forceFlush: async () => void log.push('<flush>'),
    shutdown: async () => void log.push('<shutdown>'),
  };
}

/** A processor judging on a worker, feeding `log`, and a tracer of it. */
function onWorker(log: string[]) {
  const processor = trajectoryProcessor({
    scenarios: [REFUND_SCENARIO],
    worker: true,
    export: recorder(log),
  });
  return { processor, tracer: new TracerProvider({ spanProcessors: [processor] }).getTracer('app') };
}

/** A MeterProvider whose instruments throw on every measurement. */
function throwingMeterProvider(): MeterProvider {
  const broken = () => {
    throw new Error('meter broke');
  };
  const instrument = { add: broken, record: broken };
  return {
    getMeter: () => ({ createCounter: () => instrument, createHistogram: () => instrument }),
  } as unknown as MeterProvider;
}

describe('worker: true, robustness', () => {
  it.each(['idle', 'judged'])('lets an app that never shuts it down exit (%s)', (mode) => {
    const app = fileURLToPath(new URL('./worker-exit-app.ts', import.meta.url));
    const run = spawnSync(process.execPath, ['--import', 'tsx', app, mode], {
      timeout: 30_000,
      encoding: 'utf8',
    });
    expect(run.error).toBeUndefined();
    expect(run.status).toBe(0);
    // An exit before its trace was judged would be fine too; this app waits for nothing, so either.
    expect(run.stdout).toMatch(mode === 'idle' ? /^exit \[\]$/m : /^exit \[("pass"|"fail")?\]$/m);
  });

  it('passes on at a flush a held span whose trace completes while the flush waits for the worker', async () => {
    const log: string[] = [];
    const { processor, tracer } = onWorker(log);
    tracer.startSpan('invoke_agent u', { attributes: AGENT }, ROOT_CONTEXT).end(); // completes: to the worker
    const server = tracer.startSpan('POST /t', {}, ROOT_CONTEXT);
    tracer.startSpan('invoke_agent t', { attributes: AGENT }, trace.setSpan(ROOT_CONTEXT, server)).end();
    const flushing = processor.forceFlush(); // 'invoke_agent t' has ended and is held
    server.end(); // its trace completes while the flush waits for the worker
    await flushing;
    expect(log.slice(0, log.indexOf('<flush>'))).toContain('invoke_agent t');
    await processor.shutdown();
    expect(log.filter((name) => name === 'invoke_agent t')).toHaveLength(1);
  });

  it('with a meter that throws and the worker dying with two batches out: nothing thrown, every span passed on', async () => {
    const meterProvider = throwingMeterProvider();
    const log: string[] = [];
    const processor = trajectoryProcessor({
      scenarios: [REFUND_SCENARIO],
      worker: true,
      meterProvider,
      export: recorder(log),
    });
    const tracer = new TracerProvider({ spanProcessors: [processor] }).getTracer('app');
    const judge = workerJudgeOf(processor);
    tracer.startSpan('invoke_agent a', { attributes: AGENT }, ROOT_CONTEXT).end();
    await Promise.resolve(); // posted: batch 0
    tracer.startSpan('invoke_agent b', { attributes: AGENT }, ROOT_CONTEXT).end();
    await Promise.resolve(); // batch 1
    expect(judge.inFlight).toBe(2);
    const thrown: unknown[] = [];
    const onUncaught = (error: unknown) => thrown.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      void judge.worker.terminate();
      const flushed = await Promise.race([
        processor.forceFlush().then(() => 'flushed'),
        new Promise((resolve) => setTimeout(() => resolve('the flush hangs'), 5_000)),
      ]);
      expect(flushed).toBe('flushed');
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
    expect(thrown).toEqual([]);
    expect(judge.inFlight).toBe(0);
    expect(log).toEqual(expect.arrayContaining(['invoke_agent a', 'invoke_agent b']));
    await processor.shutdown();
  });

  it.each([false, true])(
    'with a meter that throws, loses no span over a cap and judges each trace once (worker: %s)',
    async (worker) => {
      const log: string[] = [];
      const processor = trajectoryProcessor({
        scenarios: [REFUND_SCENARIO],
        worker: worker as true,
        meterProvider: throwingMeterProvider(),
        export: recorder(log),
        limits: { maxSpansPerTrace: 1 },
      });
      const tracer = new TracerProvider({ spanProcessors: [processor] }).getTracer('app');
      const root = tracer.startSpan('invoke_agent r', { attributes: AGENT }, ROOT_CONTEXT);
      tracer.startSpan('invoke_agent c', { attributes: AGENT }, trace.setSpan(ROOT_CONTEXT, root)).end();
      root.end(); // over maxSpansPerTrace: counted as a drop (the meter throws), passed on
      await processor.forceFlush();
      expect(processor.stats().judgedTraces).toBe(1);
      await processor.shutdown();
      expect(log).toEqual(expect.arrayContaining(['invoke_agent c', 'invoke_agent r']));
    },
  );

  it('shuts down when the worker dies during shutdown: the trace goes on unjudged, then the exporter shuts down', async () => {
    const log: string[] = [];
    const { processor, tracer } = onWorker(log);
    const server = tracer.startSpan('POST /x', {}, ROOT_CONTEXT);
    tracer.startSpan('invoke_agent x', { attributes: AGENT }, trace.setSpan(ROOT_CONTEXT, server)).end();
    const shutting = processor.shutdown();
    void workerJudgeOf(processor).worker.terminate();
    await shutting;
    expect(log).toEqual(['invoke_agent x', '<shutdown>']);
    expect(processor.stats()).toMatchObject({ pendingTraces: 0, bufferedSpans: 0 });
  });

  it('judges a trace beside one whose span has names that are not strings', async () => {
    const reports: Report[] = [];
    const p = pipeline({
      scenarios: [REFUND_SCENARIO],
      worker: true,
      onReport: (report) => reports.push(report),
    });
    const tracer = p.provider.getTracer('app');
    const odd = tracer.startSpan('invoke_agent odd', { attributes: AGENT }, ROOT_CONTEXT);
    odd.addEvent(42 as never); // a JavaScript caller; the SDK keeps it
    odd.end();
    tracer.startSpan('invoke_agent fine', { attributes: AGENT }, ROOT_CONTEXT).end();
    tracer.startSpan(undefined as never, { attributes: AGENT }, ROOT_CONTEXT).end();
    p.provider
      .getTracer('app', 2 as never)
      .startSpan('invoke_agent versioned', { attributes: AGENT }, ROOT_CONTEXT)
      .end();
    await p.processor.forceFlush();
    expect(reports).toHaveLength(4);
    expect(p.errors).toEqual([]);
    await p.shutdown();
  });

  it('packs a sparse array as fromReadableSpan reads it: holes as null', () => {
    const collected: ReadableSpan[] = [];
    const provider = new TracerProvider({
      spanProcessors: [
        {
          onStart() {},
          onEnd: (s) => void collected.push(s),
          forceFlush: async () => {},
          shutdown: async () => {},
        },
      ],
    });
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    const sparse = [1, , 3] as never;
    provider.getTracer('app').startSpan('s', { attributes: { sparse } }, ROOT_CONTEXT).end();
    const [record] = collected.map(fromReadableSpan);
    expect(record?.attributes.sparse).toEqual([1, null, 3]);
    expect(unpackTraces(packTraces([collected]))).toEqual([[record]]);
  });
});
