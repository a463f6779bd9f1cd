/**
 * Captures GenAI agent traces from a real OpenTelemetry SDK (sdk-trace-base 2.x) following the
 * OTel GenAI semantic conventions, plus one ordinary HTTP trace, and writes them as stored files:
 *
 *   sdk-genai-refund.otlp.json       one ExportTraceServiceRequest (JsonTraceSerializer output, byte for byte)
 *   sdk-genai-two-traces.otlp.json   a JSON array of two requests (an order-status agent trace, an HTTP trace)
 *   sdk-genai-file-exporter.jsonl    JSON lines as the Collector's file exporter writes them: one request
 *                                    per export batch (the refund trace spans two lines), int64 as strings,
 *                                    default values left out (the Go pdata marshaler's style)
 *
 * The agent and its tools are mocks; the spans are made by the SDK itself. Structure is fixed,
 * ids and times change per run.
 *
 * Run from the repository root: npx tsx test/spans/capture/sdk-genai.ts
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODEL = 'mock-model';
const CUSTOMER_EMAIL = 'maria.lopez@example.test';
const SYSTEM_INSTRUCTIONS =
  'You are the support agent of Kettle & Co. Check the order and the refund policy before refunding.';

// ---- OpenTelemetry ---------------------------------------------------------------------------
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: defaultResource().merge(
    resourceFromAttributes({
      'service.name': 'support-agent-service',
      'service.version': '2.3.0',
      'deployment.environment.name': 'staging',
    }),
  ),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
const agentTracer = provider.getTracer('support-agent-framework', '1.4.2');
const llmTracer = provider.getTracer('mock-llm-client', '0.9.0');
const httpTracer = provider.getTracer('orders-api', '5.1.0');

// ---- mock tools ----------------------------------------------------------------------------
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type ToolArgs = { [key: string]: Json };

/** A tool failure with a stack that names no local paths, so the fixture is the same on every machine. */
class ToolError extends Error {
  constructor(
    readonly type: string,
    message: string,
    frame: string,
  ) {
    super(message);
    this.name = type;
    this.stack = `${type}: ${message}\n    at ${frame}`;
  }
}

const ORDERS: Record<string, Json> = {
  'ORD-20417': {
    order_id: 'ORD-20417',
    customer_email: CUSTOMER_EMAIL,
    status: 'delivered',
    delivered_at: '2026-11-20',
    category: 'small_appliances',
    items: [{ sku: 'KTL-2200', name: 'Glass kettle 1.7 l', quantity: 1, price: 89.9 }],
    total: 89.9,
    currency: 'EUR',
  },
  'ORD-20588': {
    order_id: 'ORD-20588',
    customer_email: 'tom.becker@example.test',
    status: 'shipped',
    carrier: 'DHL',
    tracking_id: 'JJD014600003827195',
    estimated_delivery: '2026-12-02',
  },
};

let refundAttempts = 0;
const TOOLS: Record<string, { description: string; run: (args: ToolArgs) => Json }> = {
  get_order: {
    description: 'Look up an order by id.',
    run: (args) => ORDERS[String(args.order_id)] ?? { error: 'order not found' },
  },
  get_refund_policy: {
    description: 'Refund rules for a product category.',
    run: (args) => ({ category: args.category ?? null, refundable: true, window_days: 30, max_amount: 500 }),
  },
  get_customer: {
    description: 'Look up a customer by e-mail.',
    run: (args) => ({ customer_id: 'CUS-5531', email: args.email ?? null, tier: 'gold', open_disputes: 0 }),
  },
  issue_refund: {
    description: 'Refund an order through the payment gateway.',
    run: (args) => {
      refundAttempts++;
      if (refundAttempts === 1) {
        throw new ToolError(
          'PaymentGatewayTimeout',
          'payment gateway did not answer within 5000 ms',
          'PaymentsClient.refund (payments/gateway.ts:88:11)',
        );
      }
      return {
        refund_id: 'RF-88213',
        order_id: args.order_id ?? null,
        amount: args.amount ?? null,
        status: 'issued',
      };
    },
  },
  send_confirmation: {
    description: 'E-mail the customer a confirmation.',
    run: () => ({ message_id: 'msg-7f3a91', delivered: true }),
  },
};

// ---- the agent ------------------------------------------------------------------------------
interface ToolCall {
  id: string;
  name: string;
  arguments: ToolArgs;
}
/** One model turn: the tool calls it asks for (run in parallel), or its final answer. */
type Turn = { toolCalls: ToolCall[] } | { answer: string };
type Message = { role: string; parts: Json[] };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function invokeAgent(conversationId: string, userText: string, turns: Turn[]): Promise<void> {
  const attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'mock',
    'gen_ai.agent.name': 'support-agent',
    'gen_ai.agent.id': 'agent_support_01',
    'gen_ai.agent.description': 'Answers order questions and handles refunds.',
    'gen_ai.conversation.id': conversationId,
    'gen_ai.request.model': MODEL,
  };
  await agentTracer.startActiveSpan(
    'invoke_agent support-agent',
    { kind: SpanKind.INTERNAL, attributes },
    async (agent) => {
      const messages: Message[] = [{ role: 'user', parts: [{ type: 'text', content: userText }] }];
      for (const [index, turn] of turns.entries()) {
        const output = await chat(messages, turn, `resp_${conversationId}_${index + 1}`);
        messages.push(output);
        if ('toolCalls' in turn) {
          const results = await Promise.all(turn.toolCalls.map((call) => executeTool(call)));
          messages.push({ role: 'tool', parts: results });
        }
      }
      agent.end();
    },
  );
}

async function chat(messages: Message[], turn: Turn, responseId: string): Promise<Message> {
  const parts: Json[] =
    'toolCalls' in turn
      ? turn.toolCalls.map((call) => ({
          type: 'tool_call',
          id: call.id,
          name: call.name,
          arguments: call.arguments,
        }))
      : [{ type: 'text', content: turn.answer }];
  const finishReason = 'toolCalls' in turn ? 'tool_call' : 'stop';
  const output: Message = { role: 'assistant', parts };
  return llmTracer.startActiveSpan(`chat ${MODEL}`, { kind: SpanKind.CLIENT }, async (span) => {
    span.setAttributes({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'mock',
      'gen_ai.request.model': MODEL,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: SYSTEM_INSTRUCTIONS }]),
      'gen_ai.input.messages': JSON.stringify(messages),
    });
    await sleep(3);
    span.setAttributes({
      'gen_ai.response.id': responseId,
      'gen_ai.response.model': MODEL,
      'gen_ai.response.finish_reasons': [finishReason],
      'gen_ai.usage.input_tokens': 180 + Math.round(JSON.stringify(messages).length / 4),
      'gen_ai.usage.output_tokens': 12 + Math.round(JSON.stringify(parts).length / 8),
      'gen_ai.output.messages': JSON.stringify([{ ...output, finish_reason: finishReason }]),
    });
    span.end();
    return output;
  });
}

async function executeTool(call: ToolCall): Promise<Json> {
  const tool = TOOLS[call.name];
  if (!tool) throw new Error(`no tool ${call.name}`);
  return agentTracer.startActiveSpan(
    `execute_tool ${call.name}`,
    { kind: SpanKind.INTERNAL },
    async (span) => {
      span.setAttributes({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.id,
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.description': tool.description,
        'gen_ai.tool.call.arguments': JSON.stringify(call.arguments),
      });
      await sleep(2);
      try {
        const result = tool.run(call.arguments);
        span.setAttribute('gen_ai.tool.call.result', JSON.stringify(result));
        return { type: 'tool_call_response', id: call.id, response: result };
      } catch (error) {
        const failure = error as ToolError;
        span.recordException(failure);
        span.setAttribute('error.type', failure.type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
        return { type: 'tool_call_response', id: call.id, response: { error: failure.message } };
      } finally {
        span.end();
      }
    },
  );
}

// ---- an ordinary HTTP request, no agent in it -------------------------------------------------
async function httpRequest(): Promise<void> {
  const serverAttributes = {
    'http.request.method': 'GET',
    'url.scheme': 'https',
    'url.path': '/api/orders/ORD-20588',
    'http.route': '/api/orders/:id',
    'server.address': 'orders.internal.test',
    'user_agent.original': 'kettle-shop-web/3.8.1',
  };
  await httpTracer.startActiveSpan(
    'GET /api/orders/:id',
    { kind: SpanKind.SERVER, attributes: serverAttributes },
    async (server) => {
      await httpTracer.startActiveSpan('SELECT shop.orders', { kind: SpanKind.CLIENT }, async (db) => {
        db.setAttributes({
          'db.system.name': 'postgresql',
          'db.namespace': 'shop',
          'db.collection.name': 'orders',
          'db.operation.name': 'SELECT',
          'db.query.text': 'SELECT id, status, carrier, tracking_id FROM orders WHERE id = $1',
          'server.address': 'db.internal.test',
          'server.port': 5432,
        });
        await sleep(2);
        db.end();
      });
      server.setAttribute('http.response.status_code', 200);
      server.end();
    },
  );
}

// ---- the traces -----------------------------------------------------------------------------
const refundArgs = { order_id: 'ORD-20417', amount: 89.9, currency: 'EUR', reason: 'damaged_on_arrival' };
const REFUND_TURNS: Turn[] = [
  { toolCalls: [{ id: 'call_gord_01', name: 'get_order', arguments: { order_id: 'ORD-20417' } }] },
  {
    // Two calls in one turn: the model asks for both before seeing either result.
    toolCalls: [
      { id: 'call_pol_02', name: 'get_refund_policy', arguments: { category: 'small_appliances' } },
      { id: 'call_cus_03', name: 'get_customer', arguments: { email: CUSTOMER_EMAIL } },
    ],
  },
  { toolCalls: [{ id: 'call_ref_04', name: 'issue_refund', arguments: refundArgs }] },
  { toolCalls: [{ id: 'call_ref_05', name: 'issue_refund', arguments: refundArgs }] },
  {
    toolCalls: [
      {
        id: 'call_conf_06',
        name: 'send_confirmation',
        arguments: { email: CUSTOMER_EMAIL, refund_id: 'RF-88213' },
      },
    ],
  },
  {
    answer:
      'Your refund of EUR 89.90 for order ORD-20417 is issued (RF-88213); a confirmation is on its way.',
  },
];
const STATUS_TURNS: Turn[] = [
  { toolCalls: [{ id: 'call_gord_11', name: 'get_order', arguments: { order_id: 'ORD-20588' } }] },
  { answer: 'Order ORD-20588 shipped with DHL (JJD014600003827195) and should arrive on 2 December.' },
];

async function captureTrace(run: () => Promise<void>): Promise<ReadableSpan[]> {
  exporter.reset();
  await run();
  await provider.forceFlush();
  return [...exporter.getFinishedSpans()];
}

function serialize(spans: ReadableSpan[]): string {
  return new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));
}

/**
 * Rewrites the JS serializer's output the way the Go Collector's pdata marshaler writes it:
 * int64 values as strings, default values (0, "", [], {}) of message fields left out.
 */
const ANY_VALUE_FIELDS = [
  'stringValue',
  'boolValue',
  'intValue',
  'doubleValue',
  'arrayValue',
  'kvlistValue',
  'bytesValue',
];

function collectorStyle(value: unknown, key = ''): unknown {
  if (key === 'intValue' && typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map((item) => collectorStyle(item));
  if (typeof value !== 'object' || value === null) return value;
  const isAnyValue = ANY_VALUE_FIELDS.some((field) => field in value);
  const out: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(value)) {
    const converted = collectorStyle(item, field);
    const isDefault =
      converted === 0 ||
      converted === '' ||
      (Array.isArray(converted) && converted.length === 0) ||
      (typeof converted === 'object' && converted !== null && Object.keys(converted).length === 0);
    // AnyValue members are a oneof: always written, even when 0 or "".
    if (!isDefault || isAnyValue) out[field] = converted;
  }
  return out;
}

const refund = await captureTrace(() =>
  invokeAgent(
    'conv_7d41',
    `Hi, order ORD-20417 arrived with a cracked kettle lid. Can I get my money back? My e-mail is ${CUSTOMER_EMAIL}.`,
    REFUND_TURNS,
  ),
);
const status = await captureTrace(() =>
  invokeAgent('conv_9b02', 'Where is my order ORD-20588?', STATUS_TURNS),
);
const http = await captureTrace(httpRequest);

writeFileSync(join(OUT_DIR, 'sdk-genai-refund.otlp.json'), serialize(refund));
writeFileSync(join(OUT_DIR, 'sdk-genai-two-traces.otlp.json'), `[${serialize(status)},${serialize(http)}]`);
// The file exporter writes one line per export batch; spans arrive in end order, so a batch
// boundary can cut a trace in two, as here.
const batches = [refund.slice(0, 7), refund.slice(7), status, http];
const lines = batches.map((batch) => JSON.stringify(collectorStyle(JSON.parse(serialize(batch)))));
writeFileSync(join(OUT_DIR, 'sdk-genai-file-exporter.jsonl'), `${lines.join('\n')}\n`);

console.log(`refund: ${refund.length} spans, order status: ${status.length}, http: ${http.length}`);
await provider.shutdown();
