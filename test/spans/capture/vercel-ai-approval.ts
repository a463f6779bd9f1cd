/**
 * Captures Vercel AI SDK v7 refund runs that ask for approval, with the SDK's GenAI telemetry
 * (`ai@7.0.173` + `@ai-sdk/otel@1.0.173` `new OpenTelemetry()`, the repository's devDependencies,
 * the versions of capture/vercel-ai/), driven by the SDK's own mock model (`MockLanguageModelV4`):
 *
 *   vercel-ai-v7-genai-approval-confirm-first.otlp.json      step 1 confirm_with_user, step 2 issue_refund
 *   vercel-ai-v7-genai-approval-confirm-same-step.otlp.json  confirm_with_user and issue_refund in one response
 *   vercel-ai-v7-genai-approval-needs-approval.otlp.json     issue_refund with `needsApproval: true`: the first
 *       generateText stops at the approval request, the app approves, a second generateText runs
 *       it; both under one app span, so one trace
 *
 * What the SDK records of its own approval: the later chat spans' `gen_ai.input.messages` hold
 * bare `{"type":"tool-approval-request"}` and `{"type":"tool-approval-response"}` parts, with no
 * call id, approval id or answer. No decision can be read from them, so a gate with no approving
 * tool is inconclusive on that trace: what the fixture shows.
 *
 * Span/trace ids and times change on every run. Run from the repository root:
 *   npx tsx test/spans/capture/vercel-ai-approval.ts
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenTelemetry } from '@ai-sdk/otel';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { generateText, isStepCount, type ModelMessage, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';

const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODEL_ID = 'mock-support-model';
const PROMPT = 'Order A1001 arrived broken. Please refund me.';

const contextManager = new AsyncLocalStorageContextManager();
contextManager.enable();
context.setGlobalContextManager(contextManager);
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'toolpath-capture-vercel-ai' }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
trace.setGlobalTracerProvider(provider);

const tools = (needsApproval: boolean) => ({
  get_order: tool({
    description: 'Look up an order by id.',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ({ orderId, amount: 42.5, currency: 'EUR' }),
  }),
  confirm_with_user: tool({
    description: 'Ask the customer to confirm an action.',
    inputSchema: z.object({ question: z.string() }),
    execute: async () => ({ confirmed: true }),
  }),
  issue_refund: tool({
    description: 'Refund an amount to the customer.',
    inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
    needsApproval,
    execute: async ({ orderId, amount }) => ({ refundId: 'R-7781', orderId, amount, status: 'issued' }),
  }),
});

const usage = {
  inputTokens: { total: 120, noCache: 120, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 20, text: 20, reasoning: undefined },
};
const call = (toolCallId: string, toolName: string, input: object) => ({
  type: 'tool-call' as const,
  toolCallId,
  toolName,
  input: JSON.stringify(input),
});
type Content = ReturnType<typeof call> | { type: 'text'; text: string };
const response = (content: Content[]) => ({
  content,
  finishReason: content.some((part) => part.type === 'tool-call')
    ? { unified: 'tool-calls' as const, raw: 'tool_calls' }
    : { unified: 'stop' as const, raw: 'stop' },
  usage,
  warnings: [],
});

const lookup = call('call_get_order_1', 'get_order', { orderId: 'A1001' });
const confirm = call('call_confirm_1', 'confirm_with_user', { question: 'Refund 42.5 EUR for order A1001?' });
const refund = call('call_issue_refund_1', 'issue_refund', { orderId: 'A1001', amount: 42.5 });
const done = { type: 'text' as const, text: 'Refund R-7781 of 42.5 EUR issued.' };

/** A mock model answering with these responses in turn. */
function scripted(responses: Content[][]): MockLanguageModelV4 {
  let next = 0;
  return new MockLanguageModelV4({
    provider: 'mock-provider',
    modelId: MODEL_ID,
    doGenerate: async () => {
      const content = responses[next++];
      if (!content) throw new Error(`mock model: no response #${next}`);
      return response(content);
    },
  });
}

const telemetry = {
  isEnabled: true,
  functionId: 'support-agent',
  recordInputs: true,
  recordOutputs: true,
  integrations: [new OpenTelemetry()],
};

async function oneRun(responses: Content[][]): Promise<void> {
  await generateText({
    model: scripted(responses),
    prompt: PROMPT,
    tools: tools(false),
    stopWhen: isStepCount(5),
    telemetry,
  });
}

/** The human-in-the-loop flow: the run stops at the approval request, the app approves, a second run goes on. */
async function approvalRun(): Promise<void> {
  const model = scripted([[lookup], [refund], [done]]);
  const app = provider.getTracer('support-app');
  await app.startActiveSpan('support-conversation', async (span) => {
    const first = await generateText({
      model,
      prompt: PROMPT,
      tools: tools(true),
      stopWhen: isStepCount(5),
      telemetry,
    });
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    if (!request) throw new Error('no approval request: the SDK ran the tool without asking');
    const messages: ModelMessage[] = [
      { role: 'user', content: PROMPT },
      ...first.response.messages,
      {
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }],
      },
    ];
    await generateText({ model, messages, tools: tools(true), stopWhen: isStepCount(5), telemetry });
    span.end();
  });
}

const CASES: Record<string, () => Promise<void>> = {
  'confirm-first': () => oneRun([[lookup, confirm], [refund], [done]]),
  'confirm-same-step': () => oneRun([[lookup], [confirm, refund], [done]]),
  'needs-approval': approvalRun,
};

for (const [name, capture] of Object.entries(CASES)) {
  exporter.reset();
  await capture();
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const file = join(OUT_DIR, `vercel-ai-v7-genai-approval-${name}.otlp.json`);
  writeFileSync(file, Buffer.from(JsonTraceSerializer.serializeRequest(spans) as Uint8Array));
  console.log(`${file}: ${spans.length} spans`);
}
await provider.shutdown();
