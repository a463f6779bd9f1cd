/**
 * What a convention reads from one span, before trajectory assembly links anything. Each
 * convention is one file exporting a {@link Convention}; assembly never looks at attribute keys.
 */
import type { JsonValue } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type {
  CallOutcome,
  Captured,
  Handoff,
  McpServer,
  McpToolAnnotations,
  TokenUsage,
} from '../model/trajectory.js';

/** A tool call as one convention reads it from one tool span, before ids and order are assigned. */
export interface ToolCallDraft {
  tool: string;
  callId?: string;
  args: Captured<JsonValue>;
  /** Why the recorded arguments could not be read as the model's (they are kept as recorded). */
  argsProblem?: string;
  result: Captured<JsonValue>;
  outcome: CallOutcome;
  agentName?: string;
  convention: string;
  /** Set when the span records a handoff (transfer of control to another agent). */
  handoff?: Omit<Handoff, 'targetRunId'>;
  /** Set when the span records a call to an MCP server (see McpServer). */
  mcpServer?: McpServer;
  /** The tool's MCP annotations, from a `tools/list` result in the trace (see mcp-listings.ts). */
  mcpAnnotations?: McpToolAnnotations;
}

/**
 * A pre-execution decision on a call (`gen_ai.tool.call.decision`), as read from one span event;
 * assembly puts it on the call it names.
 */
export interface DecisionDraft {
  /** As recorded: `allow`, `deny` or `require_approval` when well formed (anything else is reported). */
  outcome: string;
  callId?: string;
  tool?: string;
  time: bigint;
  convention: string;
}

/** A tool call an LLM turn asked for (a `tool_call` part or the convention's equivalent). */
export interface RequestedCall {
  callId?: string;
  tool: string;
  args: Captured<JsonValue>;
  /**
   * How the call ended, for a server-side call whose request item records it (a hosted tool's
   * `status`, a hosted MCP call's `output` or `error`); a call no span records is otherwise taken
   * to have no result.
   */
  ended?: { outcome: CallOutcome; result: Captured<JsonValue> };
  /** The MCP server of a hosted MCP call (a Responses `mcp_call` item's `server_label`). */
  mcpServer?: McpServer;
  /** Set when the request is a handoff (a framework's transfer tool), its target as the request names it. */
  handoff?: Omit<Handoff, 'targetRunId'>;
}

/** A tool result an LLM turn was shown in its input (a `tool_call_response` part or equivalent). */
export interface ShownResult {
  callId?: string;
  tool?: string;
  result: Captured<JsonValue>;
  /** The convention marks this result as an error (e.g. an `error-text` tool result). */
  isError?: boolean;
}

/** One LLM generation as read from its span. */
export interface TurnDraft {
  /** The calls the model asked for in its output. */
  requested: RequestedCall[];
  /** The tool results in its input; undefined when the input was not captured. */
  shown: readonly ShownResult[] | undefined;
  /** Messages in its input (the history grows turn by turn: a tie-breaker for equal start times). */
  historyLength: number;
  /**
   * Which conversation the turn continues, where the convention can tell cheaply (its first input
   * message, in short): turns of one run with different keys are different conversations, as
   * when a code agent's managed agent runs inside one of its calls with no span of its own.
   */
  thread?: string;
  model?: string;
  usage?: TokenUsage;
  /** The text of its output, when recorded, cut by `cutAnswer` (see Turn.answer). */
  answer?: string;
  /**
   * Tool requests in the output that could not be read, each said in a few words (`gen_ai.output.messages
   * is not valid JSON`, `a part of type "function_call"`): evidence of tool use no call stands for.
   */
  unreadRequests?: string[];
  /**
   * The output was recorded with its messages' roles only: the calls it asked for were left out
   * (a tool span right after it, beside it, is taken as its call; see link-requests.ts).
   */
  outputOnlyRoles?: true;
  convention: string;
}

/**
 * What a span is, to the trajectory. `structure` claims a span as neither call, turn nor agent
 * (a convention's bookkeeping span that a lower-precedence convention would misread). `step`
 * holds one step of its agent run: a model turn and the tool calls it asked for. A run's steps
 * follow one another (everything in one happened before anything in the next), in the order of
 * `index` where the convention numbers them, else of their times, else of arrival.
 */
export type SpanReading =
  | { kind: 'tool'; call: ToolCallDraft }
  | { kind: 'turn'; turn: TurnDraft }
  | { kind: 'agent'; name?: string; convention: string }
  | { kind: 'step'; index?: number; convention: string }
  | { kind: 'structure'; convention: string };

/**
 * What every span a convention claims carries: at least one of these attribute keys, one of these
 * instrumentation scopes, or a name with one of these prefixes.
 */
export interface ConventionMarks {
  keys: readonly string[];
  scopes?: readonly string[];
  namePrefixes?: readonly string[];
}

/** One telemetry convention: claims the spans it recognizes and reads them. */
export interface Convention {
  /** Stable name, as it appears on ToolCalls (e.g. `otel-genai`). */
  name: string;
  /**
   * Without a mark, `read` would return undefined: a span bearing no mark of any convention is
   * not offered to those that declare marks (most spans are OTel GenAI or not agent spans at all,
   * and asking every vendor convention in turn was most of the cost of dispatch). Absent, every
   * span is offered.
   */
  marks?: ConventionMarks;
  /** Reads the span if this convention claims it; undefined otherwise. Pure, never throws. */
  read(span: SpanRecord): SpanReading | undefined;
  /**
   * The pre-execution decisions a span's events record, whatever the span is (a decision may sit
   * on an agent, chat or application span). Asked only of spans with events. Pure, never throws.
   */
  readDecisions?(span: SpanRecord): DecisionDraft[] | undefined;
  /**
   * The attribute keys this convention records a conversation (session, thread) id under, most
   * specific first, read on every span of a trace whoever claims it. Traces carrying the same id
   * are one conversation (see conversation-id.ts).
   */
  conversationKeys?: readonly string[];
  /**
   * Conversation keys too generic to read on every span (the Agents SDK's `group_id`: a Kafka
   * client's span may carry one too), read only on the spans this convention claims, structure
   * spans included.
   */
  ownConversationKeys?: readonly OwnConversationKey[];
}

/** A conversation key read only on its convention's own spans (see {@link Convention.ownConversationKeys}). */
export interface OwnConversationKey {
  key: string;
  /** Values that mean "no conversation", as an absent key does (logfire writes None as `"null"`). */
  none?: readonly string[];
}
