/**
 * OTel GenAI semantic conventions: `execute_tool {tool}` spans (arguments and results are
 * opt-in), inference spans (`chat`, `text_completion`, `generate_content`) whose
 * `gen_ai.output.messages` hold the `tool_call` parts the model asked for and whose
 * `gen_ai.input.messages` hold the `tool_call_response` parts it was shown, agent spans
 * (`invoke_agent`, `invoke_workflow`), and MCP `tools/call` client and server spans.
 * Keys are our own constants: the published ones are deprecated since the GenAI conventions
 * moved repositories.
 */
import type { Attributes, SpanRecord } from '../model/span-record.js';
import type { TokenUsage } from '../model/trajectory.js';
import { cutAnswer } from './answer-text.js';
import { jsonAttribute, stringAttribute } from './attributes.js';
import type { Convention, DecisionDraft, SpanReading, ToolCallDraft, TurnDraft } from './convention.js';
import { answerText, readHistory, readMessages, requestedCalls, unreadRequests } from './genai-messages.js';
import { readMcpServer } from './mcp-server.js';
import { spanOutcome } from './span-outcome.js';

/** Attribute keys of the OTel GenAI and MCP conventions that this normalizer reads. */
export const GENAI = {
  operationName: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  mcpMethodName: 'mcp.method.name',
  jsonRpcRequestId: 'jsonrpc.request.id',
  transferMode: 'gen_ai.transfer.mode',
  transferTargetName: 'gen_ai.transfer.target.name',
  transferTargetType: 'gen_ai.transfer.target.type',
  decisionEvent: 'gen_ai.tool.call.decision',
  decisionOutcome: 'gen_ai.tool.call.decision.outcome',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const OTEL_GENAI = 'otel-genai';

const EXECUTE_TOOL_PREFIX = 'execute_tool ';
const INFERENCE = new Set(['chat', 'text_completion', 'generate_content']);
const AGENT = new Set(['invoke_agent', 'invoke_workflow']);

/**
 * The OTel GenAI convention. Tool spans with the transfer refinement
 * (`gen_ai.execute_tool.transfer.internal`: `gen_ai.transfer.mode`, `.target.name`,
 * `.target.type`) are handoffs; `gen_ai.tool.call.decision` span events are decisions on the call
 * they name.
 */
export const otelGenAi: Convention = {
  name: OTEL_GENAI,
  readDecisions: readToolCallDecisions,
  conversationKeys: [GENAI.conversationId],
  read(span: SpanRecord): SpanReading | undefined {
    const operation = stringAttribute(span.attributes, GENAI.operationName);
    if (operation === 'execute_tool' || isMcpToolCall(span) || isNamedToolSpan(span, operation)) {
      return { kind: 'tool', call: readGenAiToolCall(span) };
    }
    if (operation !== undefined && AGENT.has(operation)) {
      const name = stringAttribute(span.attributes, GENAI.agentName);
      return name
        ? { kind: 'agent', name, convention: OTEL_GENAI }
        : { kind: 'agent', convention: OTEL_GENAI };
    }
    if (operation !== undefined && INFERENCE.has(operation)) return readTurn(span);
    return undefined;
  },
};

/** Producers that only set the span name: `execute_tool {tool}` carrying `gen_ai.tool.name`. */
function isNamedToolSpan(span: SpanRecord, operation: string | undefined): boolean {
  return (
    operation === undefined && span.name.startsWith(EXECUTE_TOOL_PREFIX) && GENAI.toolName in span.attributes
  );
}

function isMcpToolCall(span: SpanRecord): boolean {
  return span.attributes[GENAI.mcpMethodName] === 'tools/call';
}

/**
 * Reads the tool call an `execute_tool` (or MCP `tools/call`) span records; an MCP span's call
 * carries the server it went to (mcp-server.ts).
 */
export function readGenAiToolCall(span: SpanRecord): ToolCallDraft {
  const attributes = span.attributes;
  const handoff = transferOf(attributes);
  const tool = stringAttribute(attributes, GENAI.toolName) ?? toolFromName(span.name, handoff?.targetName);
  const agentName = stringAttribute(attributes, GENAI.agentName);
  const callId = stringAttribute(attributes, GENAI.toolCallId);
  const args = jsonAttribute(attributes, GENAI.toolCallArguments);
  const result = jsonAttribute(attributes, GENAI.toolCallResult);
  const outcome = spanOutcome(span);
  // Literals, not spreads of optional fields (ten times slower in V8), with every field known
  // now: one added later goes to a separately allocated property store.
  const call: ToolCallDraft = callId
    ? { tool, callId, args, result, outcome, convention: OTEL_GENAI }
    : { tool, args, result, outcome, convention: OTEL_GENAI };
  if (agentName) call.agentName = agentName;
  if (handoff) call.handoff = handoff;
  if (isMcpToolCall(span)) call.mcpServer = readMcpServer(attributes);
  return call;
}

/**
 * `execute_tool get_order` -> get_order; `tools/call get-weather` -> get-weather; a transfer's
 * `execute_tool transfer_to_billing billing` -> transfer_to_billing (the refinement appends the
 * target's name).
 */
function toolFromName(name: string, target: string | undefined): string {
  const space = name.indexOf(' ');
  const rest = space === -1 ? name : name.slice(space + 1).trim();
  const suffix = target === undefined ? '' : ` ${target}`;
  return suffix !== '' && rest.endsWith(suffix) && rest.length > suffix.length
    ? rest.slice(0, -suffix.length).trim()
    : rest;
}

/** The transfer refinement's handoff, when the span names a target. */
export function transferOf(attributes: Attributes): ToolCallDraft['handoff'] {
  const targetName = stringAttribute(attributes, GENAI.transferTargetName);
  if (targetName === undefined) return undefined;
  const handoff: NonNullable<ToolCallDraft['handoff']> = { targetName };
  const targetType = stringAttribute(attributes, GENAI.transferTargetType);
  const mode = stringAttribute(attributes, GENAI.transferMode);
  if (targetType) handoff.targetType = targetType;
  if (mode) handoff.mode = mode;
  return handoff;
}

/**
 * `gen_ai.tool.call.decision` events: the outcome, and the call they name by
 * `gen_ai.tool.call.id` or `gen_ai.tool.name`.
 */
export function readToolCallDecisions(span: SpanRecord): DecisionDraft[] | undefined {
  let decisions: DecisionDraft[] | undefined;
  for (const event of span.events) {
    if (event.name !== GENAI.decisionEvent) continue;
    const outcome = event.attributes[GENAI.decisionOutcome];
    const decision: DecisionDraft = {
      outcome: typeof outcome === 'string' ? outcome.trim() : String(outcome),
      time: event.timeUnixNano,
      convention: OTEL_GENAI,
    };
    const callId = stringAttribute(event.attributes, GENAI.toolCallId);
    const tool = stringAttribute(event.attributes, GENAI.toolName);
    if (callId) decision.callId = callId;
    if (tool) decision.tool = tool;
    if (decisions) decisions.push(decision);
    else decisions = [decision];
  }
  return decisions;
}

function readTurn(span: SpanRecord): SpanReading {
  const output = readMessages(span.attributes, GENAI.outputMessages);
  const input = readHistory(span.attributes, GENAI.inputMessages, GENAI.outputMessages, output);
  const model = stringAttribute(span.attributes, GENAI.requestModel);
  const usage = tokenUsage(span);
  const turn = {
    requested: output ? requestedCalls(output) : [],
    shown: input?.shown,
    historyLength: input?.length ?? 0,
  } as TurnDraft;
  // Assigned in turn, not spread: spreading optional fields is ten times slower in V8.
  if (model) turn.model = model;
  if (usage) turn.usage = usage;
  const answer = output && cutAnswer(answerText(output));
  if (answer) turn.answer = answer;
  const unread = output
    ? unreadRequests(output, GENAI.outputMessages)
    : Object.hasOwn(span.attributes, GENAI.outputMessages)
      ? [`${GENAI.outputMessages} is not a JSON list of messages`]
      : undefined;
  if (unread) turn.unreadRequests = unread;
  turn.convention = OTEL_GENAI;
  return { kind: 'turn', turn };
}

/** `gen_ai.usage.input_tokens` / `output_tokens`, when recorded. */
export function tokenUsage(span: SpanRecord): TokenUsage | undefined {
  const input = span.attributes[GENAI.inputTokens];
  const output = span.attributes[GENAI.outputTokens];
  const usage: TokenUsage = {};
  if (typeof input === 'number') usage.inputTokens = input;
  if (typeof output === 'number') usage.outputTokens = output;
  return usage.inputTokens === undefined && usage.outputTokens === undefined ? undefined : usage;
}
