/**
 * A support agent built with the Vercel AI SDK, judged in process by toolpath.
 *
 * The app's tracer provider has one span processor: toolpath's, wrapping the processor that
 * exports to an OTLP/HTTP endpoint. When an agent run's trace completes, toolpath judges it
 * against the refund scenario next to this file, writes the verdict into the trace (a
 * `gen_ai.evaluation.result` event and a `toolpath.finding` event per finding) and passes the
 * trace on to the exporter, or drops it when risk sampling says it is not worth keeping.
 *
 * Run it from the repository root: `npx tsx examples/vercel-ai-agent/agent.ts`. Spans go to
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (default http://127.0.0.1:4318/v1/traces).
 */
import { fileURLToPath } from 'node:url';
import { OpenTelemetry } from '@ai-sdk/otel';
import { DiagConsoleLogger, DiagLogLevel, diag, SpanKind } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { generateText, isStepCount, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
// This example runs from the toolpath repository without a publish step; an app writes
// `import { trajectoryProcessor } from 'toolpath';`
import { trajectoryProcessor } from '../../src/index.js';

const endpoint = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? 'http://127.0.0.1:4318/v1/traces';

// Errors of the exporter and of toolpath (which never throws into the app) are reported here.
diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);

// --- Tracing: toolpath wraps the exporting processor -------------------------------------------

const processor = trajectoryProcessor({
  // Scenario files (YAML or JSON), loaded once now: a bad one throws here, not at run time.
  scenarios: [fileURLToPath(new URL('./refund.scenario.yaml', import.meta.url))],
  // Every span toolpath keeps goes on to this processor, as it would without toolpath.
  export: new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint })),
  // Risky traces are always kept: a hard finding, an error, a call of an irreversible tool
  // (the scenario's `safety.irreversible`, here issue_refund), a tool or scenario version not
  // seen before. Of the rest, 10% go on, chosen by trace id. Kept spans carry
  // `toolpath.sampling.reason` and `toolpath.sampling.adjusted_count`.
  sampling: { ratio: 0.1 },
  // To judge on a worker thread, off the app's (findings then arrive on a `toolpath.evaluate`
  // span, and onReport gets the report alone): `worker: true`.
  // One line per verdict. Values in findings are redacted by default (`redact` option).
  onReport: (report) => {
    const rules = [...new Set(report.findings.map((finding) => finding.rule))];
    const label = report.scenario.version
      ? `${report.scenario.id}@${report.scenario.version}`
      : report.scenario.id;
    console.log(
      `  toolpath: ${label} ${report.verdict}${rules.length > 0 ? ` (${rules.join(', ')})` : ''} trace=${report.traceId}`,
    );
  },
});

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'support-app' }),
  spanProcessors: [processor],
});
// The global tracer provider, the async context manager and the W3C propagators.
provider.register();
const tracer = provider.getTracer('support-app');

// The AI SDK's OpenTelemetry integration, with each agent run tagged with its conversation id.
const telemetry = new OpenTelemetry({
  tracer,
  enrichSpan: ({ spanType, runtimeContext }) =>
    spanType === 'operation' && typeof runtimeContext?.conversationId === 'string'
      ? { 'gen_ai.conversation.id': runtimeContext.conversationId }
      : undefined,
});

// --- The agent ---------------------------------------------------------------------------------

const ORDERS: Record<string, { orderId: string; amount: number; email: string }> = {
  A1001: { orderId: 'A1001', amount: 42.5, email: 'ana@example.com' },
};

const tools = {
  get_order: tool({
    description: 'Looks up an order.',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ORDERS[orderId] ?? { error: 'no such order' },
  }),
  get_refund_policy: tool({
    description: 'Says whether an order may be refunded.',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async () => ({ refundable: true, windowDays: 30 }),
  }),
  issue_refund: tool({
    description: 'Refunds an order. Cannot be undone.',
    inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
    execute: async ({ amount }) => ({ refundId: 'R-7781', amount }),
  }),
  send_confirmation: tool({
    description: 'E-mails the customer a refund confirmation.',
    inputSchema: z.object({ email: z.string(), refundId: z.string() }),
    execute: async ({ refundId }) => ({ sent: true, refundId }),
  }),
};

/** Runs the agent on one customer message. */
async function supportAgent(conversationId: string, message: string, model: MockLanguageModelV4) {
  const result = await generateText({
    model,
    system: 'You are a support agent. Check the refund policy before refunding.',
    prompt: message,
    tools,
    stopWhen: isStepCount(8),
    runtimeContext: { conversationId },
    telemetry: {
      functionId: 'support-agent', // the agent's name (gen_ai.agent.name): what `appliesTo.agent` matches
      includeRuntimeContext: { conversationId: true },
      integrations: [telemetry],
    },
  });
  return result.text;
}

// --- A scripted model standing in for a real one -------------------------------------------------
// In an app, pass a real model instead, e.g. `openai('gpt-5')` from '@ai-sdk/openai'. This one
// plays a script: each step is the tool calls the model asks for after seeing the earlier
// results (read from the prompt the SDK sends it, as a real model would), then a final answer.

type GenerateOptions = Parameters<MockLanguageModelV4['doGenerate']>[0];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;
type ToolCalls = { tool: keyof typeof tools; input: Record<string, unknown> }[];
type Step = (seen: (tool: string) => Record<string, unknown>) => ToolCalls;

function scriptedModel(steps: Step[], answer: string): MockLanguageModelV4 {
  let step = 0;
  return new MockLanguageModelV4({
    provider: 'scripted',
    modelId: 'scripted-support-model',
    doGenerate: async ({ prompt }: GenerateOptions): Promise<GenerateResult> => {
      const next = steps[step++];
      const usage = {
        inputTokens: { total: 200, noCache: 200, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 20, text: 20, reasoning: undefined },
      };
      if (!next) {
        return {
          content: [{ type: 'text', text: answer }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      }
      const calls = next((name) => lastResult(prompt, name));
      return {
        content: calls.map((call, i) => ({
          type: 'tool-call',
          toolCallId: `call_${step}_${i}`,
          toolName: call.tool,
          input: JSON.stringify(call.input),
        })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

/** The latest result of `toolName` in the prompt. */
function lastResult(prompt: GenerateOptions['prompt'], toolName: string): Record<string, unknown> {
  for (const message of [...prompt].reverse()) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result' && part.toolName === toolName && part.output.type === 'json')
        return part.output.value as Record<string, unknown>;
    }
  }
  throw new Error(`scripted model: no result of ${toolName} yet`);
}

const lookUpOrder: Step = () => [{ tool: 'get_order', input: { orderId: 'A1001' } }];
const checkPolicy: Step = () => [{ tool: 'get_refund_policy', input: { orderId: 'A1001' } }];
const lookUpBoth: Step = (seen) => [...lookUpOrder(seen), ...checkPolicy(seen)];
const refund: Step = (seen) => [
  { tool: 'issue_refund', input: { orderId: 'A1001', amount: seen('get_order').amount } },
];
const confirm =
  (refundId?: string): Step =>
  (seen) => [
    {
      tool: 'send_confirmation',
      input: { email: seen('get_order').email, refundId: refundId ?? seen('issue_refund').refundId },
    },
  ];

// --- Three conversations -----------------------------------------------------------------------

const message = 'Order A1001 arrived broken. Please refund me.';
const answer = 'Your refund of $42.50 is on its way.';

console.log(`Spans go to ${endpoint}\n`);

console.log('good-refund: looks up the order and the policy, refunds, confirms');
await supportAgent('good-refund', message, scriptedModel([lookUpBoth, refund, confirm()], answer));

console.log('refund-before-policy: refunds first, checks the policy afterwards');
await supportAgent(
  'refund-before-policy',
  message,
  scriptedModel([lookUpOrder, refund, checkPolicy, confirm()], answer),
);

// In a web app the agent runs inside the HTTP server span (made here by hand, as the http
// instrumentation would). The agent span is then not the trace's local root, so toolpath writes
// the verdict onto a `toolpath.evaluate` span under the agent span.
console.log('made-up-confirmation (in an HTTP request): confirms a refund id it made up');
await tracer.startActiveSpan('POST /support/messages', { kind: SpanKind.SERVER }, async (request) => {
  try {
    await supportAgent(
      'made-up-confirmation',
      message,
      scriptedModel([lookUpBoth, refund, confirm('R-0000')], answer),
    );
  } finally {
    request.end();
  }
});

// Judges whatever is still open (as incomplete), then flushes the exporter.
const { judgedTraces } = processor.stats();
try {
  await provider.shutdown();
  console.log(`\ntoolpath judged ${judgedTraces} traces; the kept ones were exported to ${endpoint}`);
} catch (error) {
  console.error(`\nCould not export to ${endpoint} (is an OTLP/HTTP collector listening?): ${error}`);
  process.exitCode = 1;
}
