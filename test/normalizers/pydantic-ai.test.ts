import { describe, expect, it } from 'vitest';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { ToolCall, Trajectory } from '../../src/model/trajectory.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { PYDANTIC_AI, pydanticAi } from '../../src/normalizers/pydantic-ai.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

const VERSIONS = ['v2', 'v3'] as const;
const RETRY_SUFFIX = '\n\nFix the errors and try again.';

const loadSpans = fixture;

const assemble = (spans: SpanRecord[], conventions = [pydanticAi, otelGenAi]): Trajectory =>
  trajectoryOf(spans, conventions);

function callOf(trajectory: Trajectory, id: string): ToolCall {
  const call = trajectory.call(id);
  if (!call) throw new Error(`no call ${id}; have ${trajectory.calls.map((c) => c.id).join(', ')}`);
  return call;
}

describe.each(VERSIONS)('pydantic-ai refund, instrumentation %s', (version) => {
  const spans = loadSpans(`pydantic-ai-documented-${version}-refund`);
  const trajectory = assemble(spans);
  const getOrder = callOf(trajectory, 'call_get_order_1');
  const policy = callOf(trajectory, 'call_get_refund_policy_1');
  const refund = callOf(trajectory, 'call_issue_refund_1');
  const confirm = callOf(trajectory, 'call_send_confirmation_1');

  it('reads each tool span: name, call id, parsed arguments, result, outcome, agent', () => {
    expect(trajectory.calls.map((call) => call.tool)).toEqual([
      'get_order',
      'get_refund_policy',
      'issue_refund',
      'send_confirmation',
    ]);
    expect(getOrder).toMatchObject({
      callId: 'call_get_order_1',
      args: { captured: true, value: { order_id: 'A1001' } },
      result: {
        captured: true,
        value: {
          order_id: 'A1001',
          status: 'delivered',
          item: 'ceramic teapot',
          amount: 42.5,
          currency: 'EUR',
        },
      },
      outcome: { status: 'ok' },
      agentName: 'support_agent',
      convention: PYDANTIC_AI,
    });
    expect(refund.args).toEqual({ captured: true, value: { order_id: 'A1001', amount: 42.5 } });
    // A string return value is written raw, not as JSON: it is that string, not a parse error.
    expect(confirm.result).toEqual({ captured: true, value: 'confirmation sent' });
    for (const call of trajectory.calls) expect(call.spanId).toBeDefined();
    expect(trajectory.issues).toEqual([]);
  });

  it('links the sibling tool spans to the chat span that asked for them, by call id', () => {
    const chats = spans.filter((span) => span.name === 'chat gpt-4o').map((span) => span.spanId);
    expect(trajectory.turns.map((turn) => turn.spanId)).toEqual(chats);
    expect(trajectory.turns.map((turn) => turn.issued)).toEqual([
      ['call_get_order_1', 'call_get_refund_policy_1'],
      ['call_issue_refund_1'],
      ['call_send_confirmation_1'],
      [],
    ]);
    expect(trajectory.turns[1]?.consumed).toEqual(['call_get_order_1', 'call_get_refund_policy_1']);
    for (const call of trajectory.calls) {
      const span = spans.find((s) => s.spanId === call.spanId);
      const chat = spans.find((s) => s.spanId === trajectory.turns.find((t) => t.id === call.turnId)?.spanId);
      expect(span?.parentSpanId).toBe(chat?.parentSpanId);
    }
  });

  it('orders by what each turn was shown; calls of one response are concurrent', () => {
    expect(trajectory.concurrent(getOrder, policy)).toBe(true);
    expect(trajectory.happensBefore(getOrder, refund)).toBe(true);
    expect(trajectory.happensBefore(policy, refund)).toBe(true);
    expect(trajectory.happensBefore(refund, confirm)).toBe(true);
    expect(trajectory.happensBefore(confirm, getOrder)).toBe(false);
  });

  it('takes the agent run and its name from the run span', () => {
    expect(trajectory.agents.map((run) => run.name)).toEqual(['support_agent']);
    expect(trajectory.root).toMatchObject({
      name: version === 'v2' ? 'agent run' : 'invoke_agent support_agent',
      agentName: 'support_agent',
    });
  });
});

describe.each(VERSIONS)('pydantic-ai tool errors, instrumentation %s', (version) => {
  const trajectory = assemble(loadSpans(`pydantic-ai-documented-${version}-tool-error`));
  const getOrder = callOf(trajectory, 'call_get_order_1');
  const invalid = callOf(trajectory, 'call_issue_refund_1');
  const timeout = callOf(trajectory, 'call_issue_refund_2');

  it('a ModelRetry is an error whose result is the retry prompt the model was shown', () => {
    expect(timeout.outcome).toEqual({
      status: 'error',
      errorType: 'ToolRetryError',
      message: 'payment gateway timeout',
    });
    expect(timeout.result).toEqual({ captured: true, value: `payment gateway timeout${RETRY_SUFFIX}` });
    expect(timeout.args).toEqual({ captured: true, value: { order_id: 'A1001', amount: 42.5 } });
  });

  it('arguments that fail validation are an error, typed by the failure stage where recorded', () => {
    expect(invalid.args).toEqual({ captured: true, value: { order_id: 'A1001', amount: 'forty-two euros' } });
    expect(invalid.outcome).toMatchObject({
      status: 'error',
      errorType: version === 'v3' ? 'validation' : 'ToolRetryError',
      message: expect.stringContaining('float_parsing'),
    });
    expect(invalid.result.captured && invalid.result.value).toEqual(
      expect.stringMatching(/^1 validation error/),
    );
  });

  it('the retry comes after the failure it answers, which comes after the read', () => {
    expect(trajectory.happensBefore(getOrder, invalid)).toBe(true);
    expect(trajectory.happensBefore(invalid, timeout)).toBe(true);
    expect(trajectory.turns.map((turn) => turn.issued)).toEqual([
      ['call_get_order_1'],
      ['call_issue_refund_1'],
      ['call_issue_refund_2'],
      [],
    ]);
    expect(trajectory.turns[2]?.consumed).toEqual(['call_get_order_1', 'call_issue_refund_1']);
  });
});

describe('what plain OTel GenAI reads of pydantic-ai spans', () => {
  it('version 2 running tool spans are not GenAI spans: failed calls would read as succeeded', () => {
    const trajectory = assemble(loadSpans('pydantic-ai-documented-v2-tool-error'), [otelGenAi]);
    const timeout = callOf(trajectory, 'call_issue_refund_2');
    expect(timeout.spanId).toBeUndefined();
    expect(timeout.outcome).toEqual({ status: 'ok' });
  });

  it('version 3 retry prompts are not JSON: GenAI reports a parse error pydantic-ai reads as text', () => {
    const spans = loadSpans('pydantic-ai-documented-v3-tool-error');
    const genAi = callOf(assemble(spans, [otelGenAi]), 'call_issue_refund_2');
    expect(genAi.result.captured && genAi.result.parseError).toBeTruthy();
    const pydantic = callOf(assemble(spans), 'call_issue_refund_2');
    expect(pydantic.result.captured && pydantic.result.parseError).toBeUndefined();
  });
});

describe('pydantic-ai spans by hand', () => {
  const scope = { name: 'pydantic-ai', version: '0.4.0' };
  const tool = (name: string, attributes: Record<string, string>, start = 10) =>
    spanRecord({ name, scope, attributes, start, end: start + 2 });

  it('claims spans by scope or by keys only pydantic-ai writes, and nothing else', () => {
    for (const name of ['sdk-genai-refund', 'strands-events-refund', 'vercel-ai-v7-genai-refund']) {
      for (const span of loadSpans(name)) expect(pydanticAi.read(span)).toBeUndefined();
    }
    const unscoped = spanRecord({
      name: 'running tool',
      attributes: { 'gen_ai.tool.name': 'get_order', tool_arguments: '{}' },
    });
    expect(pydanticAi.read(unscoped)?.kind).toBe('tool');
    expect(
      pydanticAi.read(spanRecord({ name: 'running tool', attributes: { 'gen_ai.tool.name': 'x' } })),
    ).toBe(undefined);
  });

  it('reads version 1 chat spans from the events attribute and links the calls by id', () => {
    const events = [
      { 'event.name': 'gen_ai.system.message', role: 'system', content: 'Be brief.' },
      { 'event.name': 'gen_ai.user.message', role: 'user', content: 'Refund A1', 'gen_ai.message.index': 0 },
      {
        'event.name': 'gen_ai.assistant.message',
        role: 'assistant',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_order', arguments: '{"id":"A1"}' } },
        ],
        'gen_ai.message.index': 1,
      },
      {
        'event.name': 'gen_ai.tool.message',
        role: 'tool',
        id: 'c1',
        name: 'get_order',
        content: { amount: 4 },
        'gen_ai.message.index': 2,
      },
    ];
    const first = spanRecord({
      name: 'chat gpt-4o',
      scope,
      start: 0,
      end: 5,
      attributes: {
        'gen_ai.operation.name': 'chat',
        events: JSON.stringify([
          events[1],
          {
            'event.name': 'gen_ai.choice',
            index: 0,
            message: { role: 'assistant', tool_calls: events[2]?.tool_calls },
          },
        ]),
      },
    });
    const second = spanRecord({
      name: 'chat gpt-4o',
      scope,
      start: 20,
      end: 25,
      attributes: { 'gen_ai.operation.name': 'chat', events: JSON.stringify(events.slice(0, 4)) },
    });
    const call = tool('running tool', {
      'gen_ai.tool.name': 'get_order',
      'gen_ai.tool.call.id': 'c1',
      tool_arguments: '{"id":"A1"}',
      tool_response: '{"amount":4}',
    });
    const trajectory = assemble([first, call, second]);
    expect(trajectory.turns.map((turn) => [turn.issued, turn.consumed])).toEqual([
      [['c1'], []],
      [[], ['c1']],
    ]);
    const reading = pydanticAi.read(second);
    expect(reading?.kind === 'turn' && reading.turn.historyLength).toBe(3);
    expect(reading?.kind === 'turn' && reading.turn.shown?.[0]).toEqual({
      callId: 'c1',
      tool: 'get_order',
      result: { captured: true, value: { amount: 4 } },
    });
  });

  it('without include_content, arguments and results are not captured, never empty', () => {
    const call = tool('execute_tool get_order', {
      'gen_ai.tool.name': 'get_order',
      'gen_ai.tool.call.id': 'c1',
    });
    const [read] = assemble([call]).calls;
    expect(read?.args).toEqual({ captured: false });
    expect(read?.result).toEqual({ captured: false });
    expect(read?.outcome).toEqual({ status: 'ok' });
  });

  it('malformed JSON arguments are kept raw with parseError and reported, without throwing', () => {
    const call = tool('execute_tool get_order', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_order',
      'gen_ai.tool.call.arguments': '{"order_id": "A1',
    });
    const trajectory = assemble([call]);
    const args = trajectory.calls[0]?.args;
    expect(args?.captured && args.value).toBe('{"order_id": "A1');
    expect(args?.captured && args.parseError).toMatch(/JSON/);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
  });

  it('a deferred call has no result yet, even where older versions marked it ERROR', () => {
    const call = spanRecord({
      name: 'execute_tool issue_refund',
      scope,
      status: { code: 'error' },
      attributes: {
        'gen_ai.tool.name': 'issue_refund',
        'gen_ai.tool.call.arguments': '{"amount":10}',
        'pydantic_ai.tool.deferral.name': 'ApprovalRequired',
      },
    });
    expect(assemble([call]).calls[0]?.outcome).toEqual({ status: 'no_result' });
  });

  it('a version 3 span set without gen_ai.operation.name is still read by its name', () => {
    const agent = spanRecord({
      name: 'invoke_agent helper',
      scope,
      attributes: { 'gen_ai.agent.name': 'helper' },
    });
    expect(pydanticAi.read(agent)).toEqual({ kind: 'agent', name: 'helper', convention: PYDANTIC_AI });
    const output = tool('running output function', {
      'gen_ai.tool.name': 'final_result',
      tool_arguments: '{"a":1}',
    });
    expect(pydanticAi.read(output)).toMatchObject({ kind: 'tool', call: { tool: 'final_result' } });
  });
});
