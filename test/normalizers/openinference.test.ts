import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { ToolCall, Trajectory } from '../../src/model/trajectory.js';
import { assembleTrajectory } from '../../src/normalizers/assemble.js';
import type { SpanReading } from '../../src/normalizers/convention.js';
import { openInference, splitMessageAndStack } from '../../src/normalizers/openinference.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { spanRecord, TRACE_ID } from '../helpers/spans.js';

const CONVENTIONS = [openInference, otelGenAi];
const TEXT_MIME = 'text/plain';
const JSON_MIME = 'application/json';
const OI = 'openinference';
const value = (v: unknown) => ({ captured: true, value: v });
const AGENTS_SCOPE = { name: '@arizeai/openinference-instrumentation-openai-agents', version: '0.2.15' };
const LANGCHAIN_SCOPE = { name: '@arizeai/openinference-instrumentation-langchain', version: '4.1.1' };

function fixtureSpans(name: string): SpanRecord[] {
  const text = readFileSync(join(import.meta.dirname, '..', 'spans', name), 'utf8');
  const read = readStoredTraces(text, name);
  if (read.input?.format !== 'otlp-json') throw new Error(`${name}: not OTLP JSON`);
  return read.input.spans;
}

function trajectoryOf(spans: readonly SpanRecord[]): Trajectory {
  const trajectory = assembleTrajectory(spans[0]?.traceId ?? TRACE_ID, spans, CONVENTIONS);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

function readAs<K extends SpanReading['kind']>(span: SpanRecord | undefined, kind: K) {
  const reading = span && openInference.read(span);
  if (reading?.kind !== kind) throw new Error(`not read as a ${kind}`);
  return reading as Extract<SpanReading, { kind: K }>;
}
const readTool = (span?: SpanRecord) => readAs(span, 'tool').call;
const readTurn = (span?: SpanRecord) => readAs(span, 'turn').turn;

function callOf(trajectory: Trajectory, tool: string): ToolCall {
  const call = trajectory.calls.find((c) => c.tool === tool);
  if (!call) throw new Error(`no ${tool} call`);
  return call;
}

/** The LLM span whose turn issued the call. */
const issuerOf = (spans: SpanRecord[], call: ToolCall) =>
  spans.find((s) => `turn:${s.spanId}` === call.turnId);

/** Which turn (by position) issued each of these tools' calls. */
function issuingTurns(trajectory: Trajectory, tools: string[]): number[] {
  const turnIds = trajectory.turns.map((turn) => turn.id);
  return tools.map((tool) => turnIds.indexOf(callOf(trajectory, tool).turnId ?? ''));
}

function lookupsConcurrent(trajectory: Trajectory): boolean {
  return trajectory.concurrent(callOf(trajectory, 'get_order'), callOf(trajectory, 'get_refund_policy'));
}

/** "a->b" for every ordered pair, by tool name: what a person reads off the drawing. */
function orderedPairs(trajectory: Trajectory): string[] {
  const pairs: string[] = [];
  for (const a of trajectory.calls)
    for (const b of trajectory.calls) if (trajectory.happensBefore(a, b)) pairs.push(`${a.tool}->${b.tool}`);
  return pairs.sort();
}

const REFUND_ORDER = [
  'get_order->issue_refund',
  'get_order->send_confirmation',
  'get_refund_policy->issue_refund',
  'get_refund_policy->send_confirmation',
  'issue_refund->send_confirmation',
];
const ORDER = { order_id: 'A-1001', status: 'delivered', total: 49.99, currency: 'EUR', item: 'kettle' };
const POLICY = { region: 'EU', window_days: 30, damaged_items: 'full refund' };
const REFUND = { refund_id: 'R-7788', order_id: 'A-1001', amount: 49.99, status: 'issued' };
const REFUND_ARGS = { order_id: 'A-1001', amount: 49.99, reason: 'damaged' };
const POLICY_ARGS = { region: 'EU' };

/**
 * The refund trajectory every capture must give: get_order ∥ get_refund_policy asked for in one
 * response (turn 0), then issue_refund (turn 1), then send_confirmation (turn 2), each causally
 * after the previous; the last turn asks for nothing.
 */
function expectRefundTrajectory(
  trajectory: Trajectory,
  lookupArgs: { order: unknown; policy: unknown },
): void {
  expect(trajectory.issues).toEqual([]);
  const drawn = trajectory.calls.map(({ tool, id, callId, args, result, outcome, convention }) => {
    return { tool, id, callId, args, result, outcome, convention };
  });
  // A plain-text result is a value, not a JSON parse failure (no parseError).
  const row = (tool: string, args: unknown, result: unknown) => {
    const [id, ok] = [`call_${tool}_1`, { status: 'ok' }];
    return { tool, id, callId: id, args: value(args), result: value(result), outcome: ok, convention: OI };
  };
  const confirmed = 'confirmation for A-1001 sent via email';
  expect(drawn.slice(0, 2).sort((x, y) => x.tool.localeCompare(y.tool))).toEqual([
    row('get_order', lookupArgs.order, ORDER),
    row('get_refund_policy', lookupArgs.policy, POLICY),
  ]);
  expect(drawn.slice(2)).toEqual([
    row('issue_refund', REFUND_ARGS, REFUND),
    row('send_confirmation', { order_id: 'A-1001', channel: 'email' }, confirmed),
  ]);
  const tools = ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'];
  expect(issuingTurns(trajectory, tools)).toEqual([0, 0, 1, 2]);
  expect(trajectory.turns.map((turn) => turn.issued)).toEqual([
    ['call_get_order_1', 'call_get_refund_policy_1'],
    ['call_issue_refund_1'],
    ['call_send_confirmation_1'],
    [],
  ]);
  const [, second, third, last] = trajectory.turns;
  expect(second?.consumed.sort()).toEqual(['call_get_order_1', 'call_get_refund_policy_1']);
  expect(third?.consumed).toContain('call_issue_refund_1');
  expect(last?.consumed).toContain('call_send_confirmation_1');
  expect(lookupsConcurrent(trajectory)).toBe(true);
  expect(orderedPairs(trajectory)).toEqual(REFUND_ORDER);
}

describe('OpenInference from @openai/agents (custom, Responses and Chat Completions models)', () => {
  for (const variant of ['refund', 'responses-refund', 'chatcompletions-refund']) {
    it(`${variant}: tool spans without ids link to their sibling LLM span by name and arguments`, () => {
      const spans = fixtureSpans(`openinference-openai-agents-${variant}.otlp.json`);
      const trajectory = trajectoryOf(spans);
      expectRefundTrajectory(trajectory, { order: { order_id: 'A-1001' }, policy: { region: 'EU' } });
      // The ids came from the LLM span: the tool spans have none.
      expect(readTool(spans.find((span) => span.name === 'get_order')).callId).toBeUndefined();
      for (const call of trajectory.calls) {
        expect(call.agentName).toBe('Refund agent');
        // The issuing LLM span is the tool span's sibling under the same `turn` chain.
        expect(spans.find((span) => `turn:${span.spanId}` === call.turnId)?.parentSpanId).toBe(
          call.parentSpanId,
        );
      }
      // The trace span (workflow name) is no agent run; the "Refund agent" span is the only one.
      const agentSpan = spans.find((span) => span.name === 'Refund agent');
      expect(trajectory.agents.filter((run) => run.name).map((run) => [run.name, run.spanId])).toEqual([
        ['Refund agent', agentSpan?.spanId],
      ]);
      expect(trajectory.root?.agentName).toBe('Refund agent');
    });
  }

  it('calls asked for in one response stay concurrent when their spans no longer overlap', () => {
    const original = fixtureSpans('openinference-openai-agents-refund.otlp.json');
    const start = (original.find((s) => s.name === 'get_order')?.endTimeUnixNano ?? 0n) + 1_000_000n;
    const spans = original.map((span) =>
      span.name === 'get_refund_policy'
        ? { ...span, startTimeUnixNano: start, endTimeUnixNano: start + 1_000_000n }
        : span,
    );
    const trajectory = trajectoryOf(spans);
    expect(lookupsConcurrent(trajectory)).toBe(true);
    expect(orderedPairs(trajectory)).toEqual(REFUND_ORDER);
  });

  it('tool-error: the failed tool is an error with the (redacted) message, and the model saw it', () => {
    const trajectory = trajectoryOf(fixtureSpans('openinference-openai-agents-tool-error.otlp.json'));
    expect(trajectory.calls.map((call) => call.tool)).toEqual(['get_order', 'issue_refund']);
    const redacted =
      '{"tool_name":"issue_refund","error":"Tool execution failed. Error details are redacted."}';
    const refund = callOf(trajectory, 'issue_refund');
    const shownToModel = 'An error occurred while running the tool. Please try again.';
    expect(refund).toMatchObject({
      callId: 'call_issue_refund_1',
      args: value(REFUND_ARGS),
      result: value(shownToModel),
    });
    // No error type: the bridge records only a message, and the SDK redacts the error in it.
    expect(refund.outcome).toEqual({
      status: 'error',
      message: `Error running tool (non-fatal): ${redacted}`,
    });
    expect(issuingTurns(trajectory, ['get_order', 'issue_refund'])).toEqual([0, 1]);
    expect(trajectory.turns[2]?.consumed).toContain('call_issue_refund_1');
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
  });
});

describe('OpenInference from LangChain / LangGraph createReactAgent', () => {
  for (const variant of ['refund', 'chatopenai-refund']) {
    it(`${variant}: tool spans under "tools" chains link to LLM spans under "agent" chains`, () => {
      const spans = fixtureSpans(`openinference-langchain-${variant}.otlp.json`);
      const trajectory = trajectoryOf(spans);
      // The tracer records a one-field input as the bare string (text/plain); the tool got the
      // object the model asked for, and that is what the call's arguments are.
      expectRefundTrajectory(trajectory, { order: { order_id: 'A-1001' }, policy: POLICY_ARGS });
      // Cousins: the LLM span sits under an "agent" chain, the tool span under a "tools" chain.
      for (const call of trajectory.calls)
        expect(issuerOf(spans, call)?.parentSpanId).not.toBe(call.parentSpanId);
      expect(trajectory.root?.name).toBe('refund_agent');
    });
  }

  it('reads the call id from the ToolMessage in output.value, and request ids from the raw generation', () => {
    const spans = fixtureSpans('openinference-langchain-refund.otlp.json');
    const call = readTool(spans.find((s) => s.name === 'get_order'));
    expect(call).toMatchObject({ tool: 'get_order', callId: 'call_get_order_1', outcome: { status: 'ok' } });
    // A bare text/plain input is not malformed JSON: no parseError.
    expect([call.args, call.result]).toEqual([value('A-1001'), value(ORDER)]);
    const llm = spans.find((span) => span.attributes['openinference.span.kind'] === 'LLM');
    expect(readTurn(llm).requested).toEqual([
      { callId: 'call_get_order_1', tool: 'get_order', args: value({ order_id: 'A-1001' }) },
      { callId: 'call_get_refund_policy_1', tool: 'get_refund_policy', args: value(POLICY_ARGS) },
    ]);
  });

  it('tool-error: error type and message without the stack; the call id comes from the request', () => {
    const spans = fixtureSpans('openinference-langchain-tool-error.otlp.json');
    // The failed tool span has no output.value, so no ToolMessage and no id of its own.
    const failed = readTool(spans.find((span) => span.name === 'issue_refund'));
    expect([failed.callId, failed.result]).toEqual([undefined, { captured: false }]);
    // The next LLM input has ToolNode's error ToolMessage, marked as an error.
    const llms = spans.filter((span) => span.attributes['openinference.span.kind'] === 'LLM');
    const shown = readTurn(llms[llms.length - 1]).shown;
    expect(shown?.find((r) => r.callId === 'call_issue_refund_1')).toMatchObject({ isError: true });

    const trajectory = trajectoryOf(spans);
    const refund = callOf(trajectory, 'issue_refund');
    expect(refund).toMatchObject({
      callId: 'call_issue_refund_1',
      args: value(REFUND_ARGS),
      outcome: { status: 'error', errorType: 'Error', message: 'payment gateway timeout (simulated)' },
      // What ToolNode fed back to the model instead.
      result: value('Error: payment gateway timeout (simulated)\n Please fix your mistakes.'),
    });
    expect(issuingTurns(trajectory, ['get_order', 'issue_refund'])).toEqual([0, 1]);
    expect(trajectory.turns[2]?.consumed).toContain('call_issue_refund_1');
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
  });

  it('without any ids (raw input/output values hidden), cousins still link to the right turns', () => {
    const spans = fixtureSpans('openinference-langchain-refund.otlp.json').map((span) => {
      const { 'input.value': _in, 'output.value': _out, ...attributes } = span.attributes;
      return { ...span, attributes };
    });
    const trajectory = trajectoryOf(spans);
    expect(trajectory.calls.every((call) => call.callId === undefined)).toBe(true);
    const tools = ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'];
    expect(issuingTurns(trajectory, tools)).toEqual([0, 0, 1, 2]);
    // With input.value hidden, the arguments come from the request.
    expect(callOf(trajectory, 'get_order').args).toEqual(value({ order_id: 'A-1001' }));
    expect(lookupsConcurrent(trajectory)).toBe(true);
    expect(orderedPairs(trajectory)).toEqual(REFUND_ORDER);
  });
});

describe('same tool twice in one response, tool spans without ids (LangChain errors carry none)', () => {
  // LangChain's tracer records {order_id: "A-1001"} as "A-1001": assembly counts that as equal
  // arguments, and a tie within one turn keeps request order.
  it('each tool span is linked to the request with its own arguments', () => {
    const llm = oiSpan('LLM', {}, { start: 1, end: 2 });
    const prefix = 'llm.output_messages.0.message.tool_calls';
    ['A-1001', 'A-1002'].forEach((id, m) => {
      llm.attributes[`${prefix}.${m}.tool_call.function.name`] = 'get_order';
      llm.attributes[`${prefix}.${m}.tool_call.function.arguments`] = JSON.stringify({ order_id: id });
    });
    const status = { code: 'error', message: 'timeout' } as const;
    const failed = (id: string, start: number) =>
      oiSpan(
        'TOOL',
        { 'tool.name': 'get_order', 'input.value': id, 'input.mime_type': TEXT_MIME },
        { start, status },
      );
    const [first, second] = [failed('A-1001', 3), failed('A-1002', 4)];
    const trajectory = trajectoryOf([llm, first, second]);
    const issuedSpans = trajectory.turns[0]?.issued.map((id) => trajectory.call(id)?.spanId);
    expect(issuedSpans).toEqual([first.spanId, second.spanId]);
  });
});

type SpanFields = Omit<Parameters<typeof spanRecord>[0], 'attributes'>;

function oiSpan(kind: string, attributes: Attributes, fields: SpanFields = {}): SpanRecord {
  return spanRecord({ ...fields, attributes: { 'openinference.span.kind': kind, ...attributes } });
}

const tool = (attributes: Attributes, fields: SpanFields = {}) =>
  readTool(oiSpan('TOOL', { 'tool.name': 'get_order', ...attributes }, fields));

describe('OpenInference TOOL spans', () => {
  it('keeps malformed JSON arguments as the raw string with parseError, and assembly reports them', () => {
    const span = oiSpan('TOOL', {
      'tool.name': 't',
      'input.value': '{"id": "A-1',
      'input.mime_type': JSON_MIME,
    });
    const args = readTool(span).args;
    expect(args.captured && [args.value, args.parseError]).toEqual([
      '{"id": "A-1',
      expect.stringMatching(/JSON/),
    ]);
    const issues = assembleTrajectory(TRACE_ID, [span], CONVENTIONS)?.issues;
    expect(issues?.map((issue) => [issue.kind, issue.spanIds])).toEqual([
      ['arguments.unparsable', [span.spanId]],
    ]);
  });

  it('text/plain values stay strings even when they look like JSON; other results parse when they can', () => {
    const plain = tool({
      'input.value': '42',
      'input.mime_type': TEXT_MIME,
      'output.value': 'true',
      'output.mime_type': TEXT_MIME,
    });
    expect([plain.args, plain.result]).toEqual([value('42'), value('true')]);
    expect(tool({ 'output.value': '{"a":1}' }).result).toEqual(value({ a: 1 }));
    expect(tool({ 'output.value': 'sent' }).result).toEqual(value('sent'));
    const declared = tool({ 'output.value': '{"a":', 'output.mime_type': JSON_MIME }).result;
    expect(declared.captured && declared.parseError).toMatch(/JSON/);
  });

  it('reads tool_call.id (or tool.id) and agent.name; what was not recorded is not captured, never empty', () => {
    expect(tool({})).toMatchObject({ args: { captured: false }, result: { captured: false } });
    expect(tool({ 'tool_call.id': ' c1 ', 'agent.name': 'support' })).toMatchObject({
      callId: 'c1',
      agentName: 'support',
    });
    expect(tool({ 'tool.id': 'c2' }).callId).toBe('c2');
  });

  it('a ToolMessage with status "error" is an error outcome even on an OK span; other wrappers stay', () => {
    const id = ['langchain_core', 'messages', 'ToolMessage'];
    const kwargs = { status: 'error', content: 'order not found', tool_call_id: 'c9' };
    const output = JSON.stringify({ output: { lc: 1, type: 'constructor', id, kwargs } });
    expect(tool({ 'output.value': output }, { status: { code: 'ok' } })).toMatchObject({
      callId: 'c9',
      result: value('order not found'),
      outcome: { status: 'error', message: 'order not found' },
    });
    expect(tool({ 'output.value': '{"output":{"x":1}}' }).result).toEqual(value({ output: { x: 1 } }));
  });

  it("the bridge's mcp_tools listing and handoff spans, and non-tool kinds, are not calls", () => {
    // Claimed as structure: read as nothing, and not taken for tool spans no convention read.
    const structure = { kind: 'structure', convention: 'openinference' };
    expect(openInference.read(oiSpan('TOOL', {}, { name: 'mcp_tools', scope: AGENTS_SCOPE }))).toEqual(
      structure,
    );
    // A handoff is the model's transfer_to_{agent} call; the bridge's handoff span is no second call.
    const handoffTool = { 'tool.name': 'handoff_to_Billing' };
    const handoff = oiSpan('TOOL', handoffTool, { name: 'handoff to Billing', scope: AGENTS_SCOPE });
    expect(openInference.read(handoff)).toEqual(structure);
    // A function tool that happens to be called so keeps its own span name, and stays a call.
    const own = oiSpan('TOOL', handoffTool, { name: 'handoff_to_Billing', scope: AGENTS_SCOPE });
    expect(readTool(own).tool).toBe('handoff_to_Billing');
    for (const kind of ['CHAIN', 'GUARDRAIL', 'RETRIEVER', 'EMBEDDING', 'UNKNOWN'])
      expect(openInference.read(oiSpan(kind, { 'tool.name': 'x' }))).toBeUndefined();
    expect(openInference.read(spanRecord({ attributes: { 'tool.name': 'x' } }))).toBeUndefined();
  });

  it('splits LangChain\'s "{message}\\n\\n{stack}" error text, and leaves other text alone', () => {
    const split = (text: string) => Object.values(splitMessageAndStack(text) ?? {});
    expect(split('boom\n\nTypeError: boom\n    at f (x.js:1:1)')).toEqual(['boom', 'TypeError']);
    expect(split('a\n\nb\n\nError: a\n\nb\n    at f')).toEqual(['a\n\nb', 'Error']);
    expect(splitMessageAndStack('line one\n\nline two')).toBeUndefined();
    expect(splitMessageAndStack('boom\n\nError: other\n    at f')).toBeUndefined();
  });
});

describe('OpenInference LLM and AGENT spans', () => {
  it('an LLM span with no input recorded was shown nothing we know of: shown is undefined', () => {
    expect(readTurn(oiSpan('LLM', { 'llm.model_name': 'm' }))).toEqual({
      requested: [],
      shown: undefined,
      historyLength: 0,
      model: 'm',
      convention: 'openinference',
    });
  });

  it('reads flattened calls in message then call order, results with ids, and the history length', () => {
    const out = 'llm.output_messages';
    const turn = readTurn(
      oiSpan('LLM', {
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.2.message.role': 'tool',
        'llm.input_messages.2.message.tool_call_id': 'c0',
        'llm.input_messages.2.message.contents.0.message_content.text': '{"ok":',
        'llm.input_messages.2.message.contents.1.message_content.text': 'true}',
        [`${out}.1.message.tool_calls.0.tool_call.id`]: 'c2',
        [`${out}.1.message.tool_calls.0.tool_call.function.name`]: 'b',
        [`${out}.0.message.tool_calls.10.tool_call.function.name`]: 'a2',
        [`${out}.0.message.tool_calls.2.tool_call.id`]: 'c1',
        [`${out}.0.message.tool_calls.2.tool_call.function.name`]: 'a1',
        [`${out}.0.message.tool_calls.2.tool_call.function.arguments`]: '{"x":',
        [`${out}.0.message.function_call_name`]: 'legacy',
        // Raw values that are not JSON are ignored, never thrown on.
        'output.value': '{"generations": [[',
        'input.value': '[',
      }),
    );
    expect(turn.requested.map((call) => [call.tool, call.callId])).toEqual([
      ['a1', 'c1'],
      ['a2', undefined],
      ['legacy', undefined],
      ['b', 'c2'],
    ]);
    const [malformed, absent] = turn.requested;
    expect(malformed?.args.captured && malformed.args.parseError).toMatch(/JSON/);
    expect(absent?.args).toEqual({ captured: false });
    expect(turn.shown).toEqual([{ callId: 'c0', result: value({ ok: true }) }]);
    expect(turn.historyLength).toBe(3);
  });

  it('names an agent by agent.name, then graph.node.name, then graph.node.id, then the span name', () => {
    const name = (attributes: Attributes, scope = LANGCHAIN_SCOPE) => {
      const reading = openInference.read(oiSpan('AGENT', attributes, { name: 'span name', scope }));
      return reading?.kind === 'agent' ? reading.name : 'not an agent';
    };
    expect(name({ 'agent.name': 'a', 'graph.node.name': 'b', 'graph.node.id': 'c' })).toBe('a');
    expect(name({ 'graph.node.name': 'b', 'graph.node.id': 'c' })).toBe('b');
    expect(name({ 'graph.node.id': 'c' }, AGENTS_SCOPE)).toBe('c');
    expect(name({})).toBe('span name');
    // The @openai/agents bridge's trace span: an AGENT span without graph.node.id is the workflow.
    expect(name({}, AGENTS_SCOPE)).toBe('not an agent');
  });
});
