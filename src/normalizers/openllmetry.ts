/**
 * OpenLLMetry (Traceloop; keys in `@traceloop/ai-semantic-conventions` `SpanAttributes`):
 *
 * - Decorators (`withTool` / `@tool`, Python `@tool`): span `{name}.tool`, `traceloop.span.kind`
 *   = tool, `traceloop.entity.name`; arguments in `traceloop.entity.input` as
 *   `{"args": [...], "kwargs": {...}}`, the return value in `traceloop.entity.output`; no call
 *   id. A tool that throws leaves its span open and unmarked (JS and Python alike): no result.
 *   `traceloop.span.kind` = agent marks an agent run (`{name}.agent`); workflow and task are
 *   structure.
 * - The LangChain instrumentation: `execute_tool {tool}` with `gen_ai.operation.name` =
 *   execute_tool but `traceloop.span.kind` = task, input `{"args": [input]}` (the arguments'
 *   JSON as a string) and no `gen_ai.tool.call.arguments`: it must be read here, before the
 *   plain GenAI convention. Its tool name is the LangChain class (`DynamicStructuredTool`);
 *   the ToolMessage in `traceloop.entity.output` has the real name and the call id.
 * - The Vercel AI SDK transform and the MCP instrumentation also set `traceloop.span.kind` =
 *   tool; GenAI keys on the span win over the entity ones, MCP's `{tool_name, arguments}` input
 *   is unwrapped.
 * - Legacy LLM spans (`llm.request.type` = chat | completion): indexed
 *   `gen_ai.completion.N.tool_calls.M.{id,name,arguments}` (asked for),
 *   `gen_ai.completion.N.content` (the text written) and
 *   `gen_ai.prompt.N.{role,content,tool_call_id}` (shown). Spans that already carry
 *   `gen_ai.input/output.messages` are left to the GenAI convention.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { Attributes, AttributeValue, SpanRecord } from '../model/span-record.js';
import type { Captured } from '../model/trajectory.js';
import { cutAnswer, withAnswerText } from './answer-text.js';
import { capturedJson, jsonAttribute, stringAttribute } from './attributes.js';
import { contentValue, unwrapToolOutput } from './chat-messages.js';
import type { Convention, RequestedCall, ShownResult, SpanReading } from './convention.js';
import { spanOutcome } from './span-outcome.js';

/** Attribute keys of OpenLLMetry that this normalizer reads. */
export const TRACELOOP = {
  spanKind: 'traceloop.span.kind',
  entityName: 'traceloop.entity.name',
  entityInput: 'traceloop.entity.input',
  entityOutput: 'traceloop.entity.output',
  requestType: 'llm.request.type',
  promptPrefix: 'gen_ai.prompt.',
  completionPrefix: 'gen_ai.completion.',
  operationName: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  agentName: 'gen_ai.agent.name',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const OPENLLMETRY = 'openllmetry';

const LLM_REQUEST_TYPES = new Set(['chat', 'completion']);

// Built once: a key built per span is hashed per span, and every span is offered to this convention.
const FIRST_COMPLETION_ROLE = `${TRACELOOP.completionPrefix}0.role`;
const FIRST_PROMPT_ROLE = `${TRACELOOP.promptPrefix}0.role`;

/**
 * The OpenLLMetry convention: claims spans by `traceloop.span.kind` (tool; agent; task when
 * `gen_ai.operation.name` = execute_tool) and legacy LLM spans by `llm.request.type` or
 * indexed `gen_ai.prompt.N` / `gen_ai.completion.N` keys.
 */
export const openllmetry: Convention = {
  name: OPENLLMETRY,
  marks: { keys: [TRACELOOP.spanKind, TRACELOOP.requestType, FIRST_COMPLETION_ROLE, FIRST_PROMPT_ROLE] },
  // Traceloop.set_association_properties({ session_id }), copied onto every span of the context.
  conversationKeys: ['traceloop.association.properties.session_id'],
  read(span: SpanRecord): SpanReading | undefined {
    const attributes = span.attributes;
    const kind = stringAttribute(attributes, TRACELOOP.spanKind);
    if (kind !== undefined) {
      const operation = stringAttribute(attributes, TRACELOOP.operationName);
      if (kind === 'tool' || operation === 'execute_tool') return readTool(span);
      if (kind === 'agent') {
        const name =
          stringAttribute(attributes, TRACELOOP.entityName) ??
          stringAttribute(attributes, TRACELOOP.agentName);
        return { kind: 'agent', ...(name && { name }), convention: OPENLLMETRY };
      }
      return undefined;
    }
    return isLegacyLlmSpan(attributes) ? readLegacyTurn(attributes) : undefined;
  },
};

function readTool(span: SpanRecord): SpanReading {
  const attributes = span.attributes;
  const input = entityInput(jsonAttribute(attributes, TRACELOOP.entityInput));
  const output = unwrapToolOutput(entityOutput(jsonAttribute(attributes, TRACELOOP.entityOutput), input.mcp));
  const tool =
    stringAttribute(attributes, TRACELOOP.toolName) ??
    output.name ??
    stringAttribute(attributes, TRACELOOP.entityName) ??
    toolFromSpanName(span.name);
  const callId = stringAttribute(attributes, TRACELOOP.toolCallId) ?? output.callId;
  const agentName = stringAttribute(attributes, TRACELOOP.agentName);
  return {
    kind: 'tool',
    call: {
      tool,
      ...(callId && { callId }),
      args: Object.hasOwn(attributes, TRACELOOP.toolCallArguments)
        ? jsonAttribute(attributes, TRACELOOP.toolCallArguments)
        : input.args,
      result: Object.hasOwn(attributes, TRACELOOP.toolCallResult)
        ? jsonAttribute(attributes, TRACELOOP.toolCallResult)
        : output.result,
      outcome: output.failure ?? spanOutcome(span),
      ...(agentName && { agentName }),
      // The MCP instrumentation's `{tool_name, arguments}` input: an MCP call, its server unrecorded.
      ...(input.mcp && { mcpServer: {} }),
      convention: OPENLLMETRY,
    },
  };
}

/** `get_order.tool` -> get_order; `execute_tool get_order` -> get_order. */
function toolFromSpanName(name: string): string {
  if (name.endsWith('.tool')) return name.slice(0, -'.tool'.length);
  const space = name.indexOf(' ');
  return space === -1 ? name : name.slice(space + 1).trim();
}

/**
 * The arguments inside `traceloop.entity.input`:
 * - decorators `{"args": [], "kwargs": {...}}` -> the kwargs (a tool called with the model's
 *   argument object, JS `withTool(config, fn, args)` or Python `tool(**args)`);
 *   `{"args": [a, b], "kwargs": {}}` -> the positional list; both used -> the whole record;
 * - LangChain `{"args": [input]}` -> the input, parsed when it is the arguments' JSON;
 * - MCP `{"tool_name": ..., "arguments": {...}}` -> the arguments.
 * Anything else (the Vercel transform copies the raw arguments) is taken as it is.
 */
function entityInput(input: Captured<JsonValue>): { args: Captured<JsonValue>; mcp: boolean } {
  if (!input.captured || input.parseError !== undefined || !isJsonObject(input.value)) {
    return { args: input, mcp: false };
  }
  const value = input.value;
  const keys = Object.keys(value);
  if (Object.hasOwn(value, 'tool_name') && Object.hasOwn(value, 'arguments')) {
    return { args: { captured: true, value: value.arguments as JsonValue }, mcp: true };
  }
  const positional = value.args;
  if (!Array.isArray(positional) || keys.some((key) => key !== 'args' && key !== 'kwargs')) {
    return { args: input, mcp: false };
  }
  const captured = (inner: JsonValue): { args: Captured<JsonValue>; mcp: boolean } => ({
    args: { captured: true, value: inner },
    mcp: false,
  });
  if (!Object.hasOwn(value, 'kwargs')) {
    const [only] = positional;
    return positional.length === 1 && only !== undefined
      ? captured(contentValue(only))
      : captured(positional);
  }
  const named = isJsonObject(value.kwargs) ? value.kwargs : {};
  const hasNamed = Object.keys(named).length > 0;
  if (positional.length === 0) return captured(named);
  return hasNamed ? captured(value) : captured(positional);
}

/** MCP writes `{result: <first text content>, is_error}`: the result text, parsed when JSON. */
function entityOutput(output: Captured<JsonValue>, mcp: boolean): Captured<JsonValue> {
  if (!mcp || !output.captured || !isJsonObject(output.value) || !Object.hasOwn(output.value, 'result')) {
    return output;
  }
  return { captured: true, value: contentValue(output.value.result as JsonValue) };
}

function isLegacyLlmSpan(attributes: Attributes): boolean {
  if (TRACELOOP.inputMessages in attributes || TRACELOOP.outputMessages in attributes) return false;
  const requestType = stringAttribute(attributes, TRACELOOP.requestType);
  // Vector DB and embedding spans carry llm.request.type too, with their own values.
  if (requestType !== undefined) return LLM_REQUEST_TYPES.has(requestType);
  return FIRST_COMPLETION_ROLE in attributes || FIRST_PROMPT_ROLE in attributes;
}

/** Indexed keys `{prefix}N.field` grouped by N, in index order. */
function indexedFields(attributes: Attributes, prefix: string): Map<number, Map<string, AttributeValue>> {
  const byIndex = new Map<number, Map<string, AttributeValue>>();
  for (const [key, value] of Object.entries(attributes)) {
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length);
    const dot = rest.indexOf('.');
    const index = Number(rest.slice(0, dot));
    if (dot <= 0 || !Number.isInteger(index)) continue;
    fieldsAt(byIndex, index).set(rest.slice(dot + 1), value);
  }
  return new Map([...byIndex].sort(([a], [b]) => a - b));
}

function fieldsAt(
  byIndex: Map<number, Map<string, AttributeValue>>,
  index: number,
): Map<string, AttributeValue> {
  let fields = byIndex.get(index);
  if (!fields) {
    fields = new Map();
    byIndex.set(index, fields);
  }
  return fields;
}

function readLegacyTurn(attributes: Attributes): SpanReading {
  const prompts = indexedFields(attributes, TRACELOOP.promptPrefix);
  const completions = indexedFields(attributes, TRACELOOP.completionPrefix);
  const requested: RequestedCall[] = [];
  const unread: string[] = [];
  let text: string | undefined;
  for (const fields of completions.values()) {
    requested.push(...legacyToolCalls(fields, unread));
    text = withAnswerText(text, fields.get('content'));
  }
  const answer = cutAnswer(text);
  const model =
    stringAttribute(attributes, TRACELOOP.requestModel) ??
    stringAttribute(attributes, TRACELOOP.responseModel);
  return {
    kind: 'turn',
    turn: {
      requested,
      // No prompt keys at all: the input was not captured (TRACELOOP_TRACE_CONTENT=false).
      shown: prompts.size === 0 ? undefined : legacyResults(prompts),
      historyLength: prompts.size,
      ...(model && { model }),
      ...(answer && { answer }),
      ...(unread.length > 0 && { unreadRequests: unread }),
      convention: OPENLLMETRY,
    },
  };
}

/** `tool_calls.M.{id,name,arguments}` of one completion; one without a name goes to `unread`. */
function legacyToolCalls(fields: Map<string, AttributeValue>, unread: string[]): RequestedCall[] {
  const calls = new Map<number, Map<string, AttributeValue>>();
  for (const [field, value] of fields) {
    const match = /^tool_calls\.(\d+)\.(id|name|arguments)$/.exec(field);
    if (!match) continue;
    fieldsAt(calls, Number(match[1])).set(match[2] as string, value);
  }
  const requested: RequestedCall[] = [];
  for (const [, call] of [...calls].sort(([a], [b]) => a - b)) {
    const tool = stringValue(call.get('name'));
    if (!tool) {
      unread.push(`a ${TRACELOOP.completionPrefix}N.tool_calls entry without a name`);
      continue;
    }
    const callId = stringValue(call.get('id'));
    const args = call.get('arguments');
    requested.push({
      ...(callId && { callId }),
      tool,
      args: args === undefined ? { captured: false } : capturedJson(args),
    });
  }
  return requested;
}

/** Tool messages of the prompt: `role` = tool, `tool_call_id`, `content` (the result, usually JSON text). */
function legacyResults(prompts: Map<number, Map<string, AttributeValue>>): ShownResult[] {
  const shown: ShownResult[] = [];
  for (const fields of prompts.values()) {
    const callId = stringValue(fields.get('tool_call_id'));
    if (fields.get('role') !== 'tool' && callId === undefined) continue;
    const content = fields.get('content');
    shown.push({
      ...(callId && { callId }),
      result:
        typeof content === 'string' ? { captured: true, value: contentValue(content) } : { captured: false },
    });
  }
  return shown;
}

function stringValue(value: AttributeValue | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}
