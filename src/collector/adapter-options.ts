/** The collector adapter's options and statistics. */
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { AdapterLimits, ConversationOptions, DecisionOptions } from '../config/options.js';
import type { ConversationJudgement } from '../judging/conversation-judge.js';
import type { TraceBuffer } from '../judging/trace-buffer.js';
import type { Judgement, JudgeOptions } from '../judging/trace-judge.js';
import type { SpanRecord } from '../model/span-record.js';
import type { StorageOptions } from './durable-traces.js';
import type { ForwardQueue, ForwardQueueOptions } from './forward-queue.js';
import type { Losses } from './losses.js';

/** Which received spans go on to the next hop beside the evaluation spans. */
export type ForwardSpans = 'none' | 'sampled' | 'all';

/**
 * Options of a `TraceAdapter`. `decision`, `limits`, `conversations`, `forwardSpans`,
 * `sweepInterval` and `storage.maxBytes` are parsed through config/schema.ts (the names and
 * defaults of `toolpath serve`'s YAML; docs/reference.md): a bad one throws a ConfigError.
 */
export interface AdapterOptions extends Omit<JudgeOptions, 'conversations'> {
  /**
   * When a trace is judged: `waitAfterRoot` after its root span arrived, at most `wait` after its
   * first span. Its id is remembered `lateWindow` after that, so its late spans follow its decision.
   */
  decision?: DecisionOptions;
  /** Caps: traces, spans per trace, spans in all, the heap the buffered traces hold, judged ids remembered. */
  limits?: AdapterLimits;
  /** Conversation state for `scope: conversation` scenarios, or `false` for none. */
  conversations?: ConversationOptions | false;
  /** Received spans forwarded: none, those of traces kept by risk sampling, or all (default none). */
  forwardSpans?: ForwardSpans;
  /** The next hop; without one, findings go only to reports, logs and metrics. */
  exporter?: SpanExporter;
  queue?: ForwardQueueOptions;
  /** Where what could not be delivered is counted (default: a ledger of its own, `losses`). */
  losses?: Losses;
  /**
   * Durable mode: every span taken is in a log in `storage.directory` before the request is
   * answered; after a crash, the traces it holds that were not done are judged (once) and their
   * output sent. See docs/durable.md.
   */
  storage?: StorageOptions;
  /** How often due traces are looked for (default 100 ms). */
  sweepInterval?: number | string;
  /** @deprecated The old name of `sweepInterval` (milliseconds). */
  sweepIntervalMs?: number;
  /** Told of each judged trace with its spans (to store the traces worth promoting to fixtures). */
  onJudged?: (spans: readonly SpanRecord[], judgement: Judgement) => void;
  /** Told of each conversation's final judgement (idle, evicted, or at shutdown). */
  onConversationJudged?: (judgement: ConversationJudgement) => void;
}

/** What the adapter holds and has done. */
export interface AdapterStats {
  bufferedTraces: number;
  bufferedSpans: number;
  /** The heap the buffered spans hold, as estimated for `limits.maxBufferedBytes`. */
  bufferedBytes: number;
  judgedTraces: number;
  lateSpans: number;
  /** Judged trace ids forgotten before `decision.lateWindow` to stay under `limits.maxJudgedTraceIds`. */
  decisionsForgottenEarly: number;
  /** Provisional judgements of long conversations coalesced into a later one (docs/conversations.md). */
  conversationsCoalesced: number;
  dropped: ReturnType<TraceBuffer<unknown>['droppedCounts']>;
  forward?: ReturnType<ForwardQueue['counts']>;
  storage?: StorageStats;
}

/** Durable mode's counts (stats). */
export interface StorageStats {
  bytes: number;
  segments: number;
  /** Traces the log holds that are not done. */
  liveTraces: number;
  compactions: number;
  /** Traces read back from the log at start, and of them those already reported. */
  replayedTraces: number;
  replayedReported: number;
  /** Conversations held again at start, their traces, and those of their traces not in storage any more. */
  replayedConversations: number;
  replayedConversationTraces: number;
  missingConversationTraces: number;
  /** Conversations whose final was written before the restart, judged again at start for their output. */
  conversationsJudgedAgain: number;
  /** Traces the log holds for conversations not final, and those let go at storage.maxBytes. */
  conversationTraces: number;
  forgottenTraces: number;
  /** Times a new segment could not be started (records went on in the open one). */
  segmentFailures: number;
  /** Writes of the log that failed, each tried again a second later (requests refused meanwhile). */
  writeFailures: number;
  /** Traces not judged at shutdown because the log could not write their spans (their clients were answered 503). */
  unwrittenAtStop: number;
  /** Damaged log tails cut at start: segments, bytes. */
  cutSegments: number;
  cutBytes: number;
  /** Damaged records skipped at start, whole records after them read on: records, bytes. */
  skippedRecords: number;
  skippedBytes: number;
  /** Records whose CRC matched that could not be read (another version's): skipped. */
  unreadableRecords: number;
  /** Spans for the next hop unsent at shutdown, kept in the log to be sent after the restart. */
  keptForRestart: number;
  /** Conversations not final at shutdown, kept in the log to be held again at the next start. */
  keptConversations: number;
  /** Requests refused because the log held storage.maxBytes. */
  refusedFull: number;
  /** Judged traces whose output for the next hop waited in the log for room in the forward queue, in all. */
  parkedOutputs: number;
  /** Outputs waiting in the log for room in the forward queue now, and their spans. */
  waitingOutputs: number;
  waitingSpans: number;
  /** Conversation finals waiting in memory for room in the forward queue now (their records are in the log). */
  waitingFinals: number;
  /** Finals that waited so, in all; and those past the cap (the queue's size), sent after the next start instead. */
  waitedFinals: number;
  deferredFinals: number;
}
