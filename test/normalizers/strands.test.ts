import { describe, expect, it } from 'vitest';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { ToolCall, Trajectory } from '../../src/model/trajectory.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { STRANDS, strands, unwrapContent } from '../../src/normalizers/strands.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

const MODES = ['events', 'latest', 'latest-attributes'] as const;

const loadSpans = fixture;

const assemble = (spans: SpanRecord[], conventions = [strands, otelGenAi]): Trajectory =>
  trajectoryOf(spans, conventions);

function callOf(trajectory: Trajectory, id: string): ToolCall {
  const call = trajectory.call(id);
  if (!call) throw new Error(`no call ${id}; have ${trajectory.calls.map((c) => c.id).join(', ')}`);
  return call;
}

/** The span a turn was read from, by the turn's position in the run. */
function turnSpanIds(trajectory: Trajectory): string[] {
  return trajectory.turns.map((turn) => turn.spanId ?? '');
}

const ORDER = {
  orderId: 'A1001',
  status: 'delivered',
  item: 'ceramic teapot',
  amount: 42.5,
  currency: 'EUR',
  customerEmail: 'ana@example.com',
};

describe.each(MODES)('Strands refund, %s layout', (mode) => {
  const spans = loadSpans(`strands-${mode}-refund`);
  const trajectory = assemble(spans);
  const getOrder = callOf(trajectory, 'tooluse_get_order_1');
  const policy = callOf(trajectory, 'tooluse_get_refund_policy_1');
  const refund = callOf(trajectory, 'tooluse_issue_refund_1');
  const confirm = callOf(trajectory, 'tooluse_send_confirmation_1');

  it('reads every tool span with its call id, parsed arguments and unwrapped result', () => {
    expect(trajectory.calls.map((call) => [call.tool, call.callId])).toEqual([
      ['get_order', 'tooluse_get_order_1'],
      ['get_refund_policy', 'tooluse_get_refund_policy_1'],
      ['issue_refund', 'tooluse_issue_refund_1'],
      ['send_confirmation', 'tooluse_send_confirmation_1'],
    ]);
    expect(getOrder).toMatchObject({
      args: { captured: true, value: { orderId: 'A1001' } },
      result: { captured: true, value: ORDER },
      outcome: { status: 'ok' },
      agentName: 'support-agent',
      convention: STRANDS,
    });
    expect(refund.args).toEqual({ captured: true, value: { orderId: 'A1001', amount: 42.5 } });
    expect(refund.result).toEqual({
      captured: true,
      value: { refundId: 'R-7781', orderId: 'A1001', amount: 42.5, status: 'issued' },
    });
    expect(confirm.args).toEqual({ captured: true, value: { email: 'ana@example.com', refundId: 'R-7781' } });
    for (const call of trajectory.calls) expect(call.spanId).toBeDefined();
    expect(trajectory.issues).toEqual([]);
  });

  it('links each call to the chat span that asked for it, through the loop cycles', () => {
    const chats = spans.filter((span) => span.name === 'chat').map((span) => span.spanId);
    expect(turnSpanIds(trajectory)).toEqual(chats);
    const [first, second, third, last] = trajectory.turns;
    expect(first?.issued).toEqual(['tooluse_get_order_1', 'tooluse_get_refund_policy_1']);
    expect(second?.issued).toEqual(['tooluse_issue_refund_1']);
    expect(third?.issued).toEqual(['tooluse_send_confirmation_1']);
    expect(last?.issued).toEqual([]);
    expect(second?.consumed).toEqual(['tooluse_get_order_1', 'tooluse_get_refund_policy_1']);
    expect(last?.consumed).toContain('tooluse_send_confirmation_1');
    expect(getOrder.turnId).toBe(first?.id);
  });

  it('orders the calls by the results each turn was shown; one response runs concurrently', () => {
    expect(trajectory.concurrent(getOrder, policy)).toBe(true);
    expect(trajectory.happensBefore(getOrder, refund)).toBe(true);
    expect(trajectory.happensBefore(policy, refund)).toBe(true);
    expect(trajectory.happensBefore(refund, confirm)).toBe(true);
    expect(trajectory.happensBefore(confirm, refund)).toBe(false);
  });

  it('takes the run from invoke_agent, with the cycles as structure only', () => {
    expect(trajectory.agents.map((run) => run.name)).toEqual(['support-agent']);
    expect(trajectory.root).toMatchObject({ name: 'invoke_agent support-agent', agentName: 'support-agent' });
    const cycles = spans.filter((span) => span.name === 'execute_agent_loop_cycle');
    expect(cycles).toHaveLength(4);
    for (const cycle of cycles) expect(strands.read(cycle)).toBeUndefined();
  });
});

describe('Strands layouts agree', () => {
  const shape = (trajectory: Trajectory) => ({
    calls: trajectory.calls.map(({ id, tool, args, result, outcome }) => ({
      id,
      tool,
      args,
      result,
      outcome,
    })),
    turns: trajectory.turns.map(({ issued, consumed }) => ({ issued, consumed })),
  });

  it.each(['refund', 'tool-error'])('%s reads the same in all three layouts', (name) => {
    const [events, ...others] = MODES.map((mode) => shape(assemble(loadSpans(`strands-${mode}-${name}`))));
    for (const other of others) expect(other).toEqual(events);
  });

  it('calls a response asked for together stay concurrent whatever their start times', () => {
    const spans = loadSpans('strands-events-refund');
    const getOrder = spans.find((span) => span.name === 'execute_tool get_order');
    const policy = spans.find((span) => span.name === 'execute_tool get_refund_policy');
    if (!getOrder?.endTimeUnixNano || !policy?.endTimeUnixNano) throw new Error('fixture changed');
    // Move the policy lookup after get_order ended, as a sequential executor would run it.
    const shift = getOrder.endTimeUnixNano - policy.startTimeUnixNano + 5_000_000n;
    const policyEnd = policy.endTimeUnixNano;
    const moved = spans.map((span) =>
      span === policy
        ? {
            ...span,
            startTimeUnixNano: span.startTimeUnixNano + shift,
            endTimeUnixNano: policyEnd + shift,
          }
        : span,
    );
    const trajectory = assemble(moved);
    const a = callOf(trajectory, 'tooluse_get_order_1');
    const b = callOf(trajectory, 'tooluse_get_refund_policy_1');
    expect(trajectory.concurrent(a, b)).toBe(true);
  });
});

describe.each(MODES)('Strands tool error, %s layout', (mode) => {
  const trajectory = assemble(loadSpans(`strands-${mode}-tool-error`));

  it('a thrown tool error is an error with its type and message, and the model is shown it', () => {
    const getOrder = callOf(trajectory, 'tooluse_get_order_1');
    const refund = callOf(trajectory, 'tooluse_issue_refund_1');
    expect(getOrder.outcome).toEqual({ status: 'ok' });
    expect(refund.outcome).toEqual({
      status: 'error',
      errorType: 'Error',
      message: 'payment gateway timeout',
    });
    // The GenAI result attribute is left out on failure; the message the model saw is kept.
    expect(refund.result).toEqual({ captured: true, value: 'Error: payment gateway timeout' });
    expect(trajectory.happensBefore(getOrder, refund)).toBe(true);
    expect(trajectory.turns.at(-1)?.consumed).toEqual(['tooluse_get_order_1', 'tooluse_issue_refund_1']);
  });
});

describe('Strands error results on spans that ended OK', () => {
  it('gen_ai.tool.status=error (a tool the agent does not have) is an error', () => {
    const spans = loadSpans('strands-events-unknown-tool');
    const toolSpan = spans.find((span) => span.name === 'execute_tool lookup_warranty');
    expect(toolSpan?.status.code).toBe('ok');
    const call = callOf(assemble(spans), 'tooluse_lookup_warranty_1');
    expect(call.outcome).toEqual({
      status: 'error',
      message: "Tool 'lookup_warranty' not found in registry",
    });
    expect(call.args).toEqual({ captured: true, value: { orderId: 'A1001' } });
  });
});

describe('what plain OTel GenAI reads of Strands spans', () => {
  it('the attributes-only layout: GenAI links the turns, but results stay wrapped in content blocks', () => {
    const trajectory = assemble(loadSpans('strands-latest-attributes-refund'), [otelGenAi]);
    const getOrder = callOf(trajectory, 'tooluse_get_order_1');
    expect(getOrder.turnId).toBe(trajectory.turns[0]?.id);
    expect(trajectory.turns[1]?.consumed).toEqual(['tooluse_get_order_1', 'tooluse_get_refund_policy_1']);
    expect(getOrder.result).toEqual({ captured: true, value: [{ json: ORDER }] });
  });

  it('the events layouts: GenAI finds no requested calls, so nothing links turns to calls', () => {
    for (const mode of ['events', 'latest'] as const) {
      const trajectory = assemble(loadSpans(`strands-${mode}-refund`), [otelGenAi]);
      expect(trajectory.calls.every((call) => call.turnId === undefined)).toBe(true);
      expect(trajectory.turns.every((turn) => turn.issued.length === 0)).toBe(true);
    }
  });
});

describe('Strands spans by hand', () => {
  const strandsSpan = (name: string, attributes: Record<string, string>, events: SpanRecord['events'] = []) =>
    spanRecord({
      name,
      attributes: { 'gen_ai.event.start_time': '2026-11-29T17:00:00.000Z', ...attributes },
      events,
    });
  const event = (name: string, attributes: Record<string, string>) => ({
    name,
    timeUnixNano: 1n,
    attributes,
  });

  it('claims only Strands spans: the start-time stamp or the tool status decides', () => {
    for (const name of [
      'sdk-genai-refund',
      'vercel-ai-v7-genai-refund',
      'pydantic-ai-documented-v3-refund',
    ]) {
      for (const span of loadSpans(name)) expect(strands.read(span)).toBeUndefined();
    }
    const statusOnly = spanRecord({
      name: 'execute_tool t',
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.status': 'success' },
    });
    expect(strands.read(statusOnly)?.kind).toBe('tool');
  });

  it('arguments that were not recorded are not captured, never empty', () => {
    const span = strandsSpan('execute_tool t', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 't',
    });
    const call = assemble([span]).calls[0];
    expect(call?.args).toEqual({ captured: false });
    expect(call?.result).toEqual({ captured: false });
  });

  it('malformed JSON in the tool message event is kept raw with parseError, and reported', () => {
    const span = strandsSpan(
      'execute_tool t',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' },
      [event('gen_ai.tool.message', { role: 'tool', content: '{"orderId": "A1', id: 'c1' })],
    );
    const trajectory = assemble([span]);
    const args = trajectory.calls[0]?.args;
    expect(args?.captured && args.value).toBe('{"orderId": "A1');
    expect(args?.captured && args.parseError).toMatch(/JSON/);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
  });

  it('reads the Bedrock-shaped {toolUse} blocks the Python SDK writes in gen_ai.choice', () => {
    const chat = strandsSpan('chat', { 'gen_ai.operation.name': 'chat' }, [
      event('gen_ai.user.message', { content: '[{"text":"hi"}]' }),
      event('gen_ai.choice', {
        finish_reason: 'tool_use',
        message: '[{"toolUse":{"toolUseId":"t1","name":"get_order","input":{"orderId":"A1"}}}]',
      }),
    ]);
    const reading = strands.read(chat);
    expect(reading?.kind === 'turn' && reading.turn.requested).toEqual([
      { tool: 'get_order', callId: 't1', args: { captured: true, value: { orderId: 'A1' } } },
    ]);
    expect(reading?.kind === 'turn' && reading.turn.shown).toEqual([]);
  });

  it('a chat span without message events has no captured input', () => {
    const reading = strands.read(strandsSpan('chat', { 'gen_ai.operation.name': 'chat' }));
    expect(reading).toMatchObject({
      kind: 'turn',
      turn: { requested: [], shown: undefined, historyLength: 0 },
    });
  });
});

describe('unwrapContent', () => {
  it('gives a single block its value, several blocks the list of values', () => {
    expect(unwrapContent([{ json: { a: 1 } }])).toEqual({ a: 1 });
    expect(unwrapContent([{ text: 'done' }])).toBe('done');
    expect(unwrapContent([{ json: { $value: [1, 2] } }])).toEqual([1, 2]);
    expect(unwrapContent([{ text: 'a' }, { json: 1 }])).toEqual(['a', 1]);
  });

  it('keeps what is not a plain content-block list as it is', () => {
    const image = [{ image: { format: 'png', source: { bytes: '<replaced>' } } }];
    expect(unwrapContent(image)).toEqual(image);
    expect(unwrapContent([])).toEqual([]);
    expect(unwrapContent({ json: 1 })).toEqual({ json: 1 });
    expect(unwrapContent([{ json: 1, extra: true }])).toEqual([{ json: 1, extra: true }]);
  });
});
