/**
 * Load: 100,000 agent traces through the processor on a real TracerProvider, many open at once
 * and interleaved, with caps small enough (8 traces, 12 spans) that traces are evicted all the
 * time. Whatever the processor does with a trace (judge it, evict it, buffer it, pass it on), every
 * span must reach the wrapped processor exactly once, no trace may be judged twice, and the caps
 * must hold at every step.
 */
import { type Context, context, type Span, trace } from '@opentelemetry/api';
import { type DataPoint, MeterProvider } from '@opentelemetry/sdk-metrics';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { type Report, type TrajectoryProcessor, trajectoryProcessor } from '../../src/index.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { PullReader } from './harness.js';

const TRACES = 100_000;
/** Traces in flight at once: more than `maxTraces`, so the oldest are evicted. */
const IN_FLIGHT = 20;
const LIMITS = { maxTraces: 8, maxSpans: 12 };
const SCOPE = 'load-test';

/** Counts every span it is given, by span id; our own spans apart from toolpath's. */
class CountingProcessor implements SpanProcessor {
  readonly seen = new Map<string, number>();
  /** Trace ids of toolpath's evaluation spans. */
  readonly evaluations: string[] = [];
  other = 0;
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    const scope = span.instrumentationScope.name;
    if (scope === SCOPE) {
      const id = span.spanContext().spanId;
      this.seen.set(id, (this.seen.get(id) ?? 0) + 1);
    } else if (scope === 'toolpath') {
      this.evaluations.push(span.spanContext().traceId);
    } else {
      this.other++;
    }
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/**
 * One agent trace as a list of steps: the `invoke_agent` root starts, then one `execute_tool`
 * child (two in every third trace) starts and ends, then the root ends. Every 30th trace ends
 * its root while its second tool is still running: the trace completes when that tool ends and
 * is judged after span end (the deferred path), not in the root's `onEnding`.
 */
function agentSteps(
  tracer: ReturnType<TracerProvider['getTracer']>,
  n: number,
  created: string[],
): (() => void)[] {
  let root: Span | undefined;
  let inRoot: Context | undefined;
  const tools = n % 3 === 0 ? 2 : 1;
  const open: Span[] = [];
  const startTool = (k: number) => () => {
    const name = k === 0 ? 'lookup_order' : 'update_order';
    const span = tracer.startSpan(
      `execute_tool ${name}`,
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': name,
          'gen_ai.tool.call.id': `call_${n}_${k}`,
          'gen_ai.tool.call.arguments': `{"orderId":"A-${n}"}`,
          'gen_ai.tool.call.result': `{"orderId":"A-${n}","status":"ok"}`,
        },
      },
      inRoot,
    );
    created.push(span.spanContext().spanId);
    open[k] = span;
  };
  const endTool = (k: number) => () => open[k]?.end();
  const steps: (() => void)[] = [
    () => {
      root = tracer.startSpan('invoke_agent orders', {
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'orders' },
      });
      created.push(root.spanContext().spanId);
      inRoot = trace.setSpan(context.active(), root);
    },
    startTool(0),
    endTool(0),
  ];
  const endRoot = () => root?.end();
  if (tools === 2 && n % 10 === 0) steps.push(startTool(1), endRoot, endTool(1));
  else if (tools === 2) steps.push(startTool(1), endTool(1), endRoot);
  else steps.push(endRoot);
  return steps;
}

let processor: TrajectoryProcessor | undefined;
let provider: TracerProvider | undefined;
afterEach(async () => {
  await provider?.shutdown();
  processor = undefined;
  provider = undefined;
});

describe('trajectoryProcessor under load', () => {
  it('takes 100,000 interleaved agent traces through small caps: every span once, no trace judged twice, caps held', async () => {
    const reports: string[] = [];
    const counting = new CountingProcessor();
    const reader = new PullReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    processor = trajectoryProcessor({
      scenarios: [{ id: 'orders', tools: { allowed: ['lookup_order', 'update_order'] } }],
      export: counting,
      limits: LIMITS,
      meterProvider,
      onReport: (report: Report) => reports.push(report.traceId),
    });
    provider = new TracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer(SCOPE);
    const next = seededRandom(20261129);

    const created: string[] = [];
    const live: (() => void)[][] = [];
    let started = 0;
    let steps = 0;
    let maxTraces = 0;
    let maxSpans = 0;
    let maxPending = 0;
    while (started < TRACES || live.length > 0) {
      while (live.length < IN_FLIGHT && started < TRACES) live.push(agentSteps(tracer, started++, created));
      // Advance a random trace in flight by one step; the oldest are a little more likely to move.
      const pick = Math.floor(next() ** 1.5 * live.length);
      const todo = live[pick] as (() => void)[];
      (todo.shift() as () => void)();
      if (todo.length === 0) live.splice(pick, 1);
      const stats = (processor as TrajectoryProcessor).stats();
      if (stats.bufferedTraces > maxTraces) maxTraces = stats.bufferedTraces;
      if (stats.bufferedSpans > maxSpans) maxSpans = stats.bufferedSpans;
      if (stats.pendingTraces > maxPending) maxPending = stats.pendingTraces;
      // Let deferred judging run now and then, as the event loop of a busy app would.
      if (++steps % 400 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await processor.forceFlush();

    const stats = processor.stats();
    // The caps held at every step.
    expect(maxTraces).toBeLessThanOrEqual(LIMITS.maxTraces);
    expect(maxSpans).toBeLessThanOrEqual(LIMITS.maxSpans);
    expect(maxPending).toBeLessThanOrEqual(LIMITS.maxTraces);
    // Both caps were reached, not just respected.
    expect(maxTraces).toBe(LIMITS.maxTraces);
    expect(maxSpans).toBe(LIMITS.maxSpans);
    expect(stats.bufferedTraces).toBe(0);
    expect(stats.bufferedSpans).toBe(0);
    expect(stats.pendingTraces).toBe(0);

    // Every span reached the wrapped processor exactly once (fail open on eviction).
    expect(created.length).toBeGreaterThan(2.3 * TRACES);
    expect(counting.seen.size).toBe(created.length);
    const notOnce = created.filter((id) => counting.seen.get(id) !== 1);
    expect(notOnce).toEqual([]);
    expect(counting.other).toBe(0);

    // No trace judged twice; each judged trace has at most one evaluation span.
    expect(new Set(reports).size).toBe(reports.length);
    expect(stats.judgedTraces).toBe(reports.length);
    expect(new Set(counting.evaluations).size).toBe(counting.evaluations.length);
    const judged = new Set(reports);
    expect(counting.evaluations.every((traceId) => judged.has(traceId))).toBe(true);

    // Judged + evicted = created; evictions happened and were all counted, in stats and metrics.
    const evicted = TRACES - reports.length;
    expect(evicted).toBeGreaterThan(0);
    expect(reports.length).toBeGreaterThan(0);
    expect(stats.dropped.evicted).toBe(evicted);
    expect(stats.judgedTraces + stats.dropped.evicted).toBe(TRACES);
    expect(stats.dropped.sampled_out + stats.dropped.late_sampled_out + stats.dropped.trace_too_large).toBe(
      0,
    );
    const { resourceMetrics } = await reader.collect();
    const droppedMetric = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === 'toolpath.traces.dropped')
      .flatMap((metric) => metric.dataPoints as DataPoint<unknown>[])
      .filter((point) => point.attributes['toolpath.drop.reason'] === 'evicted')
      .reduce((sum, point) => sum + (point.value as number), 0);
    expect(droppedMetric).toBe(evicted);
    await meterProvider.shutdown();
  });
});
