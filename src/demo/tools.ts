/** The demo's support-desk tools: an in-memory shop with one order and a refund ledger. */
import type { JsonValue } from '../model/json.js';

/** A tool the demo agent can call. Throws to fail. */
export type DemoTool = (args: { [key: string]: JsonValue }) => Promise<{ [key: string]: JsonValue }>;

/** Fresh tools over a fresh shop, so every demo run starts from the same state. */
export function supportTools(): Record<string, DemoTool> {
  const orders: Record<string, { amount: number; currency: string; email: string }> = {
    'O-17': { amount: 40, currency: 'USD', email: 'sam@example.test' },
  };
  let nextRefund = 1001;
  return {
    get_order: async ({ orderId }) => {
      await tick();
      const order = orders[String(orderId)];
      if (!order) throw new Error(`order ${String(orderId)} not found`);
      return { orderId: String(orderId), ...order };
    },
    get_refund_policy: async ({ orderId }) => {
      await tick();
      return { orderId: String(orderId), eligible: true, maxAmount: 40 };
    },
    issue_refund: async ({ orderId, amount }) => {
      await tick();
      return { refundId: `R-${nextRefund++}`, orderId: String(orderId), amount: Number(amount) };
    },
    send_confirmation: async () => {
      await tick();
      return { delivered: true };
    },
  };
}

/** Tools do real asynchronous work, so spans have real durations and parallel calls overlap. */
function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2));
}
