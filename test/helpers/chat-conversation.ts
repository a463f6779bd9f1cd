/**
 * A chat app's conversation as a real SDK provider records it: one trace per user message, each
 * an `invoke_agent` run of the demo agent carrying `gen_ai.conversation.id`. The order lookup
 * happens in one message's trace and the refund in another's.
 */
import { type CapturedConversation, captureConversations } from '../../src/demo/capture.js';
import type { ScriptStep } from '../../src/demo/mock-model.js';
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
