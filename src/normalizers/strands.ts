/**
 * Strands Agents (`@strands-agents/sdk` for TypeScript; read from its 1.19 tracer and real
 * captures. The Python SDK's Bedrock-shaped `{toolUse}` blocks are accepted too):
 * `invoke_agent {agent}` -> `execute_agent_loop_cycle` -> `chat` and `execute_tool {tool}` as
 * siblings, every span stamped with `gen_ai.event.start_time`, tool spans with
 * `gen_ai.tool.status`. Message content has three layouts, chosen by
 * `OTEL_SEMCONV_STABILITY_OPT_IN`:
 * - unset: span events per message (`gen_ai.user.message`, `gen_ai.assistant.message`,
 *   `gen_ai.tool.message`, `gen_ai.choice`) whose `content` / `message` are JSON Strands
 *   content blocks (`{toolUse}`, `{toolResult}`, `{type:"toolUse"}`, `{json}`, `{text}`);
 * - `gen_ai_latest_experimental`: GenAI `gen_ai.input.messages` / `gen_ai.output.messages`, but
 *   on `gen_ai.client.inference.operation.details` span events, plus the GenAI tool attributes;
 * - with `gen_ai_span_attributes_only` too: the same messages as span attributes.
 * Tool results are Strands content blocks in every layout (`[{"json": {...}}]`); they are
 * unwrapped to the value the tool returned, so a result reads the same whatever the layout.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { Attributes, SpanRecord } from '../model/span-record.js';
import type { CallOutcome, Captured } from '../model/trajectory.js';
import { cutAnswer, withAnswerText } from './answer-text.js';
import { capturedJson, jsonAttribute, stringAttribute } from './attributes.js';
import type { Convention, RequestedCall, ShownResult, SpanReading, ToolCallDraft } from './convention.js';
import { answerText, requestedCalls, shownResults, unreadRequests } from './genai-messages.js';
import { spanOutcome } from './span-outcome.js';

/** Keys and event names of the Strands telemetry that this normalizer reads. */
export const STRANDS_KEYS = {
  operationName: 'gen_ai.operation.name',
  eventStartTime: 'gen_ai.event.start_time',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolStatus: 'gen_ai.tool.status',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  detailsEvent: 'gen_ai.client.inference.operation.details',
  choiceEvent: 'gen_ai.choice',
  toolMessageEvent: 'gen_ai.tool.message',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const STRANDS = 'strands';

/** Per-message events of the default layout, in the order the conversation had them. */
const MESSAGE_EVENTS = new Set([
  'gen_ai.user.message',
  'gen_ai.assistant.message',
  'gen_ai.tool.message',
  'gen_ai.message',
]);

/**
 * The Strands convention. Detection: `gen_ai.event.start_time` (set on every span the Strands
 * tracer starts) or `gen_ai.tool.status`; no other producer seen writes either. Scope and
 * `gen_ai.system` are the service name, which users override, so they do not decide.
 */
export const strands: Convention = {
  name: STRANDS,
  marks: { keys: [STRANDS_KEYS.eventStartTime, STRANDS_KEYS.toolStatus] },
  read(span: SpanRecord): SpanReading | undefined {
    const attributes = span.attributes;
    if (!(STRANDS_KEYS.eventStartTime in attributes) && !(STRANDS_KEYS.toolStatus in attributes)) {
      return undefined;
    }
    const operation = stringAttribute(attributes, STRANDS_KEYS.operationName);
    if (operation === 'execute_tool') return { kind: 'tool', call: readToolCall(span) };
    if (operation === 'chat') return readTurn(span);
    if (operation === 'invoke_agent') {
      const name = stringAttribute(attributes, STRANDS_KEYS.agentName);
      return { kind: 'agent', ...(name && { name }), convention: STRANDS };
    }
    // Loop cycles, multi-agent orchestration and memory spans are structure only.
    return undefined;
  },
};

function readToolCall(span: SpanRecord): ToolCallDraft {
  const attributes = span.attributes;
  const tool =
    stringAttribute(attributes, STRANDS_KEYS.toolName) ?? span.name.replace(/^execute_tool\s+/, '').trim();
  const callId = stringAttribute(attributes, STRANDS_KEYS.toolCallId);
  const result = toolResult(span);
  return {
    tool,
    ...(callId && { callId }),
    args: toolArguments(span),
    result,
    outcome: toolOutcome(span, result),
    convention: STRANDS,
  };
}

/** Latest layout: the GenAI attribute; default layout: the `gen_ai.tool.message` event's `content`. */
function toolArguments(span: SpanRecord): Captured<JsonValue> {
  if (STRANDS_KEYS.toolCallArguments in span.attributes) {
    return jsonAttribute(span.attributes, STRANDS_KEYS.toolCallArguments);
  }
  const event = findEvent(span, STRANDS_KEYS.toolMessageEvent, 'content');
  if (event) return jsonAttribute(event, 'content');
  const input = messagesOf(span, STRANDS_KEYS.inputMessages);
  const call = input ? requestedCalls(input)[0] : undefined;
  return call ? call.args : { captured: false };
}

/**
 * The GenAI result attribute is left out on failures (the SDK follows the spec there), but the
 * output message and the default layout's `gen_ai.choice` event still carry what the model was
 * shown, error text included: read those next so every layout gives the same result.
 */
function toolResult(span: SpanRecord): Captured<JsonValue> {
  if (STRANDS_KEYS.toolCallResult in span.attributes) {
    return unwrapCaptured(jsonAttribute(span.attributes, STRANDS_KEYS.toolCallResult));
  }
  const output = messagesOf(span, STRANDS_KEYS.outputMessages);
  const shown = output ? shownResults(output)[0] : undefined;
  if (shown) return unwrapCaptured(shown.result);
  const event = findEvent(span, STRANDS_KEYS.choiceEvent, 'message');
  return event ? unwrapCaptured(jsonAttribute(event, 'message')) : { captured: false };
}

/**
 * A thrown tool error ends the span ERROR; an error result the SDK makes itself (unknown tool,
 * no result) ends it OK with `gen_ai.tool.status=error`: both are errors.
 */
function toolOutcome(span: SpanRecord, result: Captured<JsonValue>): CallOutcome {
  const outcome = spanOutcome(span);
  if (outcome.status === 'error' || stringAttribute(span.attributes, STRANDS_KEYS.toolStatus) !== 'error') {
    return outcome;
  }
  const message = result.captured && typeof result.value === 'string' ? result.value : undefined;
  return { status: 'error', ...(message && { message }) };
}

function readTurn(span: SpanRecord): SpanReading {
  const model = stringAttribute(span.attributes, STRANDS_KEYS.requestModel);
  const output = messagesOf(span, STRANDS_KEYS.outputMessages);
  const input = messagesOf(span, STRANDS_KEYS.inputMessages);
  const history = input ? undefined : messageEvents(span);
  const unread = output && unreadRequests(output, STRANDS_KEYS.outputMessages);
  const choice = output ? undefined : choiceBlocks(span);
  const answer = cutAnswer(output ? answerText(output) : choice && textOfBlocks(choice));
  return {
    kind: 'turn',
    turn: {
      requested: output ? requestedCalls(output) : choice ? requestedInBlocks(choice) : [],
      shown: input ? shownResults(input).map(unwrapShown) : history && shownFromEvents(history),
      historyLength: input?.length ?? history?.length ?? 0,
      ...(model && { model }),
      ...(answer && { answer }),
      ...(unread && { unreadRequests: unread }),
      convention: STRANDS,
    },
  };
}

/** Default layout: the `gen_ai.choice` event's `message` lists the response's content blocks. */
function choiceBlocks(span: SpanRecord): JsonValue[] | undefined {
  const event = findEvent(span, STRANDS_KEYS.choiceEvent, 'message');
  const blocks = event ? jsonAttribute(event, 'message') : undefined;
  return blocks?.captured && Array.isArray(blocks.value) ? blocks.value : undefined;
}

function requestedInBlocks(blocks: readonly JsonValue[]): RequestedCall[] {
  const calls: RequestedCall[] = [];
  for (const block of blocks) {
    const use = toolUseOf(block);
    if (use) calls.push(use);
  }
  return calls;
}

/**
 * The text blocks: `{text}` (Bedrock shape) or `{type: "textBlock", text}`; reasoning is in
 * blocks of its own (`{reasoningContent}`, `{type: "reasoningBlock"}`) and is not the answer.
 */
function textOfBlocks(blocks: readonly JsonValue[]): string | undefined {
  let text: string | undefined;
  for (const block of blocks) {
    if (!isJsonObject(block)) continue;
    if (block.type === undefined || block.type === 'textBlock' || block.type === 'text')
      text = withAnswerText(text, block.text);
  }
  return text;
}

/** `{type:"toolUse", name, toolUseId, input}` (TS stable format) or `{toolUse: {...}}` (Bedrock shape). */
function toolUseOf(block: JsonValue): RequestedCall | undefined {
  if (!isJsonObject(block)) return undefined;
  const use = isJsonObject(block.toolUse) ? block.toolUse : block.type === 'toolUse' ? block : undefined;
  if (!use || typeof use.name !== 'string' || use.name.trim() === '') return undefined;
  const callId = typeof use.toolUseId === 'string' ? use.toolUseId.trim() : '';
  return {
    tool: use.name.trim(),
    ...(callId !== '' && { callId }),
    args: Object.hasOwn(use, 'input') ? capturedJson(use.input as JsonValue) : { captured: false },
  };
}

/** The message events a chat span was given; undefined when it has none (content not recorded). */
function messageEvents(span: SpanRecord): Attributes[] | undefined {
  const events = span.events.filter((event) => MESSAGE_EVENTS.has(event.name));
  return events.length > 0 ? events.map((event) => event.attributes) : undefined;
}

/** `{toolResult: {toolUseId, status, content}}` blocks in the messages' `content`. */
function shownFromEvents(events: readonly Attributes[]): ShownResult[] {
  const results: ShownResult[] = [];
  for (const attributes of events) {
    const content = jsonAttribute(attributes, 'content');
    if (!content.captured || !Array.isArray(content.value)) continue;
    for (const block of content.value) {
      if (!isJsonObject(block) || !isJsonObject(block.toolResult)) continue;
      const toolResult = block.toolResult;
      const callId = typeof toolResult.toolUseId === 'string' ? toolResult.toolUseId.trim() : '';
      results.push({
        ...(callId !== '' && { callId }),
        result: Object.hasOwn(toolResult, 'content')
          ? { captured: true, value: unwrapContent(toolResult.content as JsonValue) }
          : { captured: false },
      });
    }
  }
  return results;
}

/** Messages from the span attribute (attributes-only layout) or its details event (latest layout). */
function messagesOf(span: SpanRecord, key: string): JsonValue[] | undefined {
  const holder = key in span.attributes ? span.attributes : findEvent(span, STRANDS_KEYS.detailsEvent, key);
  if (!holder) return undefined;
  const parsed = jsonAttribute(holder, key);
  return parsed.captured && Array.isArray(parsed.value) ? parsed.value : undefined;
}

/** The first event of that name carrying that attribute (the details event repeats per key). */
function findEvent(span: SpanRecord, name: string, key: string): Attributes | undefined {
  return span.events.find((event) => event.name === name && key in event.attributes)?.attributes;
}

function unwrapShown(shown: ShownResult): ShownResult {
  return { ...shown, result: unwrapCaptured(shown.result) };
}

function unwrapCaptured(captured: Captured<JsonValue>): Captured<JsonValue> {
  if (!captured.captured || captured.parseError !== undefined) return captured;
  return { captured: true, value: unwrapContent(captured.value) };
}

/**
 * Strands wraps what a tool returns in content blocks: an object in `{json}`, an array in
 * `{json: {$value: [...]}}`, a string or an error message in `{text}`. One block gives its value,
 * several give the list of their values; anything else (images, documents) is kept as it is.
 */
export function unwrapContent(value: JsonValue): JsonValue {
  if (!Array.isArray(value) || value.length === 0) return value;
  const values: JsonValue[] = [];
  for (const block of value) {
    if (!isJsonObject(block)) return value;
    const keys = Object.keys(block);
    if (keys.length === 1 && keys[0] === 'text' && typeof block.text === 'string') values.push(block.text);
    else if (keys.length === 1 && keys[0] === 'json') values.push(unwrapArray(block.json as JsonValue));
    else return value;
  }
  return values.length === 1 ? (values[0] as JsonValue) : values;
}

function unwrapArray(json: JsonValue): JsonValue {
  return isJsonObject(json) && Object.keys(json).length === 1 && Array.isArray(json.$value)
    ? json.$value
    : json;
}
