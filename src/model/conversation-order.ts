/**
 * Happens-before over a conversation: the traces' own orders inside each trace, and across
 * traces the time chain of docs/causal-order.md ("Joining traces into a conversation"): every
 * call of a trace that ended before another started happened before every call of that one;
 * traces that overlap are concurrent. Answered from each trace's time span instead of copying
 * the traces' graphs into one: the same relation as one CausalGraph with a time chain (the
 * property test checks it against that graph), with nothing to build but one entry per call.
 */
import type { CallKey, CausalOrder } from './causal-order.js';
import { stampedNode, stampNode } from './graph-calls.js';

/** One trace of a conversation, as its order needs it. */
export interface TracePlace {
  /** The trace's own happens-before. */
  order: CausalOrder;
  /** When the trace started (ns); undefined when it records no time (then it orders nothing). */
  start: bigint | undefined;
  /**
   * Its end rounded down to the clock's resolution, and past its start (as the time chain of
   * one trace does): a trace starting at or after it comes after. Undefined while it is open.
   */
  effectiveEnd: bigint | undefined;
}

/** Where a call of the joined trajectory came from. */
export interface JoinedCall {
  /** Its trace, by position in the conversation's list of traces. */
  trace: number;
  /** The call object of the trace's own trajectory (which its order knows). */
  inner: CallKey;
  /** Its place in the joined causal listing. */
  rank: number;
}

/** Happens-before between the calls of several traces of one conversation. */
export class ConversationOrder implements CausalOrder {
  readonly #traces: readonly TracePlace[];
  /** Where each joined call came from, by its place in the joined listing (its `rank`). */
  readonly #joined: readonly JoinedCall[];
  readonly #calls: readonly CallKey[];
  /** Made on first use: questions by id are rare (a trajectory asks by call object). */
  #byIdMap: Map<string, CallKey> | undefined;

  /**
   * `calls`: the joined call objects in listing order; `joined[k]`, where `calls[k]` came from (its
   * `rank` is k). The calls are stamped with their place, so a question about two of them looks
   * nothing up.
   */
  constructor(traces: readonly TracePlace[], calls: readonly CallKey[], joined: readonly JoinedCall[]) {
    this.#traces = traces;
    this.#joined = joined;
    this.#calls = calls;
    for (let rank = 0; rank < calls.length; rank++) stampNode(calls[rank] as CallKey, this, rank);
  }

  get #byId(): Map<string, CallKey> {
    if (!this.#byIdMap) {
      this.#byIdMap = new Map();
      for (const call of this.#calls) this.#byIdMap.set(call.id, call);
    }
    return this.#byIdMap;
  }

  /** Where a joined call came from; undefined for a call object not joined here. */
  #of(call: CallKey): JoinedCall | undefined {
    const rank = stampedNode(this, call);
    return rank === -1 ? undefined : this.#joined[rank];
  }

  /** Whether trace `a` ended before trace `b` started (never for one trace with itself). */
  traceBefore(a: number, b: number): boolean {
    const end = this.#traces[a]?.effectiveEnd;
    const start = this.#traces[b]?.start;
    return a !== b && end !== undefined && start !== undefined && end <= start;
  }

  happensBeforeCall(a: CallKey, b: CallKey): boolean {
    const from = this.#of(a);
    const to = this.#of(b);
    if (!from || !to || from === to) return false;
    if (from.trace !== to.trace) return this.traceBefore(from.trace, to.trace);
    const order = (this.#traces[from.trace] as TracePlace).order;
    return order.happensBeforeCall
      ? order.happensBeforeCall(from.inner, to.inner)
      : order.happensBefore(from.inner.id, to.inner.id);
  }

  happensBefore(a: string, b: string): boolean {
    const from = this.#byId.get(a);
    const to = this.#byId.get(b);
    return from !== undefined && to !== undefined && this.happensBeforeCall(from, to);
  }

  afterAnyCall(calls: readonly CallKey[]): (call: CallKey) => boolean {
    const members: CallKey[][] = this.#traces.map(() => []);
    for (const call of calls) {
      const joined = this.#of(call);
      if (joined) (members[joined.trace] as CallKey[]).push(joined.inner);
    }
    // The earliest end among the traces holding a member: a trace starting at or after it is after.
    let earliestEnd: bigint | undefined;
    const tests: (((call: CallKey) => boolean) | undefined)[] = members.map((inner, trace) => {
      if (inner.length === 0) return undefined;
      const place = this.#traces[trace] as TracePlace;
      const end = place.effectiveEnd;
      if (end !== undefined && (earliestEnd === undefined || end < earliestEnd)) earliestEnd = end;
      const order = place.order;
      if (order.afterAnyCall) return order.afterAnyCall(inner);
      const test = order.afterAny(inner.map((call) => call.id));
      return (call: CallKey) => test(call.id);
    });
    return (call) => {
      const joined = this.#of(call);
      if (!joined) return false;
      const start = this.#traces[joined.trace]?.start;
      // A trace's own end is past its start, so the earliest end is never its own here.
      if (earliestEnd !== undefined && start !== undefined && earliestEnd <= start) return true;
      return tests[joined.trace]?.(joined.inner) ?? false;
    };
  }

  afterAny(ids: readonly string[]): (id: string) => boolean {
    const calls: CallKey[] = [];
    for (const id of ids) {
      const call = this.#byId.get(id);
      if (call) calls.push(call);
    }
    const test = this.afterAnyCall(calls);
    return (id) => {
      const call = this.#byId.get(id);
      return call !== undefined && test(call);
    };
  }

  listingRankOfCall(call: CallKey): number {
    return this.#of(call)?.rank ?? -1;
  }

  compare(a: string, b: string): number {
    const x = this.#byId.get(a);
    const y = this.#byId.get(b);
    return (x ? this.listingRankOfCall(x) : -1) - (y ? this.listingRankOfCall(y) : -1);
  }
}
