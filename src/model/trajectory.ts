/**
 * The Trajectory: what an agent did, as typed events. Normalizers build it from spans (or from
 * typed call/result events); rules only ever read it.
 */
import { type CallTiming, type CausalOrder, TimingOrder } from './causal-order.js';
import type { JsonValue } from './json.js';
import { MAX_JSON_DEPTH, nestedDeeperThan, TOO_DEEP_TEXT } from './json-depth.js';
import type { Attributes } from './span-record.js';

export type { CallTiming } from './causal-order.js';

/**
 * A value that may not have been recorded. OTel makes tool arguments and results opt-in, so
 * "not captured" must never be confused with "empty".
 */
export type Captured<T> =
  | {
      captured: true;
      value: T;
      /**
       * Why the value cannot be read as JSON: the attribute was a string that is not valid JSON
       * (`value` then holds the raw string), or the value is too deep (then `tooDeep` is set).
       * Every rule that compares values checks it: such a value is never compared.
       */
      parseError?: string;
      /**
       * The value nests deeper than {@link MAX_JSON_DEPTH} levels: `value` is {@link TOO_DEEP_TEXT}
       * and `parseError` says so. Set when the Trajectory is made, for every call.
       */
      tooDeep?: true;
    }
  | { captured: false };

/** A captured value too deep to read, as every call holding one gets it. */
export function tooDeep(): Captured<JsonValue> {
  return {
    captured: true,
    value: TOO_DEEP_TEXT,
    parseError: `nested deeper than ${MAX_JSON_DEPTH} levels`,
    tooDeep: true,
  };
}

/**
 * Whether a value was captured and reads as JSON: what every rule that compares values asks first.
 * Narrows to a value without `parseError`, so the other branch keeps an unreadable captured one.
 */
export function isReadable<T>(
  value: Captured<T>,
): value is { captured: true; value: T; parseError?: undefined; tooDeep?: undefined } {
  return value.captured && value.parseError === undefined;
}

/**
 * Why a captured value cannot be compared, as a phrase after "arguments are": `not valid JSON
 * (...)` or `nested deeper than 64 levels`; undefined when it can be (or was not captured).
 */
export function unreadable(value: Captured<unknown>): string | undefined {
  if (!value.captured || value.parseError === undefined) return undefined;
  return value.tooDeep ? value.parseError : `not valid JSON (${value.parseError})`;
}

/** The value as rules may read it: past {@link MAX_JSON_DEPTH} (or the decoders' marker), {@link tooDeep}. */
function withinDepth(value: Captured<JsonValue>): Captured<JsonValue> {
  if (!value.captured || value.tooDeep) return value;
  if (value.value === TOO_DEEP_TEXT) return tooDeep();
  return value.parseError === undefined && nestedDeeperThan(value.value) ? tooDeep() : value;
}

/**
 * How a tool call ended. `no_result`: the call never reported back (span left open, no result
 * event), so whether it ran is unknown. `not_executed`: a pre-execution decision denied it or held
 * it for approval, and no execution of it was recorded: it did not run. Neither reported a
 * result: nothing to ground on, not an error, not ok.
 */
export type CallOutcome =
  | { status: 'ok' }
  | { status: 'error'; errorType?: string; message?: string }
  | { status: 'no_result' }
  | { status: 'not_executed' };

/** What a pre-execution decision (`gen_ai.tool.call.decision`) said of a call. */
export type DecisionOutcome = 'allow' | 'deny' | 'require_approval';

/** One pre-execution decision on a tool call, as recorded. */
export interface ToolCallDecision {
  outcome: DecisionOutcome;
  /** The span that recorded the decision, when it came from a span. */
  spanId?: string;
  /** When it was recorded (ns); for typed events, the event's position. */
  time?: bigint;
}

/**
 * A call that hands control to another agent (a handoff, the GenAI transfer refinement). The
 * target's run, when the trace holds it, comes after the call.
 */
export interface Handoff {
  /** The agent control went to (`gen_ai.transfer.target.name`, the SDK's `to_agent`). */
  targetName: string;
  /** `gen_ai.transfer.target.type`, e.g. `agent`. */
  targetType?: string;
  /** `gen_ai.transfer.mode`: `pass_control` or `return_to_caller`. */
  mode?: string;
  /** The target's agent run in this trajectory, when one was found after the call. */
  targetRunId?: string;
}

/**
 * The MCP server a call went to, as the trace records it: an MCP client span's `server.address`,
 * `server.port`, `network.transport` and `mcp.session.id` (OTel MCP conventions), `mcp.server.name`
 * where an instrumentation sets it, or the framework's own name for the server (the OpenAI Agents
 * SDK's `mcp_data.server`). Every field may be missing: `{}` says the call went to an MCP server
 * (an MCP span, a tool a server listed) but not which one.
 */
export interface McpServer {
  /** The server's name as the client calls it (`mcp_data.server`, `mcp.server.name`). */
  name?: string;
  /** `server.address`: a host name, an IP address or a socket path. */
  address?: string;
  /** `server.port`. */
  port?: number;
  /** `network.transport`: `pipe` (stdio), `tcp`, `quic`. */
  transport?: string;
  /** `mcp.session.id`. */
  sessionId?: string;
}

/**
 * The tool's MCP annotations (hints the server gave in its `tools/list` result), as a listing in
 * the trace recorded them. Hints, not guarantees: the MCP spec leaves them to the server.
 */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One tool invocation and its result. */
export interface ToolCall {
  /** Stable id of this node inside the trajectory: the call id when known and unique, else `span:<spanId>`. */
  id: string;
  /** The call id the framework gave it (`gen_ai.tool.call.id` or equivalent), if any. */
  callId?: string;
  tool: string;
  args: Captured<JsonValue>;
  result: Captured<JsonValue>;
  outcome: CallOutcome;
  spanId?: string;
  parentSpanId?: string;
  startTimeUnixNano?: bigint;
  endTimeUnixNano?: bigint;
  /** The agent that made the call, from the call's own span or its nearest agent ancestor. */
  agentName?: string;
  /** The LLM turn that asked for this call, when known. */
  turnId?: string;
  /** The convention the call was read from (e.g. `otel-genai`, `typed-events`). */
  convention: string;
  /**
   * Pre-execution decisions recorded for this call (allow, deny, require_approval), in the order
   * they were recorded; absent when none was. Approval gates read them.
   */
  decisions?: ToolCallDecision[];
  /** Set when the call is a handoff: it passed control to another agent. */
  handoff?: Handoff;
  /** Set when the call went to an MCP server: which one, as far as the trace says. */
  mcpServer?: McpServer;
  /** The tool's MCP annotations, when a `tools/list` result in the trace recorded them. */
  mcpAnnotations?: McpToolAnnotations;
}

/** One LLM generation: the calls it asked for and the results it had been shown. */
export interface Turn {
  id: string;
  spanId?: string;
  /** The agent run this turn belongs to. */
  runId?: string;
  model?: string;
  /** Ids of the calls this turn issued. */
  issued: string[];
  /** Ids of the calls whose results this turn consumed. */
  consumed: string[];
  /** Tokens the generation used, when the convention records them. */
  usage?: TokenUsage;
  /**
   * The text the generation answered with, when the convention records its output (OTel GenAI's
   * `gen_ai.output.messages` text parts, `ai.response.text`, ...: docs/conventions.md lists each),
   * at most 4,000 characters. Shown by `toolpath view`; never put in findings.
   */
  answer?: string;
}

/** Token counts of one generation. */
export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
}

/**
 * The issue kind for tool use seen but not read (spans no convention claims that look like tool
 * spans, tool requests a turn's output holds unread): while it stands, no rule that depends on
 * the calls passes and the verdict is never `pass`.
 */
export const UNREAD_TOOL_ACTIVITY = 'unread_tool_activity';
/** The issue kind for call, turn or run spans whose times no clock wrote (0, after 2200, end before start). */
export const IMPOSSIBLE_TIME = 'span.impossible_time';

/** Something a normalizer could not link or read, kept so a report can say so instead of guessing. */
export interface TrajectoryIssue {
  /** Stable id, e.g. `arguments.unparsable`, `result.orphan`, `call.duplicate_id`. */
  kind: string;
  message: string;
  spanIds: string[];
}

/** One run of an agent: its turns and calls, and the call or run it was started from. */
export interface AgentRun {
  /** The agent span's id (or a synthetic id for a trace without agent spans). */
  id: string;
  name?: string;
  spanId?: string;
  /** The enclosing agent run, for a sub-agent or a handoff target. */
  parentRunId?: string;
  /** The tool call that started this run (agent as a tool), when there is one. */
  parentCallId?: string;
  /** The handoff call that passed control to this run, when the trace records one. */
  handoffCallId?: string;
  /** Ids of this run's turns, in order. */
  turns: string[];
  /** Ids of the calls this run's turns issued (or that ran under it without a turn). */
  calls: string[];
}

/** The root of what was evaluated: the local root span (or the event file). */
export interface TrajectoryRoot {
  name: string;
  /** The root span's attributes (what `appliesTo` matches on). */
  attributes?: Attributes;
  spanId?: string;
  agentName?: string;
  startTimeUnixNano?: bigint;
  endTimeUnixNano?: bigint;
}

/** Everything a normalizer hands to {@link Trajectory}. */
export interface TrajectoryInit {
  traceId: string;
  calls: ToolCall[];
  /** Happens-before between the calls; or give `timing` for positions on one clock. */
  order?: CausalOrder;
  /**
   * The calls are already in the order's causal listing (`order.compare` never puts a later one
   * first): they are kept as given instead of sorted again. For the normalizer, which builds them
   * in that order; nothing checks it, and a wrong `true` leaves the calls out of order.
   */
  callsInOrder?: boolean;
  /**
   * The calls come from trajectories that bounded their values' depth already (a conversation's,
   * joined): not walked again. The issues then say so already, as given.
   */
  depthBounded?: boolean;
  timing?: Map<string, CallTiming>;
  turns?: Turn[];
  agents?: AgentRun[];
  root?: TrajectoryRoot;
  issues?: TrajectoryIssue[];
  spanCount?: number;
  /** The conversation the trace (or the joined traces) belongs to, when one was read. */
  conversationId?: string;
  /**
   * For a conversation's trajectory: its traces, earliest first, and the trace each call came
   * from (see model/conversation.ts). Absent for one trace.
   */
  conversation?: { traceIds: readonly string[]; traceOf: (call: ToolCall) => string | undefined };
}

/**
 * The causal structure of one trace. Calls are held in a causal order (a topological order
 * of happens-before, ties broken by issue time), so a rule that walks `calls` never sees an
 * effect before its cause.
 */
export class Trajectory {
  readonly traceId: string;
  readonly calls: readonly ToolCall[];
  /** LLM turns, in causal order. */
  readonly turns: readonly Turn[];
  readonly root: TrajectoryRoot | undefined;
  readonly issues: readonly TrajectoryIssue[];
  readonly spanCount: number;
  /** Agent runs (sub-agents, handoffs), outermost first. */
  readonly agents: readonly AgentRun[];
  /** The conversation id the trace carries (or the joined conversation's), if any. */
  readonly conversationId: string | undefined;
  /** For a conversation's trajectory: the traces joined, earliest first; undefined for one trace. */
  readonly traceIds: readonly string[] | undefined;
  readonly #traceOf: ((call: ToolCall) => string | undefined) | undefined;
  readonly #order: CausalOrder;
  /** Made on first use: most evaluations never ask for a call by id. */
  #byId: Map<string, ToolCall> | undefined;
  /** Each call's place in `calls`, made on first use where the order cannot rank a call itself. */
  #positions: Map<ToolCall, number> | undefined;

  constructor(init: TrajectoryInit) {
    this.traceId = init.traceId;
    const order = init.order ?? (init.timing && new TimingOrder(init.timing));
    if (!order) throw new Error(`trajectory ${init.traceId}: give an order or timing`);
    this.#order = order;
    this.calls = init.callsInOrder ? init.calls : [...init.calls].sort((a, b) => order.compare(a.id, b.id));
    this.turns = init.turns ?? [];
    this.agents = init.agents ?? [];
    this.root = init.root;
    this.issues = init.depthBounded ? (init.issues ?? []) : boundDepth(init.calls, init.issues ?? []);
    this.spanCount = init.spanCount ?? 0;
    this.conversationId = init.conversationId;
    this.traceIds = init.conversation?.traceIds;
    this.#traceOf = init.conversation?.traceOf;
  }

  /** Happens-before as the trajectory holds it: for joining traces into a conversation. */
  get causalOrder(): CausalOrder {
    return this.#order;
  }

  /** The trace a call came from: this trajectory's own, unless it joins a conversation's traces. */
  traceIdOf(call: ToolCall): string {
    return this.#traceOf?.(call) ?? this.traceId;
  }

  /** The call with this node id. */
  call(id: string): ToolCall | undefined {
    if (!this.#byId) {
      this.#byId = new Map();
      for (const call of this.calls) this.#byId.set(call.id, call);
    }
    return this.#byId.get(id);
  }

  /**
   * `a -> b`: b was issued after a's result was available, so b could have depended on it.
   * Two calls issued together (one turn, a parallel batch) are never ordered.
   */
  happensBefore(a: ToolCall, b: ToolCall): boolean {
    if (a === b) return false;
    const order = this.#order;
    return order.happensBeforeCall ? order.happensBeforeCall(a, b) : order.happensBefore(a.id, b.id);
  }

  /**
   * A test for "some call of `calls` happened before this one", built once: O(calls) to build on
   * the causal graph (one OR of reachability sets), then O(1) per question.
   */
  afterAny(calls: readonly ToolCall[]): (call: ToolCall) => boolean {
    const order = this.#order;
    if (order.afterAnyCall) return order.afterAnyCall(calls);
    const test = order.afterAny(calls.map((call) => call.id));
    return (call) => test(call.id);
  }

  /**
   * A number that orders this trajectory's calls as {@link calls} lists them (the causal listing),
   * -1 for a call not in it: asked of the order where it can answer from the call itself, else
   * by the call's place in `calls`.
   */
  listingRank(call: ToolCall): number {
    const rank = this.#order.listingRankOfCall?.(call);
    if (rank !== undefined) return rank;
    if (!this.#positions) {
      const positions = new Map<ToolCall, number>();
      for (let position = 0; position < this.calls.length; position++)
        positions.set(this.calls[position] as ToolCall, position);
      this.#positions = positions;
    }
    return this.#positions.get(call) ?? -1;
  }

  /** Neither call happened before the other. */
  concurrent(a: ToolCall, b: ToolCall): boolean {
    return a !== b && !this.happensBefore(a, b) && !this.happensBefore(b, a);
  }

  /**
   * The results `call` could have seen: every call that happened before it and reported back
   * (ok or error; not one that never reported or never ran), in causal order. Grounding rules
   * look for argument values here.
   */
  resultsVisibleTo(call: ToolCall): ToolCall[] {
    return this.calls.filter((earlier) => reportedBack(earlier) && this.happensBefore(earlier, call));
  }

  /** The agent runs started from a run (sub-agents, handoff targets); the top-level runs for undefined. */
  childRuns(runId: string | undefined): AgentRun[] {
    return this.agents.filter((run) => run.parentRunId === runId);
  }

  /**
   * The named agent runs the trace does not say how control reached: after the entry agent's
   * (the first named run that took a turn or made a call), each such run no call started (agent
   * as a tool) and no handoff passed control to, as when a framework hands off without recording
   * it. A later run of the entry agent itself (a conversation's next trace) is not one, nor a run
   * that did nothing (a wrapper span read as an agent).
   */
  unstartedRuns(): AgentRun[] {
    const runs: AgentRun[] = [];
    let entry: string | undefined;
    for (const run of this.agents) {
      if (run.name === undefined || (run.turns.length === 0 && run.calls.length === 0)) continue;
      if (entry === undefined) entry = run.name;
      else if (run.name !== entry && run.parentCallId === undefined && run.handoffCallId === undefined)
        runs.push(run);
    }
    return runs;
  }

  /**
   * How long the run took: the root span's duration, else first call start to last call end;
   * undefined when the trace records neither. `from` says which, for messages.
   */
  duration(): { ms: number; from: 'root span' | 'calls' } | undefined {
    const root = this.root;
    if (root?.startTimeUnixNano !== undefined && root.endTimeUnixNano !== undefined) {
      return { ms: nanosToMs(root.endTimeUnixNano - root.startTimeUnixNano), from: 'root span' };
    }
    let start: bigint | undefined;
    let end: bigint | undefined;
    for (const call of this.calls) {
      const callStart = call.startTimeUnixNano;
      const callEnd = call.endTimeUnixNano;
      if (callStart !== undefined && (start === undefined || callStart < start)) start = callStart;
      if (callEnd !== undefined && (end === undefined || callEnd > end)) end = callEnd;
    }
    return start === undefined || end === undefined
      ? undefined
      : { ms: nanosToMs(end - start), from: 'calls' };
  }

  /** The calls of one tool, in causal order. */
  callsOf(tool: string): ToolCall[] {
    return this.calls.filter((call) => call.tool === tool);
  }
}

/**
 * Bounds every call's arguments and result to {@link MAX_JSON_DEPTH} (where every way of making a
 * trajectory passes), so no rule, report or view walks a deeper value; says which were too deep.
 */
function boundDepth(calls: readonly ToolCall[], issues: TrajectoryIssue[]): TrajectoryIssue[] {
  let bounded = issues;
  const report = (call: ToolCall, what: 'arguments' | 'result') => {
    if (bounded === issues) bounded = [...issues];
    const span = call.spanId ? ` (span ${call.spanId})` : '';
    const verb = what === 'arguments' ? 'nest' : 'nests';
    bounded.push({
      kind: `${what}.too_deep`,
      message: `the ${what} of ${call.tool} (call ${call.id})${span} ${verb} deeper than ${MAX_JSON_DEPTH} levels: too deep to read, so the rules that need ${what === 'arguments' ? 'them' : 'it'} cannot decide`,
      spanIds: call.spanId ? [call.spanId] : [],
    });
  };
  for (const call of calls) {
    call.args = withinDepth(call.args);
    if (call.args.captured && call.args.tooDeep) report(call, 'arguments');
    call.result = withinDepth(call.result);
    if (call.result.captured && call.result.tooDeep) report(call, 'result');
  }
  return bounded;
}

/** The call reported a result, ok or error: one that never reported back or never ran did not. */
export function reportedBack(call: Pick<ToolCall, 'outcome'>): boolean {
  const status = call.outcome.status;
  return status === 'ok' || status === 'error';
}

/** Milliseconds with microsecond precision; dividing as bigint first keeps long spans exact. */
function nanosToMs(nanos: bigint): number {
  return nanos <= 0n ? 0 : Number(nanos / 1000n) / 1000;
}
