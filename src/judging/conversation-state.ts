/**
 * What the live front doors (the processor, `toolpath serve`) keep of each conversation between
 * its traces: the trajectories of the traces judged so far, their argument and result values let
 * go unless redaction keeps them, capped in conversations and calls, and let go once idle. The
 * caller owns the clock: it passes `now` in, so the state is replayable in tests.
 */

import type { JsonValue } from '../model/json.js';
import type { Captured } from '../model/trajectory.js';
import { type ToolCall, Trajectory } from '../model/trajectory.js';

/** Caps and the idle timeout of the conversation state. */
export interface ConversationLimits {
  /** A conversation with no new trace for this long is judged final and let go. */
  idleMs: number;
  /** Conversations held at once; past it the one idle longest is judged final early (counted). */
  maxConversations: number;
  /** Calls held per conversation; a trace that would pass it closes the conversation first (counted). */
  maxCalls: number;
}

/** The caps when none are given: serve's `conversations` defaults. */
export const CONVERSATION_DEFAULTS: ConversationLimits = {
  idleMs: 5 * 60_000,
  maxConversations: 10_000,
  maxCalls: 100_000,
};

/** Why a conversation was let go before it went idle. */
export type ConversationEviction = 'max_conversations' | 'max_calls' | 'shutdown';

/**
 * Why earlier traces of a conversation are missing from what is held: let go at `maxCalls`, or
 * lost with the judging worker that held them (worker_exit).
 */
export type TruncatedBy = 'max_calls' | 'worker_exit';

/** A conversation let go: judged final by the caller. */
export interface ClosedConversation {
  id: string;
  /** Its traces, earliest judged first. */
  traces: Trajectory[];
  /** The latest trace's evaluated span, where the final findings go. */
  latest: { traceId: string; evaluatedSpanId: string | undefined };
  /** Set when it was let go before going idle: why, for the report's `incomplete`. */
  evicted?: ConversationEviction;
  /** Set when earlier traces of it are missing (let go, or lost): its verdict cannot be trusted whole. */
  truncated?: TruncatedBy;
}

interface Held {
  id: string;
  traces: Trajectory[];
  calls: number;
  lastActive: number;
  latest: ClosedConversation['latest'];
  truncated: TruncatedBy | undefined;
}

/** How stored calls keep their values: `keep` says whether a value may stay as captured. */
export type ValuePolicy = (value: Captured<JsonValue>) => boolean;

/**
 * The conversations in progress, least recently active first (a Map re-set on each trace keeps
 * that order, so expiry looks only at the ones due). Bounded: see {@link ConversationLimits}.
 */
export class ConversationState {
  readonly #byId = new Map<string, Held>();
  /** Conversations whose history is gone (closed over a cap, or lost), so a later trace knows; capped too. */
  readonly #truncated = new Map<string, TruncatedBy>();
  /** Conversations let go early, by reason. */
  readonly evicted: Record<ConversationEviction, number> = {
    max_conversations: 0,
    max_calls: 0,
    shutdown: 0,
  };

  constructor(
    readonly limits: ConversationLimits,
    private readonly keepValue: ValuePolicy,
  ) {}

  /** Conversations held. */
  get size(): number {
    return this.#byId.size;
  }

  /** When the conversation idle longest goes idle (on the caller's clock); undefined when none is held. */
  get dueAt(): number | undefined {
    const oldest = this.#byId.values().next().value;
    return oldest === undefined ? undefined : oldest.lastActive + this.limits.idleMs;
  }

  /**
   * Conversations whose earlier traces were lost elsewhere (a judging worker that exited): their
   * later traces start afresh, judged as truncated. Ids held here already keep what they hold.
   */
  markLost(ids: readonly string[]): void {
    for (const id of ids) if (!this.#byId.has(id)) this.#markTruncated(id, 'worker_exit');
  }

  /**
   * Adds a judged trace to its conversation. Returns the conversation's traces so far (this one
   * last) and the conversations closed to make room, for the caller to judge final.
   */
  add(
    id: string,
    trajectory: Trajectory,
    evaluatedSpanId: string | undefined,
    now: number,
  ): {
    held: { traces: readonly Trajectory[]; truncated: TruncatedBy | undefined };
    closed: ClosedConversation[];
  } {
    const closed: ClosedConversation[] = [];
    const stored = storedCopy(trajectory, this.keepValue);
    let held = this.#byId.get(id);
    if (held && held.calls + stored.calls.length > this.limits.maxCalls) {
      closed.push(this.#close(held, 'max_calls'));
      held = undefined;
    }
    if (!held) {
      while (this.#byId.size >= this.limits.maxConversations) {
        const oldest = this.#byId.values().next().value as Held;
        closed.push(this.#close(oldest, 'max_conversations'));
      }
      held = {
        id,
        traces: [],
        calls: 0,
        lastActive: now,
        latest: { traceId: trajectory.traceId, evaluatedSpanId },
        truncated: this.#truncated.get(id),
      };
    }
    held.traces.push(stored);
    held.calls += stored.calls.length;
    held.lastActive = now;
    held.latest = { traceId: trajectory.traceId, evaluatedSpanId };
    // Re-set: the map's order is by last activity.
    this.#byId.delete(id);
    this.#byId.set(id, held);
    return { held: { traces: held.traces, truncated: held.truncated }, closed };
  }

  /** The conversations idle for `limits.idleMs` at `now`: let go, for the caller to judge final. */
  takeIdle(now: number): ClosedConversation[] {
    const due: ClosedConversation[] = [];
    for (const held of this.#byId.values()) {
      if (now - held.lastActive < this.limits.idleMs) break;
      due.push(this.#close(held, undefined));
    }
    return due;
  }

  /** Every conversation, let go at shutdown. */
  takeAll(): ClosedConversation[] {
    return [...this.#byId.values()].map((held) => this.#close(held, 'shutdown'));
  }

  #close(held: Held, why: ConversationEviction | undefined): ClosedConversation {
    this.#byId.delete(held.id);
    if (why !== undefined) this.evicted[why]++;
    if (why === 'max_calls') this.#markTruncated(held.id, 'max_calls');
    else if (why === undefined) this.#truncated.delete(held.id);
    const out: ClosedConversation = { id: held.id, traces: held.traces, latest: held.latest };
    if (held.truncated !== undefined) out.truncated = held.truncated;
    if (why !== undefined) out.evicted = why;
    return out;
  }

  #markTruncated(id: string, by: TruncatedBy): void {
    this.#truncated.delete(id);
    if (this.#truncated.size >= this.limits.maxConversations) {
      const first = this.#truncated.keys().next().value as string;
      this.#truncated.delete(first);
    }
    this.#truncated.set(id, by);
  }
}

const NOT_CAPTURED: Captured<JsonValue> = { captured: false };

/**
 * The trajectory as the state keeps it: its calls copied with the values the policy lets stay,
 * the others marked not captured (a rule that needs them is then inconclusive, never misled by a
 * redacted value). The trace's own order answers for the copies by their ids.
 */
function storedCopy(trajectory: Trajectory, keepValue: ValuePolicy): Trajectory {
  const calls: ToolCall[] = trajectory.calls.map((call) => ({
    ...call,
    args: keepValue(call.args) ? call.args : NOT_CAPTURED,
    result: keepValue(call.result) ? call.result : NOT_CAPTURED,
  }));
  return new Trajectory({
    traceId: trajectory.traceId,
    calls,
    callsInOrder: true,
    depthBounded: true,
    order: trajectory.causalOrder,
    turns: [...trajectory.turns],
    agents: [...trajectory.agents],
    issues: [...trajectory.issues],
    spanCount: trajectory.spanCount,
    ...(trajectory.root && { root: trajectory.root }),
    ...(trajectory.conversationId !== undefined && { conversationId: trajectory.conversationId }),
  });
}
