import { describe, expect, it } from 'vitest';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import type { Convention, TurnDraft } from '../../src/normalizers/convention.js';
import { googleAdk } from '../../src/normalizers/google-adk.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { callOf, fixture, trajectoryOf as trajectoryWith } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

const CONVENTIONS: readonly Convention[] = [googleAdk, otelGenAi];

/** This convention first, then OTel GenAI (what the registered precedence has behind it). */
const trajectoryOf = (spans: readonly SpanRecord[], conventions = CONVENTIONS): Trajectory =>
  trajectoryWith(spans, conventions);

/** "a->b" for every happens-before pair between the named tools. */
function orderedPairs(trajectory: Trajectory, tools: readonly string[]): string[] {
  const calls = trajectory.calls.filter((call) => tools.includes(call.tool));
  const pairs: string[] = [];
  for (const a of calls)
    for (const b of calls) if (trajectory.happensBefore(a, b)) pairs.push(`${a.tool}->${b.tool}`);
  return pairs.sort();
}

/** The `call_llm` spans of a fixture in start order. */
function modelCalls(spans: readonly SpanRecord[]): SpanRecord[] {
  return spans
    .filter((span) => span.name === 'call_llm')
    .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1));
}

function turnOf(span: SpanRecord | undefined): TurnDraft | undefined {
  const reading = span && googleAdk.read(span);
  return reading?.kind === 'turn' ? reading.turn : undefined;
}

/** A span as ADK's tracer makes it (scope `gcp.vertex.agent`). */
function adkSpan(
  name: string,
  attributes: Attributes,
  fields: Parameters<typeof spanRecord>[0] = {},
): SpanRecord {
  return spanRecord({ name, scope: { name: 'gcp.vertex.agent', version: '2.0.0' }, ...fields, attributes });
}

const ORDER = {
  orderId: 'A1001',
  status: 'delivered',
  item: 'ceramic teapot',
  amount: 42.5,
  currency: 'EUR',
  customerEmail: 'ana@example.com',
};
const REFUND_ARGS = {
  get_order: { orderId: 'A1001' },
  get_refund_policy: { orderId: 'A1001' },
  issue_refund: { orderId: 'A1001', amount: 42.5 },
  send_confirmation: { email: 'ana@example.com', refundId: 'R-7781' },
};
const TOOLS = Object.keys(REFUND_ARGS);
/** What ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false replaces with "{}". */
const CONTENT_KEYS = [
  'gcp.vertex.agent.llm_request',
  'gcp.vertex.agent.llm_response',
  'gcp.vertex.agent.tool_call_args',
  'gcp.vertex.agent.tool_response',
];

describe('Google ADK refund (real capture, Gemini-like model without call ids)', () => {
  const spans = fixture('google-adk-refund');
  const trajectory = trajectoryOf(spans);

  it('reads the four calls with ADK ids, and arguments and results from the gcp.vertex.agent keys', () => {
    for (const [tool, value] of Object.entries(REFUND_ARGS)) {
      const { id, callId, args, result, outcome, agentName, convention } = callOf(trajectory, tool);
      expect(callId, tool).toMatch(/^adk-[0-9a-f-]{36}$/);
      expect({ id, args, outcome, agentName, convention, resultCaptured: result.captured }, tool).toEqual({
        id: callId,
        args: { captured: true, value },
        outcome: { status: 'ok' },
        agentName: 'support_agent',
        convention: 'google-adk',
        resultCaptured: true,
      });
    }
    expect(callOf(trajectory, 'get_order').result).toEqual({ captured: true, value: ORDER });
    expect(trajectory.issues).toEqual([]);
  });

  it('the lookups asked for in one response are concurrent although ADK ran them one after the other', () => {
    const order = callOf(trajectory, 'get_order');
    const policy = callOf(trajectory, 'get_refund_policy');
    expect(order.endTimeUnixNano).toBeLessThan(policy.startTimeUnixNano ?? 0n);
    expect(order.turnId).toBe(`turn:${order.parentSpanId}`);
    expect(policy.turnId).toBe(order.turnId);
    expect(trajectory.concurrent(order, policy)).toBe(true);
    expect(orderedPairs(trajectory, TOOLS)).toEqual([
      'get_order->issue_refund',
      'get_order->send_confirmation',
      'get_refund_policy->issue_refund',
      'get_refund_policy->send_confirmation',
      'issue_refund->send_confirmation',
    ]);
  });

  it('each tool span is a child of the call_llm turn that asked for it; each turn consumes the previous results', () => {
    expect(trajectory.agents.find((run) => run.name === 'support_agent')?.turns).toHaveLength(4);
    // Only the four real tools: the merged span's call is the known gap below.
    const byTool = (ids: readonly string[]) =>
      ids.map((id) => trajectory.call(id)?.tool ?? '').filter((tool) => TOOLS.includes(tool));
    expect(trajectory.turns.map((turn) => byTool(turn.issued))).toEqual([
      ['get_order', 'get_refund_policy'],
      ['issue_refund'],
      ['send_confirmation'],
      [],
    ]);
    expect(trajectory.turns.map((turn) => byTool(turn.consumed).sort())).toEqual([
      [],
      ['get_order', 'get_refund_policy'],
      ['issue_refund'],
      ['send_confirmation'],
    ]);
    for (const turn of trajectory.turns) expect(turn.model).toBe('mock-support-model');
    expect(trajectory.root?.name).toBe('invocation');
    expect(trajectory.root?.agentName).toBe('support_agent');
  });

  it('call_llm: function calls asked for in llm_response, function responses shown in llm_request, without ids', () => {
    const [first, second] = modelCalls(spans).map(turnOf);
    expect(first).toEqual({
      requested: [
        { tool: 'get_order', args: { captured: true, value: { orderId: 'A1001' } } },
        { tool: 'get_refund_policy', args: { captured: true, value: { orderId: 'A1001' } } },
      ],
      shown: [],
      historyLength: 1,
      model: 'mock-support-model',
      convention: 'google-adk',
    });
    expect(second?.historyLength).toBe(3);
    expect(second?.shown).toEqual([
      { tool: 'get_order', result: { captured: true, value: ORDER } },
      {
        tool: 'get_refund_policy',
        result: {
          captured: true,
          value: { refundable: true, windowDays: 30, maxAmount: 100, reason: 'damaged on arrival' },
        },
      },
    ]);
  });

  it('plain GenAI alone gets ADK wrong: no turns, arguments not captured, the lookups ordered by time', () => {
    const genAiOnly = trajectoryOf(spans, [otelGenAi]);
    expect(genAiOnly.turns).toEqual([]);
    expect(callOf(genAiOnly, 'issue_refund').args).toEqual({ captured: false });
    expect(callOf(genAiOnly, 'get_order').turnId).toBeUndefined();
    expect(
      genAiOnly.happensBefore(callOf(genAiOnly, 'get_order'), callOf(genAiOnly, 'get_refund_policy')),
    ).toBe(true);
  });

  it('with content capture off ("{}" in every content key) each call is still issued by its call_llm', () => {
    const off = spans.map((span) => ({
      ...span,
      attributes: Object.fromEntries(
        Object.entries(span.attributes).map(([key, value]) => [
          key,
          CONTENT_KEYS.includes(key) ? '{}' : value,
        ]),
      ),
    }));
    const blind = trajectoryOf(off);
    for (const tool of TOOLS) {
      const call = callOf(blind, tool);
      expect({ args: call.args, result: call.result }, tool).toEqual({
        args: { captured: false },
        result: { captured: false },
      });
      expect(call.turnId, tool).toBe(`turn:${call.parentSpanId}`);
    }
    expect(blind.concurrent(callOf(blind, 'get_order'), callOf(blind, 'get_refund_policy'))).toBe(true);
    expect(orderedPairs(blind, TOOLS)).toEqual(orderedPairs(trajectory, TOOLS));
  });

  it('the merged-responses span is bookkeeping, not a call: ADK does not claim it', () => {
    const merged = spans.find((span) => span.name === 'execute_tool (merged)');
    expect(merged?.attributes['gen_ai.tool.name']).toBe('(merged tools)');
    expect(merged && googleAdk.read(merged)).toEqual({ kind: 'structure', convention: 'google-adk' });
    expect(trajectoryOf(spans, [googleAdk]).calls.map((call) => call.tool)).toEqual(TOOLS);
  });

  // ADK claims the merged span as structure, so OTel GenAI, behind it, does not read its
  // `gen_ai.operation.name=execute_tool` as a fifth call.
  it('with OTel GenAI behind ADK, the merged span is no "(merged tools)" call', () => {
    expect(trajectory.calls.map((call) => call.tool)).toEqual(TOOLS);
  });
});

describe('Google ADK tool error (real capture)', () => {
  const spans = fixture('google-adk-tool-error');
  const trajectory = trajectoryOf(spans);

  it('a tool that threw leaves a bare span: an error, arguments from the turn, message from what the next turn was shown', () => {
    const failed = spans.find((span) => span.name === 'execute_tool issue_refund');
    expect(failed?.attributes).toEqual({});
    expect(failed?.status.code).toBe('unset');
    const refund = callOf(trajectory, 'issue_refund');
    expect(refund).toMatchObject({
      id: `span:${failed?.spanId}`,
      outcome: { status: 'error', message: "Error in tool 'issue_refund': payment gateway timeout" },
      args: { captured: true, value: { orderId: 'A1001', amount: 42.5 } },
      // The shown result names its tool but no id: it is the previous turn's only issue_refund call.
      result: { captured: true, value: { error: "Error in tool 'issue_refund': payment gateway timeout" } },
      convention: 'google-adk',
      turnId: `turn:${failed?.parentSpanId}`,
    });
    expect(refund.callId).toBeUndefined();
    expect(callOf(trajectory, 'get_order').outcome).toEqual({ status: 'ok' });
    expect(orderedPairs(trajectory, TOOLS)).toEqual(['get_order->issue_refund']);
  });

  it('the error message is only in what the next turn was shown, and that turn consumed the failed call', () => {
    const last = turnOf(modelCalls(spans)[2]);
    expect(last?.shown).toContainEqual({
      tool: 'issue_refund',
      result: { captured: true, value: { error: "Error in tool 'issue_refund': payment gateway timeout" } },
      isError: true,
    });
    expect(trajectory.turns[2]?.consumed).toEqual([callOf(trajectory, 'issue_refund').id]);
  });

  it('plain GenAI alone does not even see the failed call', () => {
    expect(trajectoryOf(spans, [otelGenAi]).calls.map((call) => call.tool)).toEqual(['get_order']);
  });
});

describe('Google ADK spans built by hand', () => {
  it('capture off ("{}" everywhere) means not captured, never empty', () => {
    const tool = adkSpan('execute_tool get_order', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_order',
      'gen_ai.tool.call.id': 'adk-1',
      'gcp.vertex.agent.tool_call_args': '{}',
      'gcp.vertex.agent.tool_response': '{}',
    });
    const reading = googleAdk.read(tool);
    expect(reading?.kind === 'tool' && reading.call).toMatchObject({
      callId: 'adk-1',
      args: { captured: false },
      result: { captured: false },
    });
    const turn = turnOf(
      adkSpan('call_llm', { 'gcp.vertex.agent.llm_request': '{}', 'gcp.vertex.agent.llm_response': '{}' }),
    );
    expect(turn).toEqual({ requested: [], shown: undefined, historyLength: 0, convention: 'google-adk' });
  });

  it('an empty object result with real arguments stays a captured result', () => {
    const reading = googleAdk.read(
      adkSpan('execute_tool clear_cart', {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'clear_cart',
        'gcp.vertex.agent.tool_call_args': '{"cartId":"C-1"}',
        'gcp.vertex.agent.tool_response': '{}',
      }),
    );
    expect(reading?.kind === 'tool' && reading.call.result).toEqual({ captured: true, value: {} });
  });

  it('malformed JSON in the arguments is kept raw with parseError; a malformed response asks for nothing', () => {
    const tool = adkSpan('execute_tool get_order', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_order',
      'gen_ai.tool.call.id': '<not specified>',
      'gcp.vertex.agent.tool_call_args': '{"orderId": "A1',
      'gcp.vertex.agent.tool_response': '{"ok":true}',
    });
    const trajectory = trajectoryOf([tool]);
    const call = callOf(trajectory, 'get_order');
    expect(call.callId).toBeUndefined();
    expect(call.args.captured && call.args.value).toBe('{"orderId": "A1');
    expect(call.args.captured && call.args.parseError).toMatch(/JSON/);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
    expect(
      turnOf(adkSpan('call_llm', { 'gcp.vertex.agent.llm_response': '{"content":' }))?.requested,
    ).toEqual([]);
  });

  it('a model that returns call ids (not Gemini) links its tool span by id', () => {
    const llm = adkSpan(
      'call_llm',
      {
        'gcp.vertex.agent.llm_request': JSON.stringify({
          contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        }),
        'gcp.vertex.agent.llm_response': JSON.stringify({
          content: {
            role: 'model',
            parts: [{ functionCall: { id: 'call_9', name: 'lookup', args: { q: 'x' } } }],
          },
        }),
      },
      { start: 0, end: 10 },
    );
    const tool = adkSpan(
      'execute_tool lookup',
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'lookup',
        'gen_ai.tool.call.id': 'call_9',
        'gcp.vertex.agent.tool_call_args': '{"q":"y"}',
        'gcp.vertex.agent.tool_response': '{"hits":1}',
      },
      { parentSpanId: undefined, start: 2, end: 3 },
    );
    const call = callOf(trajectoryOf([llm, { ...tool, parentSpanId: llm.spanId }]), 'lookup');
    // The two readings disagree: the arguments the model asked for are read (inspect shows the span's).
    expect(call).toMatchObject({ id: 'call_9', turnId: `turn:${llm.spanId}`, args: { value: { q: 'x' } } });
  });

  it('detects ADK by its keys when the scope was lost, and leaves other execute_tool spans alone', () => {
    const unscoped = spanRecord({
      name: 'execute_tool get_order',
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_order',
        'gcp.vertex.agent.tool_call_args': '{"orderId":"A1"}',
      },
    });
    expect(googleAdk.read(unscoped)?.kind).toBe('tool');
    const bare = spanRecord({ name: 'execute_tool get_order', attributes: {} });
    expect(googleAdk.read(bare)).toBeUndefined();
    const genAi = spanRecord({
      name: 'execute_tool get_order',
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_order' },
    });
    expect(googleAdk.read(genAi)).toBeUndefined();
  });

  it('a bare tool span that never ended has no result; invoke_agent is an agent run; invocation is structure', () => {
    const open = googleAdk.read(adkSpan('execute_tool slow', {}, { end: null }));
    expect(open?.kind === 'tool' && open.call.outcome).toEqual({ status: 'no_result' });
    expect(
      googleAdk.read(
        adkSpan('invoke_agent support', {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'support',
        }),
      ),
    ).toEqual({ kind: 'agent', name: 'support', convention: 'google-adk' });
    expect(googleAdk.read(adkSpan('invocation', {}))).toBeUndefined();
  });
});
