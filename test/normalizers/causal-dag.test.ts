import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { captureDemoTraces } from '../../src/demo/capture.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { normalizeSpans, normalizeTrace } from '../../src/normalizers/normalize.js';
import { callOf, orderedPairs } from '../helpers/fixtures.js';
import {
  emitRun,
  expectedBefore,
  type GenCall,
  type GenRun,
  placesOf,
  TRACE_ID,
} from '../helpers/genai-run.js';
import { spanRecord, toolSpan } from '../helpers/spans.js';

function spansOf(text: string): SpanRecord[] {
  const read = readStoredTraces(text, 'fixture');
  if (read.input?.format !== 'otlp-json') throw new Error(`not OTLP JSON: ${JSON.stringify(read.errors)}`);
  return read.input.spans;
}

describe('the causal DAG of a real SDK trace', () => {
  it('the demo agent: parallel lookups are concurrent, every later call is after them', async () => {
    const [good] = await captureDemoTraces();
    const [trajectory] = normalizeSpans(spansOf(good?.otlpJson ?? ''));
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.calls.map((c) => c.tool)).toHaveLength(4);
    expect(trajectory.turns).toHaveLength(4);
    expect(
      trajectory.concurrent(callOf(trajectory, 'get_order'), callOf(trajectory, 'get_refund_policy')),
    ).toBe(true);
    expect(orderedPairs(trajectory)).toEqual(
      [
        'get_order->issue_refund',
        'get_order->send_confirmation',
        'get_refund_policy->issue_refund',
        'get_refund_policy->send_confirmation',
        'issue_refund->send_confirmation',
      ].sort(),
    );
    expect(trajectory.resultsVisibleTo(callOf(trajectory, 'send_confirmation')).map((c) => c.tool)).toEqual([
      'get_order',
      'get_refund_policy',
      'issue_refund',
    ]);
    expect(trajectory.resultsVisibleTo(callOf(trajectory, 'get_refund_policy'))).toEqual([]);
    const [first, second] = trajectory.turns;
    expect(first?.issued).toEqual(['call_1', 'call_2']);
    expect(second?.consumed.sort()).toEqual(['call_1', 'call_2']);
    expect(callOf(trajectory, 'issue_refund').turnId).toBe(second?.id);
    expect(trajectory.agents.map((run) => run.name)).toEqual(['support-agent']);
  });
});

describe('turns and links', () => {
  const agent = () =>
    spanRecord({
      name: 'invoke_agent a',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'a' },
      end: 1000,
    });
  const chat = (parent: SpanRecord, start: number, output: unknown[], input?: unknown[]) =>
    spanRecord({
      name: 'chat m',
      parentSpanId: parent.spanId,
      start,
      end: start + 1,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: output }]),
        ...(input && { 'gen_ai.input.messages': JSON.stringify(input) }),
      },
    });
  const toolCall = (id: string | null, name: string, args = {}) => ({
    type: 'tool_call',
    id,
    name,
    arguments: args,
  });
  const response = (id: string, value: unknown) => ({
    role: 'tool',
    parts: [{ type: 'tool_call_response', id, response: value }],
  });

  it('two calls issued in one turn are concurrent whatever their start times', () => {
    const root = agent();
    const turn = chat(root, 0, [toolCall('a', 'first'), toolCall('b', 'second')]);
    // b starts long after a ended: time alone would order them.
    const a = toolSpan('first', { parentSpanId: root.spanId, callId: 'a', start: 2, end: 3 });
    const b = toolSpan('second', { parentSpanId: root.spanId, callId: 'b', start: 50, end: 51 });
    const trajectory = normalizeTrace(TRACE_ID, [b, root, a, turn]);
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.concurrent(callOf(trajectory, 'first'), callOf(trajectory, 'second'))).toBe(true);
  });

  it('a call is after a result only if its turn was shown it, not because it started later', () => {
    const root = agent();
    const t1 = chat(root, 0, [toolCall('a', 'slow')]);
    // The second turn was issued while `slow` still ran and was not shown its result.
    const t2 = chat(
      root,
      5,
      [toolCall('b', 'fast')],
      [
        { role: 'user', parts: [] },
        { role: 'assistant', parts: [toolCall('a', 'slow')] },
      ],
    );
    const slow = toolSpan('slow', { parentSpanId: root.spanId, callId: 'a', start: 2, end: 4 });
    const fast = toolSpan('fast', { parentSpanId: root.spanId, callId: 'b', start: 7, end: 8 });
    const trajectory = normalizeTrace(TRACE_ID, [root, t1, t2, slow, fast]);
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.happensBefore(callOf(trajectory, 'slow'), callOf(trajectory, 'fast'))).toBe(true);
    // ...because inputs without ids fall back to "shown the previous turn's results". With ids that
    // do not name `a`, the turn was not shown it:
    const t2b = chat(root, 5, [toolCall('b', 'fast')], [response('zzz', 1)]);
    const other = normalizeTrace(TRACE_ID, [root, t1, t2b, slow, fast]);
    if (!other) throw new Error('no trajectory');
    expect(other.concurrent(callOf(other, 'slow'), callOf(other, 'fast'))).toBe(true);
  });

  it('links a tool span without a call id to its turn by name and arguments', () => {
    const root = agent();
    const turn = chat(root, 0, [toolCall('x1', 'search', { q: 'b' }), toolCall('x2', 'search', { q: 'a' })]);
    const spanA = toolSpan('search', { parentSpanId: root.spanId, args: { q: 'a' }, start: 2, end: 3 });
    const spanB = toolSpan('search', { parentSpanId: root.spanId, args: { q: 'b' }, start: 2, end: 3 });
    const trajectory = normalizeTrace(TRACE_ID, [root, turn, spanA, spanB]);
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.calls).toHaveLength(2);
    const byArgs = (q: string) =>
      trajectory.calls.find((c) => c.args.captured && JSON.stringify(c.args.value) === JSON.stringify({ q }));
    expect(byArgs('a')?.callId).toBe('x2');
    expect(byArgs('b')?.callId).toBe('x1');
    expect(byArgs('a')?.spanId).toBe(spanA.spanId);
  });

  it('a call the model asked for with no tool span is still a call, with the result its next turn was shown', () => {
    const root = agent();
    const t1 = chat(root, 0, [toolCall('w1', 'web_search', { q: 'x' })]);
    const t2 = chat(root, 5, [toolCall('c1', 'cite')], [response('w1', { hits: 3 })]);
    const cite = toolSpan('cite', { parentSpanId: root.spanId, callId: 'c1', start: 7, end: 8 });
    const trajectory = normalizeTrace(TRACE_ID, [root, t1, t2, cite]);
    if (!trajectory) throw new Error('no trajectory');
    const search = callOf(trajectory, 'web_search');
    expect(search).toMatchObject({
      id: 'w1',
      args: { captured: true, value: { q: 'x' } },
      result: { captured: true, value: { hits: 3 } },
    });
    expect(search.outcome).toEqual({ status: 'ok' });
    expect(search.spanId).toBeUndefined();
    expect(trajectory.happensBefore(search, callOf(trajectory, 'cite'))).toBe(true);
  });

  it("inputs not captured: a turn is taken to have been shown the previous turn's results", () => {
    const root = agent();
    const t1 = chat(root, 0, [toolCall('a', 'lookup')]);
    const t2 = chat(root, 5, [toolCall('b', 'act')]);
    const spans = [
      root,
      t1,
      t2,
      toolSpan('lookup', { parentSpanId: root.spanId, callId: 'a', start: 2, end: 3 }),
    ];
    spans.push(toolSpan('act', { parentSpanId: root.spanId, callId: 'b', start: 7, end: 8 }));
    const trajectory = normalizeTrace(TRACE_ID, spans);
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.happensBefore(callOf(trajectory, 'lookup'), callOf(trajectory, 'act'))).toBe(true);
    expect(trajectory.turns[1]?.consumed).toEqual(['a']);
  });

  it('an MCP client span and its server span are one call', () => {
    const root = agent();
    const turn = chat(root, 0, [toolCall('m1', 'get-weather', { city: 'Oslo' })]);
    const client = spanRecord({
      name: 'tools/call get-weather',
      kind: 'client',
      parentSpanId: root.spanId,
      start: 2,
      end: 9,
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'get-weather',
        'gen_ai.operation.name': 'execute_tool',
      },
    });
    // The server runs in another process whose clock is 40 ms behind: nesting, not time, joins them.
    const server = spanRecord({
      name: 'tools/call get-weather',
      kind: 'server',
      parentSpanId: client.spanId,
      start: -38,
      end: -33,
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'get-weather',
        'gen_ai.tool.call.result': '{"temp": 3}',
      },
    });
    const trajectory = normalizeTrace(TRACE_ID, [server, client, turn, root]);
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.calls).toHaveLength(1);
    expect(trajectory.calls[0]).toMatchObject({
      id: 'm1',
      tool: 'get-weather',
      spanId: client.spanId,
      args: { captured: true, value: { city: 'Oslo' } },
      result: { captured: true, value: { temp: 3 } },
      turnId: turn.spanId ? `turn:${turn.spanId}` : '',
    });
  });

  it('an MCP result with isError is a failed call', () => {
    const span = spanRecord({
      name: 'tools/call delete',
      kind: 'client',
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'delete',
        'error.type': 'tool_error',
      },
    });
    expect(normalizeTrace(TRACE_ID, [span])?.calls[0]?.outcome).toEqual({
      status: 'error',
      errorType: 'tool_error',
    });
  });

  it('call ids that contradict each other give an order issue, not an exception', () => {
    const root = agent();
    // Turn 1 claims to have been shown the result of a call that turn 2 issues.
    const t1 = chat(root, 0, [toolCall('a', 'one')], [response('b', 1)]);
    const t2 = chat(root, 5, [toolCall('b', 'two')], [response('a', 1)]);
    const spans = [
      root,
      t1,
      t2,
      toolSpan('one', { parentSpanId: root.spanId, callId: 'a', start: 2, end: 3 }),
    ];
    spans.push(toolSpan('two', { parentSpanId: root.spanId, callId: 'b', start: 7, end: 8 }));
    const trajectory = normalizeTrace(TRACE_ID, spans);
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.issues.map((issue) => issue.kind)).toContain('order.cycle');
    const [one, two] = [callOf(trajectory, 'one'), callOf(trajectory, 'two')];
    expect(trajectory.happensBefore(one, two) && trajectory.happensBefore(two, one)).toBe(false);
  });
});

/**
 * An agent root and one turn per tool, every call numbered `call_0`: turn k asks for tools[k],
 * and its history shows `earlier` older `call_0` results plus one per previous turn.
 */
function reusedIdConversation(tools: readonly string[], earlier: number): SpanRecord[] {
  const root = spanRecord({
    name: 'invoke_agent a',
    attributes: { 'gen_ai.operation.name': 'invoke_agent' },
    end: 100,
  });
  const spans = [root];
  tools.forEach((tool, k) => {
    const shown = Array.from({ length: earlier + k }, () => ({
      type: 'tool_call_response',
      id: 'call_0',
      response: { ok: true },
    }));
    spans.push(
      spanRecord({
        name: 'chat m',
        parentSpanId: root.spanId,
        start: k * 10,
        end: k * 10 + 1,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': JSON.stringify([{ role: 'tool', parts: shown }]),
          'gen_ai.output.messages': JSON.stringify([
            { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_0', name: tool, arguments: {} }] },
          ]),
        },
      }),
      toolSpan(tool, { parentSpanId: root.spanId, callId: 'call_0', start: k * 10 + 2, end: k * 10 + 3 }),
    );
  });
  return spans;
}

describe('call ids reused in every turn (providers that number calls per turn)', () => {
  it('links each tool span and each shown result to its own turn', () => {
    const tools = ['get_order', 'get_refund_policy', 'issue_refund'];
    const spans = reusedIdConversation(tools, 0);
    const trajectory = normalizeTrace(TRACE_ID, spans.reverse());
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.turns.map((turn) => turn.issued.map((id) => trajectory.call(id)?.tool))).toEqual(
      tools.map((tool) => [tool]),
    );
    expect(orderedPairs(trajectory)).toEqual([
      'get_order->get_refund_policy',
      'get_order->issue_refund',
      'get_refund_policy->issue_refund',
    ]);
  });
});

describe('without turns: the clock, at its resolution', () => {
  it('millisecond start times: a call ending in the millisecond another starts is before it, same-millisecond starts are not', () => {
    const ms = 1_000_000n;
    const at = (tool: string, start: bigint, end: bigint) => ({
      ...toolSpan(tool, { callId: tool }),
      startTimeUnixNano: start,
      endTimeUnixNano: end,
    });
    // a: [10 ms, 10.4 ms]; b starts at "10 ms" (rounded down from later than 10.4): sequential in truth.
    const spans = [
      at('a', 10n * ms, 10n * ms + 400_000n),
      at('b', 11n * ms, 12n * ms),
      at('c', 11n * ms, 11n * ms + 100n),
    ];
    const trajectory = normalizeTrace(TRACE_ID, spans);
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.happensBefore(callOf(trajectory, 'a'), callOf(trajectory, 'b'))).toBe(true);
    expect(trajectory.concurrent(callOf(trajectory, 'b'), callOf(trajectory, 'c'))).toBe(true);
  });
});

const genCall = (depth: number): fc.Arbitrary<GenCall> =>
  fc.record({
    tool: fc.constantFrom('search', 'lookup', 'pay', 'notify'),
    fails: fc.boolean(),
    startOffset: fc.integer({ min: 0, max: 40 }),
    duration: fc.integer({ min: 0, max: 30 }),
    subRun: depth > 0 ? fc.option(genRun(depth - 1), { nil: undefined }) : fc.constant(undefined),
  }) as unknown as fc.Arbitrary<GenCall>;

function genRun(depth: number): fc.Arbitrary<GenRun> {
  return fc.record({
    agent: fc.constantFrom('main', 'researcher', 'billing'),
    turns: fc.array(fc.array(genCall(depth), { minLength: 1, maxLength: 3 }), { minLength: 0, maxLength: 4 }),
  });
}

describe('property: random agent runs come back as the DAG that produced them', () => {
  it('calls, issuing turns, sub-agents and happens-before match the generated run, spans in any order', () => {
    fc.assert(
      fc.property(genRun(2), fc.infiniteStream(fc.nat()), (run, noise) => {
        let n = 0;
        for (const place of placesOf(run)) place.call.id = `call_${n++}`;
        const { spans } = emitRun(run, undefined, 0);
        const shuffled = spans
          .map((span) => ({ span, key: noise.next().value }))
          .sort((a, b) => a.key - b.key)
          .map(({ span }) => span);
        const trajectory = normalizeTrace(TRACE_ID, shuffled);
        const places = placesOf(run);
        if (places.length === 0) return;
        if (!trajectory) throw new Error('no trajectory');
        expect(trajectory.calls.map((c) => c.id).sort()).toEqual(places.map((p) => p.call.id).sort());
        expect(trajectory.issues).toEqual([]);
        // Mismatches are collected, not asserted pair by pair: one expect per run keeps this fast.
        const wrong: string[] = [];
        for (const a of places) {
          const callA = trajectory.call(a.call.id);
          if (callA?.outcome.status !== (a.call.fails ? 'error' : 'ok')) wrong.push(`${a.call.id} outcome`);
          for (const b of places) {
            const callB = trajectory.call(b.call.id);
            if (!callA || !callB || a === b) continue;
            const seen = trajectory.happensBefore(callA, callB);
            if (seen !== expectedBefore(a, b)) wrong.push(`${a.call.id} -> ${b.call.id}: ${seen}`);
            // Calls of one turn share their issuing turn; turns of a run are distinct.
            if (a.run === b.run && (callA.turnId === callB.turnId) !== (a.turn === b.turn))
              wrong.push(`${a.call.id}/${b.call.id} turns`);
          }
        }
        expect(wrong).toEqual([]);
        // "After any of these" agrees with asking each pair.
        const some = trajectory.calls.filter((_, index) => index % 3 === 0);
        const afterSome = trajectory.afterAny(some);
        for (const call of trajectory.calls) {
          const pairwise = some.some((earlier) => trajectory.happensBefore(earlier, call));
          if (afterSome(call) !== pairwise) wrong.push(`afterAny ${call.id}`);
        }
        expect(wrong).toEqual([]);
        expect(trajectory.agents).toHaveLength(1 + places.filter((p) => p.call.subRun).length);
        // The sub-agent tree: each sub-run hangs off the call that started it.
        for (const place of places.filter((p) => p.call.subRun)) {
          const child = trajectory.agents.filter((run) => run.parentCallId === place.call.id);
          expect(child).toHaveLength(1);
          expect(
            trajectory.childRuns(trajectory.call(place.call.id) && child[0]?.parentRunId),
          ).toContainEqual(child[0]);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('assembly corner cases', () => {
  it('a call with no tool span that the next turn was shown as an error is a failed call', () => {
    const root = spanRecord({
      name: 'invoke_agent a',
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
      end: 100,
    });
    const turn1 = spanRecord({
      name: 'ai.generateText.doGenerate',
      parentSpanId: root.spanId,
      start: 0,
      end: 1,
      attributes: {
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.response.toolCalls': '[{"toolCallId":"c1","toolName":"pay","input":{}}]',
      },
    });
    const turn2 = spanRecord({
      name: 'ai.generateText.doGenerate',
      parentSpanId: root.spanId,
      start: 5,
      end: 6,
      attributes: {
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.prompt.messages': JSON.stringify([
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'c1',
                toolName: 'pay',
                output: { type: 'error-text', value: 'card declined' },
              },
            ],
          },
        ]),
      },
    });
    const trajectory = normalizeTrace(TRACE_ID, [root, turn1, turn2]);
    expect(trajectory?.calls[0]?.outcome).toEqual({ status: 'error', message: 'card declined' });
  });

  it('a tool span inside a turn whose requests were not recorded is issued by that turn', () => {
    const turn = spanRecord({ name: 'chat m', attributes: { 'gen_ai.operation.name': 'chat' }, end: 10 });
    const tool = toolSpan('lookup', { parentSpanId: turn.spanId, callId: 'x', start: 2, end: 3 });
    const trajectory = normalizeTrace(TRACE_ID, [turn, tool]);
    expect(trajectory?.calls[0]?.turnId).toBe(`turn:${turn.spanId}`);
    expect(trajectory?.turns[0]?.issued).toEqual(['x']);
  });
});

describe('consumption edges stay linear without losing order', () => {
  it('keeps a refund before the confirmation when reused call ids link a turn to a result from an earlier request', () => {
    const tools = ['get_order', 'issue_refund', 'send_confirmation'];
    // Every turn's history also holds one `call_0` result from the conversation's previous request.
    const spans = reusedIdConversation(tools, 1);
    const trajectory = normalizeTrace(TRACE_ID, spans);
    if (!trajectory) throw new Error('no trajectory');
    expect(orderedPairs(trajectory)).toEqual([
      'get_order->issue_refund',
      'get_order->send_confirmation',
      'issue_refund->send_confirmation',
    ]);
  });
});
