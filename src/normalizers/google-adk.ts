/**
 * Google ADK JS (`@google/adk`, tracer `gcp.vertex.agent`): `invocation` -> `invoke_agent {agent}`
 * -> `call_llm` (one model call; the tools it asked for run in `execute_tool {tool}` spans that
 * are its CHILDREN). ADK sets `gen_ai.operation.name=execute_tool` and `gen_ai.tool.name` on tool
 * spans, but the arguments and the result are under its own keys, so this convention must come
 * before OTel GenAI. What the model asked for and what it was shown are Gemini `Content` JSON in
 * `gcp.vertex.agent.llm_response` / `gcp.vertex.agent.llm_request` on `call_llm`; the response's
 * `text` parts are what it wrote.
 *
 * Keys and behaviour read from `@google/adk@2.0.0` `dist/esm/telemetry/tracing.js` and
 * `agents/functions.js`; fixtures `test/spans/google-adk-*.otlp.json` are real captures.
 */
import { isJsonObject, type JsonValue } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { Captured } from '../model/trajectory.js';
import { cutAnswer, withAnswerText } from './answer-text.js';
import { capturedJson, jsonAttribute, stringAttribute } from './attributes.js';
import type { Convention, RequestedCall, ShownResult, SpanReading, ToolCallDraft } from './convention.js';
import { transferOf } from './otel-genai.js';
import { spanOutcome } from './span-outcome.js';

/** Attribute keys and names of Google ADK JS telemetry that this normalizer reads. */
export const ADK = {
  scope: 'gcp.vertex.agent',
  llmRequest: 'gcp.vertex.agent.llm_request',
  llmResponse: 'gcp.vertex.agent.llm_response',
  toolCallArgs: 'gcp.vertex.agent.tool_call_args',
  toolResponse: 'gcp.vertex.agent.tool_response',
  operationName: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  /** `gen_ai.system` on `call_llm` spans. */
  system: 'gen_ai.system',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const GOOGLE_ADK = 'google-adk';

const EXECUTE_TOOL_PREFIX = 'execute_tool ';
/** `gen_ai.tool.type` of a tool from an MCP toolset (ADK writes the tool's class name). */
const MCP_TOOL_TYPE = 'MCPTool';
/** ADK's span for a batch of parallel function responses: bookkeeping, not a tool call. */
const MERGED_TOOLS = '(merged tools)';
const MERGED_SPAN = 'execute_tool (merged)';
/** ADK writes this id when the function response carried none. */
const NO_CALL_ID = '<not specified>';
/** What ADK writes for arguments and responses when content capture is off. */
const NOT_RECORDED = '{}';

/** The Google ADK JS convention. Claims spans of the `gcp.vertex.agent` tracer or with its keys. */
export const googleAdk: Convention = {
  name: GOOGLE_ADK,
  marks: { keys: [ADK.toolCallArgs, ADK.llmResponse, ADK.llmRequest, ADK.system], scopes: [ADK.scope] },
  // The ADK session a run belongs to, on its LLM and tool spans.
  conversationKeys: ['gcp.vertex.agent.session_id'],
  read(span: SpanRecord): SpanReading | undefined {
    if (!isAdkSpan(span)) return undefined;
    const operation = stringAttribute(span.attributes, ADK.operationName);
    if (operation === 'execute_tool' || span.name.startsWith(EXECUTE_TOOL_PREFIX)) {
      // The merged span repeats the results of calls that have spans of their own.
      if (span.name === MERGED_SPAN || span.attributes[ADK.toolName] === MERGED_TOOLS)
        return { kind: 'structure', convention: GOOGLE_ADK };
      return { kind: 'tool', call: readToolCall(span, operation === 'execute_tool') };
    }
    if (span.name === 'call_llm' || Object.hasOwn(span.attributes, ADK.llmResponse)) return readTurn(span);
    if (operation === 'invoke_agent') {
      const name = stringAttribute(span.attributes, ADK.agentName) ?? suffix(span.name);
      return { kind: 'agent', ...(name && { name }), convention: GOOGLE_ADK };
    }
    return undefined;
  },
};

/**
 * By instrumentation scope first: a tool that threw leaves a span with no attributes at all.
 * By keys for pipelines that drop the scope.
 */
function isAdkSpan(span: SpanRecord): boolean {
  if (span.scope.name === ADK.scope) return true;
  const attributes = span.attributes;
  return (
    Object.hasOwn(attributes, ADK.toolCallArgs) ||
    Object.hasOwn(attributes, ADK.llmResponse) ||
    Object.hasOwn(attributes, ADK.llmRequest) ||
    attributes[ADK.system] === ADK.scope
  );
}

/**
 * ADK records a tool span's attributes only after the tool returned (`traceToolCall`); when the
 * tool throws, the span ends with no attributes and no error status, and the error reaches the
 * model as a `{error: message}` function response. So a traced tool span that ADK never
 * annotated is a failed call: name from the span name, arguments and result not captured.
 */
function readToolCall(span: SpanRecord, annotated: boolean): ToolCallDraft {
  const attributes = span.attributes;
  const tool = stringAttribute(attributes, ADK.toolName) ?? suffix(span.name) ?? span.name;
  if (!annotated) {
    const outcome = spanOutcome(span);
    return {
      tool,
      args: { captured: false },
      result: { captured: false },
      outcome: outcome.status === 'ok' ? { status: 'error' } : outcome,
      convention: GOOGLE_ADK,
    };
  }
  const callId = stringAttribute(attributes, ADK.toolCallId);
  // With ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false both keys hold "{}". A tool without
  // arguments that returned nothing looks the same; "not captured" is the safe reading
  // (a rule becomes inconclusive instead of comparing against an empty object that was never seen).
  const notRecorded =
    attributes[ADK.toolCallArgs] === NOT_RECORDED && attributes[ADK.toolResponse] === NOT_RECORDED;
  return {
    tool,
    ...(callId && callId !== NO_CALL_ID && { callId }),
    args: notRecorded ? { captured: false } : jsonAttribute(attributes, ADK.toolCallArgs),
    result: notRecorded ? { captured: false } : jsonAttribute(attributes, ADK.toolResponse),
    outcome: spanOutcome(span),
    convention: GOOGLE_ADK,
    ...handoffOf(attributes),
    // ADK's tool class as `gen_ai.tool.type`: an MCP toolset's tool, its server unrecorded on the span.
    ...(attributes[ADK.toolType] === MCP_TOOL_TYPE && { mcpServer: {} }),
  };
}

/** The GenAI transfer refinement on an ADK tool span (`transfer_to_agent`), when recorded. */
function handoffOf(attributes: SpanRecord['attributes']): Pick<ToolCallDraft, 'handoff'> {
  const handoff = transferOf(attributes);
  return handoff ? { handoff } : {};
}

/**
 * `call_llm`: the request holds the whole history (`contents`, with `functionResponse` parts for
 * the results shown), the response the `functionCall` parts asked for (a response that does not
 * parse, or a call part without a name, is a request left unread). ADK strips its own
 * `adk-…` call ids from the request and records the response before it assigns them, so with
 * Gemini (which sends no ids) neither side has ids and linking goes by name and arguments.
 */
function readTurn(span: SpanRecord): SpanReading {
  const request = recordedObject(jsonAttribute(span.attributes, ADK.llmRequest));
  const recordedResponse = jsonAttribute(span.attributes, ADK.llmResponse);
  const response = recordedObject(recordedResponse);
  const contents = request && Array.isArray(request.contents) ? request.contents : undefined;
  const model = stringAttribute(span.attributes, ADK.requestModel);
  const unread: string[] = [];
  if (recordedResponse.captured && recordedResponse.parseError !== undefined)
    unread.push(`${ADK.llmResponse} is not valid JSON`);
  const parts = response ? partsOf(response.content) : [];
  const answer = cutAnswer(textOf(parts));
  return {
    kind: 'turn',
    turn: {
      requested: functionCalls(parts, unread),
      shown: contents ? functionResponses(contents) : undefined,
      historyLength: contents?.length ?? 0,
      ...(model && { model }),
      ...(answer && { answer }),
      ...(unread.length > 0 && { unreadRequests: unread }),
      convention: GOOGLE_ADK,
    },
  };
}

/** A parsed JSON object, or undefined when absent, unparsable or the "{}" of capture off. */
function recordedObject(value: Captured<JsonValue>): { [key: string]: JsonValue } | undefined {
  if (!value.captured || value.parseError !== undefined || !isJsonObject(value.value)) return undefined;
  return Object.keys(value.value).length === 0 ? undefined : value.value;
}

function partsOf(content: JsonValue | undefined): { [key: string]: JsonValue }[] {
  if (!isJsonObject(content) || !Array.isArray(content.parts)) return [];
  return content.parts.filter(isJsonObject);
}

/**
 * ADK JS writes the Gemini `Content` with camelCase keys (`functionCall`), ADK Python with the
 * pydantic field names (`function_call`, as kagent's traces show): both are read.
 */
function functionCalls(parts: readonly { [key: string]: JsonValue }[], unread: string[]): RequestedCall[] {
  const calls: RequestedCall[] = [];
  for (const part of parts) {
    const functionCall = part.functionCall ?? part.function_call;
    if (functionCall === undefined || functionCall === null) continue;
    const tool =
      isJsonObject(functionCall) && typeof functionCall.name === 'string' ? functionCall.name.trim() : '';
    if (!isJsonObject(functionCall) || tool === '') {
      unread.push('a function call part without a tool name');
      continue;
    }
    // ADK runs the tool with `args ?? {}`: a call without args is a call with no arguments.
    const args =
      functionCall.args === undefined
        ? { captured: true as const, value: {} }
        : capturedJson(functionCall.args);
    calls.push({ ...idOf(functionCall.id), tool, args });
  }
  return calls;
}

/** The response's text parts; Gemini marks its thought summaries `thought: true`, which are not the answer. */
function textOf(parts: readonly { [key: string]: JsonValue }[]): string | undefined {
  let text: string | undefined;
  for (const part of parts) if (part.thought !== true) text = withAnswerText(text, part.text);
  return text;
}

function functionResponses(contents: readonly JsonValue[]): ShownResult[] {
  const results: ShownResult[] = [];
  for (const content of contents) {
    for (const part of partsOf(content)) {
      const functionResponse = part.functionResponse ?? part.function_response;
      if (!isJsonObject(functionResponse)) continue;
      const tool = typeof functionResponse.name === 'string' ? functionResponse.name.trim() : '';
      const value = functionResponse.response;
      results.push({
        ...idOf(functionResponse.id),
        ...(tool && { tool }),
        result: value === undefined ? { captured: false } : { captured: true, value },
        ...(isThrownError(value) && { isError: true }),
      });
    }
  }
  return results;
}

/** ADK hands a tool's exception to the model as `{error: message}` and nothing else. */
function isThrownError(value: JsonValue | undefined): boolean {
  return isJsonObject(value) && Object.keys(value).length === 1 && typeof value.error === 'string';
}

function idOf(id: JsonValue | undefined): { callId?: string } {
  const trimmed = typeof id === 'string' ? id.trim() : '';
  return trimmed === '' ? {} : { callId: trimmed };
}

/** `execute_tool get_order` -> get_order; `invoke_agent support` -> support. */
function suffix(name: string): string | undefined {
  const space = name.indexOf(' ');
  const rest = space === -1 ? '' : name.slice(space + 1).trim();
  return rest === '' ? undefined : rest;
}
