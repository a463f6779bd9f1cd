/**
 * One model generation recorded by several conventions at once (a framework's model-call span
 * with an instrumentation's provider span inside it) is one turn, as one call seen twice is one
 * call. The real cases are in realworld-corpus.test.ts (Google ADK with OpenLLMetry, pydantic-ai
 * MCP sampling); these are the edges.
 */
import { describe, expect, it } from 'vitest';
import type { Attributes } from '../../src/model/span-record.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { spanRecord, TRACE_ID, toolSpan } from '../helpers/spans.js';

const agent = () =>
  spanRecord({
    name: 'invoke_agent support',
    attributes: { 'gen_ai.operation.name': 'invoke_agent' },
    end: 100,
  });

/** An OpenLLMetry legacy chat span asking for these calls. */
function legacyChat(calls: { id?: string; name: string; arguments: string }[]): Attributes {
  const attributes: Attributes = { 'llm.request.type': 'chat', 'gen_ai.request.model': 'gpt-4.1-mini' };
  calls.forEach((call, m) => {
    if (call.id) attributes[`gen_ai.completion.0.tool_calls.${m}.id`] = call.id;
    attributes[`gen_ai.completion.0.tool_calls.${m}.name`] = call.name;
    attributes[`gen_ai.completion.0.tool_calls.${m}.arguments`] = call.arguments;
  });
  return attributes;
}

function genAiChat(parts: unknown[] | undefined): Attributes {
  return {
    'gen_ai.operation.name': 'chat',
    ...(parts && { 'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts }]) }),
  };
}

describe('one generation, one turn', () => {
  it('reads a turn span inside a turn span as the outer turn, with the requests only the inner one recorded', () => {
    const root = agent();
    const outer = spanRecord({
      name: 'chat',
      parentSpanId: root.spanId,
      attributes: genAiChat(undefined),
      start: 1,
      end: 9,
    });
    const http = spanRecord({ name: 'POST', parentSpanId: outer.spanId, start: 2, end: 7 });
    const inner = spanRecord({
      name: 'openai.chat',
      parentSpanId: http.spanId,
      attributes: legacyChat([{ id: 'call_1', name: 'get_order', arguments: '{"id":"A-1"}' }]),
      start: 2,
      end: 6,
    });
    const tool = toolSpan('get_order', {
      parentSpanId: root.spanId,
      callId: 'call_1',
      result: { ok: true },
      start: 10,
      end: 11,
    });
    const trajectory = normalizeTrace(TRACE_ID, [root, outer, http, inner, tool]);
    expect(trajectory?.turns.map((turn) => [turn.id, turn.issued, turn.model])).toEqual([
      [`turn:${outer.spanId}`, ['call_1'], 'gpt-4.1-mini'],
    ]);
    expect(trajectory?.calls.map((call) => [call.id, call.turnId, call.args])).toEqual([
      ['call_1', `turn:${outer.spanId}`, { captured: true, value: { id: 'A-1' } }],
    ]);
  });

  it('takes the answer from the inner span when only it recorded the text, and keeps the outer one otherwise', () => {
    const root = agent();
    const outer = spanRecord({
      name: 'chat',
      parentSpanId: root.spanId,
      attributes: genAiChat(undefined),
      start: 1,
      end: 9,
    });
    const inner = spanRecord({
      name: 'openai.chat',
      parentSpanId: outer.spanId,
      attributes: { ...legacyChat([]), 'gen_ai.completion.0.content': 'A-1 shipped.' },
      start: 2,
      end: 6,
    });
    expect(normalizeTrace(TRACE_ID, [root, outer, inner])?.turns.map((turn) => turn.answer)).toEqual([
      'A-1 shipped.',
    ]);
    const written = { ...outer, attributes: genAiChat([{ type: 'text', content: 'Your order shipped.' }]) };
    expect(normalizeTrace(TRACE_ID, [root, written, inner])?.turns.map((turn) => turn.answer)).toEqual([
      'Your order shipped.',
    ]);
  });

  it("fills the outer turn's requests with the ids the inner one recorded, call for call", () => {
    const root = agent();
    const outer = spanRecord({
      name: 'chat',
      parentSpanId: root.spanId,
      attributes: genAiChat([
        { type: 'tool_call', name: 'get_order', arguments: { id: 'A-1' } },
        { type: 'tool_call', name: 'get_policy' },
      ]),
      start: 1,
      end: 9,
    });
    const inner = spanRecord({
      name: 'openai.chat',
      parentSpanId: outer.spanId,
      attributes: legacyChat([
        { id: 'call_1', name: 'get_order', arguments: '{"id":"A-2"}' },
        { id: 'call_2', name: 'get_policy', arguments: '{"region":"EU"}' },
      ]),
      start: 2,
      end: 8,
    });
    const trajectory = normalizeTrace(TRACE_ID, [root, outer, inner]);
    expect(trajectory?.turns).toHaveLength(1);
    // The framework's own arguments are kept where it recorded them; the inner span fills the rest.
    expect(trajectory?.calls.map((call) => [call.id, call.tool, call.args])).toEqual([
      ['call_1', 'get_order', { captured: true, value: { id: 'A-1' } }],
      ['call_2', 'get_policy', { captured: true, value: { region: 'EU' } }],
    ]);
  });

  it('keeps a model called inside a tool as a turn of its own', () => {
    const root = agent();
    const ask = { type: 'tool_call', id: 'call_1', name: 'summarize', arguments: {} };
    const turn = spanRecord({
      name: 'chat',
      parentSpanId: root.spanId,
      attributes: genAiChat([ask]),
      start: 1,
      end: 9,
    });
    const tool = toolSpan('summarize', { parentSpanId: turn.spanId, callId: 'call_1', start: 2, end: 8 });
    const nested = spanRecord({
      name: 'chat',
      parentSpanId: tool.spanId,
      attributes: genAiChat([]),
      start: 3,
      end: 7,
    });
    const trajectory = normalizeTrace(TRACE_ID, [root, turn, tool, nested]);
    expect(trajectory?.turns.map((read) => read.id).sort()).toEqual(
      [`turn:${turn.spanId}`, `turn:${nested.spanId}`].sort(),
    );
    expect(trajectory?.calls.map((call) => call.turnId)).toEqual([`turn:${turn.spanId}`]);
  });

  it('does not take ids from an inner turn that asked for other tools, and says the readings disagree', () => {
    const root = agent();
    const outer = spanRecord({
      name: 'chat',
      parentSpanId: root.spanId,
      attributes: genAiChat([{ type: 'tool_call', name: 'get_order', arguments: {} }]),
      start: 1,
      end: 9,
    });
    const inner = spanRecord({
      name: 'openai.chat',
      parentSpanId: outer.spanId,
      attributes: legacyChat([{ id: 'call_9', name: 'delete_account', arguments: '{}' }]),
      start: 2,
      end: 8,
    });
    const trajectory = normalizeTrace(TRACE_ID, [root, outer, inner]);
    expect(trajectory?.calls.map((call) => [call.tool, call.callId])).toEqual([['get_order', undefined]]);
    const unread = trajectory?.issues.find((issue) => issue.kind === 'unread_tool_activity');
    expect(unread?.spanIds).toEqual([outer.spanId]);
    expect(unread?.message).toContain(
      `span ${inner.spanId} records the same generation asking for delete_account`,
    );
  });
});
