/**
 * any-agent's own spans (`invoke_agent`, `call_llm`, `execute_tool` with `gen_ai.output` and
 * `gen_ai.tool.args`), recorded through a real SDK provider in the layout its callbacks write.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import { context, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { ANY_AGENT, anyAgent } from '../../src/normalizers/any-agent.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';

const BASE = 1_758_000_000_000; // ms

/** The spans of one any-agent run: a call_llm per step, each followed by its execute_tool spans. */
function anyAgentRun(steps: { output: unknown; tools: Attributes[] }[]): SpanRecord[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('any-agent-test');
  let at = BASE;
  const root = tracer.startSpan('invoke_agent [support]', {
    startTime: at,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support',
      'any_agent.version': '1.9.1',
    },
  });
  const inside = trace.setSpan(context.active(), root);
  const timed = (name: string, attributes: Attributes): Span => {
    at += 10;
    const span = tracer.startSpan(name, { startTime: at, attributes }, inside);
    at += 10;
    span.end(at);
    return span;
  };
  for (const step of steps) {
    timed('call_llm mock-model', {
      'gen_ai.operation.name': 'call_llm',
      'gen_ai.request.model': 'mock-model',
      'gen_ai.output': typeof step.output === 'string' ? step.output : JSON.stringify(step.output),
      'gen_ai.output.type': typeof step.output === 'string' ? 'text' : 'json',
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 10,
    });
    for (const tool of step.tools) {
      timed(`execute_tool ${tool['gen_ai.tool.name']}`, { 'gen_ai.operation.name': 'execute_tool', ...tool });
    }
  }
  at += 10;
  root.end(at);
  return exporter.getFinishedSpans().map(fromReadableSpan);
}

function read(spans: SpanRecord[]): Trajectory {
  const trajectory = normalizeTrace(spans[0]?.traceId as string, spans);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

const LOOKUP = { 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.args': '{"order": "A-1"}' };

describe('any-agent', () => {
  it('reads call_llm as turns and execute_tool with its call id, arguments and result', () => {
    const trajectory = read(
      anyAgentRun([
        {
          output: [{ 'tool.name': 'lookup_order', 'tool.args': '{"order": "A-1"}' }],
          tools: [{ ...LOOKUP, 'gen_ai.tool.call.id': 'c-1', 'gen_ai.output': '{"status": "shipped"}' }],
        },
        { output: 'It has shipped.', tools: [] },
      ]),
    );
    expect(trajectory.calls).toHaveLength(1);
    const [call] = trajectory.calls;
    expect(call).toMatchObject({
      id: 'c-1',
      callId: 'c-1',
      tool: 'lookup_order',
      args: { captured: true, value: { order: 'A-1' } },
      result: { captured: true, value: { status: 'shipped' } },
      outcome: { status: 'ok' },
      agentName: 'support',
      convention: ANY_AGENT,
    });
    expect(trajectory.turns.map((turn) => [turn.issued, turn.consumed])).toEqual([
      [['c-1'], []],
      [[], ['c-1']],
    ]);
    expect(trajectory.turns[1]?.answer).toBe('It has shipped.');
    expect(trajectory.agents.filter((run) => run.turns.length > 0).map((run) => run.name)).toEqual([
      'support',
    ]);
    expect(trajectory.issues).toEqual([]);
  });

  it('links calls without a call id to the request of the same tool and arguments, in order', () => {
    const trajectory = read(
      anyAgentRun([
        {
          // Object args (ADK, LangChain) as well as JSON text (Agno, LlamaIndex).
          output: [
            { 'tool.name': 'lookup_order', 'tool.args': { order: 'A-1' } },
            { 'tool.name': 'lookup_order', 'tool.args': { order: 'B-2' } },
          ],
          tools: [
            { ...LOOKUP, 'gen_ai.output': '"shipped"' },
            { ...LOOKUP, 'gen_ai.tool.args': '{"order": "B-2"}', 'gen_ai.output': 'not json: pending' },
          ],
        },
        {
          output: [{ 'tool.name': 'notify', 'tool.args': '{}' }],
          tools: [{ 'gen_ai.tool.name': 'notify', 'gen_ai.tool.args': '{}', 'gen_ai.output': 'null' }],
        },
        { output: 'Done.', tools: [] },
      ]),
    );
    const [first, second, third] = trajectory.calls;
    expect(trajectory.calls.map((call) => [call.tool, call.callId, call.args, call.result])).toEqual([
      [
        'lookup_order',
        undefined,
        { captured: true, value: { order: 'A-1' } },
        { captured: true, value: 'shipped' },
      ],
      [
        'lookup_order',
        undefined,
        { captured: true, value: { order: 'B-2' } },
        { captured: true, value: 'not json: pending' },
      ],
      ['notify', undefined, { captured: true, value: {} }, { captured: true, value: null }],
    ]);
    const [one, two, three] = trajectory.turns;
    expect(one?.issued).toEqual([first?.id, second?.id]);
    expect(two?.issued).toEqual([third?.id]);
    expect(two?.consumed).toEqual([first?.id, second?.id]);
    expect(three?.consumed).toEqual([third?.id]);
    expect(trajectory.happensBefore(first as never, second as never)).toBe(false);
    expect(trajectory.happensBefore(second as never, third as never)).toBe(true);
    expect(trajectory.issues).toEqual([]);
  });

  it("reads the arguments the model asked for over the span's unparsable ones, and says nothing is unparsable", () => {
    const trajectory = read(
      anyAgentRun([
        {
          output: [{ 'tool.name': 'lookup_order', 'tool.args': { order: 'A-1' } }],
          tools: [{ ...LOOKUP, 'gen_ai.tool.args': "{order: 'A-1'", 'gen_ai.tool.call.id': 'c-1' }],
        },
        { output: 'Done.', tools: [] },
      ]),
    );
    expect(trajectory.calls[0]?.args).toEqual({ captured: true, value: { order: 'A-1' } });
    expect(trajectory.issues).toEqual([]);
  });

  it('keeps unparsable arguments as text with an arguments.unparsable issue, losing nothing else', () => {
    const trajectory = read(
      anyAgentRun([
        {
          // The request records no arguments: the span's are all there is.
          output: [{ 'tool.name': 'lookup_order' }],
          tools: [
            {
              ...LOOKUP,
              'gen_ai.tool.args': "{order: 'A-1'",
              'gen_ai.tool.call.id': 'c-1',
              'gen_ai.output': '"shipped"',
            },
          ],
        },
        { output: 'Done.', tools: [] },
      ]),
    );
    const [call] = trajectory.calls;
    expect(call?.args).toMatchObject({ captured: true, value: "{order: 'A-1'" });
    expect(call?.result).toEqual({ captured: true, value: 'shipped' });
    expect(call?.turnId).toBe(`turn:${trajectory.turns[0]?.spanId}`);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
  });

  it('says when turns and calls name a parent the trace does not hold, and leaves them out of the run', () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('any-agent-test');
    const root = tracer.startSpan('invoke_agent [support]', {
      startTime: BASE,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'support',
        'any_agent.version': '1.9.1',
      },
    });
    // The framework's own span, never ended: not exported, as ADK's spans are not kept by any-agent.
    const hidden = tracer.startSpan(
      'framework step',
      { startTime: BASE + 1 },
      trace.setSpan(context.active(), root),
    );
    const under = trace.setSpan(context.active(), hidden);
    const turn = tracer.startSpan(
      'call_llm mock-model',
      {
        startTime: BASE + 10,
        attributes: {
          'gen_ai.operation.name': 'call_llm',
          'gen_ai.output': JSON.stringify([{ 'tool.name': 'lookup_order', 'tool.args': { order: 'A-1' } }]),
        },
      },
      under,
    );
    turn.end(BASE + 20);
    const tool = tracer.startSpan(
      'execute_tool lookup_order',
      {
        startTime: BASE + 30,
        attributes: { 'gen_ai.operation.name': 'execute_tool', ...LOOKUP, 'gen_ai.output': '1' },
      },
      under,
    );
    tool.end(BASE + 40);
    root.end(BASE + 50);
    const trajectory = read(exporter.getFinishedSpans().map(fromReadableSpan));
    const outside = trajectory.agents.find((run) => run.spanId === undefined);
    expect(outside?.turns).toEqual([`turn:${turn.spanContext().spanId}`]);
    expect(trajectory.calls.map((call) => call.args)).toEqual([{ captured: true, value: { order: 'A-1' } }]);
    expect(trajectory.issues.map((issue) => [issue.kind, issue.spanIds])).toEqual([
      ['span.parent_missing', [turn.spanContext().spanId, tool.spanContext().spanId]],
    ]);
  });

  it('claims only spans of its shape', () => {
    const plain = anyAgentRun([{ output: 'hi', tools: [] }]).map((span) => ({
      ...span,
      attributes: Object.fromEntries(
        Object.entries(span.attributes).filter(
          ([key]) => key !== 'gen_ai.output' && key !== 'any_agent.version',
        ),
      ),
    }));
    expect(plain.map((span) => anyAgent.read(span))).toEqual([undefined, undefined]);
  });
});
