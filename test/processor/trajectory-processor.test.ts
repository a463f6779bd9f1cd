import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import type { Report } from '../../src/index.js';
import { eventsNamed, keepingExports, type Pipeline, pipeline, spansOfTrace } from './harness.js';
import { REFUND_SCENARIO, runRefundAgent } from './vercel-agent.js';

let current: Pipeline | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

function start(options: Parameters<typeof pipeline>[0], wrap?: Parameters<typeof pipeline>[1]): Pipeline {
  current = pipeline(options, wrap);
  return current;
}

const agentRoot = (spans: ReadableSpan[]) => {
  const root = spans.find((span) => span.parentSpanContext === undefined);
  if (!root) throw new Error('no root span exported');
  return root;
};

describe('trajectoryProcessor with a Vercel AI SDK agent', () => {
  it('writes a passing gen_ai.evaluation.result onto the agent span, which is the local root', async () => {
    const reports: Report[] = [];
    const p = start({ scenarios: [REFUND_SCENARIO], onReport: (report) => reports.push(report) });
    await runRefundAgent(p.provider.getTracer('app'), 'good');
    await p.processor.forceFlush();

    expect(reports).toHaveLength(1);
    const spans = spansOfTrace(p.exporter, reports[0]?.traceId as string);
    const root = agentRoot(spans);
    expect(root.name).toMatch(/^invoke_agent/);
    const [result] = eventsNamed(root, 'gen_ai.evaluation.result');
    expect(result).toMatchObject({
      'gen_ai.evaluation.name': 'support.refund@1',
      'gen_ai.evaluation.score.label': 'pass',
      'gen_ai.evaluation.score.value': 1,
      // Who judged, in the names of the evaluator-provenance proposal (semconv-genai PR #359).
      'gen_ai.evaluation.evaluator.id': 'support.refund',
      'gen_ai.evaluation.evaluator.version': '1',
      'gen_ai.evaluation.evaluator.type': 'toolpath',
      'toolpath.scenario.id': 'support.refund',
      'toolpath.scenario.version': '1',
      'toolpath.version': reports[0]?.toolpathVersion,
      'toolpath.trajectory.tool_calls': 4,
    });
    expect(reports[0]?.toolpathVersion).toMatch(/^\d+\.\d+\.\d+/);
    // The events were added in onEnding: no separate evaluation span was needed.
    expect(spans.map((span) => span.name)).not.toContain('toolpath.evaluate');
    expect(p.errors).toEqual([]);
  });

  it('names the broken rule in a finding event when the refund came before the policy check', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO] });
    await runRefundAgent(p.provider.getTracer('app'), 'refund-before-policy');
    await p.processor.forceFlush();

    const root = agentRoot(p.exporter.getFinishedSpans());
    expect(eventsNamed(root, 'gen_ai.evaluation.result')[0]?.['gen_ai.evaluation.score.label']).toBe('fail');
    const findings = eventsNamed(root, 'toolpath.finding');
    const rule = findings.find((finding) => finding['toolpath.finding.rule'] === 'order.before');
    expect(rule).toMatchObject({
      'toolpath.finding.severity': 'hard',
      'toolpath.scenario.id': 'support.refund',
    });
    // The finding's span ids are spans the exporter received.
    const exportedIds = new Set(p.exporter.getFinishedSpans().map((span) => span.spanContext().spanId));
    const findingSpans = (rule?.['toolpath.finding.spans'] ?? []) as string[];
    expect(findingSpans.length).toBeGreaterThan(0);
    for (const id of findingSpans) expect(exportedIds.has(id)).toBe(true);
  });

  it('puts the events on a toolpath.evaluate child of the agent span when the local root is an HTTP span', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO] });
    const tracer = p.provider.getTracer('app');
    await tracer.startActiveSpan('POST /refunds', { kind: SpanKind.SERVER }, async (server) => {
      await runRefundAgent(tracer, 'made-up-confirmation');
      server.end();
    });
    await p.processor.forceFlush();

    const spans = p.exporter.getFinishedSpans();
    const agent = spans.find((span) => span.name.startsWith('invoke_agent'));
    const evaluation = spans.find((span) => span.name === 'toolpath.evaluate');
    expect(agent && evaluation).toBeTruthy();
    expect(evaluation?.parentSpanContext?.spanId).toBe(agent?.spanContext().spanId);
    expect(evaluation?.spanContext().traceId).toBe(agent?.spanContext().traceId);
    expect(evaluation?.instrumentationScope.name).toBe('toolpath');
    const [result] = eventsNamed(evaluation as ReadableSpan, 'gen_ai.evaluation.result');
    expect(result?.['gen_ai.evaluation.score.label']).toBe('fail');
    const grounding = eventsNamed(evaluation as ReadableSpan, 'toolpath.finding').find(
      (finding) => finding['toolpath.finding.rule'] === 'grounding.source',
    );
    expect(grounding).toBeDefined();
    // Redacted by default: the made-up id and the real one are values the trace captured.
    const emitted = JSON.stringify(evaluation?.events);
    expect(emitted).toContain('[redacted]');
    for (const value of ['R-0000', 'R-7781', 'ana@example.com']) expect(emitted).not.toContain(value);
    // Nothing toolpath emitted was judged again: one evaluation span, one report's events.
    expect(spans.filter((span) => span.name === 'toolpath.evaluate')).toHaveLength(1);
  });

  it('counts evaluations, findings and tool calls through the metrics API', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO] });
    const tracer = p.provider.getTracer('app');
    await runRefundAgent(tracer, 'good');
    await runRefundAgent(tracer, 'refund-before-policy');
    await runRefundAgent(tracer, 'refund-before-policy');
    await p.processor.forceFlush();

    expect(await p.counter('toolpath.evaluations', { 'toolpath.verdict': 'pass' })).toBe(1);
    expect(await p.counter('toolpath.evaluations', { 'toolpath.verdict': 'fail' })).toBe(2);
    expect(await p.counter('toolpath.findings', { 'toolpath.finding.rule': 'order.before' })).toBe(2);
    expect(await p.histogramCount('toolpath.trajectory.tool_calls')).toBe(3);
    expect(await p.histogramCount('toolpath.evaluation.duration')).toBe(3);
  });

  it('emits a log record with the evaluated span context when a logger provider is given', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO] });
    await runRefundAgent(p.provider.getTracer('app'), 'refund-before-policy');
    await p.processor.forceFlush();

    const root = agentRoot(p.exporter.getFinishedSpans());
    const [record] = p.logs.getFinishedLogRecords();
    expect(record?.eventName).toBe('gen_ai.evaluation.result');
    expect(record?.spanContext?.spanId).toBe(root.spanContext().spanId);
    expect(record?.spanContext?.traceId).toBe(root.spanContext().traceId);
    expect(record?.attributes['gen_ai.evaluation.score.label']).toBe('fail');
    expect(record?.attributes['gen_ai.evaluation.evaluator.type']).toBe('toolpath');
    expect(record?.attributes['gen_ai.evaluation.evaluator.id']).toBe('support.refund');
  });
});

describe('trajectoryProcessor keeps the app running', () => {
  it('contains a scenario that throws: the agent finishes, the other scenario reports, every span is exported', async () => {
    const throwing = {
      id: 'broken',
      severity: {},
      rules: {
        get tools(): never {
          throw new Error('scenario exploded');
        },
      },
    };
    const reports: Report[] = [];
    const p = start({
      scenarios: [throwing as never, REFUND_SCENARIO],
      onReport: (report) => {
        reports.push(report);
        throw new Error('onReport exploded too');
      },
    });
    const text = await runRefundAgent(p.provider.getTracer('app'), 'good');
    await p.processor.forceFlush();

    expect(text).toBe('Done.');
    expect(reports.map((report) => report.scenario.id)).toEqual(['support.refund']);
    expect(
      p.errors.some(
        (error) => error.includes('scenario broken threw') && error.includes('scenario exploded'),
      ),
    ).toBe(true);
    expect(p.errors.some((error) => error.includes('onReport threw'))).toBe(true);
    const root = agentRoot(p.exporter.getFinishedSpans());
    expect(eventsNamed(root, 'gen_ai.evaluation.result')).toHaveLength(1);
    expect(await p.counter('toolpath.evaluation.errors', { 'toolpath.error.stage': 'evaluate' })).toBe(1);
  });

  it('rejects a scenario file that cannot be loaded when the processor is built, naming it', () => {
    expect(() => pipeline({ scenarios: ['/nonexistent/refund.yaml'] })).toThrow(
      'scenario /nonexistent/refund.yaml: no such file: /nonexistent/refund.yaml',
    );
  });
});

/** The refund scenario without `safety.irreversible`: an irreversible tool would keep every trace. */
const { safety: _safety, ...NO_IRREVERSIBLE } = REFUND_SCENARIO;

describe('trajectoryProcessor samples by risk', () => {
  it('keeps every trace that calls an irreversible tool, even at ratio 0', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO], sampling: { ratio: 0 } });
    const tracer = p.provider.getTracer('app');
    for (let i = 0; i < 3; i++) await runRefundAgent(tracer, 'good');
    await p.processor.forceFlush();
    const reasons = p.exporter
      .getFinishedSpans()
      .filter((span) => span.parentSpanContext === undefined)
      .map((span) => span.attributes['toolpath.sampling.reason']);
    expect(reasons).toEqual(['irreversible_tool', 'irreversible_tool', 'irreversible_tool']);
  });

  it('drops low-risk traces at ratio 0, keeps failing ones with their reason and count, passes other traces through', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [NO_IRREVERSIBLE],
      sampling: { ratio: 0 },
      onReport: (r) => reports.push(r),
    });
    const tracer = p.provider.getTracer('app');
    await runRefundAgent(tracer, 'good'); // kept: its tools and scenario are new
    await runRefundAgent(tracer, 'good'); // nothing new, nothing wrong: dropped
    await runRefundAgent(tracer, 'refund-before-policy'); // hard finding: kept
    tracer.startActiveSpan('GET /health', { kind: SpanKind.SERVER }, (span) => {
      tracer.startSpan('SELECT 1', { attributes: { 'db.system.name': 'postgresql' } }).end();
      span.end();
    });
    await p.processor.forceFlush();

    const [first, second, failing] = reports.map((report) => report.traceId);
    const exported = p.exporter.getFinishedSpans();
    const roots = exported.filter((span) => span.parentSpanContext === undefined);
    expect(spansOfTrace(p.exporter, second as string)).toEqual([]);
    const firstRoot = roots.find((span) => span.spanContext().traceId === first);
    expect(firstRoot?.attributes['toolpath.sampling.reason']).toBe('new_tool');
    const failingSpans = spansOfTrace(p.exporter, failing as string);
    expect(failingSpans.length).toBeGreaterThan(4);
    for (const span of failingSpans) {
      if (span.name === 'toolpath.evaluate') continue;
      expect(span.attributes['toolpath.sampling.reason']).toBe('hard_finding');
      expect(span.attributes['toolpath.sampling.adjusted_count']).toBe(1);
    }
    expect(exported.map((span) => span.name)).toEqual(expect.arrayContaining(['GET /health', 'SELECT 1']));
    expect(p.processor.stats().dropped.sampled_out).toBe(1);
    expect(await p.counter('toolpath.traces.sampled', { 'toolpath.sampling.kept': false })).toBe(1);
  });

  it('keeps a trace with an error span and one with a configured attribute', async () => {
    const p = start({
      scenarios: [NO_IRREVERSIBLE],
      sampling: { ratio: 0, keepAttributes: { 'app.customer.tier': 'enterprise' } },
    });
    const tracer = p.provider.getTracer('app');
    await runRefundAgent(tracer, 'good');
    await runRefundAgent(tracer, 'tool-error');
    await tracer.startActiveSpan(
      'POST /refunds',
      { attributes: { 'app.customer.tier': 'enterprise' } },
      async (s) => {
        await runRefundAgent(tracer, 'good');
        s.end();
      },
    );
    await p.processor.forceFlush();

    const reasons = p.exporter
      .getFinishedSpans()
      .filter((span) => span.parentSpanContext === undefined)
      .map((span) => span.attributes['toolpath.sampling.reason']);
    expect(reasons).toEqual(['new_tool', 'error', 'attribute']);
  });

  it('keeps about the configured fraction of low-risk traces, by trace id', async () => {
    const p = start({ scenarios: [], sampling: { ratio: 0.25 } });
    const tracer = p.provider.getTracer('app');
    const agentTrace = () => {
      const agent = tracer.startSpan('invoke_agent helper', {
        attributes: { 'gen_ai.operation.name': 'invoke_agent' },
      });
      agent.end();
      return agent.spanContext().traceId;
    };
    const ids = Array.from({ length: 2_000 }, agentTrace);
    await p.processor.forceFlush();
    const kept = new Set(p.exporter.getFinishedSpans().map((span) => span.spanContext().traceId));
    const keptShare = ids.filter((id) => kept.has(id)).length / ids.length;
    expect(keptShare).toBeGreaterThan(0.2);
    expect(keptShare).toBeLessThan(0.3);
    const adjusted = p.exporter.getFinishedSpans()[0]?.attributes['toolpath.sampling.adjusted_count'];
    expect(adjusted).toBe(4);
  });
});

/** What one agent run under a server span still open holds, by the byte estimate. */
async function bytesOfOneRun(): Promise<number> {
  const probe = start({ scenarios: [REFUND_SCENARIO] });
  const tracer = probe.provider.getTracer('app');
  const server = tracer.startSpan('POST /refunds');
  await context.with(trace.setSpan(context.active(), server), () => runRefundAgent(tracer, 'good'));
  const bytes = probe.processor.stats().bufferedBytes;
  await probe.shutdown();
  return bytes;
}

describe('trajectoryProcessor bounds what it holds', () => {
  it('lets the oldest trace go unjudged when the held spans pass limits.maxBufferedBytes', async () => {
    const oneRun = await bytesOfOneRun();
    expect(oneRun).toBeGreaterThan(5_000);

    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { maxBufferedBytes: Math.floor(1.5 * oneRun) },
      onReport: (report) => reports.push(report),
    });
    const tracer = p.provider.getTracer('app');
    const [older, newer] = [tracer.startSpan('POST /refunds'), tracer.startSpan('POST /refunds')];
    await context.with(trace.setSpan(context.active(), older), () => runRefundAgent(tracer, 'good'));
    expect(p.exporter.getFinishedSpans()).toEqual([]);
    await context.with(trace.setSpan(context.active(), newer), () => runRefundAgent(tracer, 'good'));
    // The older run went on unjudged to make room for the newer one.
    const olderId = older.spanContext().traceId;
    expect(spansOfTrace(p.exporter, olderId).length).toBeGreaterThan(3);
    expect(p.processor.stats()).toMatchObject({ bufferedTraces: 1, dropped: { evicted: 1 } });
    expect(p.processor.stats().bufferedBytes).toBeLessThanOrEqual(Math.floor(1.5 * oneRun));
    older.end();
    newer.end();
    await p.processor.forceFlush();
    expect(reports.map((report) => report.traceId)).toEqual([newer.spanContext().traceId]);
    expect(p.processor.stats()).toMatchObject({ bufferedTraces: 0, bufferedBytes: 0 });
  });

  it('never loses a span it cannot size, and judges its trace: no name, an event named by a number', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { maxBufferedBytes: 1_000_000 },
      onReport: (report) => reports.push(report),
    });
    const tracer = p.provider.getTracer('app');
    await tracer.startActiveSpan('POST /refunds', async (server) => {
      await runRefundAgent(tracer, 'good');
      const odd = tracer.startSpan(undefined as unknown as string);
      odd.addEvent(42 as unknown as string);
      odd.end();
      server.end();
    });
    await p.processor.forceFlush();
    // Sized, held, passed on with its trace; nothing left counted (a NaN would switch the cap off).
    expect(p.processor.stats()).toMatchObject({ bufferedSpans: 0, bufferedBytes: 0 });
    const numbered = (span: ReadableSpan) => span.events.some((event) => (event.name as unknown) === 42);
    expect(p.exporter.getFinishedSpans().filter(numbered)).toHaveLength(1);
    // Judged like any other trace: an odd span is read as an unnamed one, not a reason to give up.
    expect(reports.map((report) => report.verdict)).toEqual(['pass']);
    expect(p.errors).toEqual([]);
  });

  it('passes a span larger than maxBufferedBytes straight on, letting no other trace go for it', async () => {
    const cap = Math.floor(2.5 * (await bytesOfOneRun()));

    const p = start({ scenarios: [REFUND_SCENARIO], limits: { maxBufferedBytes: cap } });
    const tracer = p.provider.getTracer('app');
    const [older, newer] = [tracer.startSpan('POST /refunds'), tracer.startSpan('POST /refunds')];
    await context.with(trace.setSpan(context.active(), older), () => runRefundAgent(tracer, 'good'));
    await context.with(trace.setSpan(context.active(), newer), async () => {
      await runRefundAgent(tracer, 'good');
      tracer.startSpan('huge', { attributes: { 'gen_ai.input.messages': 'x'.repeat(cap) } }).end();
    });
    expect(p.exporter.getFinishedSpans().map((span) => span.name)).toEqual(['huge']);
    expect(p.processor.stats()).toMatchObject({ bufferedTraces: 2, dropped: { buffer_full: 1, evicted: 0 } });
    older.end();
    newer.end();
    await p.processor.forceFlush();
    expect(p.processor.stats().bufferedBytes).toBe(0);
  });

  it('refuses a byte cap below 1 when it is built, naming the option', () => {
    for (const maxBufferedBytes of [0, -1, Number.NaN])
      expect(() => start({ scenarios: [REFUND_SCENARIO], limits: { maxBufferedBytes } })).toThrow(
        /config trajectoryProcessor: limits\.maxBufferedBytes: /,
      );
  });

  it('says what it holds through the buffer gauges', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO] });
    const tracer = p.provider.getTracer('app');
    await tracer.startActiveSpan('POST /refunds', async (server) => {
      await runRefundAgent(tracer, 'good');
      // The agent's spans have ended; the trace is held until its local root ends.
      const held = p.exporter.getFinishedSpans().length === 0 ? p.processor.stats().bufferedSpans : -1;
      expect(held).toBeGreaterThan(3);
      expect(await p.counter('toolpath.buffer.traces')).toBe(1);
      expect(await p.counter('toolpath.buffer.spans')).toBe(held);
      expect(await p.counter('toolpath.buffer.bytes')).toBe(p.processor.stats().bufferedBytes);
      expect(p.processor.stats().bufferedBytes).toBeGreaterThan(held * 500);
      server.end();
    });
    await p.processor.forceFlush();
    expect(p.exporter.getFinishedSpans().length).toBeGreaterThan(3);
    expect(await p.counter('toolpath.buffer.spans')).toBe(0);
    expect(await p.counter('toolpath.buffer.bytes')).toBe(0);
  });

  it('judges a trace whose span leaks after the timeout, marked incomplete', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { traceTimeoutMs: 50 },
      onReport: (report) => reports.push(report),
    });
    const tracer = p.provider.getTracer('app');
    await tracer.startActiveSpan('POST /refunds', async (server) => {
      tracer.startSpan('leaked background job'); // never ended
      await runRefundAgent(tracer, 'good');
      server.end();
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await p.processor.forceFlush();

    expect(reports).toHaveLength(1);
    expect(reports[0]?.incomplete).toBe('timeout: 1 span still open');
    const evaluation = p.exporter.getFinishedSpans().find((span) => span.name === 'toolpath.evaluate');
    expect(
      eventsNamed(evaluation as ReadableSpan, 'gen_ai.evaluation.result')[0]?.['toolpath.trace.incomplete'],
    ).toBe('timeout: 1 span still open');
  });

  it('on shutdown judges open traces as incomplete and exports them through the batch processor', async () => {
    const reports: Report[] = [];
    const exported: ReadableSpan[] = [];
    const p = start(
      { scenarios: [REFUND_SCENARIO], onReport: (report) => reports.push(report) },
      keepingExports(exported),
    );
    const tracer = p.provider.getTracer('app');
    const server = tracer.startSpan('POST /refunds'); // never ended: the app is shutting down
    await context.with(trace.setSpan(context.active(), server), () => runRefundAgent(tracer, 'good'));
    expect(reports).toHaveLength(0);
    await p.processor.shutdown();

    expect(reports).toHaveLength(1);
    expect(reports[0]?.incomplete).toBe('shutdown: 1 span still open');
    expect(exported.some((span) => span.name === 'toolpath.evaluate')).toBe(true);
    expect(exported.filter((span) => span.name.startsWith('invoke_agent'))).toHaveLength(1);
  });

  it('passes on the ended spans of a trace in flight at forceFlush, then judges it whole when it completes', async () => {
    const reports: Report[] = [];
    const p = start({ scenarios: [REFUND_SCENARIO], onReport: (report) => reports.push(report) });
    const tracer = p.provider.getTracer('app');
    const server = tracer.startSpan('POST /refunds'); // still serving when the app flushes
    await context.with(trace.setSpan(context.active(), server), () => runRefundAgent(tracer, 'good'));
    await p.processor.forceFlush();

    // What the SDK's processors would have exported by now has reached the exporter, unjudged.
    const traceId = server.spanContext().traceId;
    const early = spansOfTrace(p.exporter, traceId);
    expect(early.some((span) => span.name.startsWith('invoke_agent'))).toBe(true);
    expect(early.map((span) => span.name)).not.toContain('POST /refunds');
    expect(reports).toHaveLength(0);

    server.end();
    await p.processor.forceFlush();
    expect(reports).toHaveLength(1);
    expect(reports[0]?.verdict).toBe('pass');
    expect(reports[0]?.incomplete).toBeUndefined();
    const spans = spansOfTrace(p.exporter, traceId);
    const ids = spans.map((span) => span.spanContext().spanId);
    expect(new Set(ids).size).toBe(ids.length); // each span once
    expect(spans).toHaveLength(early.length + 2); // the server span and the evaluation span
    const evaluation = spans.find((span) => span.name === 'toolpath.evaluate');
    expect(eventsNamed(evaluation as ReadableSpan, 'gen_ai.evaluation.result')).toHaveLength(1);
    expect(p.processor.stats()).toMatchObject({ flushedBeforeJudging: 1, bufferedTraces: 0 });
  });

  it('passes on whole a trace a flush already passed on in part, even when sampling would drop it', async () => {
    const p = start({
      scenarios: [{ id: 'lenient', tools: { allowed: ['get_order'] } }],
      sampling: { ratio: 0 },
    });
    const tracer = p.provider.getTracer('app');
    const agent = () =>
      tracer.startSpan('invoke_agent helper', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
    agent().end(); // the first is kept (its scenario is new)
    const dropped = agent();
    dropped.end();
    const flushed = agent();
    const query = tracer.startSpan('SELECT orders', {}, trace.setSpan(context.active(), flushed));
    query.end();
    await p.processor.forceFlush();
    flushed.end();
    await p.processor.forceFlush();

    expect(spansOfTrace(p.exporter, dropped.spanContext().traceId)).toEqual([]);
    const spans = spansOfTrace(p.exporter, flushed.spanContext().traceId);
    expect(spans.map((span) => span.name).sort()).toEqual(['SELECT orders', 'invoke_agent helper']);
    // Judged in the root's onEnding, as usual: the findings are on the root.
    const root = agentRoot(spans);
    expect(eventsNamed(root, 'gen_ai.evaluation.result')).toHaveLength(1);
    // Kept because it was flushed, standing for itself (not for 1/ratio traces): so say the stamps and the metric.
    expect(root.attributes).toMatchObject({
      'toolpath.sampling.reason': 'flushed',
      'toolpath.sampling.adjusted_count': 1,
    });
    expect(await p.counter('toolpath.traces.sampled', { 'toolpath.sampling.reason': 'flushed' })).toBe(1);
    expect(await p.counter('toolpath.traces.sampled', { 'toolpath.sampling.kept': false })).toBe(1);
    expect(p.processor.stats().dropped.sampled_out).toBe(1);
  });

  it('sends each span of a flushed trace once, over flushes in a row and when it is then let go unjudged', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { maxTraces: 1 },
      onReport: (report) => reports.push(report),
    });
    const tracer = p.provider.getTracer('app');
    const server = tracer.startSpan('POST /refunds');
    await context.with(trace.setSpan(context.active(), server), () => runRefundAgent(tracer, 'good'));
    await p.processor.forceFlush();
    await p.processor.forceFlush();
    tracer.startSpan('step after the flushes', {}, trace.setSpan(context.active(), server)).end();
    // A second agent trace takes the only place: the first goes on unjudged.
    await runRefundAgent(tracer, 'good');
    server.end();
    await p.processor.forceFlush();

    const spans = spansOfTrace(p.exporter, server.spanContext().traceId);
    const ids = spans.map((span) => span.spanContext().spanId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(spans.map((span) => span.name)).toEqual(
      expect.arrayContaining(['POST /refunds', 'step after the flushes']),
    );
    expect(spans.some((span) => span.name === 'toolpath.evaluate')).toBe(false);
    expect(reports).toHaveLength(1); // the second trace only
    expect(p.processor.stats()).toMatchObject({ flushedBeforeJudging: 1, dropped: { evicted: 1 } });
  });

  it('marks a trace incomplete when it is followed again after maxOpenTraces let it go', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { maxOpenTraces: 1 },
      onReport: (report) => reports.push(report),
    });
    const tracer = p.provider.getTracer('app');
    const server = tracer.startSpan('POST /refunds');
    tracer.startSpan('GET /health').end(); // another request: the first is no longer followed
    await context.with(trace.setSpan(context.active(), server), () => runRefundAgent(tracer, 'good'));
    server.end();
    await p.processor.forceFlush();

    expect(p.processor.stats().untrackedTraces).toBe(1);
    expect(reports).toHaveLength(1);
    // Its open spans were not counted while it was let go: the judgement says it may miss some.
    expect(reports[0]?.incomplete).toMatch(/^followed late \(limits\.maxOpenTraces or traceTimeoutMs\)/);
  });

  it('lets the oldest trace go unjudged when maxTraces are open, and counts it', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { maxTraces: 2 },
      onReport: (r) => reports.push(r),
    });
    const tracer = p.provider.getTracer('app');
    const open = ['first', 'second', 'third'].map((name) => tracer.startSpan(`invoke_agent ${name}`));
    const tool = (parent: (typeof open)[number]) =>
      tracer
        .startSpan(
          'execute_tool get_order',
          { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_order' } },
          trace.setSpan(context.active(), parent),
        )
        .end();
    for (const span of open) tool(span);
    for (const span of open) span.end();
    await p.processor.forceFlush();

    expect(p.processor.stats().dropped.evicted).toBe(1);
    expect(reports.map((report) => report.traceId)).toEqual(
      open.slice(1).map((span) => span.spanContext().traceId),
    );
    // The evicted trace's spans still reached the exporter.
    const firstTrace = open[0]?.spanContext().traceId as string;
    expect(
      spansOfTrace(p.exporter, firstTrace)
        .map((span) => span.name)
        .sort(),
    ).toEqual(['execute_tool get_order', 'invoke_agent first']);
    expect(await p.counter('toolpath.traces.dropped', { 'toolpath.drop.reason': 'evicted' })).toBe(1);
  });

  it('judges a large trace after span end, off the app path, on an evaluation span', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO], limits: { inlineMaxSpans: 2 } });
    await runRefundAgent(p.provider.getTracer('app'), 'good');
    const before = p.exporter.getFinishedSpans().length;
    expect(before).toBe(0); // still buffered: judged on the next turn of the event loop
    await new Promise((resolve) => setImmediate(resolve));
    const spans = p.exporter.getFinishedSpans();
    const root = agentRoot(spans);
    expect(eventsNamed(root, 'gen_ai.evaluation.result')).toEqual([]);
    const evaluation = spans.find((span) => span.name === 'toolpath.evaluate');
    expect(evaluation?.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(root.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it('judges a trace once even when a span of it starts and ends while it waits to be judged', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { inlineMaxSpans: 0 },
      onReport: (r) => reports.push(r),
    });
    const tracer = p.provider.getTracer('app');
    const agent = tracer.startSpan('invoke_agent helper', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
    });
    agent.end(); // complete: waits for the next turn of the event loop to be judged
    const late = tracer.startSpan('late work', {}, trace.setSpan(context.active(), agent));
    late.end();
    await p.processor.forceFlush();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reports.map((report) => report.traceId)).toEqual([agent.spanContext().traceId]);
    expect(p.exporter.getFinishedSpans().map((span) => span.name)).toEqual(
      expect.arrayContaining(['invoke_agent helper', 'late work', 'toolpath.evaluate']),
    );
    expect(p.processor.stats().bufferedTraces + p.processor.stats().openTraces).toBe(0);
  });

  it('marks a trace incomplete when spans over maxSpansPerTrace were left out of the judgement', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { maxSpansPerTrace: 3 },
      onReport: (r) => reports.push(r),
    });
    await runRefundAgent(p.provider.getTracer('app'), 'good');
    await p.processor.forceFlush();
    expect(reports[0]?.incomplete).toMatch(/^\d+ spans over the buffer's caps not judged$/);
    // Nothing was lost: every span still reached the exporter.
    expect(p.exporter.getFinishedSpans().filter((span) => span.name.startsWith('execute_tool'))).toHaveLength(
      4,
    );
  });

  it('does not let open ordinary requests push agent traces out of the buffer', async () => {
    const reports: Report[] = [];
    const p = start({
      scenarios: [REFUND_SCENARIO],
      limits: { maxTraces: 1 },
      onReport: (r) => reports.push(r),
    });
    const tracer = p.provider.getTracer('app');
    const requests = [1, 2, 3].map((n) => tracer.startSpan(`GET /slow/${n}`, { kind: SpanKind.SERVER }));
    await runRefundAgent(tracer, 'good');
    for (const request of requests) request.end();
    await p.processor.forceFlush();
    expect(reports).toHaveLength(1);
    expect(p.processor.stats().dropped.evicted).toBe(0);
    expect(p.processor.stats().openTraces).toBe(0);
  });

  it('passes a trace on unjudged when a span of it cannot be read (an end time of NaN), never throwing', async () => {
    const p = start({ scenarios: [REFUND_SCENARIO], limits: { inlineMaxSpans: 0 } });
    const tracer = p.provider.getTracer('app');
    const agent = tracer.startSpan('invoke_agent helper', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
    });
    tracer.startSpan('SELECT 1', {}, trace.setSpan(context.active(), agent)).end(Number.NaN);
    agent.end();
    await p.processor.forceFlush();
    expect(p.exporter.getFinishedSpans().map((span) => span.name)).toEqual(
      expect.arrayContaining(['invoke_agent helper', 'SELECT 1']),
    );
  });

  it('keeps the database spans under a sampled-out agent trace out of the export', async () => {
    // Nothing to find in a trace without calls: low risk, so ratio 0 drops it.
    const p = start({
      scenarios: [{ id: 'lenient', tools: { allowed: ['get_order'] } }],
      sampling: { ratio: 0 },
    });
    const tracer = p.provider.getTracer('app');
    const run = async () =>
      tracer.startActiveSpan(
        'invoke_agent helper',
        { attributes: { 'gen_ai.operation.name': 'invoke_agent' } },
        async (agent) => {
          tracer.startSpan('SELECT orders').end(); // ends before any agent span has ended
          agent.end();
          return agent.spanContext().traceId;
        },
      );
    await run(); // the first is kept (its scenario is new)
    const dropped = await run();
    await p.processor.forceFlush();
    expect(spansOfTrace(p.exporter, dropped)).toEqual([]);
  });
});
