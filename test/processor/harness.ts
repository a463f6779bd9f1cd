/**
 * A real OpenTelemetry pipeline around the processor, as an app would build it: a TracerProvider
 * whose only span processor is toolpath wrapping an exporting processor, a MeterProvider with a
 * MetricReader, a LoggerProvider with an in-memory exporter. Imports `@opentelemetry/sdk-trace`
 * (not sdk-trace-base), the package both SDK lines share, so the same tests run on 2.x and 3.x.
 */
import { type Attributes, context, type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { type DataPoint, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import {
  type AppThreadOptions,
  type TrajectoryProcessor,
  type TrajectoryProcessorOptions,
  trajectoryProcessor,
} from '../../src/index.js';

/** The processor's options a test gives (`worker: true` takes scenario documents and a one-argument onReport). */
export type PipelineOptions = Omit<
  AppThreadOptions,
  'export' | 'meterProvider' | 'loggerProvider' | 'worker'
> & {
  worker?: boolean;
};

/** A MetricReader read on demand. */
export class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

let contextManagerSet = false;

/** The pipeline and what reached each of its ends. */
export interface Pipeline {
  processor: TrajectoryProcessor;
  provider: TracerProvider;
  exporter: InMemorySpanExporter;
  logs: InMemoryLogRecordExporter;
  /** Sums of a counter's data points whose attributes include `where`. */
  counter(name: string, where?: Attributes): Promise<number>;
  /** Count of a histogram's recorded values. */
  histogramCount(name: string): Promise<number>;
  /** Everything diag.error reported. */
  errors: string[];
  shutdown(): Promise<void>;
}

/**
 * Builds the pipeline; `wrap` replaces the exporting processor (default: simple, to an in-memory
 * exporter); `Provider` the tracer provider (e.g. sdk-trace-base's BasicTracerProvider, a subclass).
 */
export function pipeline(
  options: PipelineOptions,
  wrap?: (exporter: InMemorySpanExporter) => SpanProcessor,
  Provider: new (config: { spanProcessors: SpanProcessor[] }) => TracerProvider = TracerProvider,
): Pipeline {
  if (!contextManagerSet) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  const errors: string[] = [];
  const logger: DiagLogger = {
    error: (message, ...args) => errors.push([message, ...args.map(String)].join(' ')),
    warn: () => {},
    info: () => {},
    debug: () => {},
    verbose: () => {},
  };
  diag.setLogger(logger, { logLevel: DiagLogLevel.ERROR, suppressOverrideMessage: true });
  const exporter = new InMemorySpanExporter();
  const reader = new PullReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const logs = new InMemoryLogRecordExporter();
  const loggerProvider = new LoggerProvider({
    processors: [new SimpleLogRecordProcessor({ exporter: logs })],
  });
  const processor = trajectoryProcessor({
    ...options,
    export: wrap ? wrap(exporter) : new SimpleSpanProcessor({ exporter }),
    meterProvider,
    loggerProvider,
  } as unknown as TrajectoryProcessorOptions);
  const provider = new Provider({ spanProcessors: [processor] });
  const points = async (name: string): Promise<DataPoint<unknown>[]> => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric) => metric.dataPoints as DataPoint<unknown>[]);
  };
  return {
    processor,
    provider,
    exporter,
    logs,
    errors,
    counter: async (name, where = {}) =>
      (await points(name))
        .filter((point) => Object.entries(where).every(([key, value]) => point.attributes[key] === value))
        .reduce((sum, point) => sum + (point.value as number), 0),
    histogramCount: async (name) =>
      (await points(name)).reduce((sum, point) => sum + (point.value as { count: number }).count, 0),
    shutdown: async () => {
      await provider.shutdown();
      await meterProvider.shutdown();
      await loggerProvider.shutdown();
      diag.disable();
    },
  };
}

/** The events named `name` on a span. */
export function eventsNamed(span: ReadableSpan, name: string): Attributes[] {
  return span.events.filter((event) => event.name === name).map((event) => event.attributes ?? {});
}

/** The exported spans of one trace. */
export function spansOfTrace(exporter: InMemorySpanExporter, traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
}

/** The processor's worker client, reached through its internals (tests that kill the worker). */
export function workerJudgeOf(processor: TrajectoryProcessor): {
  worker: { terminate(): Promise<number> };
  inFlight: number;
} {
  const drain = (processor as unknown as { drain: { worker?: ReturnType<typeof workerJudgeOf> } }).drain;
  if (!drain.worker) throw new Error('the processor does not judge on a worker');
  return drain.worker;
}

/** Resolves once the processor's worker has loaded its scenarios (its first judgement then comes back in ms, not seconds). */
export async function workerReady(processor: TrajectoryProcessor, timeoutMs = 30_000): Promise<void> {
  const judge = workerJudgeOf(processor) as unknown as { readyAt: number | undefined };
  for (const deadline = Date.now() + timeoutMs; judge.readyAt === undefined; ) {
    if (Date.now() > deadline) throw new Error('the judging worker did not start');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A `wrap` for {@link pipeline}: a BatchSpanProcessor whose exports are also kept in `exported`
 * (InMemorySpanExporter forgets its spans on shutdown; tests of shutdown need them after).
 */
export function keepingExports(exported: ReadableSpan[]): (exporter: InMemorySpanExporter) => SpanProcessor {
  return (exporter) =>
    new BatchSpanProcessor({
      exporter: {
        export: (spans, done) => {
          exported.push(...spans);
          exporter.export(spans, done);
        },
        shutdown: () => exporter.shutdown(),
      },
    });
}
