import { captureConversations as captureRuns } from '../../src/demo/capture.js';
import type { DemoConversation } from '../../src/demo/conversations.js';
import type { ScriptStep } from '../../src/demo/mock-model.js';
import type { DemoTool } from '../../src/demo/tools.js';
import type { JsonValue } from '../../src/model/json.js';

/** One conversation: which agent, with which tools, and the model's script. */
export interface WorkedConversation {
  /** Also the fixture's name: `test/spans/demo-agent-<name>.otlp.json`. */
  name: string;
  description: string;
  agent: string;
  userMessage: string;
  /** Fresh tools per run, so every capture starts from the same state. */
  tools: () => Record<string, DemoTool>;
  steps: ScriptStep[];
}

/** One captured conversation, as the OTLP JSON an exporter sends. */
export interface CapturedTrace {
  name: string;
  traceId: string;
  otlpJson: string;
}

const field = (value: JsonValue | undefined, key: string): JsonValue =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value[key] ?? null) : null;
const call = (name: string, args: { [key: string]: JsonValue }) => ({ name, arguments: args });
const answer =
  (text: string): ScriptStep =>
  () => ({ text });

/** A tool answering from a fixed function of its arguments (`arg(name)`, null when absent), after real asynchronous work. */
function tool(respond: (arg: (name: string) => JsonValue) => { [key: string]: JsonValue }): DemoTool {
  return async (args) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return respond((name) => args[name] ?? null);
  };
}

function refundTools(): Record<string, DemoTool> {
  return {
    lookup_account: tool((arg) => ({ customer_id: arg('customer_id'), orders: ['ord_42'] })),
    check_refund_eligibility: tool((arg) => ({
      order_id: arg('order_id'),
      eligible: true,
      amount_cents: 5000,
    })),
    issue_refund: tool((arg) => ({
      refund_id: 're_1',
      order_id: arg('order_id'),
      amount_cents: arg('amount_cents'),
    })),
  };
}

function supportTools(): Record<string, DemoTool> {
  return {
    lookup_account: tool((arg) => ({ customer_id: arg('customer_id'), plan: 'pro', device_id: 'dev_9' })),
    run_diagnostics: tool((arg) => ({ device_id: arg('device_id'), status: 'degraded', code: 'E42' })),
    kb_query: tool((arg) => ({ q: arg('q'), articles: ['kb_17: resetting the modem'] })),
    create_ticket: tool((arg) => ({ ticket_id: 'T-100', summary: arg('summary') })),
    transfer_to_human: tool((arg) => ({ queued: true, reason: arg('reason') })),
  };
}

function handoffTools(): Record<string, DemoTool> {
  return {
    identify_customer: tool((arg) => ({ phone: arg('phone'), customer_id: 'cus_1' })),
    fetch_case_context: tool((arg) => ({
      customer_id: arg('customer_id'),
      case_id: 'case_8',
      topic: 'billing',
    })),
    transfer_to_agent: tool((arg) => ({ transferred: true, agent: arg('agent') })),
  };
}

const REFUND = { agent: 'refund-agent', userMessage: 'Please refund my order ord_42.', tools: refundTools };
const SUPPORT = {
  agent: 'tech-support-agent',
  userMessage: 'My internet keeps dropping.',
  tools: supportTools,
};
const HANDOFF = {
  agent: 'handoff-agent',
  userMessage: 'I need to talk to billing.',
  tools: handoffTools,
};

/** Refund agent: identical up to the amount it refunds. */
function refundConversation(
  name: string,
  description: string,
  amount: (seen: ScriptSeen) => JsonValue,
): WorkedConversation {
  return {
    ...REFUND,
    name,
    description,
    steps: [
      () => ({ toolCalls: [call('lookup_account', { customer_id: 'cus_1' })] }),
      () => ({ toolCalls: [call('check_refund_eligibility', { order_id: 'ord_42' })] }),
      (seen) => ({
        toolCalls: [call('issue_refund', { order_id: 'ord_42', amount_cents: amount(seen) })],
      }),
      answer('Your refund is on its way.'),
    ],
  };
}
type ScriptSeen = Parameters<ScriptStep>[0];

/** The worked-eval conversations, two or three per agent. */
export const WORKED_CONVERSATIONS: WorkedConversation[] = [
  refundConversation('refund-right-amount', 'refunds ord_42 the 5000 cents eligibility returned', (seen) =>
    field(seen.get('check_refund_eligibility'), 'amount_cents'),
  ),
  refundConversation('refund-wrong-amount', 'refunds ord_42 4000 cents instead of 5000', () => 4000),
  {
    ...SUPPORT,
    name: 'support-diagnoses-first',
    description: 'looks up the account, runs diagnostics and queries the KB in parallel, opens a ticket',
    steps: [
      () => ({ toolCalls: [call('lookup_account', { customer_id: 'cus_1' })] }),
      (seen) => ({
        toolCalls: [
          call('run_diagnostics', { device_id: field(seen.get('lookup_account'), 'device_id') }),
          call('kb_query', { q: 'connection drops' }),
        ],
      }),
      (seen) => ({
        toolCalls: [
          call('create_ticket', { summary: `diagnostics ${field(seen.get('run_diagnostics'), 'code')}` }),
        ],
      }),
      answer('I opened ticket T-100 and sent you the reset steps.'),
    ],
  },
  {
    ...SUPPORT,
    name: 'support-escalates-early',
    description: 'transfers to a human before running any diagnostics',
    steps: [
      () => ({ toolCalls: [call('lookup_account', { customer_id: 'cus_1' })] }),
      () => ({ toolCalls: [call('transfer_to_human', { reason: 'customer unhappy' })] }),
      answer('A colleague will take over.'),
    ],
  },
  {
    ...HANDOFF,
    name: 'handoff-in-order',
    description: 'identifies the customer, fetches the case context, then transfers',
    steps: [
      () => ({ toolCalls: [call('identify_customer', { phone: '+15550100' })] }),
      (seen) => ({
        toolCalls: [
          call('fetch_case_context', { customer_id: field(seen.get('identify_customer'), 'customer_id') }),
        ],
      }),
      (seen) => ({
        toolCalls: [
          call('transfer_to_agent', {
            agent: 'billing',
            case_id: field(seen.get('fetch_case_context'), 'case_id'),
          }),
        ],
      }),
      answer('Transferring you to billing.'),
    ],
  },
  {
    ...HANDOFF,
    name: 'handoff-transfers-before-context',
    description: 'transfers first and fetches the case context only afterwards',
    steps: [
      () => ({ toolCalls: [call('identify_customer', { phone: '+15550100' })] }),
      () => ({ toolCalls: [call('transfer_to_agent', { agent: 'billing' })] }),
      (seen) => ({
        toolCalls: [
          call('fetch_case_context', { customer_id: field(seen.get('identify_customer'), 'customer_id') }),
        ],
      }),
      answer('Transferring you to billing.'),
    ],
  },
  {
    ...HANDOFF,
    name: 'handoff-transfers-alongside-context',
    description: 'asks for the case context and the transfer in the same turn: the transfer cannot use it',
    steps: [
      () => ({ toolCalls: [call('identify_customer', { phone: '+15550100' })] }),
      (seen) => ({
        toolCalls: [
          call('fetch_case_context', { customer_id: field(seen.get('identify_customer'), 'customer_id') }),
          call('transfer_to_agent', { agent: 'billing' }),
        ],
      }),
      answer('Transferring you to billing.'),
    ],
  },
];

const order = { orderId: 'O-17' };
/** The demo's good refund, with `change` applied to the refund and confirmation steps. */
function demoRefund(
  name: string,
  description: string,
  change: {
    before?: ScriptStep[];
    refundArgs?: { [key: string]: JsonValue };
    email?: string;
    after?: ScriptStep[];
  } = {},
): DemoConversation {
  return {
    name,
    description,
    steps: [
      ...(change.before ?? []),
      () => ({ toolCalls: [call('get_order', order), call('get_refund_policy', order)] }),
      (seen) => ({
        toolCalls: [
          call('issue_refund', {
            ...order,
            amount: field(seen.get('get_order'), 'amount'),
            ...change.refundArgs,
          }),
        ],
      }),
      (seen) => ({
        toolCalls: [
          call('send_confirmation', {
            email: change.email ?? field(seen.get('get_order'), 'email'),
            refundId: field(seen.get('issue_refund'), 'refundId'),
          }),
        ],
      }),
      ...(change.after ?? []),
      answer('Your refund of $40 is on its way.'),
    ],
  };
}

/**
 * Variations of the demo's refund (src/demo: same tools, same agent) for seed 000's tutorial
 * scenario, one per check its `Scenario` object drives beyond the demo's own three traces.
 */
export const SEED_000_CONVERSATIONS: DemoConversation[] = [
  demoRefund(
    'repeated-lookup',
    'looks the order up a second time, same arguments: 5 calls for a budget of 4',
    {
      before: [() => ({ toolCalls: [call('get_order', order)] })],
    },
  ),
  demoRefund('wrong-order-id', 'refunds order O-71 instead of O-17', { refundArgs: { orderId: 'O-71' } }),
  demoRefund('wrong-email', 'sends the confirmation to another address', { email: 'sam@example.com' }),
  demoRefund('call-after-terminal', 'looks the order up again after the confirmation', {
    after: [() => ({ toolCalls: [call('get_order', order)] })],
  }),
];

/** Runs each conversation under a real SDK provider; each becomes one trace, in OTLP JSON. */
export async function captureConversations(
  conversations: readonly WorkedConversation[] = WORKED_CONVERSATIONS,
): Promise<CapturedTrace[]> {
  const captured = await captureRuns(conversations, 'toolpath-worked-evals');
  return captured.map(({ conversation, traceId, otlpJson }) => ({
    name: conversation.name,
    traceId,
    otlpJson,
  }));
}
