/**
 * OTel GenAI semantic conventions: `execute_tool {gen_ai.tool.name}` spans with the opt-in
 * `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`, and agent names from
 * `invoke_agent` spans. Keys are our own constants: the published ones are deprecated in
 * `@opentelemetry/semantic-conventions` since the GenAI conventions moved repositories.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { CallOutcome } from '../model/trajectory.js';
import { jsonAttribute, stringAttribute } from './attributes.js';
import type { ToolCallDraft } from './convention.js';

/** Attribute keys of the OTel GenAI conventions that this normalizer reads. */
export const GENAI = {
  operationName: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  agentName: 'gen_ai.agent.name',
  errorType: 'error.type',
} as const;

const EXECUTE_TOOL = 'execute_tool';
const EXECUTE_TOOL_PREFIX = 'execute_tool ';

/** The convention's name as it appears on ToolCalls. */
export const OTEL_GENAI = 'otel-genai';

/**
 * A tool span: `gen_ai.operation.name = execute_tool`, or (for producers that only set the name)
 * a span named `execute_tool {tool}` that carries `gen_ai.tool.name`.
 */
export function isGenAiToolSpan(span: SpanRecord): boolean {
  const operation = span.attributes[GENAI.operationName];
  if (operation === EXECUTE_TOOL) return true;
  return (
    operation === undefined && span.name.startsWith(EXECUTE_TOOL_PREFIX) && GENAI.toolName in span.attributes
  );
}

/** Reads the tool call an `execute_tool` span records. */
export function readGenAiToolCall(span: SpanRecord): ToolCallDraft {
  const attributes = span.attributes;
  const tool =
    stringAttribute(attributes, GENAI.toolName) ??
    (span.name.startsWith(EXECUTE_TOOL_PREFIX)
      ? span.name.slice(EXECUTE_TOOL_PREFIX.length).trim()
      : span.name);
  return {
    tool,
    callId: stringAttribute(attributes, GENAI.toolCallId),
    args: jsonAttribute(attributes, GENAI.toolCallArguments),
    result: jsonAttribute(attributes, GENAI.toolCallResult),
    outcome: spanOutcome(span),
    agentName: stringAttribute(attributes, GENAI.agentName),
    convention: OTEL_GENAI,
  };
}

/** The agent name a span declares, if it is an agent span or carries one. */
export function genAiAgentName(span: SpanRecord): string | undefined {
  return stringAttribute(span.attributes, GENAI.agentName);
}

/**
 * How a span's operation ended. Status ERROR is an error even without `error.type` (the Vercel
 * AI SDK sets only the status and an exception event); an `error.type` or exception event on an
 * unset status is an error too; an explicit OK wins (the exception was handled). A span that never ended has no result.
 */
export function spanOutcome(span: SpanRecord): CallOutcome {
  if (span.endTimeUnixNano === undefined) return { status: 'no_result' };
  // An explicit OK is the instrumentation's word that the call succeeded (a handled exception).
  if (span.status.code === 'ok') return { status: 'ok' };
  const exception = span.events.find((event) => event.name === 'exception');
  const errorType =
    stringAttribute(span.attributes, GENAI.errorType) ??
    (exception ? stringAttribute(exception.attributes, 'exception.type') : undefined);
  if (span.status.code === 'unset' && errorType === undefined && !exception) return { status: 'ok' };
  const message =
    (span.status.message?.trim() || undefined) ??
    (exception ? stringAttribute(exception.attributes, 'exception.message') : undefined);
  return { status: 'error', ...(errorType && { errorType }), ...(message && { message }) };
}
