/**
 * A recorded run of the demo's refund agent: ten conversations for the same request ("Please
 * refund order O-17."), as repeated runs of a stochastic agent would give, four of them wrong
 * in a way seed 001's assertions see. Recorded into test/spans/refund-run/ by
 * test/spans/capture/demo-agent/capture.ts; `captureRefundRun` records it afresh.
 */
import { readdir, readFile } from 'node:fs/promises';
import { captureConversations } from '../../src/demo/capture.js';
import { DEMO_CONVERSATIONS, DEMO_STEPS, type DemoConversation } from '../../src/demo/conversations.js';
import { type DemoTool, supportTools } from '../../src/demo/tools.js';
import { SEED_000_CONVERSATIONS } from './worked-evals.js';

/** The resource attribute every trace of the run carries: the task the agent was given. */
export const REFUND_TASK = { 'task.id': 'refund-O-17' };

const { lookUpBoth, refundTheOrderAmount: refund, answer } = DEMO_STEPS;
const confirm = DEMO_STEPS.confirm();

/** Three more ways the refund goes, beside the demo's and seed 000's. */
const MORE: DemoConversation[] = [
  {
    name: 'refund-twice',
    description: 'issues the refund, then issues it again before confirming',
    steps: [lookUpBoth, refund, refund, confirm, answer('Your refund of $40 is on its way.')],
  },
  {
    name: 'skips-confirmation',
    description: 'refunds but never sends the confirmation',
    steps: [lookUpBoth, refund, answer('Done.')],
  },
  {
    name: 'escalates-to-human',
    description: 'hands the customer to a human instead of refunding',
    steps: [
      lookUpBoth,
      () => ({ toolCalls: [{ name: 'transfer_to_human', arguments: { reason: 'refund request' } }] }),
      answer('A colleague will take it from here.'),
    ],
  },
];

/** The ten conversations, in the order of their file names (`NN-name`). */
export const REFUND_RUN: DemoConversation[] = [...DEMO_CONVERSATIONS, ...SEED_000_CONVERSATIONS, ...MORE];

/**
 * The trajectory-assertion JSON the run is judged by (and the verdict each conversation gets):
 * the policy before the refund, the right order, the confirmation sent, no other tool.
 */
export const REFUND_RUN_ASSERTIONS = {
  id: 'refund.run',
  expected_tool_sequence: [{ tool: 'get_refund_policy' }, { tool: 'issue_refund' }],
  tool_call_args: [{ tool: 'issue_refund', match: { mode: 'subset', args: { orderId: 'O-17' } } }],
  expected_tool_calls: ['send_confirmation'],
  allowed_tools: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
};

/** What each conversation gets from {@link REFUND_RUN_ASSERTIONS}: 6 of 10 pass. */
export const REFUND_RUN_VERDICTS: Record<string, 'pass' | 'fail'> = {
  'good-refund': 'pass',
  'refund-before-policy': 'fail',
  'made-up-confirmation': 'pass',
  'repeated-lookup': 'pass',
  'wrong-order-id': 'fail',
  'wrong-email': 'pass',
  'call-after-terminal': 'pass',
  'refund-twice': 'pass',
  'skips-confirmation': 'fail',
  'escalates-to-human': 'fail',
};

function refundRunTools(): Record<string, DemoTool> {
  return {
    ...supportTools(),
    transfer_to_human: async ({ reason }) => ({ queued: true, reason: reason ?? null }),
  };
}

/** One recorded trace of the run: its file name and OTLP JSON. */
export interface RefundRunTrace {
  file: string;
  name: string;
  otlpJson: string;
}

/** The file name of the `index`th conversation: `01-good-refund.otlp.json`. */
export function refundRunFile(index: number, name: string): string {
  return `${String(index + 1).padStart(2, '0')}-${name}.otlp.json`;
}

/** Runs the ten conversations under a real SDK provider, each one trace with {@link REFUND_TASK} on its resource. */
export async function captureRefundRun(conversations = REFUND_RUN): Promise<RefundRunTrace[]> {
  const runs = conversations.map((conversation) => ({
    ...conversation,
    agent: 'support-agent',
    userMessage: 'Please refund order O-17.',
    tools: refundRunTools,
  }));
  const captured = await captureConversations(runs, 'toolpath-demo-agent', REFUND_TASK);
  return captured.map(({ conversation, otlpJson }, index) => ({
    file: refundRunFile(index, conversation.name),
    name: conversation.name,
    otlpJson,
  }));
}

/** Where the recorded run is. */
export const REFUND_RUN_DIR = new URL('../spans/refund-run/', import.meta.url);

/** The recorded run's files (absolute paths), in order. */
export async function refundRunFiles(): Promise<string[]> {
  const names = (await readdir(REFUND_RUN_DIR)).filter((name) => name.endsWith('.otlp.json')).sort();
  return names.map((name) => new URL(name, REFUND_RUN_DIR).pathname);
}

/** The recorded run's texts, for runEval. */
export async function refundRunInputs(): Promise<{ source: string; text: string }[]> {
  const files = await refundRunFiles();
  return Promise.all(files.map(async (source) => ({ source, text: await readFile(source, 'utf8') })));
}
