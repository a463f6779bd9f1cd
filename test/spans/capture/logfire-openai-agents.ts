/**
 * The OpenAI Agents SDK (Python) under logfire cannot run here; logfire's own tests hold real
 * runs of it (VCR cassettes replayed, spans kept as inline snapshots of
 * `exporter.exported_spans_as_dict(parse_json_attributes=True)`). This script writes three of
 * them as OTLP fixtures, emitted through a real OpenTelemetry SDK (BasicTracerProvider ->
 * JsonTraceSerializer) with the snapshot's ids, times, names and attributes:
 *
 *   logfire-openai-agents-responses-handoff.otlp.json   test_responses
 *   logfire-openai-agents-file-search.otlp.json         test_file_search
 *   logfire-openai-agents-chat-completion.otlp.json     test_chat_completions
 *
 * and one built from the documented shape (those snapshots' traces all have `group_id` "null"):
 *
 *   logfire-openai-agents-conversation.otlp.json        two traces, one per user message, of one
 *     conversation (`RunConfig(group_id=...)`): `get_order` in the first, `issue_refund` in the
 *     second. Each span as test_responses's of its template; the trace span with `group_id` a
 *     plain string attribute, as logfire writes a str keyword argument (`create_trace` passes
 *     the SDK's `group_id` and `metadata` to `logfire.span('OpenAI Agents trace: {name}', ...)`);
 *     trace and span ids numbered on across the two traces as logfire's test exporter does.
 *
 * Source: github.com/pydantic/logfire `tests/otel_integrations/test_openai_agents.py` at commit
 * 002868a8b79b36f38d159feee9a7796e1bfac05b, an older release than the shared corpus's snapshot
 * (e484a6b53a0d): no `Turn` or `Task` spans, so a run's spans sit directly under its agent span.
 * Converted as the corpus's logfire traces were (../shared/corpus/realworld/SOURCES.md):
 * attributes shown parsed are written back as compact JSON strings, tuples as arrays; values the
 * snapshot only matches (`IsStr()`, `IsPartialDict()`) become a placeholder string and `{}`;
 * scope `logfire.openai_agents` (the integration's `custom_scope_suffix`); kind INTERNAL; status
 * ERROR where `logfire.level_num` >= 17 (none here). The test's `simplify_spans` had already
 * dropped `logfire.json_schema` and the Responses spans' `response` and `model_settings`.
 *
 * Run from the repository root: npx tsx test/spans/capture/logfire-openai-agents.ts
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Attributes, type AttributeValue, type Context, context, trace } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  type IdGenerator,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCOPE = 'logfire.openai_agents';
const IS_STR = (name: string) => `<${name}: matched by a dirty-equals placeholder in the snapshot>`;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One span of a snapshot: ids as the snapshot numbers them, times in seconds of logfire's fake clock. */
interface SnapshotSpan {
  name: string;
  id: number;
  parent?: number;
  start: number;
  end: number;
  attributes: Record<string, Json>;
}

const code = (fn: string) => ({
  'code.filepath': 'test_openai_agents.py',
  'code.function': fn,
  'code.lineno': 123,
});

const traceSpan = (
  fn: string,
  id: number,
  start: number,
  end: number,
  name: string,
  traceId: Json,
  // logfire writes the SDK's None as the JSON text `null`, a str as it is.
  groupId: string | null = null,
) => ({
  name: 'OpenAI Agents trace: {name}',
  id,
  start,
  end,
  attributes: {
    ...code(fn),
    name,
    group_id: groupId ?? 'null',
    metadata: 'null',
    'logfire.msg_template': 'OpenAI Agents trace: {name}',
    'logfire.msg': `OpenAI Agents trace: ${name}`,
    'logfire.span_type': 'span',
    agent_trace_id: traceId,
  },
});

const agentRun = (
  fn: string,
  id: number,
  parent: number,
  start: number,
  end: number,
  agent: { name: string; handoffs: string[]; tools: string[] },
): SnapshotSpan => ({
  name: 'Agent run: {name!r}',
  id,
  parent,
  start,
  end,
  attributes: {
    ...code(fn),
    'logfire.msg_template': 'Agent run: {name!r}',
    'logfire.span_type': 'span',
    'logfire.msg': `Agent run: '${agent.name}'`,
    name: agent.name,
    handoffs: agent.handoffs,
    tools: agent.tools,
    'gen_ai.system': 'openai',
    output_type: 'str',
  },
});

const responses = (
  id: number,
  parent: number,
  start: number,
  end: number,
  attributes: Record<string, Json>,
) => ({
  name: 'Responses API with {gen_ai.request.model!r}',
  id,
  parent,
  start,
  end,
  attributes: {
    'logfire.msg_template': 'Responses API with {gen_ai.request.model!r}',
    'logfire.span_type': 'span',
    'logfire.msg': "Responses API with 'gpt-4o'",
    ...attributes,
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.response.model': 'gpt-4o-2024-08-06',
    'gen_ai.system': 'openai',
    'gen_ai.operation.name': 'chat',
  },
});

const user = (content: string) => ({ 'event.name': 'gen_ai.user.message', content, role: 'user' });
const assistant = (content: string) => ({
  'event.name': 'gen_ai.assistant.message',
  content,
  role: 'assistant',
});
const asked = (id: string, name: string, args = '{}') => ({
  'event.name': 'gen_ai.assistant.message',
  role: 'assistant',
  tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
});

const PROMPT = 'Generate a random number then, hand off to agent2.';
const RANDOM = 'call_vwqy7HyGGnNht9NNfxMnnouY';
const TRANSFER = 'call_oEA0MnUXCwKevx8txteoopNL';

const RESPONSES_HANDOFF: SnapshotSpan[] = [
  responses(5, 3, 3, 4, {
    response_id: 'resp_67ced68228748191b31ea5d9172a7b4b',
    raw_input: [{ content: PROMPT, role: 'user' }],
    events: [user(PROMPT), asked(RANDOM, 'random_number'), asked(TRANSFER, 'transfer_to_agent2')],
  }),
  {
    name: 'Function: {name}',
    id: 7,
    parent: 3,
    start: 5,
    end: 6,
    attributes: {
      'logfire.msg_template': 'Function: {name}',
      'logfire.span_type': 'span',
      'logfire.msg': 'Function: random_number',
      name: 'random_number',
      input: {},
      mcp_data: 'null',
      'gen_ai.system': 'openai',
      output: '4',
    },
  },
  {
    name: 'Handoff: {from_agent} → {to_agent}',
    id: 9,
    parent: 3,
    start: 7,
    end: 8,
    attributes: {
      'logfire.msg_template': 'Handoff: {from_agent} → {to_agent}',
      'logfire.span_type': 'span',
      'logfire.msg': 'Handoff: agent1 → agent2',
      from_agent: 'agent1',
      'gen_ai.system': 'openai',
      to_agent: 'agent2',
    },
  },
  agentRun('test_responses', 3, 1, 2, 9, { name: 'agent1', handoffs: ['agent2'], tools: ['random_number'] }),
  responses(13, 11, 11, 12, {
    ...code('test_responses'),
    response_id: 'resp_67ced68425f48191a5fb0c2b61cb27dd',
    raw_input: [
      { content: PROMPT, role: 'user' },
      {
        id: 'fc_67ced68352a48191aca3872f9376de86',
        arguments: '{}',
        call_id: RANDOM,
        name: 'random_number',
        type: 'function_call',
        status: 'completed',
      },
      {
        id: 'fc_67ced683c8d88191b21be486e163e815',
        arguments: '{}',
        call_id: TRANSFER,
        name: 'transfer_to_agent2',
        type: 'function_call',
        status: 'completed',
      },
      { call_id: RANDOM, output: '4', type: 'function_call_output' },
      { call_id: TRANSFER, output: '{"assistant": "agent2"}', type: 'function_call_output' },
    ],
    events: [
      { 'event.name': 'gen_ai.system.message', content: 'Return double the number', role: 'system' },
      user(PROMPT),
      asked(RANDOM, 'random_number'),
      asked(TRANSFER, 'transfer_to_agent2'),
      { 'event.name': 'gen_ai.tool.message', role: 'tool', id: RANDOM, content: '4', name: 'random_number' },
      {
        'event.name': 'gen_ai.tool.message',
        role: 'tool',
        id: TRANSFER,
        content: '{"assistant": "agent2"}',
        name: 'transfer_to_agent2',
      },
      assistant("The random number generated is 4, and it's been handed off to agent2."),
    ],
    'gen_ai.usage.input_tokens': 89,
    'gen_ai.usage.output_tokens': 18,
  }),
  agentRun('test_responses', 11, 1, 10, 13, { name: 'agent2', handoffs: [], tools: [] }),
  traceSpan('test_responses', 1, 1, 14, 'Agent workflow', IS_STR('agent_trace_id')),
];

const FILE_SEARCH_ITEM = {
  id: 'fs_67ceff3ab5b081919945a1b5a1185949',
  queries: ['Who made Logfire?'],
  status: 'completed',
  type: 'file_search_call',
  results: null,
};
const fileSearchEvent = (role: string) => ({
  'event.name': 'gen_ai.unknown',
  role,
  content: 'file_search_call\n\nSee JSON for details',
  data: FILE_SEARCH_ITEM,
});
const FILE_AGENT = { name: 'agent', handoffs: [], tools: ['file_search'] };

const FILE_SEARCH: SnapshotSpan[] = [
  responses(5, 3, 3, 4, {
    response_id: 'resp_67ceff39d5e88191885004de76d26e43',
    raw_input: [{ content: 'Who made Logfire?', role: 'user' }],
    events: [
      user('Who made Logfire?'),
      fileSearchEvent('assistant'),
      assistant('Logfire is made by Pydantic.'),
    ],
    'gen_ai.usage.input_tokens': 1974,
    'gen_ai.usage.output_tokens': 38,
  }),
  agentRun('test_file_search', 3, 1, 2, 5, FILE_AGENT),
  responses(9, 7, 7, 8, {
    response_id: 'resp_67ceff3c84548191b620a2cf4c2e37f2',
    raw_input: [
      { content: 'Who made Logfire?', role: 'user' },
      FILE_SEARCH_ITEM,
      {
        id: 'msg_67ceff3bede881918dd73f17abeefdf4',
        content: [
          {
            annotations: [
              {
                file_id: 'file-CmKZQn5qLRRgcAjS61GSqv',
                index: 27,
                type: 'file_citation',
                filename: 'test.txt',
              },
            ],
            text: 'Logfire is made by Pydantic.',
            type: 'output_text',
          },
        ],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
      { role: 'user', content: '2+2?' },
    ],
    events: [
      user('Who made Logfire?'),
      fileSearchEvent('unknown'),
      assistant('Logfire is made by Pydantic.'),
      user('2+2?'),
      assistant('The answer is 4.'),
    ],
    'gen_ai.usage.input_tokens': 923,
    'gen_ai.usage.output_tokens': 8,
  }),
  agentRun('test_file_search', 7, 1, 6, 9, FILE_AGENT),
  traceSpan('test_file_search', 1, 1, 10, 'my_trace', 'trace_123'),
];

const ANSWER = {
  content: '1 + 1 = 2',
  refusal: null,
  role: 'assistant',
  audio: null,
  function_call: null,
  tool_calls: null,
  annotations: [],
};

const CHAT_COMPLETION: SnapshotSpan[] = [
  {
    name: 'Chat completion with {gen_ai.request.model!r}',
    id: 5,
    parent: 3,
    start: 3,
    end: 4,
    attributes: {
      'logfire.msg_template': 'Chat completion with {gen_ai.request.model!r}',
      'logfire.tags': ['LLM'],
      'logfire.span_type': 'span',
      'logfire.msg': "Chat completion with 'gpt-4o'",
      input: [{ role: 'user', content: '1+1?' }],
      output: [ANSWER],
      model_config: {},
      usage: { input_tokens: 11, output_tokens: 8 },
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 8,
      request_data: {
        messages: [
          { role: 'user', content: '1+1?' },
          {
            content: '1 + 1 = 2',
            refusal: null,
            role: 'assistant',
            annotations: [],
            audio: null,
            function_call: null,
            tool_calls: null,
          },
        ],
        model: 'gpt-4o',
      },
    },
  },
  agentRun('test_chat_completions', 3, 1, 2, 5, { name: 'my_agent', handoffs: [], tools: [] }),
  traceSpan('test_chat_completions', 1, 1, 6, 'Agent workflow', IS_STR('agent_trace_id')),
];

/** The conversation: one user message per trace, both traces under one `group_id`. */
const GROUP_ID = 'thread_ana_a1001';
const SUPPORT = { name: 'support', handoffs: [], tools: ['get_order', 'issue_refund'] };
const ORDER_ARGS = '{"orderId":"A1001"}';
const ORDER = '{"orderId":"A1001","status":"delivered","item":"ceramic teapot","amount":42.5}';
const REFUND_ARGS = '{"orderId":"A1001","amount":42.5}';
const REFUND = '{"refundId":"R-7781","orderId":"A1001","amount":42.5,"status":"issued"}';
const LOOKUP_CALL = 'call_get_order_A1001';
const REFUND_CALL = 'call_issue_refund_A1001';
const MESSAGE_1 = 'Where is my order A1001?';
const MESSAGE_2 = 'It arrived broken. Please refund it.';
const ANSWER_1 = 'Order A1001 (ceramic teapot) was delivered.';
const functionCall = (id: string, callId: string, name: string, args: string) => ({
  id,
  arguments: args,
  call_id: callId,
  name,
  type: 'function_call',
  status: 'completed',
});
const functionSpan = (
  id: number,
  parent: number,
  start: number,
  name: string,
  input: Json,
  output: string,
) => ({
  name: 'Function: {name}',
  id,
  parent,
  start,
  end: start + 1,
  attributes: {
    'logfire.msg_template': 'Function: {name}',
    'logfire.span_type': 'span',
    'logfire.msg': `Function: ${name}`,
    name,
    input,
    mcp_data: 'null',
    'gen_ai.system': 'openai',
    output,
  },
});
const toolEvent = (id: string, name: string, content: string) => ({
  'event.name': 'gen_ai.tool.message',
  role: 'tool',
  id,
  content,
  name,
});

/** Message 1: the lookup. */
const CONVERSATION_LOOKUP: SnapshotSpan[] = [
  responses(5, 3, 3, 4, {
    response_id: 'resp_conversation_1a',
    raw_input: [{ content: MESSAGE_1, role: 'user' }],
    events: [user(MESSAGE_1), asked(LOOKUP_CALL, 'get_order', ORDER_ARGS)],
  }),
  functionSpan(7, 3, 5, 'get_order', JSON.parse(ORDER_ARGS), ORDER),
  responses(9, 3, 7, 8, {
    response_id: 'resp_conversation_1b',
    raw_input: [
      { content: MESSAGE_1, role: 'user' },
      functionCall('fc_conversation_1', LOOKUP_CALL, 'get_order', ORDER_ARGS),
      { call_id: LOOKUP_CALL, output: ORDER, type: 'function_call_output' },
    ],
    events: [
      user(MESSAGE_1),
      asked(LOOKUP_CALL, 'get_order', ORDER_ARGS),
      toolEvent(LOOKUP_CALL, 'get_order', ORDER),
      assistant(ANSWER_1),
    ],
  }),
  agentRun('test_conversation', 3, 1, 2, 9, SUPPORT),
  traceSpan('test_conversation', 1, 1, 10, 'Support chat', 'trace_conversation_message_1', GROUP_ID),
];

/**
 * Message 2: the refund. Its input is the conversation so far (`result.to_input_list()` plus the
 * new message), so the model is shown message 1's lookup result again.
 */
const HISTORY = [
  { content: MESSAGE_1, role: 'user' },
  functionCall('fc_conversation_1', LOOKUP_CALL, 'get_order', ORDER_ARGS),
  { call_id: LOOKUP_CALL, output: ORDER, type: 'function_call_output' },
  { content: ANSWER_1, role: 'assistant' },
  { content: MESSAGE_2, role: 'user' },
];
const CONVERSATION_REFUND: SnapshotSpan[] = [
  responses(15, 13, 23, 24, {
    response_id: 'resp_conversation_2a',
    raw_input: HISTORY,
    events: [user(MESSAGE_2), asked(REFUND_CALL, 'issue_refund', REFUND_ARGS)],
  }),
  functionSpan(17, 13, 25, 'issue_refund', JSON.parse(REFUND_ARGS), REFUND),
  responses(19, 13, 27, 28, {
    response_id: 'resp_conversation_2b',
    raw_input: [
      ...HISTORY,
      functionCall('fc_conversation_2', REFUND_CALL, 'issue_refund', REFUND_ARGS),
      { call_id: REFUND_CALL, output: REFUND, type: 'function_call_output' },
    ],
    events: [
      user(MESSAGE_2),
      asked(REFUND_CALL, 'issue_refund', REFUND_ARGS),
      toolEvent(REFUND_CALL, 'issue_refund', REFUND),
      assistant('Refund R-7781 of 42.5 EUR issued.'),
    ],
  }),
  agentRun('test_conversation', 13, 11, 22, 29, SUPPORT),
  traceSpan('test_conversation', 11, 21, 30, 'Support chat', 'trace_conversation_message_2', GROUP_ID),
];

/** Hands out the ids the snapshot gives, one span at a time. */
class SnapshotIds implements IdGenerator {
  next = '';
  traceId = '';
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.next;
  }
}

/** Parsed values back to the JSON text logfire wrote; strings, numbers and lists of strings as they are. */
function attributeValue(value: Json): AttributeValue {
  if (value === null || typeof value !== 'object') return value === null ? 'null' : value;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as string[];
  return JSON.stringify(value);
}

const hex = (id: number, width: number) => id.toString(16).padStart(width, '0');
const seconds = (s: number): [number, number] => [s, 0];

/** Writes the snapshot's traces (trace ids 1, 2, … in this order) to one file. */
async function write(file: string, ...traces: (readonly SnapshotSpan[])[]): Promise<void> {
  const ids = new SnapshotIds();
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    idGenerator: ids,
    resource: resourceFromAttributes({ 'service.name': 'openai-agents' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer(SCOPE);
  for (const [index, snapshot] of traces.entries()) {
    ids.traceId = hex(index + 1, 32);
    const contexts = new Map<number, Context>();
    const started = new Map<number, ReturnType<typeof tracer.startSpan>>();
    // Parents first, so each span starts in its parent's context.
    for (const span of [...snapshot].sort((a, b) => a.start - b.start)) {
      ids.next = hex(span.id, 16);
      const parent = span.parent === undefined ? context.active() : contexts.get(span.parent);
      if (!parent) throw new Error(`${file}: span ${span.id} starts before its parent ${span.parent}`);
      const attributes: Attributes = {};
      for (const [key, value] of Object.entries(span.attributes)) attributes[key] = attributeValue(value);
      const started_ = tracer.startSpan(span.name, { startTime: seconds(span.start), attributes }, parent);
      started.set(span.id, started_);
      contexts.set(span.id, trace.setSpan(context.active(), started_));
    }
    // Ended in the snapshot's order, which is the order logfire exported them.
    for (const span of snapshot) started.get(span.id)?.end(seconds(span.end));
  }
  await provider.forceFlush();
  const path = join(OUT_DIR, file);
  const json = JSON.parse(
    new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())),
  );
  writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`);
  console.log(`${path}: ${exporter.getFinishedSpans().length} spans`);
  await provider.shutdown();
}

await write('logfire-openai-agents-responses-handoff.otlp.json', RESPONSES_HANDOFF);
await write('logfire-openai-agents-file-search.otlp.json', FILE_SEARCH);
await write('logfire-openai-agents-chat-completion.otlp.json', CHAT_COMPLETION);
await write('logfire-openai-agents-conversation.otlp.json', CONVERSATION_LOOKUP, CONVERSATION_REFUND);
