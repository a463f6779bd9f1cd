/** The processor's options, caps and statistics, with their defaults. */
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { ConversationOptions, ProcessorLimits } from '../config/options.js';
import type { TraceBuffer } from '../judging/trace-buffer.js';
import type { JudgeOptions } from '../judging/trace-judge.js';
import type { Report } from '../model/report.js';

export type { ProcessorLimits } from '../config/options.js';

/** What both ways of judging take. */
interface CommonOptions extends Omit<JudgeOptions, 'scenarios' | 'onReport' | 'conversations'> {
  /** The processor toolpath wraps and forwards kept spans to (e.g. a BatchSpanProcessor). */
  export?: SpanProcessor;
  /**
   * Caps and waits, parsed through config/schema.ts (names and defaults: docs/reference.md);
   * durations in milliseconds or as text (`5m`). A bad one throws a ConfigError naming it.
   */
  limits?: ProcessorLimits;
  /**
   * Conversation state for `scope: conversation` scenarios (`idleTimeout`, `maxConversations`,
   * `maxCalls`), or `false` to keep none: such scenarios are then judged on each trace alone,
   * inconclusive where the trace carries a conversation id.
   */
  conversations?: ConversationOptions | false;
}

/** Judging on the app's thread (the default): findings go onto the local root span when it is the evaluated one. */
export interface AppThreadOptions extends CommonOptions, Pick<JudgeOptions, 'scenarios' | 'onReport'> {
  worker?: false;
}

/**
 * Judging on a worker thread: the app's thread only buffers spans and packs them for the worker;
 * normalizing and evaluating, most of toolpath's cost, run beside the app. Findings then always
 * arrive on a `toolpath.evaluate` span (the root has ended by the time they are known), and
 * `onReport` gets the report alone. Scenarios are given as files or documents, which a thread
 * can be sent; a loaded Scenario cannot. Conversations are judged as on the app's thread, their
 * state kept on the worker: a worker that exits loses it, and each conversation it held is then
 * judged final as inconclusive (`conversation.lost`, `stats().conversationsLost`).
 */
export interface WorkerOptions extends CommonOptions {
  worker: true;
  /** Scenario files (JSON or YAML) or documents; each trace is evaluated against those whose `appliesTo` holds. */
  scenarios: readonly (string | Record<string, unknown>)[];
  /** Called with each (redacted) report. Errors it throws go to `diag`. */
  onReport?: (report: Report) => void;
}

/** Options of {@link trajectoryProcessor}. */
export type TrajectoryProcessorOptions = AppThreadOptions | WorkerOptions;

/** What the processor holds and has let go, for tests, health checks and debugging. */
export interface ProcessorStats {
  bufferedTraces: number;
  bufferedSpans: number;
  /** Completed traces waiting to be judged, or being judged on the worker. */
  pendingTraces: number;
  /** Traces without agent spans being followed for completion. */
  openTraces: number;
  /** Traces judged (each at most once). */
  judgedTraces: number;
  /** Traces whose spans a `forceFlush` passed on before they were judged or let go (then passed on whole). */
  flushedBeforeJudging: number;
  /** Traces no longer followed because `maxOpenTraces` were (their spans passed through). */
  untrackedTraces: number;
  /** Times the judging worker died and was started again (its traces went on unjudged). */
  workerRestarts: number;
  /**
   * Conversations whose state was lost with a judging worker that exited (`worker: true`): each
   * judged final as inconclusive (`conversation.lost`), its later traces as truncated.
   */
  conversationsLost: number;
  /** Provisional judgements of long conversations coalesced into a later one (docs/conversations.md). */
  conversationsCoalesced: number;
  /** The heap the held spans take, as estimated for `limits.maxBufferedBytes`. */
  bufferedBytes: number;
  /** Judged trace ids forgotten before `lateWindowMs` to stay under `maxJudgedTraceIds`. */
  decisionsForgottenEarly: number;
  dropped: ReturnType<TraceBuffer<unknown>['droppedCounts']>;
}
