/**
 * A real Vercel AI SDK 7 agent (generateText with tools, OpenTelemetry through @ai-sdk/otel),
 * driven by the SDK's own mock model, for the processor's integration tests. Each script is a
 * refund conversation; the model reads earlier tool results from the prompt the SDK sends it,
 * as a real model would.
 */
import { OpenTelemetry } from '@ai-sdk/otel';
import type { Tracer } from '@opentelemetry/api';
import { generateText, isStepCount, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';

/** The conversations, and what the refund scenario must say about each. */
export type AgentScript = 'good' | 'refund-before-policy' | 'made-up-confirmation' | 'tool-error';

/** A scenario for these conversations (native format). */
export const REFUND_SCENARIO = {
  id: 'support.refund',
  version: '1',
  tools: {
    allowed: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
    required: ['issue_refund'],
  },
  order: { before: [{ before: 'get_refund_policy', after: 'issue_refund' }] },
  grounding: [
    { tool: 'send_confirmation', path: 'refundId', from: { tool: 'issue_refund', path: 'refundId' } },
  ],
  safety: { irreversible: ['issue_refund'] },
};

const ORDER = { orderId: 'A1001', amount: 42.5, customerEmail: 'ana@example.com' };
const POLICY = { refundable: true, windowDays: 30 };

type Prompt = { role: string; content: unknown }[];
type Content = Record<string, unknown>[];

function resultOf(prompt: Prompt, toolName: string): Record<string, unknown> {
  for (const message of prompt) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as Record<string, unknown>[]) {
      if (part.type === 'tool-result' && part.toolName === toolName) {
        return (part.output as { value: Record<string, unknown> }).value;
      }
    }
  }
  throw new Error(`mock model: no result of ${toolName} in the prompt`);
}

const call = (id: string, toolName: string, input: unknown) => ({
  type: 'tool-call',
  toolCallId: id,
  toolName,
  input: JSON.stringify(input),
});

function response(step: number, content: Content, finish: 'tool-calls' | 'stop') {
  return {
    content,
    finishReason: { unified: finish, raw: finish === 'stop' ? 'stop' : 'tool_calls' },
    usage: {
      inputTokens: { total: 100 + step, noCache: 100 + step, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 20, text: 20, reasoning: undefined },
    },
    response: { id: `resp-${step}`, modelId: 'mock-model', timestamp: new Date(0) },
    warnings: [],
  };
}

type Step = (prompt: Prompt) => Content;
const lookUp: Step = () => [
  call('c1', 'get_order', { orderId: 'A1001' }),
  call('c2', 'get_refund_policy', { orderId: 'A1001' }),
];
const refund: Step = (prompt) => [
  call('c3', 'issue_refund', { orderId: 'A1001', amount: resultOf(prompt, 'get_order').amount }),
];
const confirm =
  (refundId?: string): Step =>
  (prompt) => [
    call('c4', 'send_confirmation', {
      email: ORDER.customerEmail,
      refundId: refundId ?? resultOf(prompt, 'issue_refund').refundId,
    }),
  ];

const SCRIPTS: Record<AgentScript, Step[]> = {
  good: [lookUp, refund, confirm()],
  'refund-before-policy': [
    () => [call('c1', 'get_order', { orderId: 'A1001' })],
    refund,
    () => [call('c2', 'get_refund_policy', { orderId: 'A1001' })],
  ],
  'made-up-confirmation': [lookUp, refund, confirm('R-0000')],
  'tool-error': [lookUp, refund],
};

/** Runs one conversation; spans go through `tracer`. Resolves with the agent's final text. */
export async function runRefundAgent(tracer: Tracer, script: AgentScript): Promise<string> {
  const steps = SCRIPTS[script];
  let n = 0;
  const model = new MockLanguageModelV4({
    provider: 'mock-provider',
    modelId: 'mock-model',
    doGenerate: async (options: { prompt: Prompt }) => {
      const step = steps[n++];
      return step
        ? response(n, step(options.prompt), 'tool-calls')
        : response(n, [{ type: 'text', text: 'Done.' }], 'stop');
    },
  } as unknown as ConstructorParameters<typeof MockLanguageModelV4>[0]);
  const result = await generateText({
    model,
    system: 'You are a support agent.',
    prompt: 'Order A1001 arrived broken. Please refund me.',
    tools: {
      get_order: tool({ inputSchema: z.object({ orderId: z.string() }), execute: async () => ORDER }),
      get_refund_policy: tool({
        inputSchema: z.object({ orderId: z.string() }),
        execute: async () => POLICY,
      }),
      issue_refund: tool({
        inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
        execute: async ({ amount }) => {
          if (script === 'tool-error') throw new Error('payment gateway timeout');
          return { refundId: 'R-7781', amount };
        },
      }),
      send_confirmation: tool({
        inputSchema: z.object({ email: z.string(), refundId: z.string() }),
        execute: async ({ refundId }) => ({ sent: true, refundId }),
      }),
    },
    stopWhen: isStepCount(6),
    telemetry: {
      isEnabled: true,
      functionId: 'support-agent',
      recordInputs: true,
      recordOutputs: true,
      integrations: [new OpenTelemetry({ tracer })],
    },
  });
  return result.text;
}
