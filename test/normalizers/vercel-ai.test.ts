import { describe, expect, it } from 'vitest';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import type { Convention } from '../../src/normalizers/convention.js';
import { readSpan } from '../../src/normalizers/conventions.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { vercelAi } from '../../src/normalizers/vercel-ai.js';
import { callOf, fixture, orderedPairs, trajectoryOf as trajectoryWith } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

const CONVENTIONS: readonly Convention[] = [vercelAi, otelGenAi];

/** This convention first, then OTel GenAI (what the registered precedence has behind it). */
const trajectoryOf = (spans: readonly SpanRecord[], conventions = CONVENTIONS): Trajectory =>
  trajectoryWith(spans, conventions);

/** The same spans with some attributes removed, as with `recordInputs` / `recordOutputs: false`. */
function without(spans: readonly SpanRecord[], keys: readonly string[]): SpanRecord[] {
  return spans.map((span) => ({
    ...span,
    attributes: Object.fromEntries(Object.entries(span.attributes).filter(([key]) => !keys.includes(key))),
  }));
}

/** A hand-built `ai.*` span: name and `ai.operationId` are the operation, as the SDK writes them. */
function aiSpan(
  operation: string,
  attributes: Attributes,
  fields: Parameters<typeof spanRecord>[0] = {},
): SpanRecord {
  return spanRecord({
    name: operation,
    ...fields,
    attributes: { 'ai.operationId': operation, 'ai.telemetry.functionId': 'support-agent', ...attributes },
  });
}

/** A `tool-result` prompt part of the v5+ shape; without an output when none is given. */
const toolResult = (toolCallId: string, toolName: string, output: object | undefined) => ({
  type: 'tool-result',
  toolCallId,
  toolName,
  ...(output && { output }),
});

const REFUND_PAIRS = [
  'get_order->issue_refund',
  'get_order->send_confirmation',
  'get_refund_policy->issue_refund',
  'get_refund_policy->send_confirmation',
  'issue_refund->send_confirmation',
];

const V7_ERROR_TEXT = 'Error: payment gateway timeout';
const MODES = [
  ['v7 LegacyOpenTelemetry', 'vercel-ai-v7-legacy', 'vercel-ai', V7_ERROR_TEXT],
  ['v6 experimental_telemetry', 'vercel-ai-v6', 'vercel-ai', 'payment gateway timeout'],
  ['v7 OpenTelemetry (GenAI)', 'vercel-ai-v7-genai', 'otel-genai', V7_ERROR_TEXT],
] as const;

const REFUND_ARGS = {
  get_order: { orderId: 'A1001' },
  get_refund_policy: { orderId: 'A1001' },
  issue_refund: { orderId: 'A1001', amount: 42.5 },
  send_confirmation: { email: 'ana@example.com', refundId: 'R-7781' },
};

describe.each(MODES)('Vercel AI SDK refund, %s', (_, prefix, convention) => {
  const trajectory = trajectoryOf(fixture(`${prefix}-refund`));

  it('reads the four calls with their ids, parsed arguments, results and the agent', () => {
    expect(trajectory.calls.map((call) => call.tool).slice(2)).toEqual(['issue_refund', 'send_confirmation']);
    for (const [tool, value] of Object.entries(REFUND_ARGS)) {
      const { id, callId, args, outcome, agentName, convention: read } = callOf(trajectory, tool);
      expect({ id, callId, args, outcome, agentName, read }, tool).toEqual({
        id: `call_${tool}_1`,
        callId: `call_${tool}_1`,
        args: { captured: true, value },
        outcome: { status: 'ok' },
        agentName: 'support-agent',
        read: convention,
      });
    }
    expect(trajectory.calls).toHaveLength(4);
    expect(callOf(trajectory, 'issue_refund').result).toEqual({
      captured: true,
      value: { refundId: 'R-7781', orderId: 'A1001', amount: 42.5, status: 'issued' },
    });
    expect(trajectory.issues).toEqual([]);
  });

  it('the two lookups come from one turn and are concurrent; each later call is after them', () => {
    const order = callOf(trajectory, 'get_order');
    const policy = callOf(trajectory, 'get_refund_policy');
    expect(order.turnId).toBeDefined();
    expect(policy.turnId).toBe(order.turnId);
    expect(trajectory.concurrent(order, policy)).toBe(true);
    expect(orderedPairs(trajectory)).toEqual(REFUND_PAIRS);
  });

  it('one agent run of four turns, each issuing the next step and consuming the results before it', () => {
    expect(trajectory.agents).toHaveLength(1);
    expect(trajectory.agents[0]?.name).toBe('support-agent');
    expect(trajectory.root?.agentName).toBe('support-agent');
    expect(trajectory.turns.map((turn) => turn.issued)).toEqual([
      ['call_get_order_1', 'call_get_refund_policy_1'],
      ['call_issue_refund_1'],
      ['call_send_confirmation_1'],
      [],
    ]);
    expect(trajectory.turns[1]?.consumed.sort()).toEqual(['call_get_order_1', 'call_get_refund_policy_1']);
    expect(trajectory.turns[3]?.consumed).toContain('call_send_confirmation_1');
    expect(trajectory.turns.every((turn) => turn.model === 'mock-support-model')).toBe(true);
  });
});

describe.each(MODES)('Vercel AI SDK tool error, %s', (_, prefix, __, shown) => {
  const trajectory = trajectoryOf(fixture(`${prefix}-tool-error`));

  it('the failed refund is an error typed from the exception, after the order lookup', () => {
    expect(trajectory.calls.map((call) => call.tool)).toEqual(['get_order', 'issue_refund']);
    const refund = callOf(trajectory, 'issue_refund');
    expect(refund.outcome).toEqual({
      status: 'error',
      errorType: 'Error',
      message: 'payment gateway timeout',
    });
    expect(refund.args).toEqual({ captured: true, value: { orderId: 'A1001', amount: 42.5 } });
    expect(callOf(trajectory, 'get_order').outcome).toEqual({ status: 'ok' });
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
  });

  it('the run goes on: the last turn was shown the error text, which becomes the call result', () => {
    expect(trajectory.turns).toHaveLength(3);
    expect(trajectory.turns[2]?.consumed).toContain('call_issue_refund_1');
    expect(callOf(trajectory, 'issue_refund').result).toEqual({ captured: true, value: shown });
  });
});

describe('the ai.* span tree', () => {
  it('the root operation is an agent run, never a turn: its repeat of every step issues nothing twice', () => {
    const spans = fixture('vercel-ai-v7-legacy-refund');
    const root = spans.find((span) => span.parentSpanId === undefined);
    expect(root?.attributes['ai.response.toolCalls']).toContain('call_send_confirmation_1');
    expect(root && vercelAi.read(root)).toEqual({
      kind: 'agent',
      name: 'support-agent',
      convention: 'vercel-ai',
    });
    const trajectory = trajectoryOf(spans);
    expect(trajectory.turns.map((turn) => turn.spanId)).not.toContain(root?.spanId);
    expect(trajectory.issues.map((issue) => issue.kind)).not.toContain('call.duplicate_id');
  });

  it('v7 legacy nests tool spans under the model call, v6 puts them beside it: both link by id', () => {
    const nested = trajectoryOf(fixture('vercel-ai-v7-legacy-refund'));
    const siblings = trajectoryOf(fixture('vercel-ai-v6-refund'));
    const issuerSpan = (t: Trajectory, tool: string) =>
      t.turns.find((turn) => turn.id === callOf(t, tool).turnId)?.spanId;
    expect(callOf(nested, 'issue_refund').parentSpanId).toBe(issuerSpan(nested, 'issue_refund'));
    expect(callOf(siblings, 'issue_refund').parentSpanId).toBe(siblings.root?.spanId);
    expect(issuerSpan(siblings, 'issue_refund')).toBe(siblings.turns[1]?.spanId);
  });

  it('reads v6 double-encoded inputs as objects and shown results unwrapped, with the message count', () => {
    const turns = fixture('vercel-ai-v6-refund')
      .filter((span) => span.name === 'ai.generateText.doGenerate')
      .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
      .map((span) => vercelAi.read(span));
    const [first, second] = turns.map((reading) => (reading?.kind === 'turn' ? reading.turn : undefined));
    expect(typeof first?.requested[0]?.args).toBe('object');
    expect(first?.requested[0]).toEqual({
      callId: 'call_get_order_1',
      tool: 'get_order',
      args: { captured: true, value: { orderId: 'A1001' } },
    });
    expect(first?.shown).toEqual([]);
    expect(turns.map((reading) => reading?.kind === 'turn' && reading.turn.historyLength)).toEqual([
      2, 4, 6, 8,
    ]);
    expect(second?.shown?.[1]).toEqual({
      callId: 'call_get_refund_policy_1',
      tool: 'get_refund_policy',
      result: {
        captured: true,
        value: { refundable: true, windowDays: 30, maxAmount: 100, reason: 'damaged on arrival' },
      },
    });
  });

  it('precedence: ai.* spans are ours alone, and no v7 GenAI span is claimed by vercel-ai', () => {
    for (const prefix of ['vercel-ai-v7-legacy', 'vercel-ai-v6'])
      for (const span of fixture(`${prefix}-refund`)) {
        expect(otelGenAi.read(span), span.name).toBeUndefined();
        expect(vercelAi.read(span), span.name).toBeDefined();
      }
    const genai = fixture('vercel-ai-v7-genai-refund');
    for (const span of genai) expect(vercelAi.read(span), span.name).toBeUndefined();
    expect(orderedPairs(trajectoryOf(genai, [otelGenAi]))).toEqual(orderedPairs(trajectoryOf(genai)));
  });
});

describe('what was not recorded', () => {
  it('recordOutputs off: calls found by their spans, issued by the model call they are nested in', () => {
    const spans = without(fixture('vercel-ai-v7-legacy-refund'), [
      'ai.response.toolCalls',
      'ai.toolCall.args',
      'ai.toolCall.result',
    ]);
    const trajectory = trajectoryOf(spans);
    expect(trajectory.calls.map((call) => call.args)).toEqual(Array(4).fill({ captured: false }));
    // v7 legacy nests each tool span in the model call that asked for it.
    const turnOfSpan = new Map(trajectory.turns.map((turn) => [turn.spanId, turn.id]));
    for (const call of trajectory.calls) expect(call.turnId).toBe(turnOfSpan.get(call.parentSpanId ?? ''));
    expect(new Set(trajectory.calls.map((call) => call.turnId)).size).toBe(3);
    expect(orderedPairs(trajectory)).toEqual(REFUND_PAIRS);
  });

  it('recordInputs off: nothing shown is known, the results of the previous turn are consumed', () => {
    const spans = without(fixture('vercel-ai-v6-tool-error'), ['ai.prompt.messages']);
    const turn = spans.find((span) => span.name === 'ai.generateText.doGenerate');
    const reading = turn && vercelAi.read(turn);
    expect(reading?.kind === 'turn' && reading.turn).toMatchObject({ shown: undefined, historyLength: 0 });
    const trajectory = trajectoryOf(spans);
    expect(trajectory.turns.map((t) => t.consumed)).toEqual([
      [],
      ['call_get_order_1'],
      ['call_issue_refund_1'],
    ]);
    expect(callOf(trajectory, 'issue_refund').result).toEqual({ captured: false });
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
  });
});

describe('hand-built ai.* spans', () => {
  it('detects by ai.operationId, else by span name; other ai.* operations and look-alikes are not read', () => {
    const noId = spanRecord({ name: 'ai.toolCall', attributes: { 'ai.toolCall.name': 'lookup' } });
    expect(readSpan(noId, [vercelAi])).toMatchObject({ kind: 'tool', call: { tool: 'lookup' } });
    expect(vercelAi.read(aiSpan('ai.embed', {}))).toBeUndefined();
    expect(vercelAi.read(aiSpan('ai.rerank.doRerank', {}))).toBeUndefined();
    expect(vercelAi.read(spanRecord({ name: 'aiohttp GET', attributes: {} }))).toBeUndefined();
    expect(vercelAi.read(aiSpan('ai.toolCall', {}))).toBeUndefined();
    expect(vercelAi.read(spanRecord({ name: 'ai.streamObject' }))).toEqual({
      kind: 'agent',
      convention: 'vercel-ai',
    });
  });

  it('v3/v4 shapes: requested `args` as a JSON string, shown `result` parts', () => {
    const reading = vercelAi.read(
      aiSpan('ai.streamText.doStream', {
        'ai.response.toolCalls': JSON.stringify([
          { toolCallType: 'function', toolCallId: 'c1', toolName: 'get_order', args: '{"orderId":"A1"}' },
        ]),
        'ai.prompt.messages': JSON.stringify([
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          {
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: 'c0', toolName: 'whoami', result: 'ana' }],
          },
        ]),
      }),
    );
    expect(reading).toEqual({
      kind: 'turn',
      turn: {
        requested: [{ callId: 'c1', tool: 'get_order', args: { captured: true, value: { orderId: 'A1' } } }],
        shown: [{ callId: 'c0', tool: 'whoami', result: { captured: true, value: 'ana' } }],
        historyLength: 2,
        convention: 'vercel-ai',
      },
    });
  });

  it('shown outputs read as the SDK maps them to GenAI: denied executions and content parts', () => {
    const reading = vercelAi.read(
      aiSpan('ai.generateText.doGenerate', {
        'ai.prompt.messages': JSON.stringify([
          {
            role: 'tool',
            content: [
              toolResult('a', 'pay', { type: 'execution-denied', reason: 'no' }),
              toolResult('b', 'img', { type: 'content', value: [] }),
              toolResult('c', 'x', undefined),
            ],
          },
        ]),
      }),
    );
    expect(reading?.kind === 'turn' && reading.turn.shown?.map((shown) => shown.result)).toEqual([
      { captured: true, value: { denied: true, reason: 'no' } },
      { captured: true, value: { type: 'content', value: [] } },
      { captured: false },
    ]);
  });

  it('malformed JSON in arguments is kept raw with parseError and reported; never thrown', () => {
    const turn = aiSpan(
      'ai.generateText.doGenerate',
      {
        'ai.response.toolCalls': JSON.stringify([
          { toolCallId: 'c1', toolName: 'get_order', input: '{"orderId": "A' },
        ]),
        'ai.prompt.messages': '[{"role":',
      },
      { start: 0, end: 5 },
    );
    const tool = aiSpan(
      'ai.toolCall',
      { 'ai.toolCall.name': 'get_order', 'ai.toolCall.id': 'c1', 'ai.toolCall.args': '{"orderId": "A' },
      { parentSpanId: turn.spanId, start: 2, end: 3 },
    );
    const reading = vercelAi.read(turn);
    const requested = reading?.kind === 'turn' ? reading.turn.requested[0]?.args : undefined;
    expect(requested).toMatchObject({
      captured: true,
      value: '{"orderId": "A',
      parseError: expect.any(String),
    });
    expect(reading?.kind === 'turn' && reading.turn.shown).toBeUndefined();
    const trajectory = trajectoryOf([turn, tool]);
    expect(trajectory.calls[0]?.args).toMatchObject({ captured: true, value: '{"orderId": "A' });
    expect(trajectory.calls[0]?.args.captured && trajectory.calls[0].args.parseError).toMatch(/JSON/);
    expect(trajectory.calls[0]?.turnId).toBe(`turn:${turn.spanId}`);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
    const broken = aiSpan('ai.generateText.doGenerate', { 'ai.response.toolCalls': '[{"toolCallId":' });
    expect(vercelAi.read(broken)).toMatchObject({ kind: 'turn', turn: { requested: [] } });
  });

  it('a tool span that never ended has no result', () => {
    const open = aiSpan('ai.toolCall', { 'ai.toolCall.name': 'slow', 'ai.toolCall.id': 'c9' }, { end: null });
    expect(vercelAi.read(open)).toMatchObject({ kind: 'tool', call: { outcome: { status: 'no_result' } } });
  });

  it('generateText inside a tool is a sub-agent run started by that call, before the next turn', () => {
    const root = aiSpan('ai.generateText', {}, { start: 0, end: 100 });
    const ask = (id: string, tool: string) => JSON.stringify([{ toolCallId: id, toolName: tool, input: {} }]);
    const first = aiSpan(
      'ai.generateText.doGenerate',
      { 'ai.response.toolCalls': ask('o1', 'research') },
      { parentSpanId: root.spanId, start: 1, end: 2 },
    );
    const research = aiSpan(
      'ai.toolCall',
      { 'ai.toolCall.name': 'research', 'ai.toolCall.id': 'o1', 'ai.toolCall.args': '{}' },
      { parentSpanId: root.spanId, start: 3, end: 40 },
    );
    const inner = aiSpan(
      'ai.generateText',
      { 'ai.telemetry.functionId': 'researcher' },
      { parentSpanId: research.spanId, start: 4, end: 39 },
    );
    const innerTurn = aiSpan(
      'ai.generateText.doGenerate',
      { 'ai.telemetry.functionId': 'researcher', 'ai.response.toolCalls': ask('i1', 'search') },
      { parentSpanId: inner.spanId, start: 5, end: 6 },
    );
    const search = aiSpan(
      'ai.toolCall',
      { 'ai.telemetry.functionId': 'researcher', 'ai.toolCall.name': 'search', 'ai.toolCall.id': 'i1' },
      { parentSpanId: inner.spanId, start: 7, end: 8 },
    );
    const second = aiSpan(
      'ai.generateText.doGenerate',
      { 'ai.response.toolCalls': ask('o2', 'answer') },
      { parentSpanId: root.spanId, start: 41, end: 42 },
    );
    const trajectory = trajectoryOf([root, first, research, inner, innerTurn, search, second]);
    const sub = trajectory.agents.find((run) => run.name === 'researcher');
    expect(sub?.parentCallId).toBe('o1');
    expect(sub?.turns).toEqual([`turn:${innerTurn.spanId}`]);
    expect(callOf(trajectory, 'search').agentName).toBe('researcher');
    expect(trajectory.agents.find((run) => run.spanId === root.spanId)?.turns).toHaveLength(2);
    expect(orderedPairs(trajectory)).toEqual(['research->answer', 'search->answer']);
    expect(callOf(trajectory, 'answer')).toMatchObject({ args: { captured: true, value: {} } });
  });
});

describe('a model call stored without its attributes', () => {
  const spans = fixture('vercel-ai-v6-tool-error');
  const steps = spans.filter((span) => span.name === 'ai.generateText.doGenerate');
  const stripped = (step: SpanRecord | undefined, also: (span: SpanRecord) => SpanRecord = (span) => span) =>
    spans.map((span) => (span === step ? { ...span, attributes: {} } : also(span)));
  const unreadKinds = (trajectory: Trajectory) =>
    trajectory.issues.map((issue) => issue.kind).filter((kind) => kind === 'unread_tool_activity');

  it('is a turn whose requests are unread, never one that asked for nothing', () => {
    const step = steps[1] as SpanRecord;
    const reading = vercelAi.read({ ...step, attributes: {} });
    expect(reading?.kind === 'turn' && reading.turn.unreadRequests).toEqual([
      'ai.generateText.doGenerate recorded no attributes: which tools it asked for is unknown',
    ]);
    // A middle step: the calls after it are not enough to know what it asked for.
    const trajectory = trajectoryOf(stripped(step));
    expect(trajectory.turns).toHaveLength(3);
    expect(unreadKinds(trajectory)).toEqual(['unread_tool_activity']);
    expect(unreadKinds(trajectoryOf(spans))).toEqual([]);
  });

  it('the last step is known from its run, which repeats its finish reason; without one it stays unread', () => {
    const last = steps.at(-1);
    expect(unreadKinds(trajectoryOf(stripped(last)))).toEqual([]);
    const runToolFinish = (span: SpanRecord) =>
      span.name === 'ai.generateText'
        ? { ...span, attributes: { ...span.attributes, 'ai.response.finishReason': 'tool-calls' } }
        : span;
    expect(unreadKinds(trajectoryOf(stripped(last, runToolFinish)))).toEqual(['unread_tool_activity']);
    const runNoReason = (span: SpanRecord) =>
      span.name === 'ai.generateText'
        ? { ...span, attributes: without([span], ['ai.response.finishReason'])[0]?.attributes ?? {} }
        : span;
    expect(unreadKinds(trajectoryOf(stripped(last, runNoReason)))).toEqual(['unread_tool_activity']);
  });
});
