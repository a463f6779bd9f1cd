/**
 * A chat app's conversation as a real SDK provider records it: one trace per user message, each
 * an `invoke_agent` run of the demo agent carrying `gen_ai.conversation.id`. The order lookup
 * happens in one message's trace and the refund in another's.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { runAgent } from '../../src/demo/agent.js';
import { type CapturedConversation, captureConversations } from '../../src/demo/capture.js';
import { ScriptedModel, type ScriptStep } from '../../src/demo/mock-model.js';
import { supportTools } from '../../src/demo/tools.js';

const order = { orderId: 'O-17' };
const lookUp: ScriptStep = () => ({ toolCalls: [{ name: 'get_order', arguments: order }] });
const refund: ScriptStep = () => ({
  toolCalls: [{ name: 'issue_refund', arguments: { ...order, amount: 40 } }],
});
const answer =
  (text: string): ScriptStep =>
  () => ({ text });

const MESSAGES = {
  lookup: { userMessage: 'Where is my order O-17?', steps: [lookUp, answer('It was delivered on Monday.')] },
  refund: { userMessage: 'It is broken: refund it.', steps: [refund, answer('Refunded $40.')] },
};

/**
 * The two messages of one conversation, in this order, as OTLP JSON: `lookup-first` looks the
 * order up before refunding, `refund-first` refunds before any lookup. `conversationId`
 * null: the traces carry no id. One trace per message, each ended before the next starts.
 */
export function captureChat(
  order: 'lookup-first' | 'refund-first',
  conversationId: string | null = `chat-${order}`,
): Promise<CapturedConversation[]> {
  const names = order === 'lookup-first' ? (['lookup', 'refund'] as const) : (['refund', 'lookup'] as const);
  return captureConversations(
    names.map((name) => ({
      agent: 'support-agent',
      tools: supportTools,
      ...MESSAGES[name],
      ...(conversationId !== null && { conversationId }),
    })),
    'chat-app',
  );
}

/** A native conversation scenario: the lookup before the refund, both required. */
export const CHAT_SCENARIO = {
  id: 'chat.refund',
  scope: 'conversation',
  tools: { required: ['get_order', 'issue_refund'] },
  order: { before: [{ before: 'get_order', after: 'issue_refund' }] },
};

/** The same rules judged per trace (the default scope). */
export const PER_TRACE_SCENARIO = { ...CHAT_SCENARIO, id: 'chat.refund.per-trace', scope: undefined };

/** Seed 001's assertion JSON for the same conversation: it judges conversations as that document does. */
export const SEED_001_ASSERTIONS = {
  id: 'chat.refund.seed',
  expected_tool_sequence: [{ tool: 'get_order' }, { tool: 'issue_refund' }],
  expected_tool_calls: ['get_order', 'issue_refund'],
};

/**
 * The same messages' spans as an app's exporter gets them (one list per trace), recorded by a
 * real SDK provider, for sending with the real OTLP exporters.
 */
export function recordChat(
  order: 'lookup-first' | 'refund-first',
  conversationId = `chat-${order}`,
): Promise<ReadableSpan[][]> {
  return recordMessages(
    order === 'lookup-first' ? ['lookup', 'refund'] : ['refund', 'lookup'],
    conversationId,
  );
}

/** One trace per message, in this order, of conversation `conversationId`, recorded by a real SDK provider. */
export async function recordMessages(
  names: readonly (keyof typeof MESSAGES)[],
  conversationId: string,
): Promise<ReadableSpan[][]> {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  try {
    const tracer = provider.getTracer('chat-app');
    const traces: ReadableSpan[][] = [];
    for (const name of names) {
      exporter.reset();
      const { userMessage, steps } = MESSAGES[name];
      await runAgent(
        tracer,
        'support-agent',
        new ScriptedModel(steps),
        supportTools(),
        userMessage,
        conversationId,
      );
      traces.push([...exporter.getFinishedSpans()]);
      // The next message comes later: its trace starts after this one ended, on any clock.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return traces;
  } finally {
    await provider.shutdown();
    context.disable();
  }
}
