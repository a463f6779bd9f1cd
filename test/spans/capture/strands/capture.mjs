// Captures real OpenTelemetry spans from the Strands Agents TypeScript SDK (@strands-agents/sdk),
// driven by a scripted model provider (a `Model` subclass that streams tool uses; no network, no
// API keys), and writes them as OTLP JSON ExportTraceServiceRequest files to test/spans/.
//
//   OTEL_SEMCONV_STABILITY_OPT_IN unset                         -> strands-events-<case>.otlp.json
//   OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental    -> strands-latest-<case>.otlp.json
//   ...=gen_ai_latest_experimental,gen_ai_span_attributes_only  -> strands-latest-attributes-<case>.otlp.json
//
// Cases: `refund` (cycle 1: get_order + get_refund_policy in one response, run concurrently;
// cycle 2: issue_refund with the amount read from get_order's result; cycle 3: send_confirmation
// with the refund id read from issue_refund's result; cycle 4: final text) and `tool-error`
// (get_order, then issue_refund whose callback throws, then final text); default mode only:
// `unknown-tool` (the model asks for a tool the agent does not have).
//
// The SDK reads the opt-in variable when an Agent (and its Tracer) is constructed, so one process
// captures every mode by setting it before each `new Agent`.
//
// Run: npm --prefix test/spans/capture/strands run capture

import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Agent, Model, tool } from '@strands-agents/sdk';
import { z } from 'zod';

const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const AGENT_NAME = 'support-agent';
const MODEL_ID = 'scripted-support-model';
const SYSTEM = 'You are a support agent. Use the tools to handle refunds.';
const PROMPT = 'Order A1001 arrived broken. Please refund me.';

// --- OpenTelemetry: the SDK's Tracer takes its tracer from the global API ------------------------
const contextManager = new AsyncLocalStorageContextManager();
contextManager.enable();
context.setGlobalContextManager(contextManager);
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'toolpath-capture-strands' }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
trace.setGlobalTracerProvider(provider);

// --- tools ----------------------------------------------------------------------------------------
const ORDER = {
  orderId: 'A1001',
  status: 'delivered',
  item: 'ceramic teapot',
  amount: 42.5,
  currency: 'EUR',
  customerEmail: 'ana@example.com',
};
const POLICY = { refundable: true, windowDays: 30, maxAmount: 100, reason: 'damaged on arrival' };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function tools({ failRefund }) {
  return [
    tool({
      name: 'get_order',
      description: 'Look up an order by id.',
      inputSchema: z.object({ orderId: z.string() }),
      callback: async ({ orderId }) => {
        await sleep(3);
        return { ...ORDER, orderId };
      },
    }),
    tool({
      name: 'get_refund_policy',
      description: 'Return the refund policy that applies to an order.',
      inputSchema: z.object({ orderId: z.string() }),
      callback: async () => {
        await sleep(2);
        return POLICY;
      },
    }),
    tool({
      name: 'issue_refund',
      description: 'Refund an amount to the customer.',
      inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
      callback: async ({ orderId, amount }) => {
        await sleep(2);
        if (failRefund) throw new Error('payment gateway timeout');
        return { refundId: 'R-7781', orderId, amount, status: 'issued' };
      },
    }),
    tool({
      name: 'send_confirmation',
      description: 'Email the customer a refund confirmation.',
      inputSchema: z.object({ email: z.string(), refundId: z.string() }),
      callback: async ({ email, refundId }) => ({ messageId: 'M-551', to: email, refundId, sent: true }),
    }),
  ];
}

// --- scripted model -------------------------------------------------------------------------------
// The JSON value of the result of `toolName`'s call, found in the conversation the agent sent.
function toolResult(messages, toolName) {
  const ids = new Map();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'toolUseBlock') ids.set(block.toolUseId, block.name);
      if (block.type === 'toolResultBlock' && ids.get(block.toolUseId) === toolName) {
        const json = block.content.find((c) => c.type === 'jsonBlock');
        const text = block.content.find((c) => c.type === 'textBlock');
        return { status: block.status, value: json ? json.json : text?.text };
      }
    }
  }
  throw new Error(`scripted model: no result of ${toolName} in the conversation`);
}

const use = (toolUseId, name, input) => ({ toolUseId, name, input });

const SCRIPTS = {
  refund: [
    () => [
      use('tooluse_get_order_1', 'get_order', { orderId: 'A1001' }),
      use('tooluse_get_refund_policy_1', 'get_refund_policy', { orderId: 'A1001' }),
    ],
    (messages) => {
      const order = toolResult(messages, 'get_order').value;
      return [use('tooluse_issue_refund_1', 'issue_refund', { orderId: 'A1001', amount: order.amount })];
    },
    (messages) => {
      const refund = toolResult(messages, 'issue_refund').value;
      const order = toolResult(messages, 'get_order').value;
      return [
        use('tooluse_send_confirmation_1', 'send_confirmation', {
          email: order.customerEmail,
          refundId: refund.refundId,
        }),
      ];
    },
    (messages) => {
      const refund = toolResult(messages, 'issue_refund').value;
      return `Refund ${refund.refundId} of ${refund.amount} EUR issued; a confirmation email is on its way.`;
    },
  ],
  'tool-error': [
    () => [use('tooluse_get_order_1', 'get_order', { orderId: 'A1001' })],
    (messages) => {
      const order = toolResult(messages, 'get_order').value;
      return [use('tooluse_issue_refund_1', 'issue_refund', { orderId: 'A1001', amount: order.amount })];
    },
    (messages) => {
      const failure = toolResult(messages, 'issue_refund');
      return `Sorry, I could not issue the refund (${failure.status}: ${failure.value}). Please try again later.`;
    },
  ],
  // A tool the agent does not have: Strands answers with an error result but ends the span OK.
  'unknown-tool': [
    () => [use('tooluse_lookup_warranty_1', 'lookup_warranty', { orderId: 'A1001' })],
    (messages) => {
      const failure = toolResult(messages, 'lookup_warranty');
      return `I cannot check the warranty (${failure.status}: ${failure.value}).`;
    },
  ],
};

/** Cases captured in every mode; the others only in the default (events) mode. */
const EVERY_MODE = ['refund', 'tool-error'];

/** A model provider that answers from a script, streaming the events a real provider streams. */
class ScriptedModel extends Model {
  constructor(script) {
    super();
    this.script = script;
    this.step = 0;
    this.config = { modelId: MODEL_ID };
  }
  updateConfig(config) {
    this.config = { ...this.config, ...config };
  }
  getConfig() {
    return this.config;
  }
  async *stream(messages) {
    const next = this.script[this.step++];
    if (!next) throw new Error(`scripted model: no response #${this.step}`);
    const answer = next(messages);
    await sleep(2);
    yield { type: 'modelMessageStartEvent', role: 'assistant' };
    if (typeof answer === 'string') {
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: answer } };
      yield { type: 'modelContentBlockStopEvent' };
    } else {
      for (const call of answer) {
        yield {
          type: 'modelContentBlockStartEvent',
          start: { type: 'toolUseStart', name: call.name, toolUseId: call.toolUseId },
        };
        yield {
          type: 'modelContentBlockDeltaEvent',
          delta: { type: 'toolUseInputDelta', input: JSON.stringify(call.input) },
        };
        yield { type: 'modelContentBlockStopEvent' };
      }
    }
    yield { type: 'modelMessageStopEvent', stopReason: typeof answer === 'string' ? 'endTurn' : 'toolUse' };
    const inputTokens = 100 + this.step * 40;
    yield {
      type: 'modelMetadataEvent',
      usage: { inputTokens, outputTokens: 20, totalTokens: inputTokens + 20 },
      metrics: { latencyMs: 2 },
    };
  }
}

// --- runs -----------------------------------------------------------------------------------------
const MODES = {
  events: undefined,
  latest: 'gen_ai_latest_experimental',
  'latest-attributes': 'gen_ai_latest_experimental,gen_ai_span_attributes_only',
};

async function capture(mode, caseName) {
  if (MODES[mode] === undefined) delete process.env.OTEL_SEMCONV_STABILITY_OPT_IN;
  else process.env.OTEL_SEMCONV_STABILITY_OPT_IN = MODES[mode];
  exporter.reset();
  const agent = new Agent({
    name: AGENT_NAME,
    model: new ScriptedModel(SCRIPTS[caseName]),
    tools: tools({ failRefund: caseName === 'tool-error' }),
    systemPrompt: SYSTEM,
    printer: false,
  });
  const result = await agent.invoke(PROMPT);
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const file = join(OUT_DIR, `strands-${mode}-${caseName}.otlp.json`);
  writeFileSync(file, new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
  console.log(`${file}: ${spans.length} spans, stop ${result.stopReason}`);
}

for (const mode of Object.keys(MODES)) {
  for (const caseName of Object.keys(SCRIPTS)) {
    if (mode === 'events' || EVERY_MODE.includes(caseName)) await capture(mode, caseName);
  }
}
await provider.shutdown();
