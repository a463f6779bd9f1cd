import { describe, expect, it } from 'vitest';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import type { Convention } from '../../src/normalizers/convention.js';
import { openllmetry } from '../../src/normalizers/openllmetry.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { callOf, fixture, orderedPairs, trajectoryOf as trajectoryWith } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

const CONVENTIONS: readonly Convention[] = [openllmetry, otelGenAi];

/** This convention first, then OTel GenAI (what the registered precedence has behind it). */
const trajectoryOf = (spans: readonly SpanRecord[], conventions = CONVENTIONS): Trajectory =>
  trajectoryWith(spans, conventions);

/** The `openai.chat` turns in start order: turn ids are `turn:<spanId>`. */
function llmTurnIds(spans: readonly SpanRecord[]): string[] {
  return spans
    .filter((span) => span.name === 'openai.chat')
    .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
    .map((span) => `turn:${span.spanId}`);
}

const REFUND_ARGS = { order_id: 'ORD-20417', amount: 89.9, currency: 'EUR', reason: 'damaged_on_arrival' };

describe('OpenLLMetry agent with decorated tools and legacy openai.chat spans (documented refund)', () => {
  const spans = fixture('openllmetry-documented-refund');
  const trajectory = trajectoryOf(spans);

  it('reads each decorated tool: name, kwargs as arguments, parsed result, call id from the turn', () => {
    expect(trajectory.calls.map((c) => [c.tool, c.callId])).toEqual([
      ['get_order', 'call_Kq01ord'],
      ['get_refund_policy', 'call_Kq02pol'],
      ['issue_refund', 'call_Kq03ref'],
      ['send_confirmation', 'call_Kq04cnf'],
    ]);
    expect(callOf(trajectory, 'issue_refund')).toMatchObject({
      id: 'call_Kq03ref',
      args: { captured: true, value: REFUND_ARGS },
      result: { captured: true, value: { refund_id: 'RF-88213', order_id: 'ORD-20417', status: 'issued' } },
      outcome: { status: 'ok' },
      agentName: 'support_agent',
      convention: 'openllmetry',
    });
    expect(trajectory.issues).toEqual([]);
  });

  it('links every call to the openai.chat turn whose completion asked for it', () => {
    const [first, second, third, last] = llmTurnIds(spans);
    expect(trajectory.turns.map((t) => t.id)).toEqual([first, second, third, last]);
    expect(callOf(trajectory, 'get_order').turnId).toBe(first);
    expect(callOf(trajectory, 'get_refund_policy').turnId).toBe(first);
    expect(callOf(trajectory, 'issue_refund').turnId).toBe(second);
    expect(callOf(trajectory, 'send_confirmation').turnId).toBe(third);
    expect(trajectory.turns[3]).toMatchObject({ issued: [] });
    expect(trajectory.turns[1]?.consumed.sort()).toEqual(['call_Kq01ord', 'call_Kq02pol']);
  });

  it('orders the calls by the results each turn was shown; one response is concurrent', () => {
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

  it('calls asked for in one response stay concurrent even when one ran after the other ended', () => {
    const order = spans.find((s) => s.name === 'get_order.tool');
    if (!order?.endTimeUnixNano) throw new Error('no get_order span');
    const later = order.endTimeUnixNano + 5_000_000n;
    const shifted = spans.map((span) =>
      span.name === 'get_refund_policy.tool'
        ? { ...span, startTimeUnixNano: later, endTimeUnixNano: later + 3_000_000n }
        : span,
    );
    const moved = trajectoryOf(shifted);
    expect(moved.concurrent(callOf(moved, 'get_order'), callOf(moved, 'get_refund_policy'))).toBe(true);
  });

  it('makes the agent span a run named by its entity name', () => {
    expect(trajectory.agents.map((a) => a.name)).toEqual(['support_agent']);
    expect(trajectory.root).toMatchObject({ name: 'support_agent.agent', agentName: 'support_agent' });
  });
});

describe('OpenLLMetry tool that throws (documented tool-error)', () => {
  const spans = fixture('openllmetry-documented-tool-error');

  it('the decorator leaves the failing tool span open: the call has no result', () => {
    const trajectory = trajectoryOf(spans);
    expect(spans.find((s) => s.name === 'issue_refund.tool')?.endTimeUnixNano).toBeUndefined();
    const [, second] = llmTurnIds(spans);
    expect(callOf(trajectory, 'issue_refund')).toMatchObject({
      callId: 'call_Tz02ref',
      args: { captured: true, value: REFUND_ARGS },
      result: { captured: false },
      outcome: { status: 'no_result' },
      turnId: second,
    });
    expect(callOf(trajectory, 'get_order').outcome).toEqual({ status: 'ok' });
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
  });

  it('with only the spans an exporter sends (ended ones), the asked-for call still has no result', () => {
    const ended = spans.filter((span) => span.endTimeUnixNano !== undefined);
    const trajectory = trajectoryOf(ended);
    const refund = callOf(trajectory, 'issue_refund');
    expect(refund).toMatchObject({ callId: 'call_Tz02ref', outcome: { status: 'no_result' } });
    expect(refund.spanId).toBeUndefined();
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
  });
});

describe('OpenLLMetry decorated tools without any LLM turn (documented decorators)', () => {
  const trajectory = trajectoryOf(fixture('openllmetry-documented-decorators'));

  it('reads kwargs calls as argument objects and a positional call as the argument list, no ids', () => {
    expect(trajectory.turns).toEqual([]);
    expect(trajectory.calls.every((c) => c.callId === undefined && c.id.startsWith('span:'))).toBe(true);
    expect(callOf(trajectory, 'get_order').args).toEqual({
      captured: true,
      value: { order_id: 'ORD-20417' },
    });
    expect(callOf(trajectory, 'send_confirmation').args).toEqual({
      captured: true,
      value: ['maria.lopez@example.test', 'RF-88213'],
    });
  });

  it('orders by time: sequential tools happen before, the two overlapping ones are concurrent', () => {
    expect(orderedPairs(trajectory)).toEqual([
      'get_customer->issue_refund',
      'get_customer->send_confirmation',
      'get_order->get_customer',
      'get_order->get_refund_policy',
      'get_order->issue_refund',
      'get_order->send_confirmation',
      'get_refund_policy->issue_refund',
      'get_refund_policy->send_confirmation',
      'issue_refund->send_confirmation',
    ]);
    expect(
      trajectory.concurrent(callOf(trajectory, 'get_customer'), callOf(trajectory, 'get_refund_policy')),
    ).toBe(true);
  });
});

/** A decorator tool span: `{name}.tool`, kind tool, the entity keys given. */
function decoratedTool(name: string, attributes: Attributes, fields: Parameters<typeof spanRecord>[0] = {}) {
  return spanRecord({
    name: `${name}.tool`,
    ...fields,
    attributes: { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': name, ...attributes },
  });
}

describe('OpenLLMetry LangChain instrumentation', () => {
  // What @traceloop/instrumentation-langchain 0.27 writes for a `tool()` run from an agent.
  const toolMessage = {
    lc: 1,
    type: 'constructor',
    id: ['langchain_core', 'messages', 'ToolMessage'],
    kwargs: {
      status: 'success',
      content: '{"status":"delivered"}',
      tool_call_id: 'call_7',
      name: 'get_order',
    },
  };
  const langchainTool = spanRecord({
    name: 'execute_tool DynamicStructuredTool',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.provider.name': 'langchain',
      'traceloop.span.kind': 'task',
      'traceloop.entity.name': 'DynamicStructuredTool',
      'traceloop.entity.input': JSON.stringify({ args: [JSON.stringify({ order_id: 'ORD-1' })] }),
      'traceloop.entity.output': JSON.stringify(toolMessage),
    },
    status: { code: 'ok' },
  });

  it('reads the arguments JSON inside args[0], the real name and call id from the ToolMessage', () => {
    expect(trajectoryOf([langchainTool]).calls[0]).toMatchObject({
      tool: 'get_order',
      callId: 'call_7',
      args: { captured: true, value: { order_id: 'ORD-1' } },
      result: { captured: true, value: { status: 'delivered' } },
      outcome: { status: 'ok' },
      convention: 'openllmetry',
    });
  });

  it('must come before plain GenAI, which sees no arguments on this span', () => {
    expect(trajectoryOf([langchainTool], [otelGenAi]).calls[0]?.args).toEqual({ captured: false });
  });

  it('a tool error is the recorded exception', () => {
    const failed = spanRecord({
      name: 'execute_tool DynamicStructuredTool',
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'traceloop.span.kind': 'task' },
      status: { code: 'error', message: 'gateway down' },
      events: [
        {
          name: 'exception',
          timeUnixNano: 1n,
          attributes: { 'exception.type': 'Error', 'exception.message': 'gateway down' },
        },
      ],
    });
    expect(trajectoryOf([failed]).calls[0]).toMatchObject({
      tool: 'DynamicStructuredTool',
      args: { captured: false },
      outcome: { status: 'error', errorType: 'Error', message: 'gateway down' },
    });
  });
});

describe('OpenLLMetry entity input and output', () => {
  it('content tracing off: arguments and result are not captured, never empty', () => {
    const call = trajectoryOf([decoratedTool('get_order', {})]).calls[0];
    expect(call?.args).toEqual({ captured: false });
    expect(call?.result).toEqual({ captured: false });
  });

  it('malformed JSON input is kept raw with a parse error and reported, without throwing', () => {
    const span = decoratedTool('get_order', {
      'traceloop.entity.input': '{"args": [], "kwargs": {"order_id"',
    });
    const trajectory = trajectoryOf([span]);
    const args = trajectory.calls[0]?.args;
    expect(args?.captured && args.value).toBe('{"args": [], "kwargs": {"order_id"');
    expect(args?.captured && args.parseError).toMatch(/JSON/);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
  });

  it('positional and keyword arguments together keep the whole record; none at all is {}', () => {
    const both = { args: ['ORD-1'], kwargs: { verbose: true } };
    const read = (input: object) =>
      trajectoryOf([decoratedTool('t', { 'traceloop.entity.input': JSON.stringify(input) })]).calls[0]?.args;
    expect(read(both)).toEqual({ captured: true, value: both });
    expect(read({ args: [], kwargs: {} })).toEqual({ captured: true, value: {} });
  });

  it('MCP tools/call spans: arguments from {tool_name, arguments}, the result text parsed', () => {
    const span = decoratedTool(
      'get_weather',
      {
        'traceloop.entity.input': JSON.stringify({ tool_name: 'get_weather', arguments: { city: 'Oslo' } }),
        'traceloop.entity.output': JSON.stringify({ result: '{"temp":3}', is_error: false }),
      },
      { kind: 'client', status: { code: 'ok' } },
    );
    expect(trajectoryOf([span]).calls[0]).toMatchObject({
      tool: 'get_weather',
      args: { captured: true, value: { city: 'Oslo' } },
      result: { captured: true, value: { temp: 3 } },
      // An MCP call whose server the instrumentation does not record.
      mcpServer: {},
    });
    expect(
      trajectoryOf([decoratedTool('t', { 'traceloop.entity.input': '{"a":1}' })]).calls[0]?.mcpServer,
    ).toBeUndefined();
  });

  it('GenAI keys on the span (the Vercel AI SDK transform) win over the entity keys', () => {
    const span = spanRecord({
      name: 'execute_tool get_order',
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.name': 'get_order',
        'traceloop.entity.input': '{"orderId":"raw"}',
        'gen_ai.tool.name': 'get_order',
        'gen_ai.tool.call.id': 'call_v1',
        'gen_ai.tool.call.arguments': '{"orderId":"O-1"}',
      },
    });
    expect(trajectoryOf([span]).calls[0]).toMatchObject({
      callId: 'call_v1',
      args: { captured: true, value: { orderId: 'O-1' } },
    });
  });
});

/** A legacy OpenLLMetry LLM span: `llm.request.type` and indexed prompt/completion keys. */
function legacyLlm(attributes: Attributes, fields: Parameters<typeof spanRecord>[0] = {}) {
  return spanRecord({
    name: 'openai.chat',
    kind: 'client',
    ...fields,
    attributes: { 'llm.request.type': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', ...attributes },
  });
}

describe('OpenLLMetry legacy LLM spans', () => {
  it('without ids (JS instrumentation before 0.25) decorated tools link by name and arguments', () => {
    const agent = spanRecord({
      name: 'support.agent',
      attributes: { 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'support' },
      end: 100,
    });
    const under = { parentSpanId: agent.spanId };
    const ask = legacyLlm(
      {
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'refund ORD-1',
        'gen_ai.completion.0.tool_calls.0.name': 'lookup',
        'gen_ai.completion.0.tool_calls.0.arguments': '{"id":"A"}',
        'gen_ai.completion.0.tool_calls.1.name': 'lookup',
        'gen_ai.completion.0.tool_calls.1.arguments': '{"id":"B"}',
      },
      { ...under, start: 1, end: 5 },
    );
    const toolA = decoratedTool(
      'lookup',
      { 'traceloop.entity.input': '{"args":[],"kwargs":{"id":"A"}}' },
      {
        ...under,
        start: 9,
        end: 12,
      },
    );
    const toolB = decoratedTool(
      'lookup',
      { 'traceloop.entity.input': '{"args":[],"kwargs":{"id":"B"}}' },
      {
        ...under,
        start: 6,
        end: 8,
      },
    );
    const answer = legacyLlm(
      {
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.1.role': 'assistant',
        'gen_ai.prompt.2.role': 'tool',
        'gen_ai.prompt.2.content': '{"ok":true}',
        'gen_ai.prompt.3.role': 'tool',
        'gen_ai.prompt.3.content': '{"ok":true}',
        'gen_ai.completion.0.content': 'done',
      },
      { ...under, start: 20, end: 25 },
    );
    const trajectory = trajectoryOf([agent, ask, toolA, toolB, answer]);
    expect(trajectory.calls.map((c) => [c.spanId, c.callId, c.turnId])).toEqual([
      [toolB.spanId, undefined, `turn:${ask.spanId}`],
      [toolA.spanId, undefined, `turn:${ask.spanId}`],
    ]);
    expect(trajectory.turns[0]?.issued).toEqual([`span:${toolA.spanId}`, `span:${toolB.spanId}`]);
    expect(trajectory.concurrent(trajectory.calls[0] ?? fail(), trajectory.calls[1] ?? fail())).toBe(true);
    expect(trajectory.turns[1]?.consumed.sort()).toEqual(
      [`span:${toolA.spanId}`, `span:${toolB.spanId}`].sort(),
    );
  });

  it('reads requested calls from every completion, shown results with their ids, the history length', () => {
    const reading = openllmetry.read(
      legacyLlm({
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'hi',
        'gen_ai.prompt.1.role': 'tool',
        'gen_ai.prompt.1.tool_call_id': ' call_1 ',
        'gen_ai.prompt.1.content': 'not json',
        'gen_ai.completion.0.tool_calls.0.id': 'call_2',
        'gen_ai.completion.0.tool_calls.0.name': 'search',
        'gen_ai.completion.0.tool_calls.0.arguments': '{"q": "kettle"',
      }),
    );
    expect(reading).toEqual({
      kind: 'turn',
      turn: {
        requested: [
          {
            callId: 'call_2',
            tool: 'search',
            args: { captured: true, value: '{"q": "kettle"', parseError: expect.stringMatching(/JSON/) },
          },
        ],
        shown: [{ callId: 'call_1', result: { captured: true, value: 'not json' } }],
        historyLength: 2,
        model: 'gpt-4o-mini',
        convention: 'openllmetry',
      },
    });
  });

  it('prompts not traced: the turn says its input was not captured', () => {
    const reading = openllmetry.read(legacyLlm({ 'gen_ai.completion.0.content': 'ok' }));
    expect(reading?.kind === 'turn' && reading.turn.shown).toBeUndefined();
  });

  it('leaves vector DB spans, structure spans and GenAI-message LLM spans alone', () => {
    expect(
      openllmetry.read(spanRecord({ name: 'pinecone.query', attributes: { 'llm.request.type': 'query' } })),
    ).toBeUndefined();
    const workflow = spanRecord({
      attributes: { 'traceloop.span.kind': 'workflow', 'traceloop.entity.name': 'w' },
    });
    expect(openllmetry.read(workflow)).toBeUndefined();
    expect(openllmetry.read(spanRecord({ attributes: { 'traceloop.span.kind': 'task' } }))).toBeUndefined();
    const modern = legacyLlm({ 'gen_ai.operation.name': 'chat', 'gen_ai.output.messages': '[]' });
    expect(openllmetry.read(modern)).toBeUndefined();
    expect(trajectoryOf([modern]).turns[0]).toMatchObject({ spanId: modern.spanId });
  });
});

function fail(): never {
  throw new Error('missing call');
}
