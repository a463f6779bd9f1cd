/**
 * pydantic-ai (Python) cannot run here, so its spans are rebuilt from its source and tests and
 * emitted through a real OpenTelemetry SDK (BasicTracerProvider -> JsonTraceSerializer):
 *
 *   pydantic-ai-documented-v2-{refund,tool-error}.otlp.json   InstrumentationSettings(version=2)
 *   pydantic-ai-documented-v3-{refund,tool-error}.otlp.json   InstrumentationSettings(version=3)
 *
 * Sources (github.com/pydantic/pydantic-ai):
 * - `pydantic_ai_slim/pydantic_ai/_instrumentation.py` `InstrumentationNames.for_version`:
 *   version 2 -> spans `agent run`, `running tool`, `running output function`, attributes
 *   `agent_name`, `tool_arguments`, `tool_response`; version 3+ -> `invoke_agent {agent}`,
 *   `execute_tool {tool}`, `gen_ai.agent.name`, `gen_ai.tool.call.arguments`,
 *   `gen_ai.tool.call.result`. `open_model_request_span`: `chat {model}` CLIENT span with
 *   `gen_ai.operation.name=chat`, `gen_ai.provider.name`, `gen_ai.system`, `gen_ai.request.model`,
 *   `model_request_parameters`, baggage `gen_ai.agent.name` / `gen_ai.agent.call.id` /
 *   `gen_ai.conversation.id`, `gen_ai.input.messages` / `gen_ai.output.messages`.
 * - `pydantic_ai_slim/pydantic_ai/capabilities/instrumentation.py` (current code, used for v3):
 *   the run span (`gen_ai.operation.name=invoke_agent`, `pydantic_ai.all_messages`,
 *   `final_result`), tool spans (`gen_ai.operation.name=execute_tool`, `logfire.msg`
 *   `running tool: {tool}`; a `ToolRetryError` (ModelRetry, or arguments that fail validation)
 *   records the retry prompt as the result, an escaped `exception` event and status ERROR);
 *   a string result is written raw, anything else as JSON.
 * - `tests/test_logfire.py` at the pydantic-ai 1.0 era (used for v2): `agent run` span with
 *   `model_name`, `agent_name`, `gen_ai.agent.name`, no `gen_ai.operation.name`; `running tool`
 *   spans with only `gen_ai.tool.name`, `gen_ai.tool.call.id`, `tool_arguments`,
 *   `tool_response`, `logfire.msg`; a ModelRetry gives `tool_response` = "Tool error\n\nFix the
 *   errors and try again." at level error. The current `tests/test_logfire.py` (a tool-validation
 *   test parametrized by `failure_source` and `include_content`) adds
 *   `pydantic_ai.tool.failure_stage=validation` and `logfire.msg` `invalid tool call: {tool}` on
 *   a validation failure, the error text in the result attribute: used for v3 only.
 * - `pydantic_ai_slim/pydantic_ai/messages.py` `otel_message_parts`: tool calls
 *   `{type:"tool_call", id, name, arguments}`, tool returns and tool retry prompts
 *   `{type:"tool_call_response", id, name, result}` (`result` = the return value, or the retry
 *   prompt text), in a `user` message (role `tool` only from version 6).
 * Reconstructed, not quoted: exception messages and the validation error text, the model's
 * argument strings (OpenAI sends JSON strings, shown in v2; v3 shows them as objects), times.
 * Python SDKs stamp nanosecond times; the script gives every span a precise start and end.
 *
 * Run from the repository root: npx tsx test/spans/capture/documented-pydantic-ai.ts
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  type Attributes,
  context,
  type HrTime,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const AGENT = 'support_agent';
const MODEL = 'gpt-4o';
const RETRY_SUFFIX = '\n\nFix the errors and try again.';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Version = 2 | 3;
interface Call {
  id: string;
  name: string;
  args: { [key: string]: Json };
  /** What the tool returned; `retry` = the tool raised ModelRetry or its arguments failed validation. */
  returns: Json | { retry: string; stage?: 'validation' };
}
type Step = Call[] | string;

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({
    'service.name': 'support-api',
    'telemetry.sdk.language': 'python',
    'telemetry.sdk.name': 'opentelemetry',
  }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});

/** Wall-clock time with sub-millisecond precision, as Python's time_ns() gives it. */
function now(): HrTime {
  const ns = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const ORDER = {
  order_id: 'A1001',
  status: 'delivered',
  item: 'ceramic teapot',
  amount: 42.5,
  currency: 'EUR',
};
const POLICY = { refundable: true, window_days: 30, max_amount: 100 };
const EMAIL = 'ana@example.com';
const VALIDATION_ERROR =
  '1 validation error:\n```json\n[\n  {\n    "type": "float_parsing",\n    "loc": [\n      "amount"\n    ],\n' +
  '    "msg": "Input should be a valid number, unable to parse string as a number",\n' +
  '    "input": "forty-two euros"\n  }\n]\n```';

const CASES: Record<string, Step[]> = {
  refund: [
    [
      { id: 'call_get_order_1', name: 'get_order', args: { order_id: 'A1001' }, returns: ORDER },
      {
        id: 'call_get_refund_policy_1',
        name: 'get_refund_policy',
        args: { order_id: 'A1001' },
        returns: POLICY,
      },
    ],
    [
      {
        id: 'call_issue_refund_1',
        name: 'issue_refund',
        args: { order_id: 'A1001', amount: 42.5 },
        returns: { refund_id: 'R-7781', order_id: 'A1001', amount: 42.5, status: 'issued' },
      },
    ],
    [
      {
        id: 'call_send_confirmation_1',
        name: 'send_confirmation',
        args: { email: EMAIL, refund_id: 'R-7781' },
        returns: 'confirmation sent',
      },
    ],
    'Refund R-7781 of 42.50 EUR is issued; a confirmation email is on its way.',
  ],
  'tool-error': [
    [{ id: 'call_get_order_1', name: 'get_order', args: { order_id: 'A1001' }, returns: ORDER }],
    [
      {
        id: 'call_issue_refund_1',
        name: 'issue_refund',
        args: { order_id: 'A1001', amount: 'forty-two euros' },
        returns: { retry: VALIDATION_ERROR, stage: 'validation' },
      },
    ],
    [
      {
        id: 'call_issue_refund_2',
        name: 'issue_refund',
        args: { order_id: 'A1001', amount: 42.5 },
        returns: { retry: 'payment gateway timeout' },
      },
    ],
    'Sorry, the payment gateway did not answer; please try again later.',
  ],
};

type Message = { role: string; parts: Json[]; finish_reason?: string };

function isRetry(returns: Call['returns']): returns is { retry: string; stage?: 'validation' } {
  return typeof returns === 'object' && returns !== null && !Array.isArray(returns) && 'retry' in returns;
}

/** The tool_call part: v2 shows the model's JSON string as OpenAI sent it, v3 an object. */
function toolCallPart(call: Call, version: Version): Json {
  const args = version === 2 ? JSON.stringify(call.args) : call.args;
  return { type: 'tool_call', id: call.id, name: call.name, arguments: args };
}

function toolResponsePart(call: Call): Json {
  const result = isRetry(call.returns) ? call.returns.retry + RETRY_SUFFIX : call.returns;
  return { type: 'tool_call_response', id: call.id, name: call.name, result };
}

async function run(version: Version, steps: Step[], runId: string): Promise<void> {
  const tracer = provider.getTracer('pydantic-ai', version === 2 ? '1.0.0' : undefined);
  const baggage = {
    'gen_ai.agent.name': AGENT,
    'gen_ai.agent.call.id': runId,
    'gen_ai.conversation.id': `conv-${runId}`,
  };
  const runAttributes: Attributes =
    version === 2
      ? { model_name: MODEL, agent_name: AGENT, 'gen_ai.agent.name': AGENT, 'logfire.msg': `${AGENT} run` }
      : {
          model_name: MODEL,
          agent_name: AGENT,
          'gen_ai.agent.name': AGENT,
          'gen_ai.agent.call.id': runId,
          'gen_ai.conversation.id': `conv-${runId}`,
          'gen_ai.operation.name': 'invoke_agent',
          'logfire.msg': `${AGENT} run`,
        };
  const agentSpan = tracer.startSpan(version === 2 ? 'agent run' : `invoke_agent ${AGENT}`, {
    attributes: runAttributes,
    startTime: now(),
  });
  const agentContext = traceContext(agentSpan);
  const messages: Message[] = [
    { role: 'user', parts: [{ type: 'text', content: 'Order A1001 arrived broken. Please refund me.' }] },
  ];
  let finalText = '';
  for (const step of steps) {
    const output: Message =
      typeof step === 'string'
        ? { role: 'assistant', parts: [{ type: 'text', content: step }], finish_reason: 'stop' }
        : {
            role: 'assistant',
            parts: step.map((call) => toolCallPart(call, version)),
            finish_reason: 'tool_call',
          };
    // The 1.0-era (v2) output message has no finish_reason; the current code adds it.
    if (version === 2) delete output.finish_reason;
    await chat(tracer, agentContext, version, baggage, messages, output);
    messages.push({ role: output.role, parts: output.parts });
    if (typeof step === 'string') {
      finalText = step;
      break;
    }
    // Tool calls of one response run concurrently (asyncio tasks), each span under the run span.
    await Promise.all(step.map((call, i) => tool(tracer, agentContext, version, baggage, call, i)));
    messages.push({ role: 'user', parts: step.map(toolResponsePart) });
  }
  agentSpan.setAttributes({
    final_result: finalText,
    'pydantic_ai.all_messages': JSON.stringify(messages),
    'gen_ai.aggregated_usage.input_tokens': 812,
    'gen_ai.aggregated_usage.output_tokens': 96,
  });
  agentSpan.end(now());
}

function traceContext(span: Span) {
  return trace.setSpan(context.active(), span);
}

async function chat(
  tracer: ReturnType<BasicTracerProvider['getTracer']>,
  parent: ReturnType<typeof traceContext>,
  version: Version,
  baggage: Attributes,
  input: Message[],
  output: Message,
): Promise<void> {
  const span = tracer.startSpan(
    `chat ${MODEL}`,
    {
      kind: version === 2 ? SpanKind.INTERNAL : SpanKind.CLIENT,
      startTime: now(),
      attributes: {
        'gen_ai.operation.name': 'chat',
        ...(version === 3 && { 'gen_ai.provider.name': 'openai' }),
        'gen_ai.system': 'openai',
        'gen_ai.request.model': MODEL,
        'server.address': 'api.openai.com',
        model_request_parameters: JSON.stringify({
          function_tools: [],
          output_mode: 'text',
          allow_text_output: true,
        }),
        ...(version === 3 && baggage),
      },
    },
    parent,
  );
  await sleep(4);
  span.setAttributes({
    'gen_ai.input.messages': JSON.stringify(input),
    'gen_ai.output.messages': JSON.stringify([output]),
    'gen_ai.usage.input_tokens': 120 + input.length * 40,
    'gen_ai.usage.output_tokens': 24,
    'gen_ai.response.model': `${MODEL}-2024-08-06`,
    ...(version === 3 && { 'gen_ai.response.finish_reasons': [output.finish_reason ?? 'stop'] }),
    'logfire.msg': `chat ${MODEL}`,
  });
  span.end(now());
}

async function tool(
  tracer: ReturnType<BasicTracerProvider['getTracer']>,
  parent: ReturnType<typeof traceContext>,
  version: Version,
  baggage: Attributes,
  call: Call,
  index: number,
): Promise<void> {
  await sleep(index); // asyncio starts the tasks one after the other
  const stage = isRetry(call.returns) ? call.returns.stage : undefined;
  const argsKey = version === 2 ? 'tool_arguments' : 'gen_ai.tool.call.arguments';
  const resultKey = version === 2 ? 'tool_response' : 'gen_ai.tool.call.result';
  const span = tracer.startSpan(
    version === 2 ? 'running tool' : `execute_tool ${call.name}`,
    {
      startTime: now(),
      attributes: {
        ...(version === 3 && { 'gen_ai.operation.name': 'execute_tool' }),
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.id,
        [argsKey]: JSON.stringify(call.args),
        ...(version === 3 && baggage),
        'logfire.msg':
          stage === 'validation' && version === 3
            ? `invalid tool call: ${call.name}`
            : `running tool: ${call.name}`,
        ...(stage === 'validation' && version === 3 && { 'pydantic_ai.tool.failure_stage': 'validation' }),
      },
    },
    parent,
  );
  await sleep(3 + index);
  const returns = call.returns;
  if (isRetry(returns)) {
    span.setAttribute(resultKey, returns.retry + RETRY_SUFFIX);
    span.addEvent('exception', {
      'exception.type': 'ToolRetryError',
      'exception.message': stage === 'validation' ? VALIDATION_ERROR : returns.retry,
      'exception.stacktrace':
        'Traceback (most recent call last):\n  ...\npydantic_ai.exceptions.ToolRetryError',
      'exception.escaped': 'True',
    });
    span.setStatus({ code: SpanStatusCode.ERROR });
  } else {
    span.setAttribute(resultKey, typeof returns === 'string' ? returns : JSON.stringify(returns));
  }
  span.end(now());
}

for (const version of [2, 3] as const) {
  for (const [name, steps] of Object.entries(CASES)) {
    exporter.reset();
    await run(version, steps, `run-${version}-${name}`);
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const file = join(OUT_DIR, `pydantic-ai-documented-v${version}-${name}.otlp.json`);
    writeFileSync(file, new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
    console.log(`${file}: ${spans.length} spans`);
  }
}
await provider.shutdown();
