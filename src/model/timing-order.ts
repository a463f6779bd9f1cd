/** Happens-before from positions on one clock (an event list's order), for sources with no turns. */
import type { CausalOrder } from './causal-order.js';

/**
 * When a call was issued and when its result became available, on one ordering scale (positions
 * in an event list). `completedAt` absent: the call never reported back and orders nothing.
 */
export interface CallTiming {
  issuedAt: bigint;
  completedAt?: bigint;
}

/** Happens-before from positions on one clock: b was issued once a's result was there. */
export class TimingOrder implements CausalOrder {
  constructor(private readonly timing: ReadonlyMap<string, CallTiming>) {}

  happensBefore(a: string, b: string): boolean {
    const before = this.#of(a);
    const after = this.#of(b);
    // Issued strictly earlier: two calls issued at the same position are never ordered, so the
    // calls after a given call are always a suffix of the calls sorted by issue position.
    return (
      a !== b &&
      before.completedAt !== undefined &&
      before.issuedAt < after.issuedAt &&
      before.completedAt <= after.issuedAt
    );
  }

  compare(a: string, b: string): number {
    const x = this.#of(a);
    const y = this.#of(b);
    if (x.issuedAt !== y.issuedAt) return x.issuedAt < y.issuedAt ? -1 : 1;
    const xc = x.completedAt ?? -1n;
    const yc = y.completedAt ?? -1n;
    return xc === yc ? 0 : xc < yc ? -1 : 1;
  }

  afterAny(ids: readonly string[]): (id: string) => boolean {
    // Sorted by issue position, with the earliest completion among the calls issued so far:
    // b is after some a when a call issued before b had completed by the time b was issued.
    const sorted = ids
      .map((id) => this.#of(id))
      .sort((x, y) => (x.issuedAt < y.issuedAt ? -1 : x.issuedAt > y.issuedAt ? 1 : 0));
    const earliestDone: (bigint | undefined)[] = [];
    let best: bigint | undefined;
    for (const timing of sorted) {
      if (timing.completedAt !== undefined && (best === undefined || timing.completedAt < best))
        best = timing.completedAt;
      earliestDone.push(best);
    }
    return (id) => {
      const issued = this.#of(id).issuedAt;
      let low = 0;
      let high = sorted.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if ((sorted[middle] as CallTiming).issuedAt < issued) low = middle + 1;
        else high = middle;
      }
      const done = low === 0 ? undefined : earliestDone[low - 1];
      return done !== undefined && done <= issued;
    };
  }

  #of(id: string): CallTiming {
    const timing = this.timing.get(id);
    if (!timing) throw new Error(`no timing for call ${id}`);
    return timing;
  }
}
