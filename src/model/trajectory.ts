/**
 * The Trajectory: what an agent did, as typed events. Normalizers build it from spans (or from
 * typed call/result events); rules only ever read it.
 */
import { type CallTiming, type CausalOrder, TimingOrder } from './causal-order.js';
import type { JsonValue } from './json.js';
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
      /** Set when the attribute was a string that is not valid JSON: `value` then holds the raw string. */
      parseError?: string;
    }
  | { captured: false };

/** How a tool call ended. `no_result` means the call never reported back (span left open, no result event). */
export type CallOutcome =
  | { status: 'ok' }
  | { status: 'error'; errorType?: string; message?: string }
  | { status: 'no_result' };

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
}

/** Token counts of one generation. */
export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
}

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
  timing?: Map<string, CallTiming>;
  turns?: Turn[];
  agents?: AgentRun[];
  root?: TrajectoryRoot;
  issues?: TrajectoryIssue[];
  spanCount?: number;
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
    this.issues = init.issues ?? [];
    this.spanCount = init.spanCount ?? 0;
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
   * (ok or error), in causal order. Grounding rules look for argument values here.
   */
  resultsVisibleTo(call: ToolCall): ToolCall[] {
    return this.calls.filter(
      (earlier) => earlier.outcome.status !== 'no_result' && this.happensBefore(earlier, call),
    );
  }

  /** The agent runs started from a run (sub-agents, handoff targets); the top-level runs for undefined. */
  childRuns(runId: string | undefined): AgentRun[] {
    return this.agents.filter((run) => run.parentRunId === runId);
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

/** Milliseconds with microsecond precision; dividing as bigint first keeps long spans exact. */
function nanosToMs(nanos: bigint): number {
  return nanos <= 0n ? 0 : Number(nanos / 1000n) / 1000;
}
