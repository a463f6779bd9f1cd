// Captures real OpenTelemetry spans from Mastra (@mastra/core Agent + @mastra/observability +
// @mastra/otel-exporter), driven by the AI SDK's MockLanguageModelV3 (ai@6 `ai/test`; no
// network, no API keys), and writes them as OTLP JSON ExportTraceServiceRequest files to
// test/spans/mastra-<case>.otlp.json.
//
// Mastra does not trace through the global OTel API: its own tracing makes Mastra spans, and
// OtelExporter converts each ended one into an OTel ReadableSpan (scope `@mastra/otel-exporter`)
// and hands it to a BatchSpanProcessor around the exporter we give it (`exporter:` option; the
// `custom` provider endpoint is required by the config but never contacted).
//
// Cases: `refund` (parallel get_order + get_refund_policy in one response, issue_refund,
// send_confirmation, final text), `tool-error` (get_order, issue_refund throws, final text) and
// `conversation`: two generate() calls on one memory thread (a `Memory` on Mastra's
// `InMemoryStore`, `memory: { thread, resource }`), the order looked up in the first message's
// trace and refunded in the second's, with the amount the model reads from the first message's
// tool result, which memory recalls into the second prompt. Both traces go in one file.
//
// Run: npm --prefix test/spans/capture/agent-frameworks run capture:mastra [-- case ...]

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { ORDER, OUT_DIR, POLICY, PROMPT, REFUND_FAILURE } from './lib-otel.mjs';

const MODEL_ID = 'mock-support-model';

// --- tools ---------------------------------------------------------------------------------------
function tools({ failRefund }) {
  return {
    get_order: createTool({
      id: 'get_order',
      description: 'Look up an order by id.',
      inputSchema: z.object({ orderId: z.string() }),
      execute: async ({ orderId }) => ({ ...ORDER, orderId }),
    }),
    get_refund_policy: createTool({
      id: 'get_refund_policy',
      description: 'Return the refund policy that applies to an order.',
      inputSchema: z.object({ orderId: z.string() }),
      execute: async () => POLICY,
    }),
    issue_refund: createTool({
      id: 'issue_refund',
      description: 'Refund an amount to the customer.',
      inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
      execute: async ({ orderId, amount }) => {
        if (failRefund) throw new Error(REFUND_FAILURE);
        return { refundId: 'R-7781', orderId, amount, status: 'issued' };
      },
    }),
    send_confirmation: createTool({
      id: 'send_confirmation',
      description: 'Email the customer a refund confirmation.',
      inputSchema: z.object({ email: z.string(), refundId: z.string() }),
      execute: async ({ email, refundId }) => ({ messageId: 'M-551', to: email, refundId, sent: true }),
    }),
  };
}

// --- scripted mock model -------------------------------------------------------------------------
/** The tool result for `toolName` in the prompt Mastra sent (the whole part: output {type, value}). */
function toolResultFromPrompt(prompt, toolName) {
  for (const message of prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content)
      if (part.type === 'tool-result' && part.toolName === toolName) return part.output;
  }
  throw new Error(`mock model: no tool result for ${toolName} in the prompt`);
}

const usage = (step, output) => ({
  inputTokens: {
    total: 100 + step * 40,
    noCache: 100 + step * 40,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const call = (toolCallId, toolName, input) => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: JSON.stringify(input),
});
const calls = (step, ...content) => ({
  step,
  content,
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
});
const text = (step, value) => ({
  step,
  content: [{ type: 'text', text: value }],
  finishReason: { unified: 'stop', raw: 'stop' },
});

/** Per case, the model's responses in the order it is asked, over all the case's messages. */
const SCRIPTS = {
  refund: [
    () =>
      calls(
        1,
        call('call_get_order_1', 'get_order', { orderId: 'A1001' }),
        call('call_get_refund_policy_1', 'get_refund_policy', { orderId: 'A1001' }),
      ),
    ({ prompt }) => {
      const order = toolResultFromPrompt(prompt, 'get_order').value;
      return calls(
        2,
        call('call_issue_refund_1', 'issue_refund', { orderId: 'A1001', amount: order.amount }),
      );
    },
    ({ prompt }) => {
      const order = toolResultFromPrompt(prompt, 'get_order').value;
      const refund = toolResultFromPrompt(prompt, 'issue_refund').value;
      return calls(
        3,
        call('call_send_confirmation_1', 'send_confirmation', {
          email: order.customerEmail,
          refundId: refund.refundId,
        }),
      );
    },
    ({ prompt }) => {
      const refund = toolResultFromPrompt(prompt, 'issue_refund').value;
      return text(
        4,
        `Refund ${refund.refundId} of ${refund.amount} EUR issued; a confirmation email is on its way.`,
      );
    },
  ],
  'tool-error': [
    () => calls(1, call('call_get_order_1', 'get_order', { orderId: 'A1001' })),
    ({ prompt }) => {
      const order = toolResultFromPrompt(prompt, 'get_order').value;
      return calls(
        2,
        call('call_issue_refund_1', 'issue_refund', { orderId: 'A1001', amount: order.amount }),
      );
    },
    ({ prompt }) => {
      const failure = toolResultFromPrompt(prompt, 'issue_refund');
      return text(
        3,
        `Sorry, I could not issue the refund (${failure.type}: ${JSON.stringify(failure.value)}).`,
      );
    },
  ],
  conversation: [
    // Message 1: the lookup.
    () => calls(1, call('call_get_order_1', 'get_order', { orderId: 'A1001' })),
    ({ prompt }) => {
      const order = toolResultFromPrompt(prompt, 'get_order').value;
      return text(2, `Order ${order.orderId} (${order.item}) was ${order.status}.`);
    },
    // Message 2: the refund, its amount from message 1's result, which memory put in this prompt.
    ({ prompt }) => {
      const order = toolResultFromPrompt(prompt, 'get_order').value;
      return calls(
        3,
        call('call_issue_refund_1', 'issue_refund', { orderId: 'A1001', amount: order.amount }),
      );
    },
    ({ prompt }) => {
      const refund = toolResultFromPrompt(prompt, 'issue_refund').value;
      return text(4, `Refund ${refund.refundId} of ${refund.amount} EUR issued.`);
    },
  ],
};

/** The user messages of each case, one generate() call (one trace) each. */
const MESSAGES = {
  refund: [PROMPT],
  'tool-error': [PROMPT],
  conversation: ['Where is my order A1001?', 'It arrived broken. Please refund me.'],
};
/** The memory thread the conversation's messages are on. */
const THREAD = { thread: 'thread-ana-a1001', resource: 'customer-ana' };

function scriptedModel(caseName) {
  const script = SCRIPTS[caseName];
  let n = 0;
  const next = (options) => {
    const step = script[n++];
    if (!step) throw new Error(`mock model: no scripted response #${n} for ${caseName}`);
    return step(options);
  };
  const metadata = (step) => ({
    id: `resp-${step}`,
    modelId: MODEL_ID,
    timestamp: new Date(Date.UTC(2026, 10, 1, 12, 0, step)),
  });
  return new MockLanguageModelV3({
    provider: 'mock-provider',
    modelId: MODEL_ID,
    doGenerate: async (options) => {
      const r = next(options);
      return {
        content: r.content,
        finishReason: r.finishReason,
        usage: usage(r.step, 20),
        response: metadata(r.step),
        warnings: [],
      };
    },
    // Mastra's agent loop streams, even for generate().
    doStream: async (options) => {
      const r = next(options);
      const chunks = [
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', ...metadata(r.step) },
      ];
      for (const part of r.content) {
        if (part.type === 'text') {
          chunks.push(
            { type: 'text-start', id: 't1' },
            { type: 'text-delta', id: 't1', delta: part.text },
            { type: 'text-end', id: 't1' },
          );
        } else chunks.push(part);
      }
      chunks.push({ type: 'finish', finishReason: r.finishReason, usage: usage(r.step, 20) });
      return { stream: convertArrayToReadableStream(chunks) };
    },
  });
}

// --- run -----------------------------------------------------------------------------------------
async function run(caseName) {
  const exporter = new InMemorySpanExporter();
  const otelExporter = new OtelExporter({
    provider: { custom: { endpoint: 'http://127.0.0.1:4318', protocol: 'http/json' } },
    exporter,
    signals: { logs: false },
  });
  const onThread = caseName === 'conversation';
  const agent = new Agent({
    id: 'support-agent',
    name: 'support-agent',
    instructions: 'You are a support agent. Use the tools to handle refunds.',
    model: scriptedModel(caseName),
    tools: tools({ failRefund: caseName === 'tool-error' }),
    ...(onThread && { memory: new Memory({ storage: new InMemoryStore() }) }),
  });
  const mastra = new Mastra({
    agents: { supportAgent: agent },
    logger: false,
    observability: new Observability({
      configs: { otel: { serviceName: 'toolpath-capture-mastra', exporters: [otelExporter] } },
    }),
  });
  for (const message of MESSAGES[caseName]) {
    const result = await mastra
      .getAgent('supportAgent')
      .generate(message, { maxSteps: 5, ...(onThread && { memory: THREAD }) });
    console.log(`mastra-${caseName}: ${result.steps?.length} steps, text=${JSON.stringify(result.text)}`);
  }
  await otelExporter.flush();
  const spans = exporter.getFinishedSpans();
  writeFileSync(
    join(OUT_DIR, `mastra-${caseName}.otlp.json`),
    Buffer.from(JsonTraceSerializer.serializeRequest(spans)),
  );
  const traces = new Set(spans.map((span) => span.spanContext().traceId)).size;
  console.log(`mastra-${caseName}: ${spans.length} spans in ${traces} trace(s)`);
  await mastra.shutdown?.();
}

// Cases named on the command line, else all of them.
const cases = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(SCRIPTS);
for (const caseName of cases) {
  if (!SCRIPTS[caseName])
    throw new Error(`unknown case ${caseName} (cases: ${Object.keys(SCRIPTS).join(', ')})`);
  await run(caseName);
}
