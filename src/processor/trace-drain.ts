import type { JudgementSinks } from '../judging/trace-judge.js';

/** See the module comment. None of its methods throws. */
export interface TraceDrain {
  /** Where judgements' metrics, log records and `onReport` calls go. */
  readonly sinks: JudgementSinks;
  /** Traces judged (each at most once). */
  readonly judged: number;
  /** Times the judging worker died and was started again (0 on the app's thread). */
  readonly restarts: number;
  /** Conversations whose state was lost with a judging worker that exited (0 on the app's thread). */
  readonly conversationsLost: number;
  /** Provisional judgements of long conversations coalesced into a later one. */
  readonly conversationsCoalesced: number;
  /** A trace was added to `waiting`: judge it soon. */
  schedule(): void;
  /** Judges (or posts to the worker) every trace waiting now. */
  drainAll(): void;
  /** Resolves when every trace handed to a worker so far is judged and applied. */
  settled(): Promise<void>;
  /** The processor's sweep: conversations idle at `now` (`performance.now()`) are judged final. */
  sweep(now: number): void;
  /** At shutdown, after `drainAll`: every conversation judged final (`shutdown`), then the worker stopped. */
  close(): Promise<void>;
}
