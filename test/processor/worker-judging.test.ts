/**
 * `worker: true`: traces judged on a worker thread, with the real Vercel AI SDK agent and a real
 * provider. The judgements must be the ones the app's thread makes, on a `toolpath.evaluate` span.
 */
import { context, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { parseScenario, type Report, trajectoryProcessor } from '../../src/index.js';
import {
  eventsNamed,
  keepingExports,
  type Pipeline,
  type PipelineOptions,
  pipeline,
  workerJudgeOf,
} from './harness.js';
import { REFUND_SCENARIO, runRefundAgent } from './vercel-agent.js';

let current: Pipeline[] = [];
afterEach(async () => {
  for (const p of current) await p.shutdown();
  current = [];
});

function start(options: PipelineOptions, wrap?: Parameters<typeof pipeline>[1]): Pipeline {
  const p = pipeline(options, wrap);
  current.push(p);
  return p;
}

const TOOLPATH_EVENTS = new Set(['gen_ai.evaluation.result', 'toolpath.finding']);
const agentRoot = (spans: ReadableSpan[]) => spans.find((span) => span.parentSpanContext === undefined);
const evaluationSpans = (spans: ReadableSpan[]) => spans.filter((span) => span.name === 'toolpath.evaluate');

/**
 * A span's events without their times (the two modes write them at different moments), span ids
 * named by their spans' names (each run has its own ids).
 */
function eventsOf(span: ReadableSpan | undefined, spans: readonly ReadableSpan[]) {
  const names = new Map(spans.map((each) => [each.spanContext().spanId, each.name]));
  return (span?.events ?? []).map((event) => ({
    name: event.name,
    attributes: Object.fromEntries(
      Object.entries(event.attributes ?? {}).map(([key, value]) => [
        key,
        key === 'toolpath.finding.spans' ? (value as string[]).map((id) => names.get(id) ?? id) : value,
      ]),
    ),
  }));
}

/** Redaction hashes with a random key per processor: a fixed one makes the two modes comparable. */
const REDACT = { hashFields: ['orderId'], hashKey: 'test-key' };

describe('trajectoryProcessor with worker: true', () => {
  it('writes the same events as the app thread does, on a toolpath.evaluate span under the agent span', async () => {
    for (const script of ['good', 'refund-before-policy', 'made-up-confirmation'] as const) {
      const onApp = start({ scenarios: [REFUND_SCENARIO], redact: REDACT });
      const onWorker = start({ scenarios: [REFUND_SCENARIO], redact: REDACT, worker: true });
      await runRefundAgent(onApp.provider.getTracer('app'), script);
      await runRefundAgent(onWorker.provider.getTracer('app'), script);
      await onApp.processor.forceFlush();
      await onWorker.processor.forceFlush();

      const appSpans = onApp.exporter.getFinishedSpans();
      const appRoot = agentRoot(appSpans);
      const spans = onWorker.exporter.getFinishedSpans();
      const workerRoot = agentRoot(spans);
      expect(eventsNamed(workerRoot as ReadableSpan, 'gen_ai.evaluation.result')).toEqual([]);
      const [evaluation, ...more] = evaluationSpans(spans);
      expect(more).toEqual([]);
      expect(evaluation?.parentSpanContext?.spanId).toBe(workerRoot?.spanContext().spanId);
      expect(evaluation?.spanContext().traceId).toBe(workerRoot?.spanContext().traceId);
      const toolpathEvents = eventsOf(appRoot, appSpans).filter((event) => TOOLPATH_EVENTS.has(event.name));
      expect(toolpathEvents.filter((event) => event.name === 'gen_ai.evaluation.result')).toHaveLength(1);
      expect(eventsOf(evaluation, spans)).toEqual(toolpathEvents);
      // Every span of the agent's trace went on, and the evaluation span besides.
      expect(spans).toHaveLength(appSpans.length + 1);
    }
  });

  it('records metrics and log records, and calls onReport with each report', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      worker: true,
      onReport: (report) => reports.push(report),
    });
    await runRefundAgent(p.provider.getTracer('app'), 'refund-before-policy');
    await runRefundAgent(p.provider.getTracer('app'), 'good');
    await p.processor.forceFlush();

    expect(reports.map((report) => report.verdict)).toEqual(['fail', 'pass']);
    expect(await p.counter('toolpath.evaluations', { 'toolpath.verdict': 'fail' })).toBe(1);
    expect(await p.counter('toolpath.evaluations', { 'toolpath.verdict': 'pass' })).toBe(1);
    expect(await p.counter('toolpath.findings', { 'toolpath.finding.rule': 'order.before' })).toBe(1);
    expect(await p.histogramCount('toolpath.evaluation.duration')).toBe(2);
    expect(await p.counter('toolpath.traces.sampled', { 'toolpath.sampling.kept': true })).toBe(2);
    const records = p.logs.getFinishedLogRecords();
    expect(records.map((record) => record.body)).toEqual(['support.refund: fail', 'support.refund: pass']);
    expect(p.processor.stats()).toMatchObject({ judgedTraces: 2, pendingTraces: 0, bufferedSpans: 0 });
  });

  it('samples on the worker: a trace sampled out never reaches the exporter, risky ones do', async () => {
    const p = start({
      scenarios: [{ ...REFUND_SCENARIO, safety: {} }],
      worker: true,
      sampling: { ratio: 0 },
    });
    const tracer = p.provider.getTracer('app');
    await runRefundAgent(tracer, 'good'); // kept: its tools are new
    await runRefundAgent(tracer, 'good'); // nothing new, nothing wrong: dropped
    await runRefundAgent(tracer, 'made-up-confirmation'); // hard finding: kept
    await p.processor.forceFlush();

    const spans = p.exporter.getFinishedSpans();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(2);
    const reasons = evaluationSpans(spans).map((span) => span.attributes['toolpath.sampling.reason']);
    expect(reasons).toEqual(['new_tool', 'hard_finding']);
    expect(await p.counter('toolpath.traces.dropped', { 'toolpath.drop.reason': 'sampled_out' })).toBe(1);
  });

  it('judges a trace still open at shutdown, as incomplete, before the exporter shuts down', async () => {
    const reports: Report[] = [];
    const exported: ReadableSpan[] = [];
    const p = start(
      { scenarios: [REFUND_SCENARIO], worker: true, onReport: (report) => reports.push(report) },
      keepingExports(exported),
    );
    const tracer = p.provider.getTracer('app');
    const server = tracer.startSpan('POST /refunds'); // never ended: the app is shutting down
    await context.with(trace.setSpan(context.active(), server), () => runRefundAgent(tracer, 'good'));
    await p.processor.shutdown();

    expect(reports).toHaveLength(1);
    expect(reports[0]?.incomplete).toBe('shutdown: 1 span still open');
    expect(exported.filter((span) => span.name === 'toolpath.evaluate')).toHaveLength(1);
    expect(exported.filter((span) => span.name.startsWith('invoke_agent'))).toHaveLength(1);
  });

  it('passes a batch on unjudged when the worker dies, and judges the next trace on a new one', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO], worker: true });
    const tracer = p.provider.getTracer('app');
    const worker = workerJudgeOf(p.processor);
    // The agent's trace completes and the worker is stopped; the flush posts the batch to it, and it exits.
    await runRefundAgent(tracer, 'good');
    void worker.worker.terminate();
    await p.processor.forceFlush();
    const lost = p.exporter.getFinishedSpans();
    expect(evaluationSpans(lost)).toEqual([]);
    expect(agentRoot(lost)).toBeDefined();
    expect(p.processor.stats().workerRestarts).toBe(1);
    expect(await p.counter('toolpath.evaluation.errors', { 'toolpath.error.stage': 'worker' })).toBe(1);
    expect(p.errors.some((error) => error.includes('on the worker; passing it on unjudged'))).toBe(true);

    p.exporter.reset();
    await runRefundAgent(tracer, 'made-up-confirmation');
    await p.processor.forceFlush();
    const [evaluation] = evaluationSpans(p.exporter.getFinishedSpans());
    expect(eventsNamed(evaluation as ReadableSpan, 'gen_ai.evaluation.result')[0]).toMatchObject({
      'gen_ai.evaluation.score.label': 'fail',
    });
  });

  it('refuses at setup what the worker could not judge by: a scenario file missing, a bad sampling ratio', () => {
    expect(() => trajectoryProcessor({ scenarios: ['/nonexistent/scenario.yaml'], worker: true })).toThrow(
      '/nonexistent/scenario.yaml',
    );
    expect(() =>
      trajectoryProcessor({ scenarios: [REFUND_SCENARIO], worker: true, sampling: { ratio: 2 } }),
    ).toThrow('sampling.ratio must be between 0 and 1, got 2');
  });

  it('refuses a loaded Scenario at setup, naming it: a worker takes files or documents', () => {
    const loaded = parseScenario(REFUND_SCENARIO, 'refund');
    expect(() =>
      trajectoryProcessor({ scenarios: [REFUND_SCENARIO, loaded as never], worker: true }),
    ).toThrow('scenarios[1] is a loaded Scenario; judging on a worker takes scenario files or documents');
  });
});
