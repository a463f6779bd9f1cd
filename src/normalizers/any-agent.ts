/**
 * mozilla-ai any-agent (1.9; read from its recorded `AgentTrace` assets over Agno, LlamaIndex,
 * Google ADK and LangChain): any-agent's own callbacks record `invoke_agent [name]`,
 * `call_llm <model>` and `execute_tool <name>`, whichever framework runs the agent.
 * - `call_llm`: the tool requests are `gen_ai.output` = `[{"tool.name", "tool.args"}]` (args a
 *   JSON string or an object; no call id), else the answer (text or JSON); the input messages
 *   (`gen_ai.input.messages`) only on the first call of a run.
 * - `execute_tool`: `gen_ai.tool.name`, `gen_ai.tool.args` (JSON), `gen_ai.output` (JSON text,
 *   or a bare string), `gen_ai.tool.call.id` only under some frameworks (Agno, ADK).
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { Captured } from '../model/trajectory.js';
import { cutAnswer } from './answer-text.js';
import { capturedJson, jsonAttribute, parsedJson, stringAttribute, toJson } from './attributes.js';
import type { Convention, RequestedCall, SpanReading, ToolCallDraft } from './convention.js';
import { spanOutcome } from './span-outcome.js';

/** Keys of any-agent's telemetry that this normalizer reads. */
export const ANY_AGENT_KEYS = {
  operationName: 'gen_ai.operation.name',
  output: 'gen_ai.output',
  outputType: 'gen_ai.output.type',
  toolName: 'gen_ai.tool.name',
  toolArgs: 'gen_ai.tool.args',
  toolCallId: 'gen_ai.tool.call.id',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  inputMessages: 'gen_ai.input.messages',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  version: 'any_agent.version',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const ANY_AGENT = 'any-agent';

/**
 * The any-agent convention. Detection by shape: `call_llm` / `execute_tool` spans carrying
 * `gen_ai.output` or `gen_ai.tool.args` (keys no OTel GenAI version defines), `invoke_agent`
 * spans carrying `any_agent.version`.
 */
export const anyAgent: Convention = {
  name: ANY_AGENT,
  marks: { keys: [ANY_AGENT_KEYS.output, ANY_AGENT_KEYS.toolArgs, ANY_AGENT_KEYS.version] },
  read(span: SpanRecord): SpanReading | undefined {
    const attributes = span.attributes;
    const operation = stringAttribute(attributes, ANY_AGENT_KEYS.operationName);
    if (
      operation === 'execute_tool' &&
      (ANY_AGENT_KEYS.toolArgs in attributes || ANY_AGENT_KEYS.output in attributes)
    ) {
      return { kind: 'tool', call: readToolCall(span) };
    }
    if (operation === 'call_llm' && ANY_AGENT_KEYS.output in attributes) return readTurn(span);
    if (operation === 'invoke_agent' && ANY_AGENT_KEYS.version in attributes) {
      const name = stringAttribute(attributes, ANY_AGENT_KEYS.agentName);
      return { kind: 'agent', ...(name && { name }), convention: ANY_AGENT };
    }
    return undefined;
  },
};

function readToolCall(span: SpanRecord): ToolCallDraft {
  const attributes = span.attributes;
  const tool =
    stringAttribute(attributes, ANY_AGENT_KEYS.toolName) ?? span.name.replace(/^execute_tool\s+/, '').trim();
  const callId = stringAttribute(attributes, ANY_AGENT_KEYS.toolCallId);
  return {
    tool,
    ...(callId && { callId }),
    args: jsonAttribute(attributes, ANY_AGENT_KEYS.toolArgs),
    result: toolResult(span),
    outcome: spanOutcome(span),
    convention: ANY_AGENT,
  };
}

/** A result that is not JSON (a tool's plain text) is that text, not an unreadable value. */
function toolResult(span: SpanRecord): Captured<JsonValue> {
  const read = jsonAttribute(span.attributes, ANY_AGENT_KEYS.output);
  if (read.captured && read.parseError !== undefined) return { captured: true, value: read.value };
  return read;
}

function readTurn(span: SpanRecord): SpanReading {
  const attributes = span.attributes;
  const raw = attributes[ANY_AGENT_KEYS.output];
  const output = raw === undefined ? undefined : (parsedJson(raw) ?? toJson(raw));
  const requested = output === undefined ? [] : requestsIn(output);
  const model = stringAttribute(attributes, ANY_AGENT_KEYS.requestModel);
  const input = attributes[ANY_AGENT_KEYS.inputMessages];
  const history = input === undefined ? undefined : parsedJson(input);
  const answer =
    requested.length > 0 || output === undefined
      ? undefined
      : cutAnswer(typeof output === 'string' ? output : JSON.stringify(output));
  const inputTokens = attributes[ANY_AGENT_KEYS.inputTokens];
  const outputTokens = attributes[ANY_AGENT_KEYS.outputTokens];
  return {
    kind: 'turn',
    turn: {
      requested,
      // any-agent records no tool results in a model call's input (only the first call's
      // messages, before any tool ran): what a turn was shown is left to the run's order.
      shown: undefined,
      historyLength: Array.isArray(history) ? history.length : 0,
      ...(model && { model }),
      ...(typeof inputTokens === 'number' &&
        typeof outputTokens === 'number' && { usage: { inputTokens, outputTokens } }),
      ...(answer && { answer }),
      convention: ANY_AGENT,
    },
  };
}

/** `[{"tool.name", "tool.args"}]`: anything else in the output is the answer, not a request. */
function requestsIn(output: JsonValue): RequestedCall[] {
  if (!Array.isArray(output)) return [];
  const requests: RequestedCall[] = [];
  for (const item of output) {
    if (!isJsonObject(item) || typeof item['tool.name'] !== 'string') return [];
    const args = item['tool.args'];
    requests.push({
      tool: item['tool.name'],
      // Under LlamaIndex every request records `{}` whatever the tool was given: an empty
      // request says nothing, and the tool span's arguments are read instead.
      args: args === undefined || isEmptyArguments(args) ? { captured: false } : capturedJson(args),
    });
  }
  return requests;
}

function isEmptyArguments(args: JsonValue): boolean {
  if (typeof args === 'string') return args.trim() === '{}';
  return isJsonObject(args) && Object.keys(args).length === 0;
}
