/**
 * The model turns of the OpenAI Agents SDK as logfire records them: what a `Responses API` or
 * `Chat completion` span says the model was shown and asked for. Responses spans hold the input
 * items (`raw_input`), the response (`response`, dropped by some exports) and `events`: the input
 * as OTel-style message events followed by the output's, one assistant event per output item
 * (a `message` item's text in its `content`).
 * Part of the openai-agents-logfire convention.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { Captured } from '../model/trajectory.js';
import { setAnswer } from './answer-text.js';
import { capturedJson, parsedJson } from './attributes.js';
import { answerInOutput, contentValue, readChatMessage, withContentText } from './chat-messages.js';
import type { RequestedCall, ShownResult, TurnDraft } from './convention.js';

const CONVENTION = 'openai-agents-logfire';

type JsonObject = { [key: string]: JsonValue };

/** A `Responses API with …` span's turn. */
export function responsesTurn(span: SpanRecord): TurnDraft {
  const attributes = span.attributes;
  const input = inputItems(attributes.raw_input);
  const events = listOf(attributes.events);
  const response = parsedOf(attributes.response);
  const output = isJsonObject(response) && Array.isArray(response.output) ? response.output : undefined;
  const answered = output ? undefined : events && outputEvents(events, input);
  const requested = output ? requestedInItems(output) : answered ? requestedInEvents(answered) : [];
  let shown: ShownResult[] | undefined;
  if (input) shown = shownInItems(input);
  else if (events) shown = shownInEvents(events);
  const turn: TurnDraft = {
    requested,
    shown,
    historyLength: input?.length ?? events?.filter((event) => !isAssistant(event)).length ?? 0,
    convention: CONVENTION,
  };
  // The response's `message` items (`output_text` parts), else the output's assistant events.
  setAnswer(turn, output ? answerInOutput(output) : answered && textOfEvents(answered));
  return turn;
}

/** A `Chat completion with …` span's turn: `input` and `output` are Chat Completions messages. */
export function chatTurn(span: SpanRecord): TurnDraft {
  const input = listOf(span.attributes.input);
  const output = listOf(span.attributes.output);
  const turn: TurnDraft = {
    requested: output ? output.flatMap((message) => readChatMessage(message)?.requested ?? []) : [],
    shown: input ? input.flatMap((message) => readChatMessage(message)?.results ?? []) : undefined,
    historyLength: input?.length ?? 0,
    convention: CONVENTION,
  };
  setAnswer(turn, output && answerInOutput(output));
  return turn;
}

function parsedOf(value: SpanRecord['attributes'][string] | undefined): JsonValue | undefined {
  return value === undefined ? undefined : parsedJson(value);
}

function listOf(value: SpanRecord['attributes'][string] | undefined): JsonValue[] | undefined {
  const parsed = parsedOf(value);
  return Array.isArray(parsed) ? parsed : undefined;
}

/** The input items: a list, or the user's text when the run was given a string. */
function inputItems(value: SpanRecord['attributes'][string] | undefined): JsonValue[] | undefined {
  if (value === undefined) return undefined;
  const parsed = parsedJson(value);
  if (Array.isArray(parsed)) return parsed;
  return typeof value === 'string' ? [{ role: 'user', content: value }] : undefined;
}

/**
 * The events of the response: those after the instructions' system event and the input's own
 * events (one per input item, or one per content part of a message). When the input was not
 * recorded or the count does not fit (every output event is the assistant's), the assistant
 * events after the last other one.
 */
function outputEvents(events: readonly JsonValue[], input: readonly JsonValue[] | undefined): JsonValue[] {
  if (input) {
    const instructions =
      isSystem(events[0]) && !(isJsonObject(input[0]) && input[0].role === 'system') ? 1 : 0;
    const start = instructions + input.reduce<number>((count, item) => count + eventsOfItem(item), 0);
    const rest = events.slice(start);
    if (start <= events.length && rest.every(isAssistant)) return rest;
  }
  let start = events.length;
  while (start > 0 && isAssistant(events[start - 1])) start--;
  return events.slice(start);
}

/** How many events logfire writes for one input item. */
function eventsOfItem(item: JsonValue): number {
  if (!isJsonObject(item)) return 1;
  const type = item.type;
  const content = item.content;
  const message =
    typeof item.role === 'string' &&
    item.role !== '' &&
    (type === undefined || type === null || type === 'message');
  if (message && typeof content === 'string' && content !== '') return 1;
  if (message && Array.isArray(content) && content.length > 0) return content.length;
  return 1;
}

function isSystem(event: JsonValue | undefined): boolean {
  return isJsonObject(event) && event['event.name'] === 'gen_ai.system.message';
}

function isAssistant(event: JsonValue | undefined): boolean {
  return isJsonObject(event) && event.role === 'assistant';
}

/** Calls in output events: `tool_calls` of assistant messages, hosted tools' items in `gen_ai.unknown`. */
function requestedInEvents(events: readonly JsonValue[]): RequestedCall[] {
  const calls: RequestedCall[] = [];
  for (const event of events) {
    if (!isJsonObject(event)) continue;
    if (event['event.name'] === 'gen_ai.unknown') {
      const hosted = isJsonObject(event.data) ? hostedCall(event.data) : undefined;
      if (hosted) calls.push(hosted);
      continue;
    }
    const message = readChatMessage(event);
    if (message) calls.push(...message.requested);
  }
  return calls;
}

/** The text of the output's assistant message events (`content`: a string, or text parts). */
function textOfEvents(events: readonly JsonValue[]): string | undefined {
  let text: string | undefined;
  for (const event of events) {
    if (isJsonObject(event) && event['event.name'] === 'gen_ai.assistant.message')
      text = withContentText(text, event.content);
  }
  return text;
}

/** Calls in Responses output items: `function_call`, and the items of hosted tools. */
function requestedInItems(items: readonly JsonValue[]): RequestedCall[] {
  const calls: RequestedCall[] = [];
  for (const item of items) {
    if (!isJsonObject(item)) continue;
    if (item.type === 'function_call') {
      calls.push(...(readChatMessage(item)?.requested ?? []));
      continue;
    }
    const hosted = hostedCall(item);
    if (hosted) calls.push(hosted);
  }
  return calls;
}

/** Fields of a hosted call's item that are its outcome or bookkeeping, not what the model asked. */
const NOT_ARGUMENTS = new Set([
  'id',
  'type',
  'status',
  'call_id',
  'results',
  'result',
  'output',
  'outputs',
  'error',
]);

/**
 * An output item of a tool the model called that is not a function tool: hosted tools
 * (`file_search_call`, `web_search_call`, `code_interpreter_call`, …: the tool is the type without
 * `_call`), a hosted MCP tool (`mcp_call`, named), a custom tool (`custom_tool_call`, whose input
 * is text). A server-side call is still a call; no span records it.
 */
function hostedCall(item: JsonObject): RequestedCall | undefined {
  const type = item.type;
  if (typeof type !== 'string' || !type.endsWith('_call') || type === 'function_call') return undefined;
  const named = typeof item.name === 'string' && item.name.trim() !== '' ? item.name.trim() : undefined;
  const tool = named ?? type.slice(0, -'_call'.length);
  if (tool === '') return undefined;
  const id = idOf(item.call_id) ?? idOf(item.id);
  const call: RequestedCall = { tool, args: hostedArguments(item) };
  if (id) call.callId = id;
  // A custom tool runs in the app (its Function span says how it ended); the others on the server.
  const ended = type === 'custom_tool_call' ? undefined : hostedEnd(item);
  if (ended) call.ended = ended;
  if (type === 'mcp_call') {
    const label = typeof item.server_label === 'string' ? item.server_label.trim() : '';
    call.mcpServer = label === '' ? {} : { name: label };
  }
  return call;
}

/**
 * How a server-side call ended, by its item: `error` set, or `status` failed, is an error;
 * `completed` (or no status but an output) is ok, with its output when the item carries one;
 * any other status (in progress, searching, incomplete) has no result yet.
 */
function hostedEnd(item: JsonObject): RequestedCall['ended'] {
  const output = item.output ?? item.results ?? item.result;
  const result: Captured<JsonValue> =
    output === undefined || output === null
      ? { captured: false }
      : { captured: true, value: contentValue(output) };
  if ((item.error !== undefined && item.error !== null) || item.status === 'failed') {
    const message = typeof item.error === 'string' ? item.error : undefined;
    return { outcome: message ? { status: 'error', message } : { status: 'error' }, result };
  }
  const done = item.status === 'completed' || (item.status === undefined && result.captured);
  return done ? { outcome: { status: 'ok' }, result } : undefined;
}

function hostedArguments(item: JsonObject): Captured<JsonValue> {
  if (typeof item.arguments === 'string') return capturedJson(item.arguments);
  if (typeof item.input === 'string') return { captured: true, value: item.input };
  const args: JsonObject = {};
  let any = false;
  for (const [key, value] of Object.entries(item)) {
    if (NOT_ARGUMENTS.has(key) || key === 'name' || key === 'server_label') continue;
    Object.defineProperty(args, key, { value, enumerable: true, writable: true, configurable: true });
    any = true;
  }
  return any ? { captured: true, value: args } : { captured: false };
}

/** Results in input items: `function_call_output` and the other `*_call_output` items, by `call_id`. */
function shownInItems(items: readonly JsonValue[]): ShownResult[] {
  const shown: ShownResult[] = [];
  for (const item of items) {
    if (!isJsonObject(item)) continue;
    const type = item.type;
    if (typeof type === 'string' && type.endsWith('_call_output') && type !== 'function_call_output') {
      const callId = idOf(item.call_id);
      if (callId) shown.push({ callId, result: captured(item.output) });
      continue;
    }
    shown.push(...(readChatMessage(item)?.results ?? []));
  }
  return shown;
}

/** Results in input events: `gen_ai.tool.message` with the call's `id`, its tool `name` and `content`. */
function shownInEvents(events: readonly JsonValue[]): ShownResult[] {
  const shown: ShownResult[] = [];
  for (const event of events) {
    if (!isJsonObject(event) || event['event.name'] !== 'gen_ai.tool.message') continue;
    const callId = idOf(event.id);
    const tool = typeof event.name === 'string' && event.name !== 'unknown' ? event.name : undefined;
    const result: ShownResult = { result: captured(event.content) };
    if (callId) result.callId = callId;
    if (tool) result.tool = tool;
    shown.push(result);
  }
  return shown;
}

function captured(value: JsonValue | undefined): Captured<JsonValue> {
  return value === undefined ? { captured: false } : { captured: true, value: contentValue(value) };
}

function idOf(value: JsonValue | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}
