/**
 * OpenInference (Arize; `@arizeai/openinference-*`): every span says what it is in
 * `openinference.span.kind`. TOOL spans carry `tool.name`, the arguments in `input.value` and the
 * result in `output.value`, and usually no call id; LLM spans flatten their messages into
 * `llm.input_messages.N.*` / `llm.output_messages.N.*`; AGENT spans are agent runs. The OpenAI
 * Agents SDK bridges' `turn` CHAIN spans are steps (one model turn and its calls, in order); other
 * CHAIN spans and the other kinds are structure. Read from the real bridges for `@openai/agents` and LangChain.js
 * (fixtures in test/spans/openinference-*; their quirks in test/spans/capture/openinference).
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { AttributeValue, SpanRecord } from '../model/span-record.js';
import type { CallOutcome, Captured } from '../model/trajectory.js';
import { cutAnswer } from './answer-text.js';
import { capturedJson, stringAttribute } from './attributes.js';
import { answerInOutput } from './chat-messages.js';
import { codeActions, mayHoldCode } from './code-actions.js';
import type { Convention, RequestedCall, ShownResult, SpanReading, ToolCallDraft } from './convention.js';
import { observationShown, threadKey } from './observations.js';
import {
  type FlatMessages,
  langChainContent,
  langChainMessageKwargs,
  langChainRequestedCalls,
  langChainShownResults,
  readFlattenedMessages,
  requestedFromFlattened,
  shownFromFlattened,
  textFromFlattened,
  textOrJson,
} from './openinference-messages.js';
import { toolsOf } from './openinference-tools.js';
import { spanOutcome } from './span-outcome.js';
import { markTransferRequests } from './transfer-requests.js';
import { unwrapArguments } from './wrapped-arguments.js';

/** Attribute keys of the OpenInference conventions that this normalizer reads. */
export const OPENINFERENCE = {
  spanKind: 'openinference.span.kind',
  toolName: 'tool.name',
  toolCallId: 'tool_call.id',
  toolId: 'tool.id',
  inputValue: 'input.value',
  inputMimeType: 'input.mime_type',
  outputValue: 'output.value',
  outputMimeType: 'output.mime_type',
  inputMessages: 'llm.input_messages',
  outputMessages: 'llm.output_messages',
  modelName: 'llm.model_name',
  responseModelName: 'llm.response.model_name',
  requestModelName: 'llm.request.model_name',
  agentName: 'agent.name',
  graphNodeId: 'graph.node.id',
  graphNodeName: 'graph.node.name',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const OPENINFERENCE_CONVENTION = 'openinference';

const TEXT_MIME = 'text/plain';
const JSON_MIME = 'application/json';
/** The `@openai/agents` bridge: its trace span is an AGENT span too, but it is the workflow. */
const OPENAI_AGENTS_SCOPE = '@arizeai/openinference-instrumentation-openai-agents';
/** That bridge's `mcp_tools` span lists an MCP server's tools; it calls nothing. */
const MCP_LIST_TOOLS = 'mcp_tools';
/** The Python instrumentation for the OpenAI Agents SDK. */
const OPENAI_AGENTS_PYTHON_SCOPE = 'openinference.instrumentation.openai_agents';
/**
 * Both bridges open a CHAIN span named `turn` per model turn of an agent run, holding the model
 * call and the tool calls it asked for, one after another under the agent span.
 */
const TURN_CHAIN = 'turn';
/** That bridge's handoff span: named `handoff to {agent}`, `tool.name` = `handoff_to_{agent}`. */
const HANDOFF_SPAN = /^handoff( to |$)/;
const HANDOFF_TOOL_PREFIX = 'handoff_to_';
/** The type of a Responses message item's text part, as it appears in the item's JSON. */
const RESPONSES_TEXT_PART = '"output_text"';

/** The OpenInference convention: claims every span with `openinference.span.kind`. */
export const openInference: Convention = {
  name: OPENINFERENCE_CONVENTION,
  marks: { keys: [OPENINFERENCE.spanKind] },
  // OpenInference's SpanAttributes.SESSION_ID, which Phoenix groups sessions by.
  conversationKeys: ['session.id'],
  read(span: SpanRecord): SpanReading | undefined {
    const kind = stringAttribute(span.attributes, OPENINFERENCE.spanKind)?.toUpperCase();
    switch (kind) {
      case 'TOOL':
        // Claimed as structure: read as nothing, and not taken for a tool span nobody read.
        return isToolListing(span) || isAgentsHandoff(span)
          ? { kind: 'structure', convention: OPENINFERENCE_CONVENTION }
          : { kind: 'tool', call: readOpenInferenceToolCall(span) };
      case 'LLM':
        return readTurn(span);
      case 'AGENT':
        return isAgentsWorkflow(span) ? undefined : readAgent(span);
      case 'CHAIN':
        return isAgentsTurn(span) ? { kind: 'step', convention: OPENINFERENCE_CONVENTION } : undefined;
      default:
        return undefined;
    }
  },
};

/** A `turn` CHAIN span of an OpenAI Agents SDK bridge: one step of its agent run. */
function isAgentsTurn(span: SpanRecord): boolean {
  return (
    span.name === TURN_CHAIN &&
    (span.scope.name === OPENAI_AGENTS_SCOPE || span.scope.name === OPENAI_AGENTS_PYTHON_SCOPE)
  );
}

function isToolListing(span: SpanRecord): boolean {
  return span.name === MCP_LIST_TOOLS && !(OPENINFERENCE.toolName in span.attributes);
}

/**
 * The `@openai/agents` bridge records a handoff as a TOOL span under a name the model never
 * called; the call the model made is its `transfer_to_{agent}` request on the LLM span, whose
 * result (the transfer message) the next turn is shown. Reading the span too would give one
 * handoff two calls, one of them under an unknown tool name.
 */
function isAgentsHandoff(span: SpanRecord): boolean {
  if (span.scope.name !== OPENAI_AGENTS_SCOPE || !HANDOFF_SPAN.test(span.name)) return false;
  const tool = stringAttribute(span.attributes, OPENINFERENCE.toolName);
  return tool === undefined || tool.startsWith(HANDOFF_TOOL_PREFIX);
}

/**
 * The `@openai/agents` bridge opens the SDK trace (`withTrace`, the run's workflow name) as an
 * AGENT span and gives every real agent span `graph.node.id` = the agent's name; the trace span
 * alone has none. It is the workflow around the agents, not an agent run.
 */
function isAgentsWorkflow(span: SpanRecord): boolean {
  return span.scope.name === OPENAI_AGENTS_SCOPE && !(OPENINFERENCE.graphNodeId in span.attributes);
}

function readAgent(span: SpanRecord): SpanReading {
  const attributes = span.attributes;
  const name =
    stringAttribute(attributes, OPENINFERENCE.agentName) ??
    stringAttribute(attributes, OPENINFERENCE.graphNodeName) ??
    stringAttribute(attributes, OPENINFERENCE.graphNodeId) ??
    (span.name.trim() || undefined);
  return { kind: 'agent', ...(name && { name }), convention: OPENINFERENCE_CONVENTION };
}

/** Reads the tool call a TOOL span records. */
export function readOpenInferenceToolCall(span: SpanRecord): ToolCallDraft {
  const attributes = span.attributes;
  const tool = stringAttribute(attributes, OPENINFERENCE.toolName) ?? span.name;
  const output = readToolOutput(span);
  const callId =
    stringAttribute(attributes, OPENINFERENCE.toolCallId) ??
    stringAttribute(attributes, OPENINFERENCE.toolId) ??
    output.callId;
  const agentName = stringAttribute(attributes, OPENINFERENCE.agentName);
  const { args, problem } = unwrapArguments(readArguments(span));
  return {
    tool,
    ...(callId && { callId }),
    args,
    ...(problem !== undefined && { argsProblem: problem }),
    result: output.result,
    outcome: toolOutcome(span, output.failedWith),
    ...(agentName && { agentName }),
    convention: OPENINFERENCE_CONVENTION,
  };
}

/**
 * `input.value` is the arguments as JSON. With `input.mime_type=text/plain` it is kept as the
 * recorded string, not parsed and not a parse error: a string-typed tool's input, or the LangChain
 * tracer collapsing an input with one string field to its value (`"A-1001"` for
 * `{order_id: "A-1001"}`, the key is lost; the issuing turn's request still has it).
 */
function readArguments(span: SpanRecord): Captured<JsonValue> {
  const attributes = span.attributes;
  if (!Object.hasOwn(attributes, OPENINFERENCE.inputValue)) return { captured: false };
  const value = attributes[OPENINFERENCE.inputValue];
  if (typeof value === 'string' && mimeType(span, OPENINFERENCE.inputMimeType) === TEXT_MIME) {
    return { captured: true, value };
  }
  return capturedJson(value as AttributeValue);
}

interface ToolOutput {
  result: Captured<JsonValue>;
  /** The call id a LangChain ToolMessage carries (the only id on a LangChain tool span). */
  callId?: string;
  /** Set when the result itself says the tool failed (a ToolMessage with `status: "error"`). */
  failedWith?: string;
}

/**
 * `output.value` is the result: text unless the mime type says JSON (OpenInference's default is
 * text, and the `@openai/agents` bridge marks JSON only when the result looks like an object).
 * LangChain wraps it as `{"output": <serialized ToolMessage>}`: the content is the result.
 */
function readToolOutput(span: SpanRecord): ToolOutput {
  const attributes = span.attributes;
  if (!Object.hasOwn(attributes, OPENINFERENCE.outputValue)) return { result: { captured: false } };
  const value = attributes[OPENINFERENCE.outputValue];
  if (typeof value !== 'string') return { result: capturedJson(value as AttributeValue) };
  const mime = mimeType(span, OPENINFERENCE.outputMimeType);
  if (mime === TEXT_MIME) return { result: { captured: true, value } };
  const result = mime === JSON_MIME ? capturedJson(value) : textOrJson(value);
  if (!result.captured || result.parseError !== undefined) return { result };
  const wrapped = isJsonObject(result.value) ? result.value : undefined;
  const keys = wrapped ? Object.keys(wrapped) : [];
  const kwargs =
    keys.length === 1 && keys[0] === 'output'
      ? langChainMessageKwargs(wrapped?.output, 'ToolMessage')
      : undefined;
  if (!kwargs) return { result };
  const content = langChainContent(kwargs);
  const callId = typeof kwargs.tool_call_id === 'string' ? kwargs.tool_call_id.trim() : '';
  const failed = kwargs.status === 'error';
  return {
    result: content,
    ...(callId !== '' && { callId }),
    ...(failed && { failedWith: content.captured ? textOf(content.value) : '' }),
  };
}

function textOf(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function mimeType(span: SpanRecord, key: string): string | undefined {
  return stringAttribute(span.attributes, key)?.toLowerCase();
}

/**
 * The span's outcome, with LangChain's error text taken apart: LangChain records
 * `{message}\n\n{stack}` as both the status message and the exception message, and the stack's
 * first line names the error class.
 */
function toolOutcome(span: SpanRecord, failedWith: string | undefined): CallOutcome {
  const outcome = spanOutcome(span);
  if (outcome.status === 'ok' && failedWith !== undefined) {
    return { status: 'error', ...(failedWith !== '' && { message: failedWith }) };
  }
  if (outcome.status !== 'error' || outcome.message === undefined) return outcome;
  const split = splitMessageAndStack(outcome.message);
  if (!split) return outcome;
  return { status: 'error', errorType: outcome.errorType ?? split.errorType, message: split.message };
}

/** `payment timeout\n\nError: payment timeout\n    at …` -> Error, `payment timeout`. */
export function splitMessageAndStack(text: string): { message: string; errorType: string } | undefined {
  for (let at = text.indexOf('\n\n'); at !== -1; at = text.indexOf('\n\n', at + 1)) {
    const message = text.slice(0, at);
    const stack = text.slice(at + 2);
    const header = /^([A-Za-z_$][\w$.]*)(?:: |\n|$)/.exec(stack);
    if (!header) continue;
    const errorType = header[1] as string;
    const rest = stack.slice(errorType.length);
    const sameMessage = message === '' ? !rest.startsWith(': ') : rest.startsWith(`: ${message}`);
    if (sameMessage) return { message, errorType };
  }
  return undefined;
}

function readTurn(span: SpanRecord): SpanReading {
  const attributes = span.attributes;
  const model =
    stringAttribute(attributes, OPENINFERENCE.modelName) ??
    stringAttribute(attributes, OPENINFERENCE.responseModelName) ??
    stringAttribute(attributes, OPENINFERENCE.requestModelName);
  const input = readInput(span);
  const unnamed = { count: 0 };
  const output: LlmOutput = { flattened: readFlattenedMessages(attributes, OPENINFERENCE.outputMessages) };
  let requested = readRequested(span, output, unnamed);
  const text = readAnswer(span, output);
  const answer = cutAnswer(text);
  let unread: string[] | undefined =
    unnamed.count > 0
      ? [`${unnamed.count} of ${OPENINFERENCE.outputMessages}' tool calls without a function name`]
      : undefined;
  if (requested.length === 0 && text !== undefined && mayHoldCode(text)) {
    const actions = codeActions(text, toolsOf(span));
    if (actions.unread !== undefined) {
      requested = actions.requested;
      unread = [...(unread ?? []), actions.unread];
    }
  }
  // The JS bridge's handoff span is written only for the handoff the SDK makes.
  if (span.scope.name === OPENAI_AGENTS_SCOPE) markTransferRequests(requested);
  const thread = input?.thread;
  return {
    kind: 'turn',
    turn: {
      requested,
      shown: input?.shown,
      historyLength: input?.length ?? 0,
      ...(thread !== undefined && { thread }),
      ...(model && { model }),
      ...(answer && { answer }),
      ...(onlyRoles(attributes) && { outputOnlyRoles: true }),
      ...(unread && { unreadRequests: unread }),
      convention: OPENINFERENCE_CONVENTION,
    },
  };
}

/**
 * The output messages are recorded with their roles and nothing else (smolagents through
 * OpenInference): what the model asked for was left out, not absent.
 */
function onlyRoles(attributes: SpanRecord['attributes']): boolean {
  if (Object.hasOwn(attributes, OPENINFERENCE.outputValue)) return false;
  const prefix = `${OPENINFERENCE.outputMessages}.`;
  let roles = 0;
  for (const key in attributes) {
    if (!key.startsWith(prefix)) continue;
    if (!key.endsWith('.message.role')) return false;
    roles++;
  }
  return roles > 0;
}

/** An LLM span's output: the flattened messages, and `output.value` once parsed (read at most once). */
interface LlmOutput {
  flattened: FlatMessages | undefined;
  /** `output.value` as JSON; undefined when absent or not JSON, unset until asked for. */
  raw?: JsonValue | undefined;
}

function rawOutput(span: SpanRecord, output: LlmOutput): JsonValue | undefined {
  if (!Object.hasOwn(output, 'raw')) output.raw = rawJson(span, OPENINFERENCE.outputValue);
  return output.raw;
}

/**
 * The flattened output messages' tool calls; where they lack ids (the LangChain tracer drops
 * them, and writes nothing for models that do not set `additional_kwargs.tool_calls`), the raw
 * LangChain generation in `output.value`, whose ids make linking exact. Calls the flattened
 * messages hold without a name are counted in `unnamed`, unless the raw generation read them.
 */
function readRequested(span: SpanRecord, output: LlmOutput, unnamed: { count: number }): RequestedCall[] {
  const flattened = output.flattened ? requestedFromFlattened(output.flattened.messages, unnamed) : [];
  if (flattened.length > 0 && flattened.every((call) => call.callId !== undefined)) return flattened;
  const raw = rawOutput(span, output);
  const fromLangChain = raw === undefined ? undefined : langChainRequestedCalls(raw);
  if (!fromLangChain || fromLangChain.length === 0) return flattened;
  if (fromLangChain.length >= flattened.length + unnamed.count) unnamed.count = 0;
  return fromLangChain;
}

/**
 * The text of the flattened output messages; where they hold none (the `@openai/agents` bridge
 * writes only the role), the `output_text` of the Responses items in `output.value`. Other
 * instrumentations flatten their text, so an output without that part type is not parsed for it.
 */
function readAnswer(span: SpanRecord, output: LlmOutput): string | undefined {
  const text = output.flattened ? textFromFlattened(output.flattened.messages) : undefined;
  if (text !== undefined) return text;
  const value = span.attributes[OPENINFERENCE.outputValue];
  if (typeof value !== 'string' || !value.includes(RESPONSES_TEXT_PART)) return undefined;
  const raw = rawOutput(span, output);
  return raw === undefined ? undefined : answerInOutput(raw);
}

/**
 * The results shown in the input, by the same rule: flattened first, the raw LangChain input for
 * ids; where neither holds a tool message, an agent's `Observation:` text (see observations.ts).
 */
function readInput(span: SpanRecord): { shown: ShownResult[]; length: number; thread?: string } | undefined {
  const input = readFlattenedMessages(span.attributes, OPENINFERENCE.inputMessages);
  const thread = input && threadKey(input.messages);
  const flattened = input && {
    shown: shownFromFlattened(input.messages),
    length: input.length,
    ...(thread !== undefined && { thread }),
  };
  if (flattened && flattened.shown.length === 0) {
    const observed = observationShown(input.messages);
    if (observed) flattened.shown = [observed];
  }
  if (flattened?.shown.every((result) => result.callId !== undefined)) return flattened;
  const raw = rawJson(span, OPENINFERENCE.inputValue);
  const fromLangChain = raw === undefined ? undefined : langChainShownResults(raw);
  return fromLangChain ?? flattened;
}

function rawJson(span: SpanRecord, key: string): JsonValue | undefined {
  const value = span.attributes[key];
  if (typeof value !== 'string') return undefined;
  const parsed = capturedJson(value);
  return parsed.captured && parsed.parseError === undefined ? parsed.value : undefined;
}
