import { describe, expect, it, vi } from 'vitest';
import type { SpanRecord } from '../../src/model/span-record.js';
import { newTextRef, noteText } from '../../src/model/text-extensions.js';
import { normalizeSpans, normalizeTrace } from '../../src/normalizers/normalize.js';
import { otelGenAi } from '../../src/normalizers/otel-genai.js';
import { spanOutcome } from '../../src/normalizers/span-outcome.js';
import { spanRecord, TRACE_ID, toolSpan } from '../helpers/spans.js';

describe('OTel GenAI execute_tool spans', () => {
  it('reads tool name, call id, parsed arguments and result, and the agent from an ancestor', () => {
    const agent = spanRecord({
      name: 'invoke_agent support',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
      end: 100,
    });
    const call = toolSpan('get_order', {
      parentSpanId: agent.spanId,
      callId: ' call_1 ',
      args: { orderId: 'O-17' },
      result: { amount: 40 },
      start: 5,
      end: 9,
    });
    const trajectory = normalizeTrace(TRACE_ID, [agent, call]);
    expect(trajectory?.calls).toHaveLength(1);
    const [read] = trajectory?.calls ?? [];
    expect(read).toMatchObject({
      id: 'call_1',
      callId: 'call_1',
      tool: 'get_order',
      args: { captured: true, value: { orderId: 'O-17' } },
      result: { captured: true, value: { amount: 40 } },
      outcome: { status: 'ok' },
      agentName: 'support',
      spanId: call.spanId,
      parentSpanId: agent.spanId,
      convention: 'otel-genai',
    });
    expect(trajectory?.root).toMatchObject({
      name: 'invoke_agent support',
      agentName: 'support',
      spanId: agent.spanId,
    });
  });

  it('takes the tool name from the span name when only the name says execute_tool', () => {
    const span = spanRecord({ name: 'execute_tool lookup', attributes: { 'gen_ai.tool.name': 'lookup' } });
    expect(normalizeTrace(TRACE_ID, [span])?.calls[0]?.tool).toBe('lookup');
  });

  it('marks arguments and results that were not recorded as not captured, never as empty', () => {
    const trajectory = normalizeTrace(TRACE_ID, [toolSpan('get_order', { callId: 'c1' })]);
    expect(trajectory?.calls[0]?.args).toEqual({ captured: false });
    expect(trajectory?.calls[0]?.result).toEqual({ captured: false });
  });

  it('keeps malformed JSON arguments as the raw string and reports them', () => {
    const span = toolSpan('get_order', { callId: 'c1', args: '{"orderId": "O-1' });
    const trajectory = normalizeTrace(TRACE_ID, [span]);
    const args = trajectory?.calls[0]?.args;
    expect(args?.captured && args.value).toBe('{"orderId": "O-1');
    expect(args?.captured && args.parseError).toMatch(/JSON/);
    expect(trajectory?.issues.map((issue) => issue.kind)).toEqual(['arguments.unparsable']);
    expect(trajectory?.issues[0]?.spanIds).toEqual([span.spanId]);
  });

  it('keeps a __proto__ key of structured (kvlist) arguments as an own key', () => {
    const args = {};
    Object.defineProperty(args, '__proto__', {
      value: { tenant: 'B' },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    Object.assign(args, { tenant: 'A' });
    const span = toolSpan('lookup', { extra: { 'gen_ai.tool.call.arguments': args } });
    const value = normalizeTrace(TRACE_ID, [span])?.calls[0]?.args;
    if (!value?.captured || value.value === null || typeof value.value !== 'object')
      throw new Error('no args');
    expect(Object.keys(value.value)).toEqual(['__proto__', 'tenant']);
    expect(Object.getPrototypeOf(value.value)).toBe(Object.prototype);
  });

  it('accepts structured (non-string) argument attributes', () => {
    const span = toolSpan('search', { extra: { 'gen_ai.tool.call.arguments': ['a', 'b'] } });
    expect(normalizeTrace(TRACE_ID, [span])?.calls[0]?.args).toEqual({ captured: true, value: ['a', 'b'] });
  });

  it('returns no trajectory for a trace no agent convention claims', () => {
    const http = spanRecord({
      name: 'GET /health',
      kind: 'server',
      attributes: { 'http.request.method': 'GET' },
    });
    expect(normalizeTrace(TRACE_ID, [http])).toBeUndefined();
    expect(normalizeSpans([http])).toEqual([]);
  });
});

describe('tool outcomes', () => {
  it('status ERROR is an error even without error.type', () => {
    expect(spanOutcome(toolSpan('t', { status: { code: 'error', message: 'gateway timeout' } }))).toEqual({
      status: 'error',
      message: 'gateway timeout',
    });
  });

  it('an exception event on an unset status is an error, typed from the exception', () => {
    const span = toolSpan('t', {
      events: [
        {
          name: 'exception',
          timeUnixNano: 1n,
          attributes: { 'exception.type': 'TimeoutError', 'exception.message': 'slow' },
        },
      ],
    });
    expect(spanOutcome(span)).toEqual({ status: 'error', errorType: 'TimeoutError', message: 'slow' });
  });

  it('error.type makes an error', () => {
    expect(spanOutcome(toolSpan('t', { extra: { 'error.type': 'tool_error' } }))).toEqual({
      status: 'error',
      errorType: 'tool_error',
    });
  });

  it('an explicit OK wins over a handled exception', () => {
    const span = toolSpan('t', {
      status: { code: 'ok' },
      events: [{ name: 'exception', timeUnixNano: 1n, attributes: {} }],
    });
    expect(spanOutcome(span)).toEqual({ status: 'ok' });
  });

  it('a span that never ended has no result and orders nothing after it', () => {
    const open = toolSpan('slow', { callId: 'a', start: 0, end: null });
    const later = toolSpan('next', { callId: 'b', start: 50, end: 60 });
    const trajectory = normalizeTrace(TRACE_ID, [open, later]);
    const [a, b] = trajectory?.calls ?? [];
    expect(a?.outcome).toEqual({ status: 'no_result' });
    expect(a && b && trajectory?.happensBefore(a, b)).toBe(false);
    expect(a && b && trajectory?.concurrent(a, b)).toBe(true);
  });
});

describe('order without turns', () => {
  it('a call started after another ended happens after it; overlapping calls are concurrent', () => {
    const spans = [
      toolSpan('c', { callId: 'c', start: 20, end: 30 }),
      toolSpan('a', { callId: 'a', start: 0, end: 10 }),
      toolSpan('b', { callId: 'b', start: 5, end: 15 }),
    ];
    const trajectory = normalizeTrace(TRACE_ID, spans);
    expect(trajectory?.calls.map((call) => call.id)).toEqual(['a', 'b', 'c']);
    const byId = (id: string) => {
      const call = trajectory?.call(id);
      if (!call) throw new Error(`no call ${id}`);
      return call;
    };
    expect(trajectory?.concurrent(byId('a'), byId('b'))).toBe(true);
    expect(trajectory?.happensBefore(byId('a'), byId('c'))).toBe(true);
    expect(trajectory?.happensBefore(byId('b'), byId('c'))).toBe(true);
    expect(trajectory?.happensBefore(byId('c'), byId('a'))).toBe(false);
  });
});

describe('robustness', () => {
  it('duplicate call ids are told apart by span id and reported', () => {
    const first = toolSpan('t', { callId: 'same', start: 0, end: 1 });
    const second = toolSpan('t', { callId: 'same', start: 2, end: 3 });
    const trajectory = normalizeTrace(TRACE_ID, [first, second]);
    expect(trajectory?.calls.map((call) => call.id)).toEqual([
      `span:${first.spanId}`,
      `span:${second.spanId}`,
    ]);
    expect(trajectory?.issues.find((issue) => issue.kind === 'call.duplicate_id')?.spanIds).toEqual([
      first.spanId,
      second.spanId,
    ]);
  });

  it('a duplicate span id keeps the first span and reports the second', () => {
    const first = toolSpan('t', { callId: 'x' });
    const copy = { ...toolSpan('u', { callId: 'y' }), spanId: first.spanId };
    const trajectory = normalizeTrace(TRACE_ID, [first, copy]);
    expect(trajectory?.calls.map((call) => call.tool)).toEqual(['t']);
    expect(trajectory?.issues.map((issue) => issue.kind)).toContain('span.duplicate_id');
  });

  it('a cycle in parent ids neither hangs nor loses the calls', () => {
    const a = spanRecord({
      name: 'a',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'x' },
    });
    const b = toolSpan('t', { callId: 'c1', parentSpanId: a.spanId });
    a.parentSpanId = b.spanId;
    const trajectory = normalizeTrace(TRACE_ID, [a, b]);
    expect(trajectory?.calls.map((call) => call.id)).toEqual(['c1']);
    expect(trajectory?.calls[0]?.agentName).toBe('x');
    expect(trajectory?.root).toBeDefined();
  });

  it('a tool span whose parent never arrived is still a call, and the earliest orphan is the root', () => {
    const orphan = toolSpan('t', { callId: 'c1', parentSpanId: 'ffffffffffffffff', start: 3 });
    const trajectory = normalizeTrace(TRACE_ID, [orphan]);
    expect(trajectory?.calls).toHaveLength(1);
    expect(trajectory?.root?.spanId).toBe(orphan.spanId);
  });

  it('10,000 tool spans normalize in causal order', () => {
    const spans = Array.from({ length: 10_000 }, (_, i) =>
      toolSpan(`t${i % 7}`, { callId: `c${i}`, start: i * 2, end: i * 2 + 1 }),
    );
    const trajectory = normalizeTrace(TRACE_ID, spans.reverse());
    expect(trajectory?.calls).toHaveLength(10_000);
    expect(trajectory?.calls[0]?.id).toBe('c0');
    expect(trajectory?.calls[9_999]?.id).toBe('c9999');
  });
});

describe('turn histories', () => {
  const INPUT = 'gen_ai.input.messages';
  const chat = (input: unknown, output: unknown, pretty = false) =>
    spanRecord({
      name: 'chat',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': pretty ? JSON.stringify(input, null, 1) : JSON.stringify(input),
        'gen_ai.output.messages': JSON.stringify(output),
      },
    });
  const user = { role: 'user', parts: [{ type: 'text', content: 'Refund order A-1, it arrived broken.' }] };
  const asked = (id: string) => ({
    role: 'assistant',
    parts: [
      { type: 'tool_call', id, name: 'get_order', arguments: { orderId: 'A-1', note: 'x'.repeat(300) } },
    ],
  });
  const answered = (id: string) => ({
    role: 'tool',
    parts: [{ type: 'tool_call_response', id, response: { amount: 40 } }],
  });

  it('a history holding the previous turn and its reply reads as it does alone', () => {
    const first = chat([user], [asked('h1')]);
    const history = [user, asked('h1'), answered('h1')];
    const next = chat(history, [asked('h2')]);
    // Pretty-printed, the same history shares no text with what was read before: parsed whole.
    const alone = chat(history, [asked('h2')], true);
    const turn = (span: SpanRecord) => {
      const reading = otelGenAi.read(span);
      return reading?.kind === 'turn' ? reading.turn : undefined;
    };
    turn(first);
    expect(turn(next)).toEqual(turn(alone));
    expect(turn(next)).toMatchObject({ historyLength: 3, shown: [{ callId: 'h1' }] });
  });

  it('a reply recorded with its finish_reason is not parsed again from the next history, which leaves it out', () => {
    const turn = (span: SpanRecord) => {
      const reading = otelGenAi.read(span);
      return reading?.kind === 'turn' ? reading.turn : undefined;
    };
    // OTel GenAI output messages carry finish_reason; input messages do not.
    const first = chat([user], [{ ...asked('h3'), finish_reason: 'tool_calls' }]);
    const history = [user, asked('h3'), answered('h3')];
    const next = chat(history, [asked('h4')]);
    const alone = chat(history, [asked('h4')], true);
    turn(first);
    const parse = vi.spyOn(JSON, 'parse');
    const read = turn(next);
    const parsed = parse.mock.calls.map(([text]) => String(text));
    parse.mockRestore();
    expect(parsed.some((text) => text.includes('"id":"h3","name"'))).toBe(false);
    expect(parsed.some((text) => text.includes('"tool_call_response","id":"h3"'))).toBe(true);
    expect(read).toEqual(turn(alone));
    expect(read).toMatchObject({ historyLength: 3, shown: [{ callId: 'h3' }] });
  });

  it('reads a history noted to extend one read before from what was added alone, never the text', () => {
    const turn = (span: SpanRecord) => {
      const reading = otelGenAi.read(span);
      return reading?.kind === 'turn' ? reading.turn : undefined;
    };
    const earlier = [user, asked('h5'), answered('h5')];
    const first = chat(earlier, [asked('h6')]);
    const ref = newTextRef();
    noteText(first.attributes, INPUT, first.attributes[INPUT] as string, { ref });
    turn(first);
    // Another conversation's history, read since: the note names which one is extended.
    const other = chat([user, asked('o1'), answered('o1'), asked('o2')], [asked('o3')]);
    noteText(other.attributes, INPUT, other.attributes[INPUT] as string, { ref: newTextRef() });
    turn(other);
    const added = `,${JSON.stringify(asked('h6'))},${JSON.stringify(answered('h6'))}]`;
    const noted = chat(earlier, [asked('h7')]);
    // A text no reader could use: only the note can give the reading.
    const unreadable = 'x'.repeat(2_000);
    noted.attributes[INPUT] = unreadable;
    noteText(noted.attributes, INPUT, unreadable, { ref: newTextRef(), extension: { earlier: ref, added } });
    const alone = chat([...earlier, asked('h6'), answered('h6')], [asked('h7')], true);
    const parse = vi.spyOn(JSON, 'parse');
    const read = turn(noted);
    const parsed = parse.mock.calls.map(([text]) => String(text));
    parse.mockRestore();
    // The reply, remembered with the history it answered, is not parsed again: only the result after it.
    expect(parsed.filter((text) => text.includes('"id":"h6"'))).toEqual([
      `[${JSON.stringify(answered('h6'))}]`,
    ]);
    expect(read).toEqual(turn(alone));
    expect(read).toMatchObject({ historyLength: 5, shown: [{ callId: 'h5' }, { callId: 'h6' }] });
  });

  it('does not extend an empty history: `[]` then `[,x]` is not JSON', () => {
    const turn = (span: SpanRecord) => {
      const reading = otelGenAi.read(span);
      return reading?.kind === 'turn' ? reading.turn : undefined;
    };
    const empty = `[${' '.repeat(1_100)}]`;
    const first = chat([], [asked('h8')]);
    first.attributes[INPUT] = empty;
    turn(first);
    const next = chat([], [asked('h9')]);
    next.attributes[INPUT] = `${empty.slice(0, -1)},${JSON.stringify(user)}]`;
    expect(turn(next)?.historyLength).toBe(0);
  });

  it('reads structured (non-string) messages without remembering them', () => {
    const span = spanRecord({
      name: 'chat',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': [{ role: 'user', parts: [] }],
        'gen_ai.output.messages': [{ role: 'assistant', parts: [] }],
      },
    });
    const reading = otelGenAi.read(span);
    expect(reading?.kind === 'turn' && reading.turn.historyLength).toBe(1);
  });
});
