// The scripted conversation shared by every capture: one customer asks for a
// refund; the fake model answers turn by turn. Call ids are fixed so that a
// normalizer can match LLM tool calls to tool spans and tool results.
export const INSTRUCTIONS =
  'You are a refund assistant. Use the tools to check the order and policy before refunding.';
export const USER_PROMPT = 'My kettle from order A-1001 arrived broken. Please refund me.';

export const REFUND_SCRIPT = [
  {
    // parallel calls in one model response
    calls: [
      { id: 'call_get_order_1', name: 'get_order', args: { order_id: 'A-1001' } },
      { id: 'call_get_refund_policy_1', name: 'get_refund_policy', args: { region: 'EU' } },
    ],
  },
  {
    calls: [
      {
        id: 'call_issue_refund_1',
        name: 'issue_refund',
        args: { order_id: 'A-1001', amount: 49.99, reason: 'damaged' },
      },
    ],
  },
  {
    calls: [
      {
        id: 'call_send_confirmation_1',
        name: 'send_confirmation',
        args: { order_id: 'A-1001', channel: 'email' },
      },
    ],
  },
  {
    text: 'Your refund R-7788 of 49.99 EUR for order A-1001 has been issued, and a confirmation email is on its way.',
  },
];

export const TOOL_ERROR_SCRIPT = [
  { calls: [{ id: 'call_get_order_1', name: 'get_order', args: { order_id: 'A-1001' } }] },
  {
    calls: [
      {
        id: 'call_issue_refund_1',
        name: 'issue_refund',
        args: { order_id: 'A-1001', amount: 49.99, reason: 'damaged' },
      },
    ],
  },
  {
    text: 'Sorry, the refund could not be issued right now because the payment system failed. Please try again later.',
  },
];
