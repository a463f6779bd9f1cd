/**
 * Langfuse's OpenTelemetry SDK (`@langfuse/tracing`, attribute names in `@langfuse/core`
 * `LangfuseOtelSpanAttributes`): every observation is a span named after it, typed by
 * `langfuse.observation.type` (span, generation, event, agent, tool, chain, retriever,
 * evaluator, embedding, guardrail), with its input and output as JSON in
 * `langfuse.observation.input` / `.output` (strings are written as they are).
 *
 * A failure is `langfuse.observation.level = ERROR` with `langfuse.observation.status_message`,
 * and the OTLP status left unset by `observe()`; `observe()` also writes the output
 * `{error: String(error)}`, which is where the error's type survives. Tool observations carry no
 * call id: they are linked to the generation that asked for them by name and arguments.
 * Generations hold chat payloads (`@langfuse/openai`: input `{messages, tools}`, output the
 * assistant message with OpenAI `tool_calls`; `@langfuse/langchain`: the same with LangChain
 * tool calls, and tool results as messages whose role is the tool's name).
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { CallOutcome } from '../model/trajectory.js';
import { cutAnswer } from './answer-text.js';
import { jsonAttribute, stringAttribute } from './attributes.js';
import {
  answerInOutput,
  contentValue,
  messageList,
  readChatMessage,
  requestedInOutput,
  shownInMessages,
  unwrapToolOutput,
} from './chat-messages.js';
import type { Convention, ShownResult, SpanReading } from './convention.js';
import { spanOutcome } from './span-outcome.js';

/** Attribute keys of `@langfuse/core` that this normalizer reads. */
export const LANGFUSE = {
  observationType: 'langfuse.observation.type',
  input: 'langfuse.observation.input',
  output: 'langfuse.observation.output',
  level: 'langfuse.observation.level',
  statusMessage: 'langfuse.observation.status_message',
  model: 'langfuse.observation.model.name',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const LANGFUSE_CONVENTION = 'langfuse';

/**
 * The Langfuse convention: claims observations typed tool (a call), generation (a turn) or
 * agent (an agent run). Other types are structure, left to the conventions after this one.
 */
export const langfuse: Convention = {
  name: LANGFUSE_CONVENTION,
  marks: { keys: [LANGFUSE.observationType] },
  // Langfuse's ingestion reads the session from `langfuse.session.id`, then `session.id`.
  conversationKeys: ['langfuse.session.id', 'session.id'],
  read(span: SpanRecord): SpanReading | undefined {
    const type = stringAttribute(span.attributes, LANGFUSE.observationType);
    if (type === 'tool') return readTool(span);
    if (type === 'generation') return readGeneration(span);
    if (type === 'agent') return { kind: 'agent', name: span.name, convention: LANGFUSE_CONVENTION };
    return undefined;
  },
};

function readTool(span: SpanRecord): SpanReading {
  // The LangChain handler ends a tool with the ToolMessage it returned: call id and name inside.
  const output = unwrapToolOutput(jsonAttribute(span.attributes, LANGFUSE.output));
  return {
    kind: 'tool',
    call: {
      tool: span.name,
      ...(output.callId && { callId: output.callId }),
      args: jsonAttribute(span.attributes, LANGFUSE.input),
      result: output.result,
      outcome: output.failure ?? langfuseOutcome(span),
      convention: LANGFUSE_CONVENTION,
    },
  };
}

/**
 * Level ERROR is a failure whatever the OTLP status. The status message is the error's
 * message; `observe()` writes `{error: "Name: message"}` as the output, which gives the type.
 */
export function langfuseOutcome(span: SpanRecord): CallOutcome {
  const outcome = spanOutcome(span);
  if (outcome.status === 'no_result') return outcome;
  if (stringAttribute(span.attributes, LANGFUSE.level) !== 'ERROR') return outcome;
  const message =
    stringAttribute(span.attributes, LANGFUSE.statusMessage) ??
    (outcome.status === 'error' ? outcome.message : undefined);
  const errorType =
    (outcome.status === 'error' ? outcome.errorType : undefined) ?? errorTypeOf(span, message);
  return { status: 'error', ...(errorType && { errorType }), ...(message && { message }) };
}

function errorTypeOf(span: SpanRecord, message: string | undefined): string | undefined {
  const output = jsonAttribute(span.attributes, LANGFUSE.output);
  if (!output.captured || !isJsonObject(output.value) || typeof output.value.error !== 'string')
    return undefined;
  const text = output.value.error;
  const colon = text.indexOf(': ');
  if (colon <= 0 || (message !== undefined && text.slice(colon + 2) !== message)) return undefined;
  const name = text.slice(0, colon);
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : undefined;
}

function readGeneration(span: SpanRecord): SpanReading {
  const input = jsonAttribute(span.attributes, LANGFUSE.input);
  const output = jsonAttribute(span.attributes, LANGFUSE.output);
  const history = input.captured ? messageList(input.value) : undefined;
  const model = stringAttribute(span.attributes, LANGFUSE.model);
  const answer = output.captured ? cutAnswer(answerInOutput(output.value)) : undefined;
  return {
    kind: 'turn',
    turn: {
      requested: output.captured ? requestedInOutput(output.value) : [],
      shown: input.captured ? shownResults(history ?? []) : undefined,
      historyLength: history?.length ?? 0,
      ...(model && { model }),
      ...(answer && { answer }),
      convention: LANGFUSE_CONVENTION,
    },
  };
}

const CHAT_ROLES = new Set(['user', 'assistant', 'system', 'developer', 'tool', 'function', 'human', 'ai']);

/**
 * Results with call ids (OpenAI `role: tool` messages), plus the LangChain handler's tool
 * messages, which carry no id and use the tool's name as their role: recognized when an
 * earlier assistant message in the same input asked for a tool of that name.
 */
function shownResults(messages: readonly JsonValue[]): ShownResult[] {
  const shown = shownInMessages(messages);
  const asked = new Set<string>();
  for (const message of messages) {
    const read = readChatMessage(message);
    if (!read) continue;
    for (const call of read.requested) asked.add(call.tool);
    if (read.role && !CHAT_ROLES.has(read.role) && asked.has(read.role)) {
      const value = read.content === undefined ? undefined : contentValue(read.content);
      shown.push({
        tool: read.role,
        result: value === undefined ? { captured: false } : { captured: true, value },
      });
    }
  }
  return shown;
}
