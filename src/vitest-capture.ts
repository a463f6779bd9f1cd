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
import { fromReadableSpan } from './io/readable-span.js';
import type { SpanRecord } from './model/span-record.js';
import type { Trajectory } from './model/trajectory.js';
import { normalizeSpans } from './normalizers/normalize.js';
import {
  describeCopies,
  installedApiCopies,
  loadedApiVersion,
  ONE_API_COPY_FIX,
  registryApiVersion,
  toolpathApiCopy,
} from './processor/api-copies.js';

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
  /**
   * Accept a capture in which `fn` ended no spans. Default false: that is an error, since it nearly
   * always means the spans went elsewhere (see {@link captureSpans}).
   */
  allowEmpty?: boolean;
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
 *
 * It rejects, saying why and what to do, rather than hand back an empty capture: when the process's
 * OpenTelemetry globals belong to another copy of `@opentelemetry/api` (nothing is registered then), and
 * when `fn` ended no spans (unless `allowEmpty`), naming the copies of the API the project has if
 * they differ, since code using a newer copy than toolpath's gets no-op tracers.
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
  refuseForeignRegistry();
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
    if (spans.length === 0 && !options.allowEmpty) throw new Error(noSpansMessage());
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

/** Registering would fail (silently) where another copy of the API made the process's registry. */
function refuseForeignRegistry(): void {
  const registry = registryApiVersion();
  const loaded = loadedApiVersion();
  if (registry === undefined || registry === loaded) return;
  const own = toolpathApiCopy();
  const copies = installedApiCopies(process.cwd());
  throw new Error(
    `captureSpans: cannot register its tracer provider: the process's OpenTelemetry globals were made by @opentelemetry/api ${registry}, and toolpath uses ${loaded}${own ? ` (${own.path})` : ''}; the API registers only where the versions match, so every span would go nowhere.${copies.length > 0 ? ` Copies in ${process.cwd()}:\n${describeCopies(copies, own)}\n` : ' '}Fix: ${ONE_API_COPY_FIX}.`,
  );
}

function noSpansMessage(): string {
  const loaded = loadedApiVersion();
  const own = toolpathApiCopy();
  const copies = installedApiCopies(process.cwd());
  if (copies.some((copy) => copy.version !== loaded)) {
    return `captureSpans: the function ended no spans, and ${process.cwd()} has ${copies.length} copies of @opentelemetry/api:\n${describeCopies(copies, own)}\ntoolpath registered its provider through ${loaded}; code that imports a copy of a newer minor version gets no-op tracers from it. Fix: ${ONE_API_COPY_FIX}.`;
  }
  return 'captureSpans: the function ended no spans. Its code is not instrumented, or it sends its spans to a tracer provider of its own: captureSpans makes its provider the global one and passes the function a tracer of it (use that, or trace.getTracer(...)). If no spans is what the test expects, pass { allowEmpty: true }.';
}
