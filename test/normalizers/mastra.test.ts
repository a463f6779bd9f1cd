import { describe, expect, it } from 'vitest';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import type { Convention, TurnDraft } from '../../src/normalizers/convention.js';
import { mastra } from '../../src/normalizers/mastra.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { callOf, fixture, orderedPairs, trajectoryOf as trajectoryWith } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

const CONVENTIONS: readonly Convention[] = [mastra, otelGenAi];

/** This convention first, then OTel GenAI (what the registered precedence has behind it). */
const trajectoryOf = (spans: readonly SpanRecord[], conventions = CONVENTIONS): Trajectory =>
  trajectoryWith(spans, conventions);

/** The `agent_step` spans of a fixture in start order. */
function steps(spans: readonly SpanRecord[]): SpanRecord[] {
  return spans
    .filter((span) => span.attributes['mastra.span.type'] === 'model_step')
    .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1));
}

function turnOf(span: SpanRecord | undefined): TurnDraft | undefined {
  const reading = span && mastra.read(span);
  return reading?.kind === 'turn' ? reading.turn : undefined;
}

function stepSpan(output: string | undefined, input = '[]'): SpanRecord {
  return spanRecord({
    name: 'agent_step support-agent',
    attributes: {
      'gen_ai.operation.name': 'agent_step',
      'mastra.span.type': 'model_step',
      'mastra.model_step.input': input,
      ...(output !== undefined && { 'mastra.model_step.output': output }),
    },
  });
}

const REFUND_ARGS = {
  get_order: { orderId: 'A1001' },
  get_refund_policy: { orderId: 'A1001' },
  issue_refund: { orderId: 'A1001', amount: 42.5 },
  send_confirmation: { email: 'ana@example.com', refundId: 'R-7781' },
};
const REFUND_PAIRS = [
  'get_order->issue_refund',
  'get_order->send_confirmation',
  'get_refund_policy->issue_refund',
  'get_refund_policy->send_confirmation',
  'issue_refund->send_confirmation',
];

describe('Mastra refund (real capture)', () => {
  const spans = fixture('mastra-refund');
  const trajectory = trajectoryOf(spans);

  it('tool spans are plain GenAI: ids, parsed arguments and results, the agent', () => {
    expect(trajectory.calls.map((call) => call.tool)).toEqual(Object.keys(REFUND_ARGS));
    for (const [tool, value] of Object.entries(REFUND_ARGS)) {
      const { id, callId, args, outcome, agentName, convention, result } = callOf(trajectory, tool);
      expect({ id, callId, args, outcome, agentName, convention, captured: result.captured }, tool).toEqual({
        id: `call_${tool}_1`,
        callId: `call_${tool}_1`,
        args: { captured: true, value },
        outcome: { status: 'ok' },
        agentName: 'support-agent',
        convention: 'otel-genai',
        captured: true,
      });
    }
    expect(callOf(trajectory, 'send_confirmation').result).toEqual({
      captured: true,
      value: { messageId: 'M-551', to: 'ana@example.com', refundId: 'R-7781', sent: true },
    });
    expect(trajectory.issues).toEqual([]);
  });

  it('each call is issued by the agent_step it runs under; the two lookups are concurrent', () => {
    for (const call of trajectory.calls) expect(call.turnId, call.tool).toBe(`turn:${call.parentSpanId}`);
    const order = callOf(trajectory, 'get_order');
    const policy = callOf(trajectory, 'get_refund_policy');
    expect(policy.turnId).toBe(order.turnId);
    expect(trajectory.concurrent(order, policy)).toBe(true);
    expect(orderedPairs(trajectory)).toEqual(REFUND_PAIRS);
  });

  it('a step turn reads the calls from mastra.model_step.output, and its input only as a message count', () => {
    const [first, second, , last] = steps(spans).map(turnOf);
    expect(first).toEqual({
      requested: [
        {
          callId: 'call_get_order_1',
          tool: 'get_order',
          args: { captured: true, value: { orderId: 'A1001' } },
        },
        {
          callId: 'call_get_refund_policy_1',
          tool: 'get_refund_policy',
          args: { captured: true, value: { orderId: 'A1001' } },
        },
      ],
      shown: undefined,
      historyLength: 2,
      model: 'mock-support-model',
      convention: 'mastra',
    });
    expect(second?.historyLength).toBe(4);
    expect(last?.requested).toEqual([]);
  });

  it('plain GenAI alone gets Mastra wrong: the chat spans ask for nothing, so no call has an issuing turn', () => {
    const genAiOnly = trajectoryOf(spans, [otelGenAi]);
    const chat = spans.find((span) => span.name === 'chat mock-support-model');
    expect(chat?.attributes['gen_ai.output.messages']).not.toContain('tool_call');
    expect(genAiOnly.turns).toHaveLength(4);
    expect(genAiOnly.turns.every((turn) => turn.issued.length === 0)).toBe(true);
    expect(genAiOnly.calls.every((call) => call.turnId === undefined)).toBe(true);
  });

  it('calls asked for in one step stay concurrent when they ran one after the other; GenAI alone orders them', () => {
    // Mastra ran the two lookups overlapping; a sequential run (toolCallConcurrency: 1) is the
    // same trace with get_refund_policy moved after get_order ended.
    const order = spans.find((span) => span.name === 'execute_tool get_order');
    const sequential = spans.map((span) =>
      span.name === 'execute_tool get_refund_policy' && order?.endTimeUnixNano
        ? {
            ...span,
            startTimeUnixNano: order.endTimeUnixNano + 1_000_000n,
            endTimeUnixNano: order.endTimeUnixNano + 2_000_000n,
          }
        : span,
    );
    const withMastra = trajectoryOf(sequential);
    expect(
      withMastra.concurrent(callOf(withMastra, 'get_order'), callOf(withMastra, 'get_refund_policy')),
    ).toBe(true);
    expect(orderedPairs(withMastra)).toEqual(REFUND_PAIRS);
    const genAiOnly = trajectoryOf(sequential, [otelGenAi]);
    expect(
      genAiOnly.happensBefore(callOf(genAiOnly, 'get_order'), callOf(genAiOnly, 'get_refund_policy')),
    ).toBe(true);
  });

  // The `chat {model}` span under each step is the same model call again; GenAI would read it as
  // a second, empty turn that "consumes" the step's results in the step's place. Mastra claims it
  // as structure.
  it('four turns, each step consuming the results of the step before it', () => {
    expect(trajectory.turns).toHaveLength(4);
    const consumed = trajectory.turns[1]?.consumed ?? [];
    expect([...consumed].sort()).toEqual(['call_get_order_1', 'call_get_refund_policy_1']);
  });
});

describe('Mastra tool error (real capture)', () => {
  const trajectory = trajectoryOf(fixture('mastra-tool-error'));

  it('the failed refund is an error with Mastra error.type and message, issued by its step after the lookup', () => {
    expect(trajectory.calls.map((call) => call.tool)).toEqual(['get_order', 'issue_refund']);
    const refund = callOf(trajectory, 'issue_refund');
    expect(refund).toMatchObject({
      id: 'call_issue_refund_1',
      outcome: { status: 'error', errorType: 'unknown', message: 'payment gateway timeout' },
      args: { captured: true, value: { orderId: 'A1001', amount: 42.5 } },
      result: { captured: false },
      turnId: `turn:${refund.parentSpanId}`,
    });
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
  });
});

describe('Mastra spans built by hand', () => {
  it('claims model_step spans as turns and the model spans around them as structure; tools and agents are left to GenAI', () => {
    for (const type of ['tool_call', 'agent_run', 'model_chunk']) {
      const span = spanRecord({ name: type, attributes: { 'mastra.span.type': type } });
      expect(mastra.read(span), type).toBeUndefined();
    }
    for (const type of ['model_inference', 'model_generation']) {
      const span = spanRecord({ name: type, attributes: { 'mastra.span.type': type } });
      expect(mastra.read(span), type).toEqual({ kind: 'structure', convention: 'mastra' });
    }
    expect(mastra.read(spanRecord({ name: 'agent_step x', attributes: {} }))).toBeUndefined();
  });

  it('a step whose output was not recorded or is malformed asks for nothing; bad arguments are kept raw', () => {
    expect(turnOf(stepSpan(undefined))?.requested).toEqual([]);
    expect(turnOf(stepSpan('{"text":"","toolCalls":[{"toolN'))?.requested).toEqual([]);
    const [call] =
      turnOf(
        stepSpan(
          JSON.stringify({ toolCalls: [{ toolCallId: ' c1 ', toolName: 'lookup', args: '{"q": "x' }] }),
        ),
      )?.requested ?? [];
    expect(call?.callId).toBe('c1');
    expect(call?.args.captured && call.args.value).toBe('{"q": "x');
    expect(call?.args.captured && call.args.parseError).toMatch(/JSON/);
  });

  it('arguments under `input` (the AI SDK name) are read; a call with neither has them not captured', () => {
    const output = JSON.stringify({
      toolCalls: [
        { toolCallId: 'a', toolName: 'one', input: { x: 1 } },
        { toolCallId: 'b', toolName: 'two' },
        { toolCallId: 'c', toolName: '' },
      ],
    });
    expect(turnOf(stepSpan(output))?.requested).toEqual([
      { callId: 'a', tool: 'one', args: { captured: true, value: { x: 1 } } },
      { callId: 'b', tool: 'two', args: { captured: false } },
    ]);
  });
});

describe('Mastra conversation: two generate() calls on one memory thread (real capture)', () => {
  const spans = fixture('mastra-conversation');
  const trajectories = normalizeSpans(spans);

  it('the exporter writes the memory thread as gen_ai.conversation.id on every span, beside mastra.metadata.threadId', () => {
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(2);
    for (const span of spans) {
      expect(span.attributes['gen_ai.conversation.id'], span.name).toBe('thread-ana-a1001');
      expect(span.attributes['mastra.metadata.threadId'], span.name).toBe('thread-ana-a1001');
      expect(span.attributes['mastra.metadata.resourceId'], span.name).toBe('customer-ana');
    }
  });

  it('both traces are one conversation, the lookup in the first and the refund in the second', () => {
    expect(
      trajectories.map((trajectory) => ({
        conversationId: trajectory.conversationId,
        calls: trajectory.calls.map((call) => ({ tool: call.tool, args: call.args })),
        issues: trajectory.issues,
      })),
    ).toEqual([
      {
        conversationId: 'thread-ana-a1001',
        calls: [{ tool: 'get_order', args: { captured: true, value: { orderId: 'A1001' } } }],
        issues: [],
      },
      {
        conversationId: 'thread-ana-a1001',
        // The amount the model read from the first message's result, which memory recalled.
        calls: [
          { tool: 'issue_refund', args: { captured: true, value: { orderId: 'A1001', amount: 42.5 } } },
        ],
        issues: [],
      },
    ]);
  });
});
