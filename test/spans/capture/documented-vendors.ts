/**
 * Fixtures for three vendor conventions built from their documented shapes: every attribute is
 * emitted through a real OpenTelemetry SDK (sdk-trace-base 2.x BasicTracerProvider) and written
 * by otlp-transformer's JsonTraceSerializer, byte for byte. The vendors' libraries need their
 * backends (keys, network), so agent, model and tools are mocks; the attributes follow the
 * vendors' published sources, read 2026-11:
 *
 * OpenLLMetry, Python SDK shapes: traceloop/openllmetry `traceloop-sdk/.../decorators/base.py`
 *   (07b483e9) and `opentelemetry-instrumentation-openai/.../chat_wrappers.py` (00d044f7); keys
 *   as in npm `@traceloop/ai-semantic-conventions@0.27.0` SpanAttributes; npm
 *   `@traceloop/node-server-sdk@0.27.0` `withEntity` writes the same decorator shapes.
 *   Decorators: span `{name}.{kind}`, `traceloop.span.kind` (workflow | agent | tool),
 *   `traceloop.entity.name`, `traceloop.entity.input` = `{"args": [...], "kwargs": {...}}`,
 *   `traceloop.entity.output`, `traceloop.workflow.name`. A tool that throws never ends its span,
 *   nor the agent's (the exception passes through both wrappers). LLM span `openai.chat` (CLIENT):
 *   `llm.request.type` = chat, `gen_ai.prompt.N.{role,content,tool_call_id}`,
 *   `gen_ai.prompt.N.tool_calls.M.{id,name,arguments}`, `gen_ai.completion.N.{role,content,
 *   finish_reason}`, `gen_ai.completion.N.tool_calls.M.{id,name,arguments}`.
 * LangSmith, npm `langsmith@0.12.0`: `experimental/otel/translator.js` + `constants.js`,
 *   `traceable.js`, `wrappers/openai.js`. Span named after the run, `langsmith.span.kind` = run
 *   type, `gen_ai.operation.name` (llm -> chat, tool -> execute_tool, else the run type),
 *   `langsmith.trace.name`, `gen_ai.system`, `gen_ai.prompt` = JSON inputs, `gen_ai.completion` =
 *   JSON outputs; tool runs `gen_ai.tool.name` and, from `metadata.tool_call_id`,
 *   `gen_ai.tool.call.id`; status OK when the run is posted (at its start), then for a failed run
 *   ERROR plus `recordException(new Error(run.error))` with run.error = String(error): the SDK
 *   keeps the first OK ("OK is final"), so a failed run comes out OK with an exception event, as
 *   it does here. `wrapOpenAI` runs: ChatOpenAI, inputs = the request, outputs = the
 *   ChatCompletion with `usage_metadata`.
 * Langfuse, npm `@langfuse/core@5.11.1` LangfuseOtelSpanAttributes, `@langfuse/tracing@5.11.1`
 *   `createObservationAttributes` / `observe`, `@langfuse/openai@5.11.1`: scope `langfuse-sdk`,
 *   `langfuse.observation.type`, `.input` / `.output` (JSON); generation `OpenAI.chat` with
 *   `.model.name`, input `{messages, tools}`, output `choices[0].message`; `observe()` on a throw:
 *   `.level` = ERROR, `.status_message` = the message, output `{error: String(error)}`, status unset.
 *
 * Writes test/spans/{openllmetry,langsmith,langfuse}-documented-<case>.otlp.json.
 * Run from the repository root: npx tsx test/spans/capture/documented-vendors.ts
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Attributes,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  type Span as SdkSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODEL = 'gpt-4o-mini-2024-07-18';
const EMAIL = 'maria.lopez@example.test';
const QUESTION = `Order ORD-20417 arrived with a cracked kettle lid. Can I get my money back? I'm ${EMAIL}.`;

// ---- OpenTelemetry: finished spans, plus every started span for traces with spans left open ----
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
class StartedSpans implements SpanProcessor {
  spans: SdkSpan[] = [];
  onStart(span: SdkSpan): void {
    this.spans.push(span);
  }
  onEnd(): void {}
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}
interface Pipeline {
  provider: BasicTracerProvider;
  finished: InMemorySpanExporter;
  started: StartedSpans;
}
function pipeline(service: string): Pipeline {
  const finished = new InMemorySpanExporter();
  const started = new StartedSpans();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.version': '2.3.0' }),
    spanProcessors: [new SimpleSpanProcessor(finished), started],
  });
  return { provider, finished, started };
}

/** How a wrapper records one operation: attributes at start, at the end, and on a throw. */
interface Recording<T> {
  kind?: SpanKind;
  begin: Attributes;
  /** LangSmith's translator marks every run OK until an error says otherwise. */
  statusOk?: boolean;
  end?: (result: T) => Attributes;
  /** Absent: a throw leaves the span open, as OpenLLMetry's decorators do. */
  fail?: (span: Span, error: Error) => void;
}
function traced<T>(tracer: Tracer, name: string, recording: Recording<T>, fn: () => Promise<T>): Promise<T> {
  const options = { kind: recording.kind ?? SpanKind.INTERNAL, attributes: recording.begin };
  return tracer.startActiveSpan(name, options, async (span) => {
    if (recording.statusOk) span.setStatus({ code: SpanStatusCode.OK });
    let result: T;
    try {
      result = await fn();
    } catch (error) {
      if (recording.fail) {
        recording.fail(span, error as Error);
        span.end();
      }
      throw error;
    }
    span.setAttributes(recording.end?.(result) ?? {});
    span.end();
    return result;
  });
}

// ---- the mock agent's world ---------------------------------------------------------------------
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Args = { [key: string]: Json };
type ToolCall = { id: string; name: string; args: Args };
type Message = {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
};
type Turn = { calls: ToolCall[] } | { answer: string };

class ToolFailure extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
    this.stack = `${name}: ${message}\n    at PaymentsClient.refund (payments/gateway.ts:88:11)`;
  }
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TOOL_NAMES = ['get_order', 'get_refund_policy', 'get_customer', 'issue_refund', 'send_confirmation'];
const TOOL_SCHEMAS = TOOL_NAMES.map((name) => ({ type: 'function', function: { name, parameters: {} } }));
let refundFails = false;
const TOOLS: Record<string, { ms: number; run: (args: Args) => Json }> = {
  get_order: { ms: 5, run: (a) => ({ order_id: a.order_id ?? null, status: 'delivered', total: 89.9 }) },
  get_refund_policy: { ms: 8, run: (a) => ({ category: a.category ?? null, window_days: 30 }) },
  get_customer: { ms: 4, run: (a) => ({ customer_id: 'CUS-5531', email: a.email ?? null }) },
  issue_refund: { ms: 6, run: (a) => refund(a) },
  send_confirmation: { ms: 3, run: () => ({ message_id: 'msg-7f3a91', delivered: true }) },
};
function refund(args: Args): Json {
  if (refundFails)
    throw new ToolFailure('PaymentGatewayTimeout', 'payment gateway did not answer within 5000 ms');
  return { refund_id: 'RF-88213', order_id: args.order_id ?? null, status: 'issued' };
}
async function runTool(call: { name: string; args: Args }): Promise<Json> {
  const tool = TOOLS[call.name];
  if (!tool) throw new Error(`no tool ${call.name}`);
  await sleep(tool.ms);
  return tool.run(call.args);
}

/** How one vendor records an agent run, one model call and one tool call. */
interface Vendor {
  agent(fn: () => Promise<string>): Promise<string>;
  llm(history: readonly Message[], response: Message, responseId: string): Promise<void>;
  tool(call: ToolCall): Promise<Json>;
}

/** The agent loop: the model's scripted turns; the calls of one turn run in parallel. */
async function runAgent(vendor: Vendor, turns: Turn[], reportToolErrors: boolean): Promise<void> {
  await vendor.agent(async () => {
    const messages: Message[] = [
      { role: 'system', content: 'You are the support agent of Kettle & Co.' },
      { role: 'user', content: QUESTION },
    ];
    for (const [index, turn] of turns.entries()) {
      if (!('calls' in turn)) {
        await vendor.llm(messages, { role: 'assistant', content: turn.answer }, `chatcmpl-Bx${index + 1}`);
        return turn.answer;
      }
      const response: Message = {
        role: 'assistant',
        content: null,
        tool_calls: turn.calls.map(({ id, name, args }) => ({
          id,
          type: 'function',
          function: { name, arguments: JSON.stringify(args) },
        })),
      };
      await vendor.llm(messages, response, `chatcmpl-Bx${index + 1}`);
      messages.push(response);
      await sleep(2);
      const results = await Promise.all(
        turn.calls.map((call) =>
          vendor.tool(call).catch((error: Error) => {
            if (!reportToolErrors) throw error;
            return { error: error.message };
          }),
        ),
      );
      turn.calls.forEach((call, k) => {
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(results[k]) });
      });
      await sleep(2);
    }
    return '';
  });
}

const REFUND_ARGS = { order_id: 'ORD-20417', amount: 89.9, currency: 'EUR', reason: 'damaged_on_arrival' };
const CONFIRMATION_ARGS = { email: EMAIL, refund_id: 'RF-88213' };
const REFUND: Turn[] = [
  {
    calls: [
      { id: 'call_Kq01ord', name: 'get_order', args: { order_id: 'ORD-20417' } },
      { id: 'call_Kq02pol', name: 'get_refund_policy', args: { category: 'small_appliances' } },
    ],
  },
  { calls: [{ id: 'call_Kq03ref', name: 'issue_refund', args: REFUND_ARGS }] },
  { calls: [{ id: 'call_Kq04cnf', name: 'send_confirmation', args: CONFIRMATION_ARGS }] },
  { answer: 'Your refund of EUR 89.90 for ORD-20417 is issued (RF-88213); a confirmation is on its way.' },
];
const TOOL_ERROR: Turn[] = [
  { calls: [{ id: 'call_Tz01ord', name: 'get_order', args: { order_id: 'ORD-20417' } }] },
  { calls: [{ id: 'call_Tz02ref', name: 'issue_refund', args: REFUND_ARGS }] },
  { answer: 'Sorry, the payment gateway is not answering; your refund is not issued yet.' },
];

// ---- OpenLLMetry ------------------------------------------------------------------------------
/** `entity_method`: `{name}.{kind}`, input as `{args, kwargs}`; the span ends only on a return. */
function entity<T>(
  tracer: Tracer,
  kind: string,
  name: string,
  input: Json,
  workflow: string,
  fn: () => Promise<T>,
) {
  const begin = {
    'traceloop.workflow.name': workflow,
    'traceloop.span.kind': kind,
    'traceloop.entity.name': name,
    'traceloop.entity.input': JSON.stringify(input),
  };
  return traced(
    tracer,
    `${name}.${kind}`,
    { begin, end: (r) => ({ 'traceloop.entity.output': JSON.stringify(r) }) },
    fn,
  );
}

function indexedToolCalls(prefix: string, message: Message): Attributes {
  const attributes: Attributes = {};
  message.tool_calls?.forEach((call, j) => {
    attributes[`${prefix}.${j}.id`] = call.id;
    attributes[`${prefix}.${j}.name`] = call.function.name;
    attributes[`${prefix}.${j}.arguments`] = call.function.arguments;
  });
  return attributes;
}

function openllmetry(provider: BasicTracerProvider): Vendor {
  const decorators = provider.getTracer('traceloop.tracer');
  const openai = provider.getTracer('opentelemetry.instrumentation.openai.v1', '0.47.3');
  const workflow = 'support_agent';
  return {
    agent: (fn) =>
      entity(decorators, 'agent', workflow, { args: [], kwargs: { question: QUESTION } }, workflow, fn),
    tool: (call) =>
      entity(decorators, 'tool', call.name, { args: [], kwargs: call.args }, workflow, () => runTool(call)),
    llm: async (history, response, responseId) => {
      const begin: Attributes = {
        'llm.request.type': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'llm.is_streaming': false,
        'traceloop.workflow.name': workflow,
      };
      history.forEach((message, i) => {
        begin[`gen_ai.prompt.${i}.role`] = message.role;
        if (message.content) begin[`gen_ai.prompt.${i}.content`] = message.content;
        if (message.tool_call_id) begin[`gen_ai.prompt.${i}.tool_call_id`] = message.tool_call_id;
        Object.assign(begin, indexedToolCalls(`gen_ai.prompt.${i}.tool_calls`, message));
      });
      TOOL_NAMES.forEach((name, i) => {
        begin[`llm.request.functions.${i}.name`] = name;
      });
      const end = () => ({
        'gen_ai.response.model': MODEL,
        'gen_ai.response.id': responseId,
        'gen_ai.completion.0.finish_reason': response.tool_calls ? 'tool_calls' : 'stop',
        'gen_ai.completion.0.role': 'assistant',
        ...(response.content && { 'gen_ai.completion.0.content': response.content }),
        ...indexedToolCalls('gen_ai.completion.0.tool_calls', response),
      });
      await traced(openai, 'openai.chat', { kind: SpanKind.CLIENT, begin, end }, () => sleep(3));
    },
  };
}

/** Decorated tools called straight from a workflow: no model, order only from time. */
async function decoratorWorkflow(provider: BasicTracerProvider): Promise<void> {
  const tracer = provider.getTracer('traceloop.tracer');
  const workflow = 'refund_workflow';
  // Python `get_order(order_id=...)` records kwargs; `send_confirmation(email, id)` records args.
  const call = (name: string, args: Args, positional?: Json[]) => {
    const input = positional ? { args: positional, kwargs: {} } : { args: [], kwargs: args };
    return entity(tracer, 'tool', name, input, workflow, () => runTool({ name, args }));
  };
  await entity(tracer, 'workflow', workflow, { args: [], kwargs: {} }, workflow, async () => {
    await call('get_order', { order_id: 'ORD-20417' });
    await sleep(2);
    // Started together, running side by side.
    await Promise.all([
      call('get_refund_policy', { category: 'small_appliances' }),
      call('get_customer', { email: EMAIL }),
    ]);
    await sleep(2);
    await call('issue_refund', REFUND_ARGS);
    await sleep(2);
    await call('send_confirmation', CONFIRMATION_ARGS, [EMAIL, 'RF-88213']);
    return null;
  });
}

// ---- LangSmith ---------------------------------------------------------------------------------
function langsmith(provider: BasicTracerProvider, withCallIds: boolean): Vendor {
  const tracer = provider.getTracer('langsmith', '0.12.0');
  const operations: Record<string, string> = { llm: 'chat', tool: 'execute_tool' };
  /** `traceable` starts the span; the translator sets the run's attributes at post and at patch. */
  const run = <T>(name: string, runType: string, inputs: unknown, extra: Attributes, fn: () => Promise<T>) =>
    traced(
      tracer,
      name,
      {
        begin: {
          'langsmith.traceable': 'true',
          'langsmith.trace.session_name': 'support-bot',
          'langsmith.span.kind': runType,
          'gen_ai.operation.name': operations[runType] ?? runType,
          'langsmith.trace.name': name,
          'gen_ai.system': runType === 'llm' ? 'openai' : 'langchain',
          'gen_ai.prompt': JSON.stringify(inputs),
          ...extra,
        },
        statusOk: true,
        // `traceable` wraps outputs that are not objects as `{outputs: value}`.
        end: (result) => ({
          'gen_ai.completion': JSON.stringify(typeof result === 'object' ? result : { outputs: result }),
        }),
        fail: (span, error) => {
          span.setStatus({ code: SpanStatusCode.ERROR });
          // The translator's `new Error(run.error)`; its stack names no local path of this script.
          const recorded = new Error(String(error));
          recorded.stack = `Error: ${String(error)}\n    at LangSmithToOTELTranslator.updateSpanForRun (translator.js)`;
          span.recordException(recorded);
        },
      },
      fn,
    );
  return {
    agent: (fn) => run('support-agent', 'chain', { question: QUESTION }, {}, fn),
    tool: (call) => {
      const ids = withCallIds
        ? { 'gen_ai.tool.call.id': call.id, 'langsmith.metadata.tool_call_id': call.id }
        : {};
      return run(call.name, 'tool', call.args, { 'gen_ai.tool.name': call.name, ...ids }, () =>
        runTool(call),
      );
    },
    llm: async (history, response, responseId) => {
      const request = { model: 'gpt-4o-mini', messages: history, tools: TOOL_SCHEMAS, temperature: 0 };
      const metadata = {
        'gen_ai.request.model': 'gpt-4o-mini',
        'langsmith.metadata.ls_provider': 'openai',
        'langsmith.metadata.ls_model_name': 'gpt-4o-mini',
        'langsmith.metadata.ls_model_type': 'chat',
      };
      await run('ChatOpenAI', 'llm', request, metadata, async () => {
        await sleep(3);
        const finish = response.tool_calls ? 'tool_calls' : 'stop';
        const usage = { input_tokens: 180 + history.length * 40, output_tokens: 24 };
        return {
          id: responseId,
          object: 'chat.completion',
          model: MODEL,
          choices: [{ index: 0, message: response, logprobs: null, finish_reason: finish }],
          usage_metadata: { ...usage, total_tokens: usage.input_tokens + usage.output_tokens },
        };
      });
    },
  };
}

// ---- Langfuse ----------------------------------------------------------------------------------
function langfuse(provider: BasicTracerProvider): Vendor {
  const tracer = provider.getTracer('langfuse-sdk', '5.11.1');
  const observation = (type: string, input: unknown, extra: Attributes = {}): Attributes => ({
    'langfuse.observation.type': type,
    'langfuse.observation.input': JSON.stringify(input),
    ...extra,
  });
  const output = (value: unknown): Attributes => ({ 'langfuse.observation.output': JSON.stringify(value) });
  return {
    agent: (fn) =>
      traced(
        tracer,
        'support-agent',
        { begin: observation('agent', { question: QUESTION }), end: (answer) => output({ answer }) },
        fn,
      ),
    // `observe(fn, {name, asType: 'tool'})`: input is the single argument, output the return value.
    tool: (call) =>
      traced(
        tracer,
        call.name,
        {
          begin: observation('tool', call.args),
          end: output,
          fail: (span, error) =>
            span.setAttributes({
              'langfuse.observation.level': 'ERROR',
              'langfuse.observation.status_message': error.message,
              ...output({ error: String(error) }),
            }),
        },
        () => runTool(call),
      ),
    // `observeOpenAI(new OpenAI())`: input `{messages, tools}`, output `choices[0].message`.
    llm: async (history, response) => {
      const begin = observation(
        'generation',
        { messages: history, tools: TOOL_SCHEMAS },
        { 'langfuse.observation.model.name': 'gpt-4o-mini' },
      );
      const end = () => ({
        ...output(response),
        'langfuse.observation.model.name': MODEL,
        'langfuse.observation.usage_details': JSON.stringify({
          input: 180 + history.length * 40,
          output: 24,
        }),
      });
      await traced(tracer, 'OpenAI.chat', { begin, end }, () => sleep(3));
    },
  };
}

// ---- capture ----------------------------------------------------------------------------------
/** Runs one trace; `includeOpen` keeps spans that never ended, as an in-process reader sees them. */
async function capture(file: string, into: Pipeline, run: () => Promise<void>, includeOpen = false) {
  into.finished.reset();
  into.started.spans = [];
  await run().catch((error: Error) =>
    console.log(`${file}: the agent failed as scripted (${error.message})`),
  );
  await into.provider.forceFlush();
  const spans: ReadableSpan[] = includeOpen ? into.started.spans : [...into.finished.getFinishedSpans()];
  const json = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));
  writeFileSync(join(OUT_DIR, `${file}.otlp.json`), json);
  console.log(`${file}: ${spans.length} spans`);
}

const traceloop = pipeline('support-agent-openllmetry');
await capture('openllmetry-documented-refund', traceloop, () =>
  runAgent(openllmetry(traceloop.provider), REFUND, false),
);
refundFails = true;
// The exception passes through the tool and agent wrappers: both spans stay open.
await capture(
  'openllmetry-documented-tool-error',
  traceloop,
  () => runAgent(openllmetry(traceloop.provider), TOOL_ERROR, false),
  true,
);
refundFails = false;
await capture('openllmetry-documented-decorators', traceloop, () => decoratorWorkflow(traceloop.provider));

const smith = pipeline('support-agent-langsmith');
await capture('langsmith-documented-refund', smith, () =>
  runAgent(langsmith(smith.provider, true), REFUND, true),
);
refundFails = true;
// Tool runs traced without a tool_call_id: linked to their turn by name and arguments.
await capture('langsmith-documented-tool-error', smith, () =>
  runAgent(langsmith(smith.provider, false), TOOL_ERROR, true),
);

refundFails = false;
const fuse = pipeline('support-agent-langfuse');
await capture('langfuse-documented-refund', fuse, () => runAgent(langfuse(fuse.provider), REFUND, true));
refundFails = true;
await capture('langfuse-documented-tool-error', fuse, () =>
  runAgent(langfuse(fuse.provider), TOOL_ERROR, true),
);

for (const { provider } of [traceloop, smith, fuse]) await provider.shutdown();
