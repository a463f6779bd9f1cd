/**
 * A real OpenAI Agents SDK (JS) refund agent traced through the OpenInference bridge
 * (`@arizeai/openinference-instrumentation-openai-agents`), for the processor's live tests. The
 * model is a hand-written `Model` that answers at once and records no LLM span, as a unit test's
 * model does: the bridge then records only the `turn` CHAIN spans and the TOOL spans under them,
 * with millisecond times, so several turns can fall in one millisecond.
 */
import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import * as agents from '@openai/agents';
import { Agent, Runner, setTracingDisabled, tool, Usage } from '@openai/agents';
import type { TracerProvider } from '@opentelemetry/api';
import { z } from 'zod';

/** The refund scenario these runs are judged on (native format). */
export const AGENTS_REFUND_SCENARIO = {
  id: 'agents.refund',
  version: '1',
  tools: {
    allowed: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
    required: ['issue_refund'],
  },
  order: { before: [{ before: 'get_refund_policy', after: 'issue_refund' }] },
};

interface ScriptedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** One model response: the calls it asks for, or the final text. */
type ScriptedTurn = { calls: ScriptedCall[] } | { text: string };

/** The good run: order and policy in one turn, the refund a turn later, then a confirmation. */
const GOOD_REFUND: ScriptedTurn[] = [
  {
    calls: [
      { id: 'call_get_order', name: 'get_order', args: { order_id: 'A-1001' } },
      { id: 'call_get_refund_policy', name: 'get_refund_policy', args: { region: 'EU' } },
    ],
  },
  {
    calls: [
      {
        id: 'call_issue_refund',
        name: 'issue_refund',
        args: { order_id: 'A-1001', amount: 49.99, reason: 'damaged' },
      },
    ],
  },
  { calls: [{ id: 'call_send_confirmation', name: 'send_confirmation', args: { order_id: 'A-1001' } }] },
  { text: 'Your refund R-7788 of 49.99 EUR has been issued.' },
];

const tools = [
  tool({
    name: 'get_order',
    description: 'Look up an order by id.',
    parameters: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => JSON.stringify({ order_id, total: 49.99, currency: 'EUR' }),
  }),
  tool({
    name: 'get_refund_policy',
    description: 'Return the refund policy for a region.',
    parameters: z.object({ region: z.string() }),
    execute: async ({ region }) => JSON.stringify({ region, window_days: 30 }),
  }),
  tool({
    name: 'issue_refund',
    description: 'Issue a refund for an order.',
    parameters: z.object({ order_id: z.string(), amount: z.number(), reason: z.string() }),
    execute: async ({ order_id, amount }) => JSON.stringify({ refund_id: 'R-7788', order_id, amount }),
  }),
  tool({
    name: 'send_confirmation',
    description: 'Send the customer a confirmation.',
    parameters: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => `confirmation for ${order_id} sent`,
  }),
];

type ModelRequest = Parameters<agents.Model['getResponse']>[0];
type ModelResponse = Awaited<ReturnType<agents.Model['getResponse']>>;

/**
 * A `Model` walking a script, answering at once and opening no span of its own. Each answer
 * checks that the runner fed back a result for every call of the previous one, so a run that
 * passes really went turn by turn.
 */
class InstantModel implements agents.Model {
  #turn = 0;

  constructor(private readonly script: readonly ScriptedTurn[]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const index = this.#turn++;
    const turn = this.script[index];
    if (!turn) throw new Error(`script exhausted at turn ${index}`);
    const previous = this.script[index - 1];
    if (previous && 'calls' in previous) {
      const items = Array.isArray(request.input) ? request.input : [];
      for (const call of previous.calls) {
        const fed = items.some(
          (item) => item.type === 'function_call_result' && (item as { callId?: string }).callId === call.id,
        );
        if (!fed) throw new Error(`model input lacks a result for ${call.id}`);
      }
    }
    const output =
      'calls' in turn
        ? turn.calls.map((call) => ({
            type: 'function_call' as const,
            id: `fc_${call.id}`,
            callId: call.id,
            name: call.name,
            arguments: JSON.stringify(call.args),
            status: 'completed' as const,
          }))
        : [
            {
              type: 'message' as const,
              id: `msg_${index}`,
              role: 'assistant' as const,
              status: 'completed' as const,
              content: [{ type: 'output_text' as const, text: turn.text }],
            },
          ];
    return {
      usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
      output,
      responseId: `resp_${index}`,
    };
  }

  // biome-ignore lint/correctness/useYield: the runs here are not streamed; the interface needs the method.
  async *getStreamedResponse(): AsyncIterable<agents.protocol.StreamEvent> {
    throw new Error('InstantModel does not stream');
  }
}

let instrumented = false;

/**
 * Sends the SDK's traces through the OpenInference bridge to `provider`. Once per process: the
 * bridge replaces the SDK's global trace processors, so every later run goes to the first provider
 * given (tests give one provider that lives as long as the file).
 */
export function instrumentAgents(provider: TracerProvider): void {
  if (instrumented) return;
  // Vitest sets NODE_ENV=test, under which the SDK turns tracing off by default.
  setTracingDisabled(false);
  new OpenAIAgentsInstrumentation({ tracerProvider: provider }).manuallyInstrument(agents);
  instrumented = true;
}

/** Runs the good refund conversation once; resolves when the SDK has ended its trace. */
export async function runAgentsRefund(): Promise<void> {
  const agent = new Agent({
    name: 'Refund agent',
    instructions: 'Check the order and the refund policy before refunding.',
    model: new InstantModel(GOOD_REFUND),
    tools,
  });
  const result = await new Runner({ workflowName: 'refund workflow' }).run(
    agent,
    'My kettle from order A-1001 arrived broken.',
    { maxTurns: 10 },
  );
  if (!result.finalOutput) throw new Error('the run produced no final output');
}
