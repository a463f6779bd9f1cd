/**
 * OpenInference chat messages as the instrumentations write them: flattened into indexed
 * attributes (`llm.input_messages.N.message.role`, `llm.output_messages.N.message.tool_calls.M.
 * tool_call.function.name`), and, for LangChain, also inside the raw `input.value` /
 * `output.value` JSON, the only place the LangChain tracer keeps tool-call ids.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { Attributes, AttributeValue } from '../model/span-record.js';
import type { Captured } from '../model/trajectory.js';
import { withAnswerText } from './answer-text.js';
import { capturedJson, toJson } from './attributes.js';
import type { RequestedCall, ShownResult } from './convention.js';

/** One tool call of a flattened message, as far as it was recorded. */
export interface FlatToolCall {
  id?: string;
  name?: string;
  arguments?: AttributeValue;
}

/** One flattened message (`{prefix}.N.message.*`). */
export interface FlatMessage {
  role?: string;
  content?: AttributeValue;
  /** `message.contents.K.message_content.text` parts, for messages written part by part. */
  texts: string[];
  toolCallId?: string;
  name?: string;
  toolCalls: FlatToolCall[];
  /** The legacy OpenAI `function_call` (one call, no id). */
  functionCall?: FlatToolCall;
}

/** The messages under one prefix, in index order; `length` counts gaps the writer left too. */
export interface FlatMessages {
  messages: FlatMessage[];
  length: number;
}

const MESSAGE_FIELD = /^(\d+)\.message\.(.+)$/;
const TOOL_CALL_FIELD = /^tool_calls\.(\d+)\.tool_call\.(.+)$/;
const CONTENT_TEXT_FIELD = /^contents\.(\d+)\.message_content\.text$/;

interface MessageUnderConstruction {
  message: FlatMessage;
  calls: Map<number, FlatToolCall>;
  texts: Map<number, string>;
}

/** The flattened messages under `prefix` (`llm.input_messages`), or undefined when none was recorded. */
export function readFlattenedMessages(attributes: Attributes, prefix: string): FlatMessages | undefined {
  const head = `${prefix}.`;
  const byIndex = new Map<number, MessageUnderConstruction>();
  for (const [key, value] of Object.entries(attributes)) {
    if (!key.startsWith(head)) continue;
    const match = MESSAGE_FIELD.exec(key.slice(head.length));
    if (!match) continue;
    const index = Number(match[1]);
    let entry = byIndex.get(index);
    if (!entry) {
      entry = { message: { texts: [], toolCalls: [] }, calls: new Map(), texts: new Map() };
      byIndex.set(index, entry);
    }
    setField(entry, match[2] as string, value);
  }
  if (byIndex.size === 0) return undefined;
  const indices = [...byIndex.keys()].sort((a, b) => a - b);
  const messages = indices.map((index) => {
    const { message, calls, texts } = byIndex.get(index) as MessageUnderConstruction;
    message.toolCalls = sortedValues(calls);
    message.texts = sortedValues(texts);
    return message;
  });
  return { messages, length: (indices[indices.length - 1] as number) + 1 };
}

function setField(entry: MessageUnderConstruction, field: string, value: AttributeValue): void {
  const message = entry.message;
  const text = typeof value === 'string' ? value.trim() : undefined;
  switch (field) {
    case 'role':
      if (text) message.role = text;
      return;
    case 'content':
      message.content = value;
      return;
    case 'tool_call_id':
      if (text) message.toolCallId = text;
      return;
    case 'name':
      if (text) message.name = text;
      return;
    case 'function_call_name':
      message.functionCall = { ...message.functionCall, ...(text && { name: text }) };
      return;
    case 'function_call_arguments_json':
      message.functionCall = { ...message.functionCall, arguments: value };
      return;
  }
  const call = TOOL_CALL_FIELD.exec(field);
  if (call) {
    const index = Number(call[1]);
    const toolCall = entry.calls.get(index) ?? {};
    entry.calls.set(index, toolCall);
    if (call[2] === 'id' && text) toolCall.id = text;
    else if (call[2] === 'function.name' && text) toolCall.name = text;
    else if (call[2] === 'function.arguments') toolCall.arguments = value;
    return;
  }
  const part = CONTENT_TEXT_FIELD.exec(field);
  if (part && typeof value === 'string') entry.texts.set(Number(part[1]), value);
}

function sortedValues<T>(map: Map<number, T>): T[] {
  return [...map.entries()].sort(([a], [b]) => a - b).map(([, value]) => value);
}

/**
 * The tool calls asked for in these messages, in message then call order. A call recorded
 * without a function name is counted in `unnamed.count`, when given.
 */
export function requestedFromFlattened(
  messages: readonly FlatMessage[],
  unnamed?: { count: number },
): RequestedCall[] {
  const requested: RequestedCall[] = [];
  for (const message of messages) {
    const calls = message.functionCall ? [...message.toolCalls, message.functionCall] : message.toolCalls;
    for (const call of calls) {
      if (call.name === undefined) {
        if (unnamed) unnamed.count++;
        continue;
      }
      requested.push({
        ...(call.id !== undefined && { callId: call.id }),
        tool: call.name,
        args: call.arguments === undefined ? { captured: false } : capturedJson(call.arguments),
      });
    }
  }
  return requested;
}

/** The tool results shown in these messages: `role=tool` (and the legacy `role=function`). */
export function shownFromFlattened(messages: readonly FlatMessage[]): ShownResult[] {
  const shown: ShownResult[] = [];
  for (const message of messages) {
    if (message.role !== 'tool' && message.role !== 'function') continue;
    shown.push({
      ...(message.toolCallId !== undefined && { callId: message.toolCallId }),
      ...(message.name !== undefined && { tool: message.name }),
      result: flatContent(message),
    });
  }
  return shown;
}

/**
 * The text the model wrote in these (output) messages: each message's `content` when it is a
 * string, else its `contents` text parts. Undefined when there is none; not cut.
 */
export function textFromFlattened(messages: readonly FlatMessage[]): string | undefined {
  let text: string | undefined;
  for (const message of messages) {
    if (message.role === 'tool' || message.role === 'function') continue;
    if (typeof message.content === 'string') text = withAnswerText(text, message.content);
    else for (const part of message.texts) text = withAnswerText(text, part);
  }
  return text;
}

function flatContent(message: FlatMessage): Captured<JsonValue> {
  if (message.content !== undefined) {
    return typeof message.content === 'string'
      ? textOrJson(message.content)
      : { captured: true, value: toJson(message.content) };
  }
  if (message.texts.length > 0) return textOrJson(message.texts.join(''));
  return { captured: false };
}

/**
 * A tool's text output: JSON when it parses, else the text itself. Tools legitimately answer in
 * prose, so text that is not JSON is a value, not a parse error.
 */
export function textOrJson(text: string): Captured<JsonValue> {
  const parsed = capturedJson(text);
  return parsed.captured && parsed.parseError !== undefined ? { captured: true, value: text } : parsed;
}

/** The kwargs of a LangChain serialized message (`{lc:1, type:"constructor", id:[…, "ToolMessage"], kwargs}`). */
export function langChainMessageKwargs(
  value: JsonValue | undefined,
  className: string,
): { [key: string]: JsonValue } | undefined {
  if (!isJsonObject(value) || value.lc !== 1 || !Array.isArray(value.id)) return undefined;
  if (value.id[value.id.length - 1] !== className) return undefined;
  return isJsonObject(value.kwargs) ? value.kwargs : undefined;
}

/**
 * The calls a LangChain LLM span's raw output asked for, with their ids:
 * `{"generations":[[{"message": <AIMessage>}]]}`, read from the first generation as the tracer
 * does. `kwargs.tool_calls` (`{id, name, args}`) is what ToolNode executes; the OpenAI wire
 * format in `additional_kwargs.tool_calls` is the fallback. Undefined when it is not that shape.
 */
export function langChainRequestedCalls(output: JsonValue): RequestedCall[] | undefined {
  if (!isJsonObject(output) || !Array.isArray(output.generations)) return undefined;
  const batch = output.generations[0];
  const generation = Array.isArray(batch) ? batch[0] : undefined;
  if (!isJsonObject(generation)) return undefined;
  const kwargs =
    langChainMessageKwargs(generation.message, 'AIMessage') ??
    langChainMessageKwargs(generation.message, 'AIMessageChunk');
  if (!kwargs) return undefined;
  if (Array.isArray(kwargs.tool_calls)) return kwargs.tool_calls.flatMap(langChainToolCall);
  const additional = kwargs.additional_kwargs;
  if (isJsonObject(additional) && Array.isArray(additional.tool_calls)) {
    return additional.tool_calls.flatMap(wireToolCall);
  }
  return [];
}

function langChainToolCall(call: JsonValue): RequestedCall[] {
  if (!isJsonObject(call) || typeof call.name !== 'string' || call.name.trim() === '') return [];
  return [
    {
      ...idOf(call.id),
      tool: call.name.trim(),
      args: Object.hasOwn(call, 'args') ? capturedJson(call.args as JsonValue) : { captured: false },
    },
  ];
}

function wireToolCall(call: JsonValue): RequestedCall[] {
  if (!isJsonObject(call) || !isJsonObject(call.function)) return [];
  const { name, arguments: args } = call.function;
  if (typeof name !== 'string' || name.trim() === '') return [];
  return [
    {
      ...idOf(call.id),
      tool: name.trim(),
      args: args === undefined ? { captured: false } : capturedJson(args),
    },
  ];
}

/**
 * The tool results in a LangChain LLM span's raw input, `{"messages":[[...serialized messages]]}`
 * (first batch, as the tracer reads it): ToolMessages with their `tool_call_id`.
 */
export function langChainShownResults(
  input: JsonValue,
): { shown: ShownResult[]; length: number } | undefined {
  if (!isJsonObject(input) || !Array.isArray(input.messages)) return undefined;
  const batch = input.messages[0];
  if (!Array.isArray(batch)) return undefined;
  const shown: ShownResult[] = [];
  for (const message of batch) {
    const kwargs = langChainMessageKwargs(message, 'ToolMessage');
    if (!kwargs) continue;
    shown.push({
      ...idOf(kwargs.tool_call_id),
      ...(typeof kwargs.name === 'string' && kwargs.name.trim() !== '' && { tool: kwargs.name.trim() }),
      result: langChainContent(kwargs),
      // ToolNode turns a thrown error into a ToolMessage with status "error".
      ...(kwargs.status === 'error' && { isError: true }),
    });
  }
  return { shown, length: batch.length };
}

/** A LangChain message's content: text (parsed when it is JSON) or content blocks as they are. */
export function langChainContent(kwargs: { [key: string]: JsonValue }): Captured<JsonValue> {
  if (!Object.hasOwn(kwargs, 'content')) return { captured: false };
  const content = kwargs.content as JsonValue;
  return typeof content === 'string' ? textOrJson(content) : { captured: true, value: content };
}

function idOf(id: JsonValue | undefined): { callId?: string } {
  const trimmed = typeof id === 'string' ? id.trim() : typeof id === 'number' ? String(id) : '';
  return trimmed === '' ? {} : { callId: trimmed };
}
