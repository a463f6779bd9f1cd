/**
 * Spans that start or end after their trace was judged follow its decision; they never start a
 * trace judged a second time, however many other traces were judged in between (the decision is
 * remembered for `lateWindowMs`, up to `maxJudgedTraceIds` at once).
 */
import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import type { Report } from '../../src/index.js';
import { type Pipeline, pipeline } from './harness.js';

let current: Pipeline | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const SCENARIO = { id: 'any', tools: { forbidden: ['rm'] } };

describe('late spans in the processor', () => {
  it('a span starting in a trace judged before 10,001 others follows its decision: one report', async () => {
    const reports: Report[] = [];
    current = pipeline({ scenarios: [SCENARIO], onReport: (report) => reports.push(report) });
    const tracer = current.provider.getTracer('app');
    const agent = () =>
      tracer.startSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
    const first = agent();
    first.end();
    for (let n = 0; n < 10_001; n++) agent().end();
    await current.processor.forceFlush();
    expect(reports).toHaveLength(10_002);
    const late = tracer.startSpan(
      'execute_tool lookup',
      { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' } },
      trace.setSpan(context.active(), first),
    );
    late.end();
    await current.processor.shutdown();
    const firstTrace = first.spanContext().traceId;
    expect(reports.filter((report) => report.traceId === firstTrace)).toHaveLength(1);
    expect(current.processor.stats().decisionsForgottenEarly).toBe(0);
  });

  it('counts the judged trace ids it forgot early to stay under maxJudgedTraceIds', async () => {
    current = pipeline({ scenarios: [SCENARIO], limits: { maxJudgedTraceIds: 5 } });
    const tracer = current.provider.getTracer('app');
    for (let n = 0; n < 8; n++)
      tracer
        .startSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } })
        .end();
    await current.processor.forceFlush();
    expect(current.processor.stats().decisionsForgottenEarly).toBe(3);
  });
});
