/**
 * Capturing the spans of code under test with a real OTel SDK provider held in memory, so a
 * test judges what the instrumented code really emits, not a hand-written trace.
 */
import {
  type TracerProvider as ApiTracerProvider,
  context,
  ProxyTracerProvider,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { SpanRecord } from './model/span-record.js';
import type { Trajectory } from './model/trajectory.js';
import { normalizeSpans } from './normalizers/normalize.js';
import { fromReadableSpan } from './processor/readable-span.js';

/** What {@link captureSpans} hands back. */
export interface CapturedSpans<T> {
  /** What the function under test returned. */
  result: T;
  /** Every span it ended, in the order they ended. */
  spans: SpanRecord[];
  /** The spans normalized, one trajectory per trace. */
  trajectories: Trajectory[];
}

/** Options of {@link captureSpans}. */
export interface CaptureOptions {
  /** `service.name` on the resource of the captured spans. Default `toolpath-capture`. */
  serviceName?: string;
}

// The global tracer provider is one per process: two captures at once would mix their spans.
let capturing = false;

/**
 * Runs `fn` under a real in-memory OTel SDK provider and returns its result with the spans it
 * ended and their trajectories. `fn` gets a tracer of that provider; the provider is also the
 * global one while `fn` runs (so code calling `trace.getTracer(...)` is captured too), and the
 * previous global provider is put back afterwards, also when `fn` throws. An async-hooks context
 * manager is installed for the duration when none is. Captures must not overlap: a second
 * capture started while one runs is refused.
 */
export async function captureSpans<T>(
  fn: (tracer: Tracer) => Promise<T>,
  options: CaptureOptions = {},
): Promise<CapturedSpans<T>> {
  if (capturing) {
    throw new Error(
      'captureSpans: another capture is running; captures share the global tracer provider, run them one at a time',
    );
  }
  capturing = true;
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? 'toolpath-capture' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const previousProvider = registeredTracerProvider();
  const contextManager = new AsyncLocalStorageContextManager().enable();
  // A context manager already registered (a test setup's) is kept: it propagates as well.
  const ownContextManager = context.setGlobalContextManager(contextManager);
  if (!ownContextManager) contextManager.disable();
  trace.disable();
  trace.setGlobalTracerProvider(provider);
  try {
    const result = await fn(provider.getTracer('toolpath-capture'));
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans().map(fromReadableSpan);
    return { result, spans, trajectories: normalizeSpans(spans) };
  } finally {
    trace.disable();
    if (previousProvider) trace.setGlobalTracerProvider(previousProvider);
    if (ownContextManager) context.disable();
    await provider.shutdown();
    capturing = false;
  }
}

/** The provider registered globally before the capture, or undefined when there was none. */
function registeredTracerProvider(): ApiTracerProvider | undefined {
  const global = trace.getTracerProvider();
  const delegate = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
  // A fresh proxy delegates to the API's shared no-op provider: the same object means nothing was registered.
  return delegate === new ProxyTracerProvider().getDelegate() ? undefined : delegate;
}
