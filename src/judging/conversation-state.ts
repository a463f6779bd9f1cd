/**
 * What the live front doors (the processor, `toolpath serve`) keep of each conversation between
 * its traces: the trajectories of the traces judged so far, their argument and result values let
 * go unless redaction keeps them, capped in conversations and calls, and let go once idle. The
 * caller owns the clock: it passes `now` in, so the state is replayable in tests.
 */

import { defaultConversationLimits } from '../config/options.js';
import type { JsonValue } from '../model/json.js';
import type { ReportStats } from '../model/report.js';
import type { Captured } from '../model/trajectory.js';
import { type ToolCall, Trajectory, type Turn } from '../model/trajectory.js';

/** Caps and the idle timeout of the conversation state. */
export interface ConversationLimits {
  /** A conversation with no new trace for this long is judged final and let go. */
  idleMs: number;
  /** Conversations held at once; past it the one idle longest is judged final early (counted). */
  maxConversations: number;
  /** Calls held per conversation; a trace that would pass it closes the conversation first (counted). */
  maxCalls: number;
}

/** The caps when none are given, from the one schema of options (config/schema.ts). */
export const CONVERSATION_DEFAULTS: ConversationLimits = defaultConversationLimits();

/** Why a conversation was let go before it went idle. */
export type ConversationEviction = 'max_conversations' | 'max_calls' | 'shutdown';

/**
 * Why earlier traces of a conversation are missing from what is held, so that a verdict on the
 * rest cannot be trusted whole: the conversation was closed at `maxCalls` or `maxConversations`
 * and went on, (durable mode) some of its traces were forced out of storage before a restart, or
 * they were lost with the judging worker that held them (worker_exit).
 */
export type LostHistory = 'max_calls' | 'max_conversations' | 'storage' | 'worker_exit';

/** A conversation let go: judged final by the caller. */
export interface ClosedConversation {
  id: string;
  /** Its traces, earliest judged first. */
  traces: Trajectory[];
  /** The latest trace's evaluated span, where the final findings go. */
  latest: { traceId: string; evaluatedSpanId: string | undefined };
  /** Set when it was let go before going idle: why, for the report's `incomplete`. */
  evicted?: ConversationEviction;
  /** Set when earlier traces of it were let go: its verdict cannot be trusted whole. */
  lost?: LostHistory;
}

/**
 * What the judge keeps of a conversation's provisional judgements, so that a long one is not
 * judged again on everything after every trace (conversation-judge.ts, provisional-bounds.ts).
 */
export interface ProvisionalMark {
  /** The conversation's {@link HeldConversation.size} when it was last judged provisionally; 0 before. */
  judgedSize: number;
  /** Traces since then whose provisional judgement was coalesced into a later one. */
  coalesced: number;
  /** The trace it was last judged after. */
  judgedAfter: string | undefined;
  /** Which of the judge's scenarios apply to any of its traces (by index), over the first `checked` traces. */
  applies: Set<number>;
  checked: number;
  /** The last provisional reports, by scenario index: what a coalesced report keeps of them. */
  last: Map<number, { assertions: string[]; stats: ReportStats }>;
}

/** A conversation in progress as the caller may read it. */
export interface HeldConversation {
  /** Its traces, earliest judged first. */
  readonly traces: readonly Trajectory[];
  readonly lost: LostHistory | undefined;
  /** Calls held. */
  readonly calls: number;
  /** What joining and judging it visits: its traces, calls and turns. */
  readonly size: number;
  readonly mark: ProvisionalMark;
}

interface Held {
  id: string;
  traces: Trajectory[];
  calls: number;
  size: number;
  mark: ProvisionalMark;
  lastActive: number;
  latest: ClosedConversation['latest'];
  lost: LostHistory | undefined;
}

/** How stored calls keep their values: `keep` says whether a value may stay as captured. */
export type ValuePolicy = (value: Captured<JsonValue>) => boolean;

/**
 * The conversations in progress, least recently active first (a Map re-set on each trace keeps
 * that order, so expiry looks only at the ones due). Bounded: see {@link ConversationLimits}.
 */
export class ConversationState {
  readonly #byId = new Map<string, Held>();
  /** Conversations closed over a cap, so a later trace knows its history is gone; capped too. */
  readonly #lost = new Map<string, LostHistory>();
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

  /**
   * Adds a judged trace to its conversation. Returns the conversation's traces so far (this one
   * last) and the conversations closed to make room, for the caller to judge final.
   */
  add(
    id: string,
    trajectory: Trajectory,
    evaluatedSpanId: string | undefined,
    now: number,
  ): { held: HeldConversation; closed: ClosedConversation[] } {
    return this.#add(id, trajectory, evaluatedSpanId, now, null);
  }

  /**
   * Holds again a trace judged into conversation `id` before a restart (durable mode), as
   * {@link add} does; `lost` is what the conversation had lost then. Restore conversations in
   * the order they were last active: the map's order is by last activity.
   */
  restore(
    id: string,
    trajectory: Trajectory,
    evaluatedSpanId: string | undefined,
    lastActive: number,
    lost: LostHistory | undefined,
  ): ClosedConversation[] {
    return this.#add(id, trajectory, evaluatedSpanId, lastActive, lost).closed;
  }

  #add(
    id: string,
    trajectory: Trajectory,
    evaluatedSpanId: string | undefined,
    now: number,
    restoredLost: LostHistory | undefined | null,
  ): { held: HeldConversation; closed: ClosedConversation[] } {
    const closed: ClosedConversation[] = [];
    const stored = storedCopy(trajectory, this.keepValue);
    let held = this.#byId.get(id);
    if (held && held.calls + stored.calls.length > this.limits.maxCalls) {
      closed.push(this.#close(held, 'max_calls'));
      held = undefined;
    }
    if (!held) {
      // Read before making room: closing another may let this one's entry go.
      const lost = restoredLost === null ? this.#lost.get(id) : restoredLost;
      while (this.#byId.size >= this.limits.maxConversations) {
        const oldest = this.#byId.values().next().value as Held;
        closed.push(this.#close(oldest, 'max_conversations'));
      }
      held = {
        id,
        traces: [],
        calls: 0,
        size: 0,
        mark: {
          judgedSize: 0,
          coalesced: 0,
          judgedAfter: undefined,
          applies: new Set(),
          checked: 0,
          last: new Map(),
        },
        lastActive: now,
        latest: { traceId: trajectory.traceId, evaluatedSpanId },
        lost,
      };
    }
    if (restoredLost) held.lost = restoredLost;
    held.traces.push(stored);
    held.calls += stored.calls.length;
    held.size += 1 + stored.calls.length + stored.turns.length;
    held.lastActive = now;
    held.latest = { traceId: trajectory.traceId, evaluatedSpanId };
    // Re-set: the map's order is by last activity.
    this.#byId.delete(id);
    this.#byId.set(id, held);
    return { held, closed };
  }

  /** Conversation `id` as held, if it holds trace `traceId`. */
  holding(id: string, traceId: string): HeldConversation | undefined {
    const held = this.#byId.get(id);
    return held && placeIn(held.traces, traceId) >= 0 ? held : undefined;
  }

  /** Where trace `traceId` is in conversation `id` (its index, earliest judged first), if held. */
  placeOf(id: string, traceId: string): { index: number; lost: LostHistory | undefined } | undefined {
    const held = this.#byId.get(id);
    const index = held ? placeIn(held.traces, traceId) : -1;
    return held && index >= 0 ? { index, lost: held.lost } : undefined;
  }

  /** Lets conversation `id` go now, for the caller to judge final (`evicted`: why, if not idle). */
  take(id: string, evicted?: ConversationEviction): ClosedConversation | undefined {
    const held = this.#byId.get(id);
    return held && this.#close(held, evicted);
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
  markLostElsewhere(ids: readonly string[]): void {
    for (const id of ids) if (!this.#byId.has(id)) this.markLost(id, 'worker_exit');
  }

  /** Remembers that earlier traces of conversation `id` were let go: what follows is judged as such. */
  markLost(id: string, lost: LostHistory): void {
    this.#lost.delete(id);
    if (this.#lost.size >= this.limits.maxConversations) {
      const first = this.#lost.keys().next().value as string;
      this.#lost.delete(first);
    }
    this.#lost.set(id, lost);
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
    // A conversation closed over a cap may go on: what follows lacks what was judged here.
    if (why === 'max_calls' || why === 'max_conversations') this.markLost(held.id, why);
    else if (why === undefined) this.#lost.delete(held.id);
    const out: ClosedConversation = { id: held.id, traces: held.traces, latest: held.latest };
    if (why !== undefined) out.evicted = why;
    if (held.lost !== undefined) out.lost = held.lost;
    return out;
  }
}

const NOT_CAPTURED: Captured<JsonValue> = { captured: false };

/** The index of trace `traceId` in `traces`, looked for from the latest; -1 when not there. */
function placeIn(traces: readonly Trajectory[], traceId: string): number {
  for (let index = traces.length - 1; index >= 0; index--)
    if ((traces[index] as Trajectory).traceId === traceId) return index;
  return -1;
}

/**
 * The trajectory as the state keeps it: its calls copied with the values the policy lets stay,
 * the others marked not captured (a rule that needs them is then inconclusive, never misled by a
 * redacted value). The trace's own order answers for the copies by their ids.
 */
function withoutAnswer(turn: Turn): Turn {
  if (turn.answer === undefined) return turn;
  const { answer: _answer, ...rest } = turn;
  return rest;
}

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
    // Not held: up to 4,000 characters of model output per turn that no cap counts. So a
    // conversation judged final once idle has no answers: its `answer` checks are inconclusive
    // (the provisional judgement after each trace reads that trace's own answer).
    turns: trajectory.turns.map(withoutAnswer),
    agents: [...trajectory.agents],
    issues: [...trajectory.issues],
    spanCount: trajectory.spanCount,
    ...(trajectory.root && { root: trajectory.root }),
    ...(trajectory.conversationId !== undefined && { conversationId: trajectory.conversationId }),
  });
}
