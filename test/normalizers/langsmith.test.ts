import { describe, expect, it } from 'vitest';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { assembleTrajectory } from '../../src/normalizers/assemble.js';
import type { Convention } from '../../src/normalizers/convention.js';
import { readSpan } from '../../src/normalizers/conventions.js';
import { langsmith } from '../../src/normalizers/langsmith.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { callOf, fixture, orderedPairs, trajectoryOf as trajectoryWith } from '../helpers/fixtures.js';
import { spanRecord, TRACE_ID } from '../helpers/spans.js';

const CONVENTIONS: readonly Convention[] = [langsmith, otelGenAi];

/** This convention first, then OTel GenAI (what the registered precedence has behind it). */
const trajectoryOf = (spans: readonly SpanRecord[], conventions = CONVENTIONS): Trajectory =>
  trajectoryWith(spans, conventions);

function turnIdsOf(spans: readonly SpanRecord[], name: string): string[] {
  return spans
    .filter((span) => span.name === name)
    .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
    .map((span) => `turn:${span.spanId}`);
}

const REFUND_ARGS = { order_id: 'ORD-20417', amount: 89.9, currency: 'EUR', reason: 'damaged_on_arrival' };

describe('LangSmith OTel: traceable tools and wrapOpenAI turns (documented refund)', () => {
  const spans = fixture('langsmith-documented-refund');
  const trajectory = trajectoryOf(spans);

  it('reads tool runs: gen_ai.tool.name, gen_ai.tool.call.id, inputs as arguments, outputs as result', () => {
    expect(trajectory.calls.map((c) => [c.tool, c.id])).toEqual([
      ['get_order', 'call_Kq01ord'],
      ['get_refund_policy', 'call_Kq02pol'],
      ['issue_refund', 'call_Kq03ref'],
      ['send_confirmation', 'call_Kq04cnf'],
    ]);
    expect(callOf(trajectory, 'issue_refund')).toMatchObject({
      callId: 'call_Kq03ref',
      args: { captured: true, value: REFUND_ARGS },
      result: { captured: true, value: { refund_id: 'RF-88213', order_id: 'ORD-20417', status: 'issued' } },
      outcome: { status: 'ok' },
      convention: 'langsmith',
    });
    expect(trajectory.issues).toEqual([]);
  });

  it('links the calls to the ChatOpenAI turn whose completion asked for them', () => {
    const [first, second, third, last] = turnIdsOf(spans, 'ChatOpenAI');
    expect(trajectory.turns.map((t) => [t.id, t.issued, t.model])).toEqual([
      [first, ['call_Kq01ord', 'call_Kq02pol'], 'gpt-4o-mini'],
      [second, ['call_Kq03ref'], 'gpt-4o-mini'],
      [third, ['call_Kq04cnf'], 'gpt-4o-mini'],
      [last, [], 'gpt-4o-mini'],
    ]);
    expect(trajectory.turns[1]?.consumed.sort()).toEqual(['call_Kq01ord', 'call_Kq02pol']);
  });

  it('orders by consumed results; the two calls of one response are concurrent', () => {
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

  it('has no agent run (LangSmith has no agent run type); the root chain names the trace', () => {
    expect(trajectory.agents.map((a) => a.id)).toEqual(['run:trace']);
    expect(trajectory.root?.name).toBe('support-agent');
  });
});

describe('LangSmith OTel: a failing tool run without call ids (documented tool-error)', () => {
  const spans = fixture('langsmith-documented-tool-error');
  const trajectory = trajectoryOf(spans);

  it('the failed run keeps its OK status, so the exception decides; the type comes from String(error)', () => {
    const span = spans.find((s) => s.name === 'issue_refund');
    expect(span?.status.code).toBe('ok');
    expect(span?.events[0]?.attributes['exception.type']).toBe('Error');
    expect(callOf(trajectory, 'issue_refund').outcome).toEqual({
      status: 'error',
      errorType: 'PaymentGatewayTimeout',
      message: 'payment gateway did not answer within 5000 ms',
    });
    expect(callOf(trajectory, 'get_order').outcome).toEqual({ status: 'ok' });
  });

  it('links tool runs without ids to their turn by name and arguments, taking the turn’s call id', () => {
    const [first, second, last] = turnIdsOf(spans, 'ChatOpenAI');
    expect(spans.some((s) => 'gen_ai.tool.call.id' in s.attributes)).toBe(false);
    expect(trajectory.calls.map((c) => [c.tool, c.callId, c.turnId])).toEqual([
      ['get_order', 'call_Tz01ord', first],
      ['issue_refund', 'call_Tz02ref', second],
    ]);
    expect(trajectory.turns.find((t) => t.id === last)?.consumed).toContain('call_Tz02ref');
    expect(orderedPairs(trajectory)).toEqual(['get_order->issue_refund']);
  });
});

/** A LangSmith span as the translator writes it: run type, derived operation, JSON inputs/outputs. */
function run(
  runType: string,
  name: string,
  io: { inputs?: unknown; outputs?: unknown },
  extra: Attributes = {},
) {
  const operation: Record<string, string> = { llm: 'chat', tool: 'execute_tool', prompt: 'chat' };
  return spanRecord({
    name,
    status: { code: 'ok' },
    attributes: {
      'langsmith.span.kind': runType,
      'gen_ai.operation.name': operation[runType] ?? runType,
      'langsmith.trace.name': name,
      ...(io.inputs !== undefined && {
        'gen_ai.prompt': typeof io.inputs === 'string' ? io.inputs : JSON.stringify(io.inputs),
      }),
      ...(io.outputs !== undefined && { 'gen_ai.completion': JSON.stringify(io.outputs) }),
      ...extra,
    },
  });
}

const lc = (className: string, kwargs: object) => ({
  lc: 1,
  type: 'constructor',
  id: ['langchain_core', 'messages', className],
  kwargs,
});

describe('LangSmith OTel: LangChain tracer payloads', () => {
  it('reads tool calls from generations and tool results from the batched serialized messages', () => {
    const reading = langsmith.read(
      run('llm', 'ChatOpenAI', {
        inputs: {
          messages: [
            [
              lc('HumanMessage', { content: 'refund ORD-1' }),
              lc('AIMessage', {
                content: '',
                tool_calls: [{ name: 'get_order', args: { id: 1 }, id: 'c1' }],
              }),
              lc('ToolMessage', { content: '{"status":"delivered"}', tool_call_id: 'c1', name: 'get_order' }),
            ],
          ],
        },
        outputs: {
          generations: [
            [
              {
                text: '',
                message: lc('AIMessage', {
                  content: '',
                  tool_calls: [{ name: 'issue_refund', args: { id: 1 }, id: 'c2', type: 'tool_call' }],
                }),
              },
            ],
          ],
        },
      }),
    );
    expect(reading).toEqual({
      kind: 'turn',
      turn: {
        requested: [{ callId: 'c2', tool: 'issue_refund', args: { captured: true, value: { id: 1 } } }],
        shown: [{ callId: 'c1', result: { captured: true, value: { status: 'delivered' } } }],
        historyLength: 3,
        convention: 'langsmith',
      },
    });
  });

  it('a tool run ending in a ToolMessage gives its content as the result and its call id', () => {
    const span = run('tool', 'get_order', {
      inputs: { input: '{"order_id":"ORD-1"}' },
      outputs: {
        output: lc('ToolMessage', { content: '{"total":40}', tool_call_id: 'call_9', name: 'get_order' }),
      },
    });
    expect(trajectoryOf([span]).calls[0]).toMatchObject({
      tool: 'get_order',
      callId: 'call_9',
      args: { captured: true, value: { order_id: 'ORD-1' } },
      result: { captured: true, value: { total: 40 } },
      outcome: { status: 'ok' },
    });
  });

  it('the LangChain tracer’s "message\\n\\nstack" error keeps the message and takes the type from the stack', () => {
    const span = {
      ...run('tool', 'issue_refund', { inputs: { id: 1 } }),
      events: [
        {
          name: 'exception',
          timeUnixNano: 1n,
          attributes: {
            'exception.type': 'Error',
            'exception.message': 'gateway down\n\nGatewayTimeout: gateway down\n    at refund (pay.ts:3:9)',
          },
        },
      ],
    };
    expect(trajectoryOf([span]).calls[0]?.outcome).toEqual({
      status: 'error',
      errorType: 'GatewayTimeout',
      message: 'gateway down',
    });
  });
});

describe('LangSmith OTel: inputs, outputs and run types', () => {
  it('no inputs or outputs recorded: not captured, never empty', () => {
    const call = trajectoryOf([run('tool', 'get_order', {}, { 'gen_ai.tool.name': 'get_order' })]).calls[0];
    expect(call?.args).toEqual({ captured: false });
    expect(call?.result).toEqual({ captured: false });
  });

  it('malformed JSON inputs are kept raw with a parse error and reported, without throwing', () => {
    const trajectory = trajectoryOf([run('tool', 'get_order', { inputs: '{"order_id": "ORD' })]);
    const args = trajectory.calls[0]?.args;
    expect(args?.captured && args.value).toBe('{"order_id": "ORD');
    expect(args?.captured && args.parseError).toMatch(/JSON/);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
  });

  it('unwraps traceable’s {outputs: value} for results that are not objects', () => {
    const span = run('tool', 'count', { inputs: { a: 1 }, outputs: { outputs: 3 } });
    expect(trajectoryOf([span]).calls[0]?.result).toEqual({ captured: true, value: 3 });
  });

  it('an LLM run with no inputs recorded says its input was not captured', () => {
    const reading = langsmith.read(run('llm', 'ChatOpenAI', { outputs: { choices: [] } }));
    expect(reading?.kind === 'turn' && reading.turn.shown).toBeUndefined();
  });

  it('reads Responses-style function_call items by their call_id', () => {
    const reading = langsmith.read(
      run('llm', 'ChatOpenAI', {
        inputs: { input: [{ type: 'function_call_output', call_id: 'fc_0', output: '{"ok":true}' }] },
        outputs: {
          output: [{ type: 'function_call', id: 'item_1', call_id: 'fc_1', name: 'search', arguments: '{}' }],
        },
      }),
    );
    expect(reading?.kind === 'turn' && reading.turn.requested).toEqual([
      { callId: 'fc_1', tool: 'search', args: { captured: true, value: {} } },
    ]);
    expect(reading?.kind === 'turn' && reading.turn.shown).toEqual([
      { callId: 'fc_0', result: { captured: true, value: { ok: true } } },
    ]);
  });

  it('chains, prompts and retrievers are structure to LangSmith, so no other convention reads them', () => {
    for (const runType of ['chain', 'prompt', 'retriever', 'parser'])
      expect(langsmith.read(run(runType, 'x', { inputs: {} }))).toEqual({
        kind: 'structure',
        convention: 'langsmith',
      });
    // A prompt run carries gen_ai.operation.name=chat: OTel GenAI behind LangSmith must not make it a turn.
    const prompt = run('prompt', 'ChatPromptTemplate', { inputs: {} });
    prompt.attributes['gen_ai.operation.name'] = 'chat';
    expect(readSpan(prompt, [langsmith, otelGenAi])).toEqual({ kind: 'structure', convention: 'langsmith' });
  });
});

describe('results the model was shown as errors', () => {
  it('a LangChain ToolMessage with status error, or an Anthropic tool_result with is_error, fails a span-less call', () => {
    const asked = run('llm', 'ChatModel', {
      inputs: { messages: [{ role: 'user', content: 'refund' }] },
      outputs: {
        choices: [
          {
            message: {
              role: 'assistant',
              tool_calls: [
                { id: 'c1', type: 'function', function: { name: 'pay', arguments: '{}' } },
                { id: 'c2', type: 'function', function: { name: 'charge', arguments: '{}' } },
              ],
            },
          },
        ],
      },
    });
    const shown = run('llm', 'ChatModel', {
      inputs: {
        messages: [
          { role: 'tool', tool_call_id: 'c1', content: 'card declined', status: 'error' },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'c2', content: 'gateway down', is_error: true }],
          },
        ],
      },
      outputs: { choices: [{ message: { role: 'assistant', content: 'sorry' } }] },
    });
    asked.endTimeUnixNano = asked.startTimeUnixNano + 1n;
    shown.startTimeUnixNano = asked.startTimeUnixNano + 5_000_000n;
    shown.endTimeUnixNano = shown.startTimeUnixNano + 1n;
    const trajectory = assembleTrajectory(TRACE_ID, [asked, shown], [langsmith]);
    expect(trajectory?.calls.map((call) => [call.tool, call.outcome])).toEqual([
      ['pay', { status: 'error', message: 'card declined' }],
      ['charge', { status: 'error', message: 'gateway down' }],
    ]);
  });
});
