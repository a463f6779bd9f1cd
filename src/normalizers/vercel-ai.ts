/**
 * The Vercel AI SDK's own `ai.*` span convention: `experimental_telemetry` in v3-v6 and
 * `new LegacyOpenTelemetry()` from `@ai-sdk/otel` in v7 (v7's `new OpenTelemetry()` writes
 * plain OTel GenAI spans, read by `otel-genai.ts`).
 *
 * - `ai.generateText` / `ai.streamText` / `ai.generateObject` / `ai.streamObject`: one call of
 *   the SDK, an agent loop of up to N steps, named by `ai.telemetry.functionId`. Its
 *   `ai.response.toolCalls` repeats every step's calls (v7) or the last step's (v6): read as a
 *   turn it would issue every call twice, so it is an agent run and nothing more.
 * - `ai.generateText.doGenerate` / `ai.streamText.doStream` (and the object variants): one
 *   model call, a turn. `ai.response.toolCalls` = `[{toolCallId, toolName, input}]` (`input`
 *   an object in v7, a JSON string in v5/v6; `args`, a JSON string, in v3/v4);
 *   `ai.prompt.messages` = its input, with `tool-result` parts; `ai.response.text` = the text it
 *   wrote (`""` on a step that only asked for tools, in v7). One with no attributes at all is a
 *   turn whose requests are unread, never a turn that asked for nothing.
 * - `ai.toolCall`: one tool execution (`ai.toolCall.name|id|args|result`), failed = status
 *   ERROR + exception event. v7 legacy nests it under the doGenerate span, v6 beside it.
 * - Everything else (`ai.embed`, `ai.rerank`, `ai.generateSpeech`, ...) is claimed by no reading.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { Captured } from '../model/trajectory.js';
import { cutAnswer, withAnswerText } from './answer-text.js';
import { capturedJson, jsonAttribute, stringAttribute } from './attributes.js';
import type { Convention, RequestedCall, ShownResult, SpanReading } from './convention.js';
import { spanOutcome } from './span-outcome.js';

/** Attribute keys of the Vercel AI SDK `ai.*` convention that this normalizer reads. */
export const VERCEL_AI_KEYS = {
  operationId: 'ai.operationId',
  functionId: 'ai.telemetry.functionId',
  modelId: 'ai.model.id',
  promptMessages: 'ai.prompt.messages',
  responseToolCalls: 'ai.response.toolCalls',
  responseText: 'ai.response.text',
  toolCallName: 'ai.toolCall.name',
  toolCallId: 'ai.toolCall.id',
  toolCallArgs: 'ai.toolCall.args',
  toolCallResult: 'ai.toolCall.result',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const VERCEL_AI = 'vercel-ai';

const OPERATION_PREFIX = 'ai.';
const TOOL_CALL = 'ai.toolCall';
const RUNS = new Set(['ai.generateText', 'ai.streamText', 'ai.generateObject', 'ai.streamObject']);
const MODEL_CALLS = new Set([
  'ai.generateText.doGenerate',
  'ai.streamText.doStream',
  'ai.generateObject.doGenerate',
  'ai.streamObject.doStream',
]);

/** Tool outputs that say the call failed. */
const ERROR_OUTPUTS = new Set(['error-text', 'error-json']);

/** Tool outputs whose `value` is what the model was shown. */
const VALUE_OUTPUTS = new Set(['text', 'json', 'error-text', 'error-json']);

/**
 * The Vercel AI SDK `ai.*` convention. Claims a span whose `ai.operationId` (or, when a
 * pipeline dropped that attribute, whose span name) is one of the operations above.
 */
export const vercelAi: Convention = {
  name: VERCEL_AI,
  marks: { keys: [VERCEL_AI_KEYS.operationId], namePrefixes: [OPERATION_PREFIX] },
  // `experimental_telemetry: { metadata: { sessionId } }`, as Langfuse's and Phoenix's AI SDK integrations read it.
  conversationKeys: ['ai.telemetry.metadata.sessionId'],
  read(span: SpanRecord): SpanReading | undefined {
    const operation = operationOf(span);
    if (operation === undefined) return undefined;
    if (operation === TOOL_CALL) return readToolCall(span);
    if (MODEL_CALLS.has(operation)) return readTurn(span);
    if (RUNS.has(operation)) {
      const name = stringAttribute(span.attributes, VERCEL_AI_KEYS.functionId);
      return { kind: 'agent', ...(name && { name }), convention: VERCEL_AI };
    }
    return undefined;
  },
};

/** The SDK names every span after its operation id, so the name stands in when the attribute is gone. */
function operationOf(span: SpanRecord): string | undefined {
  const operation = stringAttribute(span.attributes, VERCEL_AI_KEYS.operationId) ?? span.name;
  return operation.startsWith(OPERATION_PREFIX) ? operation : undefined;
}

function readToolCall(span: SpanRecord): SpanReading | undefined {
  const attributes = span.attributes;
  const tool = stringAttribute(attributes, VERCEL_AI_KEYS.toolCallName);
  // Every SDK version sets the name; a span without one cannot be matched to anything.
  if (tool === undefined) return undefined;
  const callId = stringAttribute(attributes, VERCEL_AI_KEYS.toolCallId);
  const agentName = stringAttribute(attributes, VERCEL_AI_KEYS.functionId);
  return {
    kind: 'tool',
    call: {
      tool,
      ...(callId && { callId }),
      args: jsonAttribute(attributes, VERCEL_AI_KEYS.toolCallArgs),
      result: jsonAttribute(attributes, VERCEL_AI_KEYS.toolCallResult),
      outcome: spanOutcome(span),
      ...(agentName && { agentName }),
      convention: VERCEL_AI,
    },
  };
}

function readTurn(span: SpanRecord): SpanReading {
  const messages = jsonAttribute(span.attributes, VERCEL_AI_KEYS.promptMessages);
  const input = messages.captured && Array.isArray(messages.value) ? messages.value : undefined;
  const model = stringAttribute(span.attributes, VERCEL_AI_KEYS.modelId);
  // The run span repeats its last step's text: read on the step only, as the calls are.
  const answer = cutAnswer(withAnswerText(undefined, span.attributes[VERCEL_AI_KEYS.responseText]));
  const unread: string[] = [];
  // A store that kept the span but none of its attributes (Langfuse's export does this to the
  // last step of a stream): what the step asked for is unknown, not nothing.
  if (Object.keys(span.attributes).length === 0)
    unread.push(`${span.name} recorded no attributes: which tools it asked for is unknown`);
  return {
    kind: 'turn',
    turn: {
      requested: requestedCalls(span, unread),
      shown: input ? shownResults(input) : undefined,
      historyLength: input?.length ?? 0,
      ...(model && { model }),
      ...(answer && { answer }),
      ...(unread.length > 0 && { unreadRequests: unread }),
      convention: VERCEL_AI,
    },
  };
}

/**
 * `ai.response.toolCalls` of one model call. Absent when the step asked for no tool (or outputs
 * were not recorded); a value that is not a JSON list, or an entry without a tool name, is a
 * request left unread.
 */
function requestedCalls(span: SpanRecord, unread: string[]): RequestedCall[] {
  const parsed = jsonAttribute(span.attributes, VERCEL_AI_KEYS.responseToolCalls);
  if (!parsed.captured) return [];
  if (!Array.isArray(parsed.value)) {
    unread.push(`${VERCEL_AI_KEYS.responseToolCalls} is not a JSON list`);
    return [];
  }
  const calls: RequestedCall[] = [];
  for (const entry of parsed.value) {
    const tool = isJsonObject(entry) ? trimmed(entry.toolName) : undefined;
    if (!isJsonObject(entry) || tool === undefined) {
      unread.push(`an entry of ${VERCEL_AI_KEYS.responseToolCalls} without a tool name`);
      continue;
    }
    const callId = trimmed(entry.toolCallId);
    calls.push({ ...(callId && { callId }), tool, args: inputOf(entry) });
  }
  return calls;
}

/** `input` (v5+) or `args` (v3/v4); a string is the JSON the model wrote and is parsed once more. */
function inputOf(entry: { [key: string]: JsonValue }): Captured<JsonValue> {
  if (Object.hasOwn(entry, 'input')) return capturedJson(entry.input as JsonValue);
  if (Object.hasOwn(entry, 'args')) return capturedJson(entry.args as JsonValue);
  return { captured: false };
}

/**
 * The `tool-result` parts of a prompt: `{toolCallId, toolName, output: {type, value}}` in v5+,
 * `{toolCallId, toolName, result}` in v3/v4. They sit in `tool` messages, and in `assistant`
 * messages for provider-executed tools, so every message's content is searched.
 */
function shownResults(messages: readonly JsonValue[]): ShownResult[] {
  const results: ShownResult[] = [];
  for (const message of messages) {
    if (!isJsonObject(message) || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (!isJsonObject(part) || part.type !== 'tool-result') continue;
      const callId = trimmed(part.toolCallId);
      const tool = trimmed(part.toolName);
      const isError = isJsonObject(part.output) && ERROR_OUTPUTS.has(part.output.type as string);
      results.push({
        ...(callId && { callId }),
        ...(tool && { tool }),
        result: resultOf(part),
        ...(isError && { isError }),
      });
    }
  }
  return results;
}

/**
 * What the model was shown, unwrapped the way the SDK's own GenAI mapping does
 * (`@ai-sdk/otel` `formatInputMessages`), so a call reads the same in both telemetry modes:
 * text, json and their error variants give their value, a denied execution `{denied, reason}`,
 * anything else the output object itself.
 */
function resultOf(part: { [key: string]: JsonValue }): Captured<JsonValue> {
  const output = part.output;
  if (isJsonObject(output)) {
    if (Object.hasOwn(output, 'value') && VALUE_OUTPUTS.has(output.type as string))
      return { captured: true, value: output.value as JsonValue };
    if (output.type === 'execution-denied')
      return {
        captured: true,
        value: { denied: true, ...(output.reason !== undefined && { reason: output.reason }) },
      };
    return { captured: true, value: output };
  }
  if (output !== undefined) return { captured: true, value: output };
  if (Object.hasOwn(part, 'result')) return { captured: true, value: part.result as JsonValue };
  return { captured: false };
}

function trimmed(value: JsonValue | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return text === '' ? undefined : text;
}
