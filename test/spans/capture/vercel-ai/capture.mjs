// Captures real OpenTelemetry spans from the Vercel AI SDK, driven by the SDK's own mock
// language models (no network, no API keys), and writes them as OTLP JSON
// ExportTraceServiceRequest files to test/spans/vercel-ai-*.otlp.json.
//
//   ai@7 + @ai-sdk/otel OpenTelemetry()        -> vercel-ai-v7-genai-<case>.otlp.json
//   ai@7 + @ai-sdk/otel LegacyOpenTelemetry()  -> vercel-ai-v7-legacy-<case>.otlp.json
//   ai@6 (npm alias "ai6") experimental_telemetry -> vercel-ai-v6-<case>.otlp.json
//
// Cases: `refund` (4 steps: parallel get_order + get_refund_policy, issue_refund, send_confirmation,
// final text) and `tool-error` (get_order, issue_refund throws, final text).
//
// Run: npm --prefix test/spans/capture/vercel-ai run capture

import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LegacyOpenTelemetry, OpenTelemetry } from '@ai-sdk/otel';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { generateText as generateText7, isStepCount, tool as tool7 } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { generateText as generateText6, stepCountIs, tool as tool6 } from 'ai6';
import { MockLanguageModelV3 } from 'ai6/test';
import { z } from 'zod';

const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FUNCTION_ID = 'support-agent';
const MODEL_ID = 'mock-support-model';
const SYSTEM = 'You are a support agent. Use the tools to handle refunds.';
const PROMPT = 'Order A1001 arrived broken. Please refund me.';

// --- OpenTelemetry: one global provider, one in-memory exporter, reset per fixture -------------
const contextManager = new AsyncLocalStorageContextManager();
contextManager.enable();
context.setGlobalContextManager(contextManager);
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'toolpath-capture-vercel-ai' }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
trace.setGlobalTracerProvider(provider);

// --- tools (the same behaviour for every SDK version) ------------------------------------------
const ORDER = {
  orderId: 'A1001',
  status: 'delivered',
  item: 'ceramic teapot',
  amount: 42.5,
  currency: 'EUR',
  customerEmail: 'ana@example.com',
};
const POLICY = { refundable: true, windowDays: 30, maxAmount: 100, reason: 'damaged on arrival' };

function toolDefs(tool, { failRefund }) {
  return {
    get_order: tool({
      description: 'Look up an order by id.',
      inputSchema: z.object({ orderId: z.string() }),
      execute: async ({ orderId }) => ({ ...ORDER, orderId }),
    }),
    get_refund_policy: tool({
      description: 'Return the refund policy that applies to an order.',
      inputSchema: z.object({ orderId: z.string() }),
      execute: async () => POLICY,
    }),
    issue_refund: tool({
      description: 'Refund an amount to the customer.',
      inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
      execute: async ({ orderId, amount }) => {
        if (failRefund) throw new Error('payment gateway timeout');
        return { refundId: 'R-7781', orderId, amount, status: 'issued' };
      },
    }),
    send_confirmation: tool({
      description: 'Email the customer a refund confirmation.',
      inputSchema: z.object({ email: z.string(), refundId: z.string() }),
      execute: async ({ email, refundId }) => ({ messageId: 'M-551', to: email, refundId, sent: true }),
    }),
  };
}

// --- scripted mock model ------------------------------------------------------------------------
// Returns the value of the tool result for `toolName` found in the prompt the SDK sent to the model.
function toolResultFromPrompt(prompt, toolName) {
  for (const message of prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result' && part.toolName === toolName) return part.output;
    }
  }
  throw new Error(`mock model: no tool result for ${toolName} in the prompt`);
}

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const call = (toolCallId, toolName, input) => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: JSON.stringify(input),
});
const toolCallsResponse = (step, content) => ({
  content,
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(100 + step * 40, 20),
  response: {
    id: `resp-${step}`,
    modelId: MODEL_ID,
    timestamp: new Date(Date.UTC(2026, 10, 1, 12, 0, step)),
  },
  warnings: [],
});
const textResponse = (step, text) => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(100 + step * 40, 30),
  response: {
    id: `resp-${step}`,
    modelId: MODEL_ID,
    timestamp: new Date(Date.UTC(2026, 10, 1, 12, 0, step)),
  },
  warnings: [],
});

const SCRIPTS = {
  refund: [
    // step 1: two tool calls in parallel, in one response
    () =>
      toolCallsResponse(1, [
        call('call_get_order_1', 'get_order', { orderId: 'A1001' }),
        call('call_get_refund_policy_1', 'get_refund_policy', { orderId: 'A1001' }),
      ]),
    // step 2: refund the amount read from get_order's result
    ({ prompt }) => {
      const order = toolResultFromPrompt(prompt, 'get_order').value;
      return toolCallsResponse(2, [
        call('call_issue_refund_1', 'issue_refund', { orderId: 'A1001', amount: order.amount }),
      ]);
    },
    // step 3: confirm with the refund id read from issue_refund's result
    ({ prompt }) => {
      const refund = toolResultFromPrompt(prompt, 'issue_refund').value;
      const order = toolResultFromPrompt(prompt, 'get_order').value;
      return toolCallsResponse(3, [
        call('call_send_confirmation_1', 'send_confirmation', {
          email: order.customerEmail,
          refundId: refund.refundId,
        }),
      ]);
    },
    // step 4: final answer
    ({ prompt }) => {
      const refund = toolResultFromPrompt(prompt, 'issue_refund').value;
      return textResponse(
        4,
        `Refund ${refund.refundId} of ${refund.amount} EUR issued; a confirmation email is on its way.`,
      );
    },
  ],
  'tool-error': [
    () => toolCallsResponse(1, [call('call_get_order_1', 'get_order', { orderId: 'A1001' })]),
    ({ prompt }) => {
      const order = toolResultFromPrompt(prompt, 'get_order').value;
      return toolCallsResponse(2, [
        call('call_issue_refund_1', 'issue_refund', { orderId: 'A1001', amount: order.amount }),
      ]);
    },
    ({ prompt }) => {
      const failure = toolResultFromPrompt(prompt, 'issue_refund');
      return textResponse(
        3,
        `Sorry, I could not issue the refund (${failure.type}: ${JSON.stringify(failure.value)}). Please try again later.`,
      );
    },
  ],
};

function scriptedDoGenerate(caseName) {
  const script = SCRIPTS[caseName];
  let n = 0;
  return async (options) => {
    const next = script[n++];
    if (!next) throw new Error(`mock model: no scripted response #${n} for ${caseName}`);
    return next(options);
  };
}

// --- runners ------------------------------------------------------------------------------------
const TELEMETRY = { isEnabled: true, functionId: FUNCTION_ID, recordInputs: true, recordOutputs: true };

async function runV7(caseName, integration) {
  return generateText7({
    model: new MockLanguageModelV4({
      provider: 'mock-provider',
      modelId: MODEL_ID,
      doGenerate: scriptedDoGenerate(caseName),
    }),
    system: SYSTEM,
    prompt: PROMPT,
    tools: toolDefs(tool7, { failRefund: caseName === 'tool-error' }),
    stopWhen: isStepCount(5),
    // per-call integration (takes precedence over registerTelemetry()); keeps v7 out of the v6 runs
    telemetry: { ...TELEMETRY, integrations: [integration] },
  });
}

async function runV6(caseName) {
  return generateText6({
    model: new MockLanguageModelV3({
      provider: 'mock-provider',
      modelId: MODEL_ID,
      doGenerate: scriptedDoGenerate(caseName),
    }),
    system: SYSTEM,
    prompt: PROMPT,
    tools: toolDefs(tool6, { failRefund: caseName === 'tool-error' }),
    stopWhen: stepCountIs(5),
    experimental_telemetry: TELEMETRY,
  });
}

const VARIANTS = [
  { prefix: 'vercel-ai-v7-genai', run: (c) => runV7(c, new OpenTelemetry()) },
  { prefix: 'vercel-ai-v7-legacy', run: (c) => runV7(c, new LegacyOpenTelemetry()) },
  { prefix: 'vercel-ai-v6', run: (c) => runV6(c) },
];

for (const variant of VARIANTS) {
  for (const caseName of Object.keys(SCRIPTS)) {
    exporter.reset();
    const result = await variant.run(caseName);
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const file = join(OUT_DIR, `${variant.prefix}-${caseName}.otlp.json`);
    writeFileSync(file, Buffer.from(JsonTraceSerializer.serializeRequest(spans)));
    console.log(
      `${variant.prefix}-${caseName}: ${spans.length} spans, ${result.steps.length} steps, text=${JSON.stringify(result.text)}`,
    );
  }
}
await provider.shutdown();
