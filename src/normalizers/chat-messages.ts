/**
 * Chat payloads as tracers record them whole (LangSmith, Langfuse, OpenLLMetry): OpenAI requests
 * and completions, LangChain's serialized messages (`{lc:1, type:'constructor', id:[...,
 * 'AIMessage'], kwargs}`), Anthropic and Responses items; and tool outputs wrapped by tracers.
 * Shared by the conventions that read them.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { CallOutcome, Captured } from '../model/trajectory.js';
import { withAnswerText } from './answer-text.js';
import { capturedJson } from './attributes.js';
import type { RequestedCall, ShownResult } from './convention.js';

/** A tool's result once the tracer's wrappers are taken off, and what the wrapper told. */
export interface ToolOutput {
  result: Captured<JsonValue>;
  callId?: string;
  name?: string;
  /** Set when the output is a LangChain ToolMessage with `status: 'error'`. */
  failure?: CallOutcome;
}

/**
 * Outputs that are not an object are wrapped as `{outputs: value}` by `traceable`; the LangChain
 * tracer wraps a tool's return as `{output: value}`, usually a serialized ToolMessage, which
 * also carries the call id and the tool's real name.
 */
export function unwrapToolOutput(outputs: Captured<JsonValue>): ToolOutput {
  if (!outputs.captured || outputs.parseError !== undefined) return { result: outputs };
  let value = outputs.value;
  if (isJsonObject(value) && Object.keys(value).length === 1) {
    if (Object.hasOwn(value, 'output')) value = value.output as JsonValue;
    else if (Object.hasOwn(value, 'outputs')) value = value.outputs as JsonValue;
  }
  const message = langChainObject(value);
  if (message?.className !== 'ToolMessage') return { result: { captured: true, value } };
  const { kwargs } = message;
  const content = kwargs.content === undefined ? undefined : contentValue(kwargs.content);
  const callId = trimmedString(kwargs.tool_call_id);
  const name = trimmedString(kwargs.name);
  const failed = kwargs.status === 'error';
  return {
    result: content === undefined ? { captured: false } : { captured: true, value: content },
    ...(callId && { callId }),
    ...(name && { name }),
    ...(failed && {
      failure: { status: 'error', ...(typeof content === 'string' && content && { message: content }) },
    }),
  };
}

/** A LangChain serialized object: `{lc: 1, type: 'constructor', id: [..., ClassName], kwargs}`. */
export function langChainObject(
  value: JsonValue | undefined,
): { className: string; kwargs: { [key: string]: JsonValue } } | undefined {
  if (!isJsonObject(value) || value.lc !== 1 || !Array.isArray(value.id)) return undefined;
  const className = value.id[value.id.length - 1];
  if (typeof className !== 'string') return undefined;
  return { className, kwargs: isJsonObject(value.kwargs) ? value.kwargs : {} };
}

const LANGCHAIN_ROLES: Record<string, string> = {
  HumanMessage: 'user',
  HumanMessageChunk: 'user',
  AIMessage: 'assistant',
  AIMessageChunk: 'assistant',
  SystemMessage: 'system',
  ToolMessage: 'tool',
  ToolMessageChunk: 'tool',
  FunctionMessage: 'function',
};
// LangChain's own message types when written plainly (`{type: 'ai', content}`).
const TYPE_ROLES: Record<string, string> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' };

/** One chat message read from either shape. */
export interface ChatMessage {
  role?: string;
  /** Calls asked for in this message (assistant `tool_calls`, `tool_use` blocks, Responses `function_call`). */
  requested: RequestedCall[];
  /** Results carried by this message (a tool message, `tool_result` blocks, `function_call_output`). */
  results: ShownResult[];
  content?: JsonValue;
}

/** Reads one message; undefined when the value is not an object. */
export function readChatMessage(value: JsonValue): ChatMessage | undefined {
  const serialized = langChainObject(value);
  const fields = serialized ? serialized.kwargs : value;
  if (!isJsonObject(fields)) return undefined;
  const role = roleOf(serialized?.className, fields);
  const message: ChatMessage = { requested: [], results: [], ...(role && { role }) };
  if (fields.content !== undefined) message.content = fields.content;
  const additional = isJsonObject(fields.additional_kwargs) ? fields.additional_kwargs : undefined;
  const toolCalls =
    Array.isArray(fields.tool_calls) && fields.tool_calls.length > 0
      ? fields.tool_calls
      : additional?.tool_calls;
  if (Array.isArray(toolCalls)) for (const entry of toolCalls) pushCall(message.requested, entry);
  if (role === 'tool' || (role === undefined && fields.tool_call_id !== undefined)) {
    const callId = trimmedString(fields.tool_call_id);
    // LangChain ToolMessages say how the call ended.
    const isError = fields.status === 'error';
    message.results.push({
      ...(callId && { callId }),
      result: capturedContent(fields.content),
      ...(isError && { isError }),
    });
  }
  // Anthropic-style content blocks and OpenAI Responses items carry calls and results inline.
  const blocks = Array.isArray(fields.content) ? fields.content : [fields];
  for (const block of blocks) {
    if (!isJsonObject(block)) continue;
    if (block.type === 'tool_use' || block.type === 'function_call') pushCall(message.requested, block);
    if (block.type === 'tool_result' || block.type === 'function_call_output') {
      const callId = trimmedString(block.tool_use_id ?? block.call_id);
      const body = block.type === 'tool_result' ? block.content : block.output;
      const isError = block.is_error === true;
      message.results.push({
        ...(callId && { callId }),
        result: capturedContent(body),
        ...(isError && { isError }),
      });
    }
  }
  return message;
}

/** The role of a message: by its LangChain class when serialized, else `role`, else LangChain's `type`. */
function roleOf(className: string | undefined, fields: { [key: string]: JsonValue }): string | undefined {
  if (className !== undefined) return LANGCHAIN_ROLES[className];
  if (typeof fields.role === 'string') return fields.role;
  return typeof fields.type === 'string' ? TYPE_ROLES[fields.type] : undefined;
}

/** A tool call entry: OpenAI `{id, function: {name, arguments}}`, LangChain `{id, name, args}`, `tool_use`, `function_call`. */
function pushCall(calls: RequestedCall[], entry: JsonValue): void {
  if (!isJsonObject(entry)) return;
  const fn = isJsonObject(entry.function) ? entry.function : undefined;
  const tool = trimmedString(fn ? fn.name : entry.name);
  if (!tool) return;
  const raw = fn
    ? fn.arguments
    : Object.hasOwn(entry, 'args')
      ? entry.args
      : Object.hasOwn(entry, 'arguments')
        ? entry.arguments
        : entry.input;
  // Responses items have an item `id` and the call's `call_id`: the call id is what results cite.
  const callId = trimmedString(entry.type === 'function_call' ? (entry.call_id ?? entry.id) : entry.id);
  calls.push({
    ...(callId && { callId }),
    tool,
    args: raw === undefined ? { captured: false } : capturedJson(raw as JsonValue),
  });
}

/**
 * The messages of an input payload: a message list, LangChain's batched `[[...]]`, or an
 * object holding them (`{messages}`, `{input}`); undefined when it is none of these.
 */
export function messageList(value: JsonValue): JsonValue[] | undefined {
  if (Array.isArray(value)) {
    return value.length > 0 && value.every(Array.isArray) ? (value.flat() as JsonValue[]) : value;
  }
  if (!isJsonObject(value)) return undefined;
  for (const key of ['messages', 'input']) {
    const inner = value[key];
    if (Array.isArray(inner)) return messageList(inner);
  }
  return undefined;
}

/** The messages of an output payload: OpenAI `choices`, LangChain `generations`, Responses `output`, a message. */
export function outputMessages(value: JsonValue): JsonValue[] {
  if (Array.isArray(value)) return value;
  if (!isJsonObject(value)) return [];
  if (Array.isArray(value.choices)) {
    return value.choices.flatMap((choice) =>
      isJsonObject(choice) && choice.message !== undefined ? [choice.message] : [],
    );
  }
  if (Array.isArray(value.generations)) {
    return (value.generations.flat() as JsonValue[]).flatMap((generation) =>
      isJsonObject(generation) && generation.message !== undefined ? [generation.message] : [],
    );
  }
  if (Array.isArray(value.output)) return value.output;
  if (Array.isArray(value.messages)) return value.messages;
  if (value.message !== undefined) return [value.message];
  return [value];
}

/** Calls asked for in an output payload. */
export function requestedInOutput(value: JsonValue): RequestedCall[] {
  return outputMessages(value).flatMap((message) => readChatMessage(message)?.requested ?? []);
}

/** Content blocks whose `text` is what the model wrote: Anthropic's and LangChain's `text`, Responses' `output_text`. */
const TEXT_BLOCKS = new Set(['text', 'output_text']);

/**
 * The answer so far with the text of one message's content: a string is the text; a list of
 * blocks gives its text blocks (tool calls, reasoning, images, refusals are not text).
 */
export function withContentText(
  sofar: string | undefined,
  content: JsonValue | undefined,
): string | undefined {
  if (typeof content === 'string') return withAnswerText(sofar, content);
  if (!Array.isArray(content)) return sofar;
  let text = sofar;
  for (const block of content) {
    if (isJsonObject(block) && TEXT_BLOCKS.has(block.type as string)) text = withAnswerText(text, block.text);
  }
  return text;
}

/**
 * The text the model wrote in an output payload: the content of the assistant messages
 * {@link outputMessages} finds in it (OpenAI choices, LangChain generations, Responses items, a
 * message). A payload that is a string is the text itself. Undefined when there is none; not cut.
 */
export function answerInOutput(value: JsonValue): string | undefined {
  if (typeof value === 'string') return withAnswerText(undefined, value);
  let text: string | undefined;
  for (const message of outputMessages(value)) {
    const serialized = langChainObject(message);
    const fields = serialized ? serialized.kwargs : message;
    if (!isJsonObject(fields)) continue;
    const role = roleOf(serialized?.className, fields);
    if (role === undefined || role === 'assistant') text = withContentText(text, fields.content);
  }
  return text;
}

/** Tool results shown in an input's messages. */
export function shownInMessages(messages: readonly JsonValue[]): ShownResult[] {
  return messages.flatMap((message) => readChatMessage(message)?.results ?? []);
}

/** Message content: tool results are mostly JSON text; text that is not JSON stays text. */
export function contentValue(value: JsonValue): JsonValue {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as JsonValue;
  } catch {
    return value;
  }
}

function capturedContent(value: JsonValue | undefined): Captured<JsonValue> {
  return value === undefined ? { captured: false } : { captured: true, value: contentValue(value) };
}

function trimmedString(value: JsonValue | undefined): string | undefined {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}
