/**
 * pydantic-ai (Python), instrumented through `InstrumentationSettings` (scope `pydantic-ai`).
 * Span names and keys depend on the instrumentation `version`:
 * - 1 and 2: `agent run` (`agent_name`), `chat {model}`, `running tool` /
 *   `running output function` with `gen_ai.tool.name`, `gen_ai.tool.call.id`, `tool_arguments`,
 *   `tool_response`; 1.0-era releases set no `gen_ai.operation.name` on run and tool spans.
 * - 3 and later: `invoke_agent {agent}`, `chat {model}`, `execute_tool {tool}` with the GenAI
 *   keys (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`).
 * Tool spans are siblings of the chat span that asked for them, under the run span. Chat spans
 * carry `gen_ai.input.messages` / `gen_ai.output.messages` (version 2+; tool results are
 * `tool_call_response` parts with `result`), or in version 1 an `events` attribute: a JSON list
 * of `gen_ai.*.message` / `gen_ai.choice` event bodies with OpenAI-style `tool_calls`.
 * A tool failure the model is told about (ModelRetry, arguments that fail validation) ends the
 * span ERROR with the retry prompt as its result; `pydantic_ai.tool.failure_stage` says which
 * stage failed; a deferred call (`pydantic_ai.tool.deferral.name`) has no result yet.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { Attributes, AttributeValue, SpanRecord } from '../model/span-record.js';
import type { CallOutcome, Captured } from '../model/trajectory.js';
import { cutAnswer, withAnswerText } from './answer-text.js';
import { capturedJson, jsonAttribute, stringAttribute, toJson } from './attributes.js';
import type { Convention, RequestedCall, ShownResult, SpanReading, ToolCallDraft } from './convention.js';
import { answerText, readMessages, requestedCalls, shownResults, unreadRequests } from './genai-messages.js';
import { spanOutcome } from './span-outcome.js';

/** Attribute keys of pydantic-ai's instrumentation that this normalizer reads. */
export const PYDANTIC_AI_KEYS = {
  operationName: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  legacyToolArguments: 'tool_arguments',
  legacyToolResponse: 'tool_response',
  agentName: 'gen_ai.agent.name',
  legacyAgentName: 'agent_name',
  requestModel: 'gen_ai.request.model',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  events: 'events',
  allMessages: 'pydantic_ai.all_messages',
  modelRequestParameters: 'model_request_parameters',
  failureStage: 'pydantic_ai.tool.failure_stage',
  deferralName: 'pydantic_ai.tool.deferral.name',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const PYDANTIC_AI = 'pydantic-ai';

/** The instrumentation scope pydantic-ai's tracer is created with. */
const SCOPE = 'pydantic-ai';

/** Keys only pydantic-ai writes: they identify its spans when the scope was lost on the way. */
const MARKERS = [
  PYDANTIC_AI_KEYS.legacyToolArguments,
  PYDANTIC_AI_KEYS.legacyToolResponse,
  PYDANTIC_AI_KEYS.legacyAgentName,
  PYDANTIC_AI_KEYS.allMessages,
  PYDANTIC_AI_KEYS.modelRequestParameters,
  PYDANTIC_AI_KEYS.failureStage,
  PYDANTIC_AI_KEYS.deferralName,
];

const TOOL_SPAN_NAMES = new Set(['running tool', 'running output function']);
const EXECUTE_TOOL_PREFIX = 'execute_tool ';
const INVOKE_AGENT_PREFIX = 'invoke_agent ';

/**
 * The pydantic-ai convention. Detection: instrumentation scope `pydantic-ai`, or one of the keys
 * only pydantic-ai writes (`tool_arguments`, `tool_response`, `agent_name`,
 * `pydantic_ai.all_messages`, `model_request_parameters`, `pydantic_ai.tool.*`); then the span
 * name or `gen_ai.operation.name` says what the span is.
 */
export const pydanticAi: Convention = {
  name: PYDANTIC_AI,
  marks: { keys: MARKERS, scopes: [SCOPE] },
  read(span: SpanRecord): SpanReading | undefined {
    const attributes = span.attributes;
    if (span.scope.name !== SCOPE && !hasMarker(attributes)) return undefined;
    const operation = stringAttribute(attributes, PYDANTIC_AI_KEYS.operationName);
    if (
      operation === 'execute_tool' ||
      TOOL_SPAN_NAMES.has(span.name) ||
      span.name.startsWith(EXECUTE_TOOL_PREFIX)
    ) {
      return { kind: 'tool', call: readToolCall(span) };
    }
    if (
      operation === 'invoke_agent' ||
      span.name === 'agent run' ||
      span.name.startsWith(INVOKE_AGENT_PREFIX)
    ) {
      const name =
        stringAttribute(attributes, PYDANTIC_AI_KEYS.agentName) ??
        stringAttribute(attributes, PYDANTIC_AI_KEYS.legacyAgentName);
      return { kind: 'agent', ...(name && { name }), convention: PYDANTIC_AI };
    }
    if (operation === 'chat') return readTurn(span);
    return undefined;
  },
};

/** Whether any key only pydantic-ai writes is there (a loop: every span is offered to this convention). */
function hasMarker(attributes: Attributes): boolean {
  for (const key of MARKERS) if (key in attributes) return true;
  return false;
}

function readToolCall(span: SpanRecord): ToolCallDraft {
  const attributes = span.attributes;
  const tool =
    stringAttribute(attributes, PYDANTIC_AI_KEYS.toolName) ??
    (span.name.startsWith(EXECUTE_TOOL_PREFIX)
      ? span.name.slice(EXECUTE_TOOL_PREFIX.length).trim()
      : span.name);
  const callId = stringAttribute(attributes, PYDANTIC_AI_KEYS.toolCallId);
  const argsKey =
    PYDANTIC_AI_KEYS.toolCallArguments in attributes
      ? PYDANTIC_AI_KEYS.toolCallArguments
      : PYDANTIC_AI_KEYS.legacyToolArguments;
  const resultKey =
    PYDANTIC_AI_KEYS.toolCallResult in attributes
      ? PYDANTIC_AI_KEYS.toolCallResult
      : PYDANTIC_AI_KEYS.legacyToolResponse;
  return {
    tool,
    ...(callId && { callId }),
    // Arguments are always JSON (`args_as_json_str`): a string that does not parse is kept with parseError.
    args: jsonAttribute(attributes, argsKey),
    result: resultAttribute(attributes, resultKey),
    outcome: toolOutcome(span),
    convention: PYDANTIC_AI,
  };
}

/**
 * A tool's string return value and a retry prompt are written as the raw string, anything else
 * as JSON: a result that does not parse is that string, not a parse error. (A string return
 * that happens to be JSON, such as "42", cannot be told from the number.)
 */
function resultAttribute(attributes: Attributes, key: string): Captured<JsonValue> {
  if (!Object.hasOwn(attributes, key)) return { captured: false };
  const value = attributes[key] as AttributeValue;
  const parsed = capturedJson(value);
  return parsed.captured && parsed.parseError !== undefined
    ? { captured: true, value: toJson(value) }
    : parsed;
}

/**
 * Deferred calls (handed to the caller for approval or external execution) have not run: no
 * result, whatever the status (versions before 5 marked them ERROR). A failure stage names the
 * error better than the exception type, which is ToolRetryError for every retry.
 */
function toolOutcome(span: SpanRecord): CallOutcome {
  if (PYDANTIC_AI_KEYS.deferralName in span.attributes) return { status: 'no_result' };
  const outcome = spanOutcome(span);
  const stage = stringAttribute(span.attributes, PYDANTIC_AI_KEYS.failureStage);
  if (outcome.status !== 'error' || stage === undefined) return outcome;
  return { ...outcome, errorType: stage };
}

function readTurn(span: SpanRecord): SpanReading {
  const attributes = span.attributes;
  const model = stringAttribute(attributes, PYDANTIC_AI_KEYS.requestModel);
  const input = readMessages(attributes, PYDANTIC_AI_KEYS.inputMessages);
  const output = readMessages(attributes, PYDANTIC_AI_KEYS.outputMessages);
  const events = input || output ? undefined : readMessages(attributes, PYDANTIC_AI_KEYS.events);
  const fromEvents = events && readEvents(events);
  const unread = output && unreadRequests(output, PYDANTIC_AI_KEYS.outputMessages);
  const answer = cutAnswer(output ? answerText(output) : fromEvents?.text);
  return {
    kind: 'turn',
    turn: {
      requested: output ? requestedCalls(output) : (fromEvents?.requested ?? []),
      shown: input ? shownResults(input) : fromEvents?.shown,
      historyLength: input?.length ?? fromEvents?.historyLength ?? 0,
      ...(model && { model }),
      ...(answer && { answer }),
      ...(unread && { unreadRequests: unread }),
      convention: PYDANTIC_AI,
    },
  };
}

/**
 * Version 1 event bodies: `gen_ai.choice` holds the response (`message.tool_calls`, the text in
 * `message.content`), the other events are the input, one per message part, numbered by
 * `gen_ai.message.index`.
 */
function readEvents(events: readonly JsonValue[]): {
  requested: RequestedCall[];
  shown: ShownResult[];
  historyLength: number;
  text: string | undefined;
} {
  let text: string | undefined;
  const requested: RequestedCall[] = [];
  const shown: ShownResult[] = [];
  const messageIndexes = new Set<JsonValue>();
  events.forEach((event, position) => {
    if (!isJsonObject(event)) return;
    const name = event['event.name'];
    if (name === 'gen_ai.choice') {
      if (isJsonObject(event.message)) {
        requested.push(...openAiToolCalls(event.message.tool_calls));
        text = choiceText(text, event.message.content);
      }
      return;
    }
    if (name === 'gen_ai.system.message') return;
    messageIndexes.add(event['gen_ai.message.index'] ?? `event ${position}`);
    if (name !== 'gen_ai.tool.message') return;
    const callId = typeof event.id === 'string' ? event.id.trim() : '';
    const tool = typeof event.name === 'string' ? event.name : undefined;
    shown.push({
      ...(callId !== '' && { callId }),
      ...(tool && { tool }),
      result: Object.hasOwn(event, 'content')
        ? { captured: true, value: event.content as JsonValue }
        : { captured: false },
    });
  });
  return { requested, shown, historyLength: messageIndexes.size, text };
}

/**
 * A version 1 choice's text: the string, or the `{kind: "text", text}` parts of a list (which
 * holds the `thinking` parts too).
 */
function choiceText(sofar: string | undefined, content: JsonValue | undefined): string | undefined {
  if (!Array.isArray(content)) return withAnswerText(sofar, content);
  let text = sofar;
  for (const part of content)
    if (isJsonObject(part) && part.kind === 'text') text = withAnswerText(text, part.text);
  return text;
}

/** `[{id, type: "function", function: {name, arguments}}]`; arguments a JSON string or an object. */
function openAiToolCalls(calls: JsonValue | undefined): RequestedCall[] {
  if (!Array.isArray(calls)) return [];
  const out: RequestedCall[] = [];
  for (const call of calls) {
    if (!isJsonObject(call) || !isJsonObject(call.function)) continue;
    const fn = call.function;
    if (typeof fn.name !== 'string' || fn.name.trim() === '') continue;
    const callId = typeof call.id === 'string' ? call.id.trim() : '';
    out.push({
      tool: fn.name.trim(),
      ...(callId !== '' && { callId }),
      args: Object.hasOwn(fn, 'arguments') ? capturedJson(fn.arguments as JsonValue) : { captured: false },
    });
  }
  return out;
}
