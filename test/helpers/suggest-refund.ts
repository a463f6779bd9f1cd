/**
 * The refund agent's runs `toolpath suggest` is tested on: three good runs that read the order
 * and the policy three ways (in parallel, in parallel listed the other way round, one after the
 * other) and six bad runs, each wrong in one way a scenario should catch. Four are the recorded
 * refund run's (test/spans/refund-run/); the others are recorded into test/spans/suggest-refund/
 * by test/spans/capture/demo-agent/capture-suggest-refund.ts.
 */
import { DEMO_STEPS, type DemoConversation } from '../../src/demo/conversations.js';
import { captureRefundRun, REFUND_RUN_DIR } from './refund-run.js';

const order = { orderId: 'O-17' };
const { refundTheOrderAmount: refund, answer } = DEMO_STEPS;
const confirm = DEMO_STEPS.confirm();
const done = answer('Your refund of $40 is on its way.');

/** The refund runs recorded for these tests only. */
export const SUGGEST_REFUND_RUNS: DemoConversation[] = [
  {
    name: 'reversed-reads',
    description: 'asks for the policy and the order in one turn, the policy listed first',
    steps: [
      () => ({
        toolCalls: [
          { name: 'get_refund_policy', arguments: order },
          { name: 'get_order', arguments: order },
        ],
      }),
      refund,
      confirm,
      done,
    ],
  },
  {
    name: 'sequential-reads',
    description: 'looks the order up, then the policy, one turn each',
    steps: [
      () => ({ toolCalls: [{ name: 'get_order', arguments: order }] }),
      () => ({ toolCalls: [{ name: 'get_refund_policy', arguments: order }] }),
      refund,
      confirm,
      done,
    ],
  },
  {
    name: 'refund-with-reads',
    description: 'asks for the refund in the same turn as the reads, its amount guessed',
    steps: [
      () => ({
        toolCalls: [
          { name: 'get_order', arguments: order },
          { name: 'get_refund_policy', arguments: order },
          { name: 'issue_refund', arguments: { ...order, amount: 40 } },
        ],
      }),
      confirm,
      done,
    ],
  },
];

/** Where the runs of {@link SUGGEST_REFUND_RUNS} are recorded. */
export const SUGGEST_REFUND_DIR = new URL('../spans/suggest-refund/', import.meta.url);

/** Records {@link SUGGEST_REFUND_RUNS} afresh: file name (`NAME.otlp.json`) and OTLP JSON. */
export async function captureSuggestRefund(): Promise<{ file: string; otlpJson: string }[]> {
  const captured = await captureRefundRun(SUGGEST_REFUND_RUNS);
  return captured.map(({ name, otlpJson }) => ({ file: `${name}.otlp.json`, otlpJson }));
}

const recorded = (name: string) => new URL(name, REFUND_RUN_DIR).pathname;
const own = (name: string) => new URL(`${name}.otlp.json`, SUGGEST_REFUND_DIR).pathname;

/** The good runs' files. */
export const GOOD_REFUND_FILES = [
  recorded('01-good-refund.otlp.json'),
  own('reversed-reads'),
  own('sequential-reads'),
];

/** Each bad run's file, and the kind of rule that must catch it. */
export const BAD_REFUND_FILES: { file: string; caughtBy: string }[] = [
  {
    file: recorded('02-refund-before-policy.otlp.json'),
    caughtBy: 'order.before: get_refund_policy before issue_refund',
  },
  { file: own('refund-with-reads'), caughtBy: 'order.before: get_refund_policy before issue_refund' },
  { file: recorded('10-escalates-to-human.otlp.json'), caughtBy: 'tools.allowed' },
  {
    file: recorded('03-made-up-confirmation.otlp.json'),
    caughtBy: 'grounding: send_confirmation.refundId from issue_refund.refundId',
  },
  { file: recorded('09-skips-confirmation.otlp.json'), caughtBy: 'tools.required: send_confirmation' },
  { file: recorded('07-call-after-terminal.otlp.json'), caughtBy: 'order.terminal: send_confirmation' },
];
