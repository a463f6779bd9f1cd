import { describe, expect, it } from 'vitest';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import type { Convention } from '../../src/normalizers/convention.js';
import { langfuse } from '../../src/normalizers/langfuse.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { callOf, fixture, orderedPairs, trajectoryOf as trajectoryWith } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

const CONVENTIONS: readonly Convention[] = [langfuse, otelGenAi];

/** This convention first, then OTel GenAI (what the registered precedence has behind it). */
const trajectoryOf = (spans: readonly SpanRecord[], conventions = CONVENTIONS): Trajectory =>
  trajectoryWith(spans, conventions);

function generationTurnIds(spans: readonly SpanRecord[]): string[] {
  return spans
    .filter((span) => span.attributes['langfuse.observation.type'] === 'generation')
    .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
    .map((span) => `turn:${span.spanId}`);
}

const REFUND_ARGS = { order_id: 'ORD-20417', amount: 89.9, currency: 'EUR', reason: 'damaged_on_arrival' };

describe('Langfuse observe()d tools and observeOpenAI generations (documented refund)', () => {
  const spans = fixture('langfuse-documented-refund');
  const trajectory = trajectoryOf(spans);

  it('reads tool observations: name, input as arguments, output as result; ids come from the generation', () => {
    expect(
      spans.some(
        (s) => s.attributes['langfuse.observation.type'] === 'tool' && 'gen_ai.tool.call.id' in s.attributes,
      ),
    ).toBe(false);
    expect(trajectory.calls.map((c) => [c.tool, c.id])).toEqual([
      ['get_order', 'call_Kq01ord'],
      ['get_refund_policy', 'call_Kq02pol'],
      ['issue_refund', 'call_Kq03ref'],
      ['send_confirmation', 'call_Kq04cnf'],
    ]);
    expect(callOf(trajectory, 'issue_refund')).toMatchObject({
      args: { captured: true, value: REFUND_ARGS },
      result: { captured: true, value: { refund_id: 'RF-88213', order_id: 'ORD-20417', status: 'issued' } },
      outcome: { status: 'ok' },
      agentName: 'support-agent',
      convention: 'langfuse',
    });
    expect(trajectory.issues).toEqual([]);
  });

  it('links each call to the generation whose output asked for it', () => {
    const [first, second, third, last] = generationTurnIds(spans);
    expect(trajectory.turns.map((t) => [t.id, t.issued])).toEqual([
      [first, ['call_Kq01ord', 'call_Kq02pol']],
      [second, ['call_Kq03ref']],
      [third, ['call_Kq04cnf']],
      [last, []],
    ]);
    expect(trajectory.turns[0]?.model).toBe('gpt-4o-mini-2024-07-18');
  });

  it('orders by the tool results each generation was shown; one response is concurrent', () => {
    expect(orderedPairs(trajectory)).toEqual([
      'get_order->issue_refund',
      'get_order->send_confirmation',
      'get_refund_policy->issue_refund',
      'get_refund_policy->send_confirmation',
      'issue_refund->send_confirmation',
    ]);
    expect(
      trajectory.concurrent(callOf(trajectory, 'get_order'), callOf(trajectory, 'get_refund_policy')),
    ).toBe(true);
  });

  it('calls of one response stay concurrent even when one ran after the other ended', () => {
    const order = spans.find((s) => s.name === 'get_order');
    if (!order?.endTimeUnixNano) throw new Error('no get_order span');
    const later = order.endTimeUnixNano + 5_000_000n;
    const moved = trajectoryOf(
      spans.map((span) =>
        span.name === 'get_refund_policy'
          ? { ...span, startTimeUnixNano: later, endTimeUnixNano: later + 2_000_000n }
          : span,
      ),
    );
    expect(moved.concurrent(callOf(moved, 'get_order'), callOf(moved, 'get_refund_policy'))).toBe(true);
  });

  it('an agent observation is an agent run named after the observation', () => {
    expect(trajectory.agents.map((a) => a.name)).toEqual(['support-agent']);
    expect(trajectory.root).toMatchObject({ name: 'support-agent', agentName: 'support-agent' });
  });
});

describe('Langfuse observe()d tool that throws (documented tool-error)', () => {
  const spans = fixture('langfuse-documented-tool-error');
  const trajectory = trajectoryOf(spans);

  it('level ERROR is an error with the OTLP status unset; the type comes from the {error} output', () => {
    expect(spans.find((s) => s.name === 'issue_refund')?.status.code).toBe('unset');
    expect(callOf(trajectory, 'issue_refund')).toMatchObject({
      callId: 'call_Tz02ref',
      outcome: {
        status: 'error',
        errorType: 'PaymentGatewayTimeout',
        message: 'payment gateway did not answer within 5000 ms',
      },
      result: {
        captured: true,
        value: { error: 'PaymentGatewayTimeout: payment gateway did not answer within 5000 ms' },
      },
    });
    expect(callOf(trajectory, 'get_order').outcome).toEqual({ status: 'ok' });
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
    const [, second, last] = generationTurnIds(spans);
    expect(callOf(trajectory, 'issue_refund').turnId).toBe(second);
    expect(trajectory.turns.find((t) => t.id === last)?.consumed).toContain('call_Tz02ref');
  });
});

function observation(
  type: string,
  name: string,
  attributes: Attributes,
  fields: Parameters<typeof spanRecord>[0] = {},
) {
  return spanRecord({ name, ...fields, attributes: { 'langfuse.observation.type': type, ...attributes } });
}

describe('Langfuse outcomes', () => {
  it('startActiveObservation’s throw: status ERROR with the message, no level', () => {
    const span = observation('tool', 't', {}, { status: { code: 'error', message: 'boom' } });
    expect(trajectoryOf([span]).calls[0]?.outcome).toEqual({ status: 'error', message: 'boom' });
  });

  it('level WARNING is not an error; ERROR without a typed output has no type', () => {
    const warning = observation('tool', 't', { 'langfuse.observation.level': 'WARNING' });
    expect(trajectoryOf([warning]).calls[0]?.outcome).toEqual({ status: 'ok' });
    const failed = observation('tool', 't', {
      'langfuse.observation.level': 'ERROR',
      'langfuse.observation.status_message': 'quota exceeded',
      'langfuse.observation.output': '"quota exceeded"',
    });
    expect(trajectoryOf([failed]).calls[0]?.outcome).toEqual({ status: 'error', message: 'quota exceeded' });
  });
});

describe('Langfuse inputs, outputs and types', () => {
  it('input and output not recorded (captureInput: false): not captured, never empty', () => {
    const call = trajectoryOf([observation('tool', 'get_order', {})]).calls[0];
    expect(call?.args).toEqual({ captured: false });
    expect(call?.result).toEqual({ captured: false });
  });

  it('an input string that is not JSON is kept raw with a parse error and reported', () => {
    const trajectory = trajectoryOf([
      observation('tool', 'get_order', { 'langfuse.observation.input': '{"id": 1' }),
    ]);
    const args = trajectory.calls[0]?.args;
    expect(args?.captured && args.value).toBe('{"id": 1');
    expect(args?.captured && args.parseError).toMatch(/JSON/);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
  });

  it('@langfuse/langchain: LangChain tool calls in the output, tool messages named after the tool', () => {
    const reading = langfuse.read(
      observation('generation', 'ChatOpenAI', {
        'langfuse.observation.input': JSON.stringify({
          messages: [
            { role: 'user', content: 'refund ORD-1' },
            {
              role: 'assistant',
              content: '',
              tool_calls: [{ name: 'get_order', args: { id: 1 }, id: 'c1' }],
            },
            { role: 'get_order', content: '{"total":40}', additional_kwargs: {} },
          ],
          tools: [],
        }),
        'langfuse.observation.output': JSON.stringify({
          role: 'assistant',
          content: '',
          tool_calls: [{ name: 'issue_refund', args: { id: 1, amount: 40 }, id: 'c2', type: 'tool_call' }],
        }),
      }),
    );
    expect(reading).toEqual({
      kind: 'turn',
      turn: {
        requested: [
          { callId: 'c2', tool: 'issue_refund', args: { captured: true, value: { id: 1, amount: 40 } } },
        ],
        shown: [{ tool: 'get_order', result: { captured: true, value: { total: 40 } } }],
        historyLength: 3,
        convention: 'langfuse',
      },
    });
  });

  it('@langfuse/langchain tool observations: the ToolMessage output gives result and call id', () => {
    const toolMessage = {
      lc: 1,
      type: 'constructor',
      id: ['langchain_core', 'messages', 'ToolMessage'],
      kwargs: { content: '{"total":40}', tool_call_id: 'c1', name: 'get_order', status: 'success' },
    };
    const span = observation('tool', 'get_order', {
      'langfuse.observation.input': '{"id":1}',
      'langfuse.observation.output': JSON.stringify(toolMessage),
    });
    expect(trajectoryOf([span]).calls[0]).toMatchObject({
      callId: 'c1',
      args: { captured: true, value: { id: 1 } },
      result: { captured: true, value: { total: 40 } },
    });
  });

  it('a generation without recorded input says so; other observation types are structure', () => {
    const reading = langfuse.read(observation('generation', 'g', { 'langfuse.observation.output': '"hi"' }));
    expect(reading).toMatchObject({ kind: 'turn', turn: { requested: [], shown: undefined } });
    for (const type of ['span', 'event', 'chain', 'retriever', 'evaluator', 'embedding', 'guardrail'])
      expect(langfuse.read(observation(type, 'x', {}))).toBeUndefined();
  });
});
