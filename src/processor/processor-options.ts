/** The processor's options, caps and statistics, with their defaults. */
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { defaultMaxBufferedBytes } from '../judging/held-bytes.js';
import type { TraceBuffer } from '../judging/trace-buffer.js';
import type { JudgeOptions } from '../judging/trace-judge.js';
import type { Report } from '../model/report.js';

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
  /**
   * The heap the buffered spans hold, as estimated by held-bytes.ts (default 256 MiB, or a quarter
   * of the V8 heap limit when that is less; at least 1, Infinity for none). Agent spans carry whole
   * chat histories, so a count of spans does not bound memory: past it, the oldest other traces go
   * on unjudged (counted `evicted`); when that cannot make room (a span larger than the cap, or
   * traces waiting to be judged holding it), the span goes straight on (counted `buffer_full`, its
   * trace judged as incomplete). Late spans of traces waiting to be judged are counted, not capped.
   */
  maxBufferedBytes?: number;
  /** Traces without agent spans followed for completion at once (default 100,000; tiny each). */
  maxOpenTraces?: number;
  /** A trace still open this long after its first span (default 300,000 ms) is judged as incomplete. */
  traceTimeoutMs?: number;
  /**
   * A trace of at most this many spans (default 256) is judged in `onEnding` of its local root,
   * so its events go onto that span; larger ones are judged after span end, off the app's path.
   * Not with `worker: true`: a worker's judgement always comes back after the root has ended.
   */
  inlineMaxSpans?: number;
  /**
   * How long a judged trace's id is remembered (default 600,000 ms), so spans of it that start or
   * end after its judgement follow its decision instead of starting a trace judged again.
   */
  lateWindowMs?: number;
  /**
   * Judged trace ids remembered at once (default 1,000,000, about 80 bytes each; a quiet app holds
   * few): past it the oldest are forgotten before `lateWindowMs` (counted in `stats()`).
   */
  maxJudgedTraceIds?: number;
  /** @deprecated The old name of `maxJudgedTraceIds`, which it sets when that is not given. */
  decisionCacheSize?: number;
  /**
   * With `worker: true`: a batch of traces the worker keeps longer than this (default 60,000 ms)
   * stops it; those traces go on unjudged, counted, and a new worker takes the next ones.
   */
  workerTimeoutMs?: number;
  /**
   * A conversation (`scope: conversation` scenarios) with no new trace for this long (default
   * 300,000 ms) is judged final, on its latest trace's evaluation span, and let go. Until then it
   * is judged provisionally after each trace (`final: false`).
   */
  conversationIdleMs?: number;
  /** Conversations held at once (default 10,000); past it the one idle longest is judged final early (counted). */
  maxConversations?: number;
  /**
   * Calls held per conversation (default 100,000); a trace that would pass it has the conversation
   * judged final first (counted), and what follows is judged without the traces let go (inconclusive).
   */
  maxConversationCalls?: number;
}

/** What both ways of judging take. */
interface CommonOptions extends Omit<JudgeOptions, 'scenarios' | 'onReport'> {
  /** The processor toolpath wraps and forwards kept spans to (e.g. a BatchSpanProcessor). */
  export?: SpanProcessor;
  limits?: ProcessorLimits;
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
  /** The heap the held spans take, as estimated for `limits.maxBufferedBytes`. */
  bufferedBytes: number;
  /** Judged trace ids forgotten before `lateWindowMs` to stay under `maxJudgedTraceIds`. */
  decisionsForgottenEarly: number;
  dropped: ReturnType<TraceBuffer<unknown>['droppedCounts']>;
}

/** The caps when none are given. */
export const DEFAULTS = {
  maxTraces: 1_000,
  maxSpansPerTrace: 10_000,
  maxSpans: 100_000,
  maxBufferedBytes: defaultMaxBufferedBytes(256 * 2 ** 20, 1 / 4),
  maxOpenTraces: 100_000,
  traceTimeoutMs: 300_000,
  inlineMaxSpans: 256,
  lateWindowMs: 600_000,
  maxJudgedTraceIds: 1_000_000,
  workerTimeoutMs: 60_000,
  conversationIdleMs: 300_000,
  maxConversations: 10_000,
  maxConversationCalls: 100_000,
} as const;

/** The limits given, with the defaults for those not given. */
export function withDefaults(
  limits: ProcessorLimits = {},
): Required<Omit<ProcessorLimits, 'decisionCacheSize'>> {
  const given = Object.entries(limits).filter(
    ([key, value]) => value !== undefined && key !== 'decisionCacheSize',
  );
  const maxJudgedTraceIds =
    limits.maxJudgedTraceIds ?? limits.decisionCacheSize ?? DEFAULTS.maxJudgedTraceIds;
  return { ...DEFAULTS, ...Object.fromEntries(given), maxJudgedTraceIds };
}
