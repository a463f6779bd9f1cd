/** The processor's options, caps and statistics, with their defaults. */
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TraceBuffer } from './trace-buffer.js';
import type { JudgeOptions } from './trace-judge.js';

/** Caps and waits of the processor. */
export interface ProcessorLimits {
  /** Agent traces buffered at once (default 1,000); when full the oldest goes on unjudged (counted `evicted`). */
  maxTraces?: number;
  /** Spans buffered per trace (default 10,000); the rest pass straight on and the trace is judged as incomplete. */
  maxSpansPerTrace?: number;
  /**
   * Spans buffered in all, waiting traces included (default 100,000: 100 to 200 MB of SDK spans,
   * depending on their attributes); the oldest traces make room.
   */
  maxSpans?: number;
  /** Traces without agent spans followed for completion at once (default 100,000; tiny each). */
  maxOpenTraces?: number;
  /** A trace still open this long after its first span (default 300,000 ms) is judged as incomplete. */
  traceTimeoutMs?: number;
  /**
   * A trace of at most this many spans (default 256) is judged in `onEnding` of its local root,
   * so its events go onto that span; larger ones are judged after span end, off the app's path.
   */
  inlineMaxSpans?: number;
  /** Decisions remembered for late spans of judged traces (default 10,000). */
  decisionCacheSize?: number;
}

/** Options of {@link trajectoryProcessor}. */
export interface TrajectoryProcessorOptions extends JudgeOptions {
  /** The processor toolpath wraps and forwards kept spans to (e.g. a BatchSpanProcessor). */
  export?: SpanProcessor;
  limits?: ProcessorLimits;
}

/** What the processor holds and has let go, for tests, health checks and debugging. */
export interface ProcessorStats {
  bufferedTraces: number;
  bufferedSpans: number;
  /** Completed traces waiting to be judged. */
  pendingTraces: number;
  /** Traces without agent spans being followed for completion. */
  openTraces: number;
  /** Traces judged (each at most once). */
  judgedTraces: number;
  /** Traces whose spans a `forceFlush` passed on before they were judged or let go (then passed on whole). */
  flushedBeforeJudging: number;
  /** Traces no longer followed because `maxOpenTraces` were (their spans passed through). */
  untrackedTraces: number;
  dropped: ReturnType<TraceBuffer<unknown>['droppedCounts']>;
}

/** The caps when none are given. */
export const DEFAULTS = {
  maxTraces: 1_000,
  maxSpansPerTrace: 10_000,
  maxSpans: 100_000,
  maxOpenTraces: 100_000,
  traceTimeoutMs: 300_000,
  inlineMaxSpans: 256,
  decisionCacheSize: 10_000,
} as const;
