/**
 * What was decided for judged traces, so that their late spans follow the decision instead of
 * starting a new trace that would be judged a second time. Shared by the processor and the
 * adapter.
 */

/** Settings of a {@link DecisionCache}. */
export interface DecisionCacheLimits {
  /** Ids remembered at once; past it the oldest is forgotten early (counted). */
  capacity: number;
  /** How long after its judgement an id is remembered, in ms (Infinity: until the cap makes room). */
  windowMs?: number;
}

const INITIAL_SLOTS = 64;

/**
 * Decisions by trace id, each remembered for `windowMs` after it was made and at most `capacity`
 * at once. A ring of ids in the order they were decided, which is also the order they expire in:
 * the oldest is forgotten first, in constant time (a Map's "delete the first key" slows down as
 * it churns). The ring grows as ids arrive, up to `capacity`: a quiet service holds few.
 */
export class DecisionCache {
  private readonly decisions = new Map<string, boolean>();
  private ids: (string | undefined)[] = new Array(INITIAL_SLOTS);
  /** When each id in the ring was decided (the owner's clock, ms). */
  private decidedAt = new Float64Array(INITIAL_SLOTS);
  /** Ring position of the oldest id, and how many are held. */
  private oldest = 0;
  private held = 0;
  private readonly capacity: number;
  private readonly windowMs: number;
  /** Ids forgotten before their window ended, to make room under the cap. */
  forgottenEarly = 0;

  constructor(limits: DecisionCacheLimits | number) {
    const { capacity, windowMs = Number.POSITIVE_INFINITY } =
      typeof limits === 'number' ? { capacity: limits } : limits;
    this.capacity = Math.max(1, capacity);
    this.windowMs = windowMs;
  }

  /** Records whether the trace was kept, decided at `now` (ms). */
  set(traceId: string, kept: boolean, now = 0): void {
    this.expire(now);
    if (this.decisions.has(traceId)) {
      this.decisions.set(traceId, kept);
      return;
    }
    if (this.held === this.capacity) {
      this.forgetOldest();
      if (this.windowMs !== Number.POSITIVE_INFINITY) this.forgottenEarly++;
    } else if (this.held === this.ids.length) this.grow();
    const slot = (this.oldest + this.held) % this.ids.length;
    this.ids[slot] = traceId;
    this.decidedAt[slot] = now;
    this.held++;
    this.decisions.set(traceId, kept);
  }

  /** True: kept; false: dropped; undefined: not judged within the window (or forgotten to make room). */
  get(traceId: string): boolean | undefined {
    return this.decisions.get(traceId);
  }

  /** Forgets the decisions made more than `windowMs` before `now` (also done on each {@link set}). */
  expire(now: number): void {
    const before = now - this.windowMs;
    while (this.held > 0 && (this.decidedAt[this.oldest] as number) <= before) this.forgetOldest();
  }

  get size(): number {
    return this.decisions.size;
  }

  private forgetOldest(): void {
    const id = this.ids[this.oldest] as string;
    this.ids[this.oldest] = undefined;
    this.decisions.delete(id);
    this.oldest = (this.oldest + 1) % this.ids.length;
    this.held--;
  }

  /** Twice the slots (at most `capacity`), the ring unrolled oldest first. */
  private grow(): void {
    const slots = Math.min(this.capacity, this.ids.length * 2);
    const ids = new Array<string | undefined>(slots);
    const decidedAt = new Float64Array(slots);
    for (let index = 0; index < this.held; index++) {
      const from = (this.oldest + index) % this.ids.length;
      ids[index] = this.ids[from];
      decidedAt[index] = this.decidedAt[from] as number;
    }
    this.ids = ids;
    this.decidedAt = decidedAt;
    this.oldest = 0;
  }
}
