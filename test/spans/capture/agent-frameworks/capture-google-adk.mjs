// Captures real OpenTelemetry spans from Google ADK JS (@google/adk), driven by a scripted model
// (a BaseLlm subclass; no network, no API keys), and writes them as OTLP JSON
// ExportTraceServiceRequest files to test/spans/google-adk-<case>.otlp.json.
//
// ADK traces through the global OTel API (tracer `gcp.vertex.agent`), so registering a global
// BasicTracerProvider (SDK 2.x) is all it takes. Content capture is ADK's default
// (ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS unset = true).
//
// The scripted model answers like the Gemini API: function calls WITHOUT ids (ADK then makes its
// own `adk-<uuid>` ids for the tool spans and the session, after the model span was recorded).
//
// Cases: `refund` (parallel get_order + get_refund_policy in one response, issue_refund,
// send_confirmation, final text) and `tool-error` (get_order, issue_refund throws, final text).
//
// Run: npm --prefix test/spans/capture/agent-frameworks run capture:adk

import { BaseLlm, FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk';
import { z } from 'zod';
import { ORDER, POLICY, PROMPT, REFUND_FAILURE, setupOtel } from './lib-otel.mjs';

const otel = setupOtel('toolpath-capture-google-adk');
const MODEL_ID = 'mock-support-model';
const APP = 'support-app';

// --- tools ---------------------------------------------------------------------------------------
function tools({ failRefund }) {
  return [
    new FunctionTool({
      name: 'get_order',
      description: 'Look up an order by id.',
      parameters: z.object({ orderId: z.string() }),
      execute: async ({ orderId }) => ({ ...ORDER, orderId }),
    }),
    new FunctionTool({
      name: 'get_refund_policy',
      description: 'Return the refund policy that applies to an order.',
      parameters: z.object({ orderId: z.string() }),
      execute: async () => POLICY,
    }),
    new FunctionTool({
      name: 'issue_refund',
      description: 'Refund an amount to the customer.',
      parameters: z.object({ orderId: z.string(), amount: z.number() }),
      execute: async ({ orderId, amount }) => {
        if (failRefund) throw new Error(REFUND_FAILURE);
        return { refundId: 'R-7781', orderId, amount, status: 'issued' };
      },
    }),
    new FunctionTool({
      name: 'send_confirmation',
      description: 'Email the customer a refund confirmation.',
      parameters: z.object({ email: z.string(), refundId: z.string() }),
      execute: async ({ email, refundId }) => ({ messageId: 'M-551', to: email, refundId, sent: true }),
    }),
  ];
}

// --- scripted model ------------------------------------------------------------------------------
/** The response the request's history holds for `name` (ADK sends function responses back as user parts). */
function responseFromRequest(llmRequest, name) {
  for (const content of llmRequest.contents) {
    for (const part of content.parts ?? []) {
      if (part.functionResponse?.name === name) return part.functionResponse.response;
    }
  }
  throw new Error(`mock model: no function response for ${name} in the request`);
}

const usage = (step, out) => ({
  promptTokenCount: 100 + step * 40,
  candidatesTokenCount: out,
  totalTokenCount: 100 + step * 40 + out,
});
const calls = (step, ...functionCalls) => ({
  content: { role: 'model', parts: functionCalls.map(([name, args]) => ({ functionCall: { name, args } })) },
  finishReason: 'STOP',
  usageMetadata: usage(step, 20),
});
const text = (step, value) => ({
  content: { role: 'model', parts: [{ text: value }] },
  finishReason: 'STOP',
  usageMetadata: usage(step, 30),
});

const SCRIPTS = {
  refund: [
    () => calls(1, ['get_order', { orderId: 'A1001' }], ['get_refund_policy', { orderId: 'A1001' }]),
    (request) => {
      const order = responseFromRequest(request, 'get_order');
      return calls(2, ['issue_refund', { orderId: 'A1001', amount: order.amount }]);
    },
    (request) => {
      const order = responseFromRequest(request, 'get_order');
      const refund = responseFromRequest(request, 'issue_refund');
      return calls(3, ['send_confirmation', { email: order.customerEmail, refundId: refund.refundId }]);
    },
    (request) => {
      const refund = responseFromRequest(request, 'issue_refund');
      return text(
        4,
        `Refund ${refund.refundId} of ${refund.amount} EUR issued; a confirmation email is on its way.`,
      );
    },
  ],
  'tool-error': [
    () => calls(1, ['get_order', { orderId: 'A1001' }]),
    (request) => {
      const order = responseFromRequest(request, 'get_order');
      return calls(2, ['issue_refund', { orderId: 'A1001', amount: order.amount }]);
    },
    (request) => {
      const failure = responseFromRequest(request, 'issue_refund');
      return text(3, `Sorry, I could not issue the refund (${failure.error}). Please try again later.`);
    },
  ],
};

class ScriptedLlm extends BaseLlm {
  constructor(caseName) {
    super({ model: MODEL_ID });
    this.script = SCRIPTS[caseName];
    this.step = 0;
  }
  async *generateContentAsync(llmRequest) {
    const next = this.script[this.step++];
    if (!next) throw new Error(`mock model: no scripted response #${this.step}`);
    yield next(llmRequest);
  }
  async connect() {
    throw new Error('mock model: live connections are not scripted');
  }
}

// --- run -----------------------------------------------------------------------------------------
async function run(caseName) {
  const agent = new LlmAgent({
    name: 'support_agent',
    description: 'Handles refunds for damaged orders.',
    model: new ScriptedLlm(caseName),
    instruction: 'You are a support agent. Use the tools to handle refunds.',
    tools: tools({ failRefund: caseName === 'tool-error' }),
  });
  const runner = new InMemoryRunner({ agent, appName: APP });
  const session = await runner.sessionService.createSession({ appName: APP, userId: 'user-1' });
  const events = [];
  for await (const event of runner.runAsync({
    userId: 'user-1',
    sessionId: session.id,
    newMessage: { role: 'user', parts: [{ text: PROMPT }] },
  })) {
    events.push(event);
  }
  const spans = otel.write(`google-adk-${caseName}.otlp.json`);
  const last = events
    .at(-1)
    ?.content?.parts?.map((p) => p.text ?? '')
    .join('');
  console.log(
    `google-adk-${caseName}: ${spans.length} spans, ${events.length} events, final=${JSON.stringify(last)}`,
  );
}

for (const caseName of Object.keys(SCRIPTS)) await run(caseName);
await otel.provider.shutdown();
