/**
 * The OpenAI Agents SDK (Python) as logfire records it (`logfire.instrument_openai_agents()`,
 * scope `logfire.openai_agents`). Span names are logfire's message templates, one per SDK span
 * type; the values are in attributes (and in `logfire.msg`):
 * - `Agent run: {name!r}` (`name`): an agent run;
 * - `Turn {turn} for agent …` (`sdk_span_type` = `turn`, `turn`): one step of the run, holding the
 *   model call and the calls it asked for (newer SDKs; older ones put those under the run);
 * - `Function: {name}` (`name`, `input` = the arguments JSON, `output`, `error`, `mcp_data` naming
 *   the MCP server of an MCP tool): a tool call;
 * - `Handoff: {from_agent} → {to_agent}`: the SDK's handoff, which the model asked for as its
 *   `transfer_to_{agent}` tool: a call, and the target agent's run after it;
 * - `Responses API with {gen_ai.request.model!r}` (`raw_input`, `events`, `response`) and
 *   `Chat completion with {gen_ai.request.model!r}` (`input`, `output`): model turns;
 * - the trace, task, guardrail, MCP listing and other spans are structure. The trace span
 *   (`OpenAI Agents trace: {name}`) carries the SDK trace's `group_id` (the SDK's "grouping
 *   identifier … to link multiple traces from the same conversation", `RunConfig.group_id`):
 *   its conversation. logfire writes None as the JSON text `null`, so `"null"` means none.
 * Source: pydantic/logfire `logfire/_internal/integrations/openai_agents.py` and the snapshots in
 * its tests (`tests/otel_integrations/test_openai_agents*.py`).
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { CallOutcome, Captured, McpServer } from '../model/trajectory.js';
import { jsonAttribute, parsedJson, stringAttribute } from './attributes.js';
import { contentValue } from './chat-messages.js';
import type { Convention, SpanReading, ToolCallDraft, TurnDraft } from './convention.js';
import { chatTurn, responsesTurn } from './openai-agents-items.js';
import { tokenUsage } from './otel-genai.js';
import { spanOutcome } from './span-outcome.js';
import { markTransferRequests } from './transfer-requests.js';

/** The convention's name as it appears on ToolCalls. */
export const OPENAI_AGENTS_LOGFIRE = 'openai-agents-logfire';

/** Attribute keys of logfire's Agents SDK spans that this normalizer reads. */
export const LOGFIRE_AGENTS_KEYS = {
  template: 'logfire.msg_template',
  system: 'gen_ai.system',
  name: 'name',
  input: 'input',
  output: 'output',
  error: 'error',
  mcpData: 'mcp_data',
  fromAgent: 'from_agent',
  toAgent: 'to_agent',
  sdkSpanType: 'sdk_span_type',
  turn: 'turn',
  rawInput: 'raw_input',
  events: 'events',
  response: 'response',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  groupId: 'group_id',
} as const;

const SCOPE = 'logfire.openai_agents';
/** logfire's own scope, which older releases gave the Agents SDK's spans too. */
const LOGFIRE_SCOPE = 'logfire';

const AGENT_RUN = 'Agent run: ';
const FUNCTION = 'Function: ';
const HANDOFF = 'Handoff: ';
const RESPONSES = 'Responses API';
const CHAT_COMPLETION = 'Chat completion with ';
const TURN = 'Turn ';
const CUSTOM_SPAN = 'Custom span: ';
/** The other templates of the integration: the trace, its task, guardrails, MCP listings, speech, … */
const STRUCTURE = [
  'OpenAI Agents trace: ',
  'Task: ',
  'Guardrail ',
  'MCP: list tools from server',
  CUSTOM_SPAN,
  'OpenAI agents: ',
  'Text → Speech',
  'Speech → Text',
];
const CALL_TEMPLATES = [AGENT_RUN, FUNCTION, HANDOFF, RESPONSES, CHAT_COMPLETION, TURN];

/**
 * The convention. Detection: the instrumentation scope `logfire.openai_agents`; where the scope
 * was lost, one of the integration's templates (as `logfire.msg_template` or the span name) on a
 * span with `gen_ai.system` = `openai` that no other logfire integration's scope claims.
 */
export const openAiAgentsLogfire: Convention = {
  name: OPENAI_AGENTS_LOGFIRE,
  marks: { keys: [LOGFIRE_AGENTS_KEYS.template], scopes: [SCOPE] },
  // A generic key (a Kafka client's span may have one too): read on this convention's spans only.
  ownConversationKeys: [{ key: LOGFIRE_AGENTS_KEYS.groupId, none: ['null'] }],
  read(span: SpanRecord): SpanReading | undefined {
    const template = templateOf(span);
    if (!isAgentsSpan(span, template)) return undefined;
    const attributes = span.attributes;
    if (template.startsWith(FUNCTION)) return { kind: 'tool', call: readFunction(span) };
    if (template.startsWith(HANDOFF)) {
      const call = readHandoff(span);
      return call ? { kind: 'tool', call } : { kind: 'structure', convention: OPENAI_AGENTS_LOGFIRE };
    }
    if (template.startsWith(AGENT_RUN)) {
      const name = stringAttribute(attributes, LOGFIRE_AGENTS_KEYS.name);
      return name
        ? { kind: 'agent', name, convention: OPENAI_AGENTS_LOGFIRE }
        : { kind: 'agent', convention: OPENAI_AGENTS_LOGFIRE };
    }
    if (template.startsWith(RESPONSES)) return { kind: 'turn', turn: withModel(span, responsesTurn(span)) };
    if (template.startsWith(CHAT_COMPLETION)) return { kind: 'turn', turn: withModel(span, chatTurn(span)) };
    if (isTurnStep(span, template)) return readStep(span);
    return { kind: 'structure', convention: OPENAI_AGENTS_LOGFIRE };
  },
};

function templateOf(span: SpanRecord): string {
  return stringAttribute(span.attributes, LOGFIRE_AGENTS_KEYS.template) ?? span.name;
}

function isAgentsSpan(span: SpanRecord, template: string): boolean {
  const scope = span.scope.name;
  if (scope === SCOPE) return true;
  // Another logfire integration's span (logfire.openai has its own `Responses API with …`).
  if (scope !== LOGFIRE_SCOPE && scope.startsWith('logfire.')) return false;
  if (span.attributes[LOGFIRE_AGENTS_KEYS.system] !== 'openai') return false;
  return (
    CALL_TEMPLATES.some((prefix) => template.startsWith(prefix)) ||
    STRUCTURE.some((prefix) => template.startsWith(prefix))
  );
}

/** The SDK's `turn` span (a custom span logfire names `Turn {turn} for agent …`). */
function isTurnStep(span: SpanRecord, template: string): boolean {
  const attributes = span.attributes;
  if (attributes[LOGFIRE_AGENTS_KEYS.sdkSpanType] === 'turn') return true;
  if (template.startsWith(TURN) && template.includes('{turn}')) return true;
  return template.startsWith(CUSTOM_SPAN) && attributes[LOGFIRE_AGENTS_KEYS.name] === 'turn';
}

function readStep(span: SpanRecord): SpanReading {
  const recorded = span.attributes[LOGFIRE_AGENTS_KEYS.turn];
  const index = typeof recorded === 'string' ? Number(recorded) : recorded;
  return typeof index === 'number' && Number.isFinite(index)
    ? { kind: 'step', index, convention: OPENAI_AGENTS_LOGFIRE }
    : { kind: 'step', convention: OPENAI_AGENTS_LOGFIRE };
}

function readFunction(span: SpanRecord): ToolCallDraft {
  const attributes = span.attributes;
  const tool =
    stringAttribute(attributes, LOGFIRE_AGENTS_KEYS.name) ??
    (templateOf(span).slice(FUNCTION.length).trim() || span.name);
  const call: ToolCallDraft = {
    tool,
    // The model's arguments, as the JSON text it sent; absent when the SDK keeps tool data out.
    args: jsonAttribute(attributes, LOGFIRE_AGENTS_KEYS.input),
    result: outputOf(span),
    outcome: functionOutcome(span),
    convention: OPENAI_AGENTS_LOGFIRE,
  };
  const server = mcpServerOf(span);
  if (server) call.mcpServer = server;
  return call;
}

/**
 * An MCP tool's `mcp_data` (`{"server": "MyMCPServer"}`, the SDK's name for the server): the server
 * it went to; `{}` when the span has `mcp_data` that names none.
 */
function mcpServerOf(span: SpanRecord): McpServer | undefined {
  const value = span.attributes[LOGFIRE_AGENTS_KEYS.mcpData];
  if (value === undefined) return undefined;
  const data = parsedJson(value);
  const name = isJsonObject(data) ? data.server : undefined;
  return typeof name === 'string' && name.trim() !== '' ? { name: name.trim() } : {};
}

/** The tool's output: the SDK records it as the tool returned it, text or JSON. */
function outputOf(span: SpanRecord): Captured<JsonValue> {
  const attributes = span.attributes;
  if (!Object.hasOwn(attributes, LOGFIRE_AGENTS_KEYS.output)) return { captured: false };
  const value = attributes[LOGFIRE_AGENTS_KEYS.output];
  if (typeof value === 'string') return { captured: true, value: contentValue(value) };
  return jsonAttribute(attributes, LOGFIRE_AGENTS_KEYS.output);
}

/**
 * A tool that raised ends its span at error level (status ERROR) with the SDK's span error in
 * `error` (`{message: "Error running tool (non-fatal)", data: {tool_name, error}}`) and, when
 * logfire saw the exception, an `exception` event. The error text the tool raised is the message.
 */
function functionOutcome(span: SpanRecord): CallOutcome {
  const outcome = spanOutcome(span);
  const recorded = parsedJson(span.attributes[LOGFIRE_AGENTS_KEYS.error] ?? null);
  if (!isJsonObject(recorded)) return outcome;
  const data = isJsonObject(recorded.data) ? recorded.data : undefined;
  const text =
    typeof data?.error === 'string'
      ? data.error
      : typeof recorded.message === 'string'
        ? recorded.message
        : '';
  if (outcome.status === 'error') {
    if (outcome.message === undefined && text !== '') outcome.message = text;
    return outcome;
  }
  if (outcome.status !== 'ok') return outcome;
  return text === '' ? { status: 'error' } : { status: 'error', message: text };
}

/**
 * The handoff the model asked for with the SDK's transfer tool. The span does not say the tool's
 * name: it is the SDK's default, `transfer_to_` and the target's name in function style, which
 * the turn's request carries (and linking matches on).
 */
function readHandoff(span: SpanRecord): ToolCallDraft | undefined {
  const attributes = span.attributes;
  const to = stringAttribute(attributes, LOGFIRE_AGENTS_KEYS.toAgent) ?? targetFromMessage(span);
  if (to === undefined) return undefined;
  const from = stringAttribute(attributes, LOGFIRE_AGENTS_KEYS.fromAgent);
  const call: ToolCallDraft = {
    tool: defaultHandoffTool(to),
    args: { captured: false },
    result: { captured: false },
    outcome: spanOutcome(span),
    convention: OPENAI_AGENTS_LOGFIRE,
    handoff: { targetName: to, targetType: 'agent', mode: 'pass_control' },
  };
  if (from) call.agentName = from;
  return call;
}

/** `Handoff: agent1 → agent2` (or `->`) in `logfire.msg`, for a span whose attributes were dropped. */
function targetFromMessage(span: SpanRecord): string | undefined {
  const message = stringAttribute(span.attributes, 'logfire.msg');
  if (!message?.startsWith(HANDOFF)) return undefined;
  const match = /(?:→|->)\s*(.+)$/.exec(message);
  return match?.[1]?.trim() || undefined;
}

/** The SDK's default handoff tool name: `transfer_to_{agent}`, spaces and symbols as `_`, lower case. */
export function defaultHandoffTool(agent: string): string {
  return `transfer_to_${agent}`.replace(/[^a-zA-Z0-9]/g, '_').toLowerCase();
}

/** The turn's model and usage, and its transfer requests marked as handoffs. */
function withModel(span: SpanRecord, turn: TurnDraft): TurnDraft {
  const model =
    stringAttribute(span.attributes, LOGFIRE_AGENTS_KEYS.requestModel) ??
    stringAttribute(span.attributes, LOGFIRE_AGENTS_KEYS.responseModel);
  const usage = tokenUsage(span);
  if (model) turn.model = model;
  if (usage) turn.usage = usage;
  markTransferRequests(turn.requested);
  return turn;
}
