/**
 * LangSmith's OpenTelemetry mode (`langsmith` npm, `experimental/otel/translator`): every run
 * becomes a span named after the run, `langsmith.span.kind` = the run type (llm, tool, chain,
 * prompt, retriever, ...), `gen_ai.operation.name` derived from it (llm -> chat, tool ->
 * execute_tool), the run's inputs as JSON in `gen_ai.prompt` and its outputs in
 * `gen_ai.completion`. Tool runs add `gen_ai.tool.name` and, when the run carried one
 * (`extra.tool_call_id` or `metadata.tool_call_id`), `gen_ai.tool.call.id`. A failed run gets
 * `recordException(new Error(run.error))` but keeps the OK status it was given at its start
 * (see {@link langsmithOutcome}).
 *
 * LLM runs hold whole chat payloads: OpenAI requests and completions (`wrapOpenAI`) or
 * LangChain's serialized messages, read by `chat-messages.ts`.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { CallOutcome, Captured } from '../model/trajectory.js';
import { cutAnswer } from './answer-text.js';
import { jsonAttribute, stringAttribute } from './attributes.js';
import {
  answerInOutput,
  contentValue,
  messageList,
  requestedInOutput,
  shownInMessages,
  unwrapToolOutput,
} from './chat-messages.js';
import type { Convention, SpanReading } from './convention.js';
import { spanOutcome } from './span-outcome.js';

/** Attribute keys of LangSmith's OpenTelemetry translator that this normalizer reads. */
export const LANGSMITH = {
  runType: 'langsmith.span.kind',
  runName: 'langsmith.trace.name',
  inputs: 'gen_ai.prompt',
  outputs: 'gen_ai.completion',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const LANGSMITH_CONVENTION = 'langsmith';

/**
 * The LangSmith convention: claims spans with `langsmith.span.kind` = tool (a call) or llm (a
 * turn). Chains, prompts, retrievers are structure: LangSmith has no agent run type.
 */
export const langsmith: Convention = {
  name: LANGSMITH_CONVENTION,
  marks: { keys: [LANGSMITH.runType] },
  // LangSmith groups traces into a thread by one of three metadata keys, exported as langsmith.metadata.*.
  conversationKeys: [
    'langsmith.metadata.thread_id',
    'langsmith.metadata.session_id',
    'langsmith.metadata.conversation_id',
  ],
  read(span: SpanRecord): SpanReading | undefined {
    const runType = stringAttribute(span.attributes, LANGSMITH.runType);
    if (runType === 'tool') return readToolRun(span);
    if (runType === 'llm') return readLlmRun(span);
    // Chains, prompts, retrievers: LangSmith's own runs. Prompt runs also carry
    // gen_ai.operation.name=chat, which OTel GenAI would misread as turns.
    return runType === undefined ? undefined : { kind: 'structure', convention: LANGSMITH_CONVENTION };
  },
};

function readToolRun(span: SpanRecord): SpanReading {
  const attributes = span.attributes;
  const output = unwrapToolOutput(jsonAttribute(attributes, LANGSMITH.outputs));
  const tool =
    stringAttribute(attributes, LANGSMITH.toolName) ??
    output.name ??
    stringAttribute(attributes, LANGSMITH.runName) ??
    span.name;
  const callId = stringAttribute(attributes, LANGSMITH.toolCallId) ?? output.callId;
  return {
    kind: 'tool',
    call: {
      tool,
      ...(callId && { callId }),
      args: unwrapToolInput(jsonAttribute(attributes, LANGSMITH.inputs)),
      result: output.result,
      outcome: output.failure ?? langsmithOutcome(span),
      convention: LANGSMITH_CONVENTION,
    },
  };
}

function readLlmRun(span: SpanRecord): SpanReading {
  const attributes = span.attributes;
  const inputs = jsonAttribute(attributes, LANGSMITH.inputs);
  const outputs = jsonAttribute(attributes, LANGSMITH.outputs);
  const history = inputs.captured ? messageList(inputs.value) : undefined;
  const model =
    stringAttribute(attributes, LANGSMITH.requestModel) ??
    stringAttribute(attributes, LANGSMITH.responseModel);
  const answer = outputs.captured ? cutAnswer(answerInOutput(outputs.value)) : undefined;
  return {
    kind: 'turn',
    turn: {
      requested: outputs.captured ? requestedInOutput(outputs.value) : [],
      shown: inputs.captured ? shownInMessages(history ?? []) : undefined,
      historyLength: history?.length ?? 0,
      ...(model && { model }),
      ...(answer && { answer }),
      convention: LANGSMITH_CONVENTION,
    },
  };
}

/**
 * Tool inputs are the traced function's argument object. Old LangChain versions wrapped the
 * JSON of the arguments as `{input: "<json>"}`: unwrapped only when that string is an object.
 */
function unwrapToolInput(inputs: Captured<JsonValue>): Captured<JsonValue> {
  if (!inputs.captured || !isJsonObject(inputs.value)) return inputs;
  const keys = Object.keys(inputs.value);
  const inner = inputs.value.input;
  if (keys.length === 1 && typeof inner === 'string') {
    const parsed = contentValue(inner);
    if (isJsonObject(parsed)) return { captured: true, value: parsed };
  }
  return inputs;
}

/**
 * The translator marks every run OK when it is posted (at its start) and adds ERROR plus
 * `recordException(new Error(run.error))` when the failed run is patched; OTel JS SDKs keep
 * the first OK ("OK is final"), so a failed run is status OK with an exception event. Here the
 * OK says nothing: the exception decides. Its type is always `Error`; the run's error string is
 * `String(error)` from `traceable` ("PaymentGatewayTimeout: gateway down") or the LangChain
 * tracer's "message\n\nstack", and the real type is read back from either.
 */
export function langsmithOutcome(span: SpanRecord): CallOutcome {
  const hasException = span.events.some((event) => event.name === 'exception');
  const outcome =
    hasException && span.status.code === 'ok'
      ? spanOutcome({ ...span, status: { code: 'unset' } })
      : spanOutcome(span);
  if (outcome.status !== 'error' || outcome.errorType !== 'Error' || !outcome.message) return outcome;
  const split = outcome.message.indexOf('\n\n');
  if (split !== -1) {
    const message = outcome.message.slice(0, split);
    const stackHead = outcome.message.slice(split + 2).split('\n', 1)[0] ?? '';
    const named = ERROR_STRING.exec(stackHead);
    return { status: 'error', errorType: named?.[1] ?? 'Error', message };
  }
  const named = ERROR_STRING.exec(outcome.message);
  return named ? { status: 'error', errorType: named[1], message: named[2] } : outcome;
}

/** `Error.prototype.toString`: "Name: message", the name an identifier (classes are capitalized). */
const ERROR_STRING = /^([A-Z][\w$]*): ([\s\S]*)$/;
