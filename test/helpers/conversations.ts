/**
 * Long chat conversations recorded by a real provider as OTel GenAI spans, for the tests of
 * histories that extend the previous turn's (decoders, span pack, history reader).
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';
import type { SpanRecord } from '../../src/model/span-record.js';
import { extensionOf, noteOf, type TextExtension, type TextRef } from '../../src/model/text-extensions.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';

export const INPUT_MESSAGES = 'gen_ai.input.messages';

/**
 * Conversations recorded by a real provider as GenAI spans, interleaved as a server runs them:
 * an `invoke_agent` root per conversation, chat turns whose input holds the whole conversation
 * so far (over 1 KiB from the first turn), and `execute_tool` spans with arguments and results.
 */
export function recordConversations(count: number, turns: number): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'agent' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('agent-sdk');
  const conversations = Array.from({ length: count }, (_, c) => {
    const root = tracer.startSpan('invoke_agent support', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
    });
    const system = `You’re a support agent. ${'Be brief. '.repeat(110)}`;
    const messages: object[] = [
      { role: 'system', parts: [{ type: 'text', content: system }] },
      { role: 'user', parts: [{ type: 'text', content: `Refund order A-${c}: it arrived broken ☹.` }] },
    ];
    return { root, inRoot: trace.setSpan(context.active(), root), messages };
  });
  for (let turn = 0; turn < turns; turn++) {
    for (const [c, { inRoot, messages }] of conversations.entries()) {
      const id = `call_${c}_${turn}`;
      const ask = { type: 'tool_call', id, name: 'get_order', arguments: { orderId: `A-${c}` } };
      const chat = tracer.startSpan('chat gpt-4o', { kind: SpanKind.CLIENT }, inRoot);
      chat.setAttributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': JSON.stringify(messages),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [ask], finish_reason: 'tool_calls' },
        ]),
      });
      chat.end();
      const result = { orderId: `A-${c}`, amount: 40 + turn, note: 'ü ☃ 🙂 '.repeat(30) };
      const tool = tracer.startSpan('execute_tool get_order', {}, inRoot);
      tool.setAttributes({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_order',
        'gen_ai.tool.call.id': id,
        'gen_ai.tool.call.arguments': JSON.stringify(ask.arguments),
        'gen_ai.tool.call.result': JSON.stringify(result),
      });
      tool.end();
      messages.push({ role: 'assistant', parts: [ask] });
      messages.push({ role: 'tool', parts: [{ type: 'tool_call_response', id, response: result }] });
    }
  }
  for (const { root } of conversations) root.end();
  return exporter.getFinishedSpans();
}

/** Each trace of `records` normalized, in order of first appearance. */
export function normalizeEach(records: readonly SpanRecord[]): (Trajectory | undefined)[] {
  const traces = new Map<string, SpanRecord[]>();
  for (const record of records) traces.set(record.traceId, [...(traces.get(record.traceId) ?? []), record]);
  return [...traces].map(([traceId, members]) => normalizeTrace(traceId, members));
}

/** The text each noted {@link TextRef} stands for, over the records' attribute values. */
export function notedTexts(records: readonly SpanRecord[]): Map<TextRef, string> {
  const texts = new Map<TextRef, string>();
  for (const { attributes } of records)
    for (const key of Object.keys(attributes)) {
      const note = noteOf(attributes, key);
      if (note !== undefined) texts.set(note.ref, attributes[key] as string);
    }
  return texts;
}

/**
 * Checks that exactly the later turns of `conversations` conversations of `turns` turns are noted
 * as extending an earlier history of the records, truly and by less than it holds.
 */
export function expectLaterTurnsNoted(
  records: readonly SpanRecord[],
  conversations: number,
  turns: number,
): void {
  const noted = records.filter((record) => extensionOf(record.attributes, INPUT_MESSAGES) !== undefined);
  expect(noted).toHaveLength(conversations * (turns - 1));
  const texts = notedTexts(records);
  for (const record of noted) {
    const { earlier, added } = extensionOf(record.attributes, INPUT_MESSAGES) as TextExtension;
    const earlierText = texts.get(earlier) as string;
    expect(earlierText.slice(0, -1) + added).toBe(record.attributes[INPUT_MESSAGES]);
    expect(added.length).toBeLessThan(earlierText.length);
  }
}
