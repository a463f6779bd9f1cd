/**
 * smolagents' ToolCallingAgent through OpenInference, in its attribute layout, recorded by a real
 * SDK provider: TOOL spans' `input.value` wraps the arguments as
 * `{"args": [], "sanitize_inputs_outputs": true, "kwargs": {...}}`, LLM spans record only their
 * output's role, every value is a string, and no span carries a call id.
 */
import { context, type Span, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import type { JsonValue } from '../../src/model/json.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { ToolCall, Trajectory } from '../../src/model/trajectory.js';
import { assembleTrajectory } from '../../src/normalizers/assemble.js';
import { openInference } from '../../src/normalizers/openinference.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { unwrapArguments } from '../../src/normalizers/wrapped-arguments.js';

type Tracer = ReturnType<BasicTracerProvider['getTracer']>;
const T0 = 1_761_146_662_000;

const wrapped = (kwargs: object, args: unknown[] = []) =>
  JSON.stringify({ args, sanitize_inputs_outputs: true, kwargs });

/** A smolagents run: two generations, each followed by the tool it asked for, under one AGENT span. */
function recordRun(toolInputs: [tool: string, input: string][]): SpanRecord[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer: Tracer = provider.getTracer('openinference.instrumentation.smolagents');
  const root = tracer.startSpan('test_evaluation', { startTime: T0 });
  const run = tracer.startSpan(
    'ToolCallingAgent.run',
    { startTime: T0, attributes: { 'openinference.span.kind': 'AGENT', 'input.value': '{"task": "t"}' } },
    trace.setSpan(context.active(), root),
  );
  const inRun = trace.setSpan(context.active(), run);
  let at = T0;
  const step = (name: string, attributes: Record<string, string>, length: number): Span => {
    const span = tracer.startSpan(name, { startTime: at, attributes }, inRun);
    at += length;
    span.end(at);
    return span;
  };
  for (const [tool, input] of toolInputs) {
    step(
      'completion',
      { 'openinference.span.kind': 'LLM', 'llm.output_messages.0.message.role': 'assistant' },
      300,
    );
    step(
      'Tool',
      {
        'openinference.span.kind': 'TOOL',
        'tool.name': tool,
        'input.value': input,
        'output.value': `${tool} done`,
        'output.mime_type': 'text/plain',
      },
      10,
    );
  }
  step(
    'completion',
    { 'openinference.span.kind': 'LLM', 'llm.output_messages.0.message.role': 'assistant' },
    300,
  );
  run.end(at);
  root.end(at);
  return exporter.getFinishedSpans().map(fromReadableSpan);
}

function trajectoryOf(spans: readonly SpanRecord[]): Trajectory {
  const trajectory = assembleTrajectory(spans[0]?.traceId ?? '', spans, [openInference, otelGenAi]);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

const callOf = (trajectory: Trajectory, tool: string): ToolCall => {
  const call = trajectory.calls.find((c) => c.tool === tool);
  if (!call) throw new Error(`no ${tool} call`);
  return call;
};

describe('OpenInference smolagents tool input', () => {
  it('reads the wrapped kwargs as the arguments, each call issued by the generation before it', () => {
    const trajectory = trajectoryOf(
      recordRun([
        ['get_weather', wrapped({ location: 'Paris, France' })],
        ['final_answer', wrapped({ answer: '20°C' })],
      ]),
    );
    const weather = callOf(trajectory, 'get_weather');
    const answer = callOf(trajectory, 'final_answer');
    expect(weather.args).toEqual({ captured: true, value: { location: 'Paris, France' } });
    expect(answer.args).toEqual({ captured: true, value: { answer: '20°C' } });
    const [first, second, third] = trajectory.turns;
    expect(first?.issued).toEqual([weather.id]);
    expect(second?.issued).toEqual([answer.id]);
    expect(second?.consumed).toEqual([weather.id]);
    expect(third?.issued).toEqual([]);
    expect(trajectory.happensBefore(weather, answer)).toBe(true);
    expect(trajectory.issues).toEqual([]);
  });

  it('keeps a wrapped input with positional arguments as recorded and names its span', () => {
    const spans = recordRun([['lookup', wrapped({ verbose: true }, ['A-1001'])]]);
    const trajectory = trajectoryOf(spans);
    const call = callOf(trajectory, 'lookup');
    expect(call.args).toEqual({
      captured: true,
      value: { args: ['A-1001'], sanitize_inputs_outputs: true, kwargs: { verbose: true } },
    });
    expect(call.turnId).toBe(trajectory.turns[0]?.id);
    const toolSpan = spans.find((span) => span.attributes['tool.name'] === 'lookup');
    expect(trajectory.issues).toEqual([
      expect.objectContaining({ kind: 'arguments.wrapped', spanIds: [toolSpan?.spanId] }),
    ]);
    expect(trajectory.issues[0]?.message).toContain(toolSpan?.spanId);
    expect(trajectory.issues[0]?.message).toContain('1 positional argument');
  });

  it('says an input.value that is not JSON cannot be read, and loses nothing else', () => {
    const spans = recordRun([
      ['broken', '{"args": [], "kwargs": {'],
      ['final_answer', wrapped({ answer: 'x' })],
    ]);
    const trajectory = trajectoryOf(spans);
    const broken = callOf(trajectory, 'broken');
    expect(broken.args).toMatchObject({ captured: true, value: '{"args": [], "kwargs": {' });
    expect(callOf(trajectory, 'final_answer').args).toEqual({ captured: true, value: { answer: 'x' } });
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
    expect(trajectory.calls.every((call) => call.turnId !== undefined)).toBe(true);
  });

  it('unwraps only the exact shape', () => {
    const kwargs = { q: 1 };
    expect(
      unwrapArguments({ captured: true, value: { args: [], sanitize_inputs_outputs: false, kwargs } }),
    ).toEqual({
      args: { captured: true, value: kwargs },
    });
    const others: JsonValue[] = [
      { args: [], kwargs },
      { args: [], sanitize_inputs_outputs: true, kwargs, extra: 1 },
      { args: {}, sanitize_inputs_outputs: true, kwargs },
      { args: [], sanitize_inputs_outputs: true, kwargs: [1] },
      { args: [], sanitize_inputs_outputs: 'true', kwargs },
    ];
    for (const value of others)
      expect(unwrapArguments({ captured: true, value })).toEqual({ args: { captured: true, value } });
    expect(unwrapArguments({ captured: false })).toEqual({ args: { captured: false } });
  });
});
