/**
 * Durable mode as the adapter's front door sees it: the log opened and read back, requests
 * refused while the log cannot take them (it failed: 503; it is full: 429), and what was
 * replayed, kept and refused, counted for `stats()`.
 */

import type { RestoredConversations } from './adapter-conversations.js';
import type { StorageStats } from './adapter-options.js';
import { DurableTraces, type RawRequest, type Replay, type StorageSettings } from './durable-traces.js';
import type { IngestResult } from './ingest.js';

/** The counts kept here, beside the log's own. */
type Counts = Omit<
  StorageStats,
  | keyof ReturnType<DurableTraces['stats']>
  | 'parkedOutputs'
  | 'waitingOutputs'
  | 'waitingSpans'
  | 'waitingFinals'
  | 'waitedFinals'
  | 'deferredFinals'
>;

/** See the module comment. */
export class AdapterStorage {
  readonly counts: Counts = {
    replayedTraces: 0,
    replayedReported: 0,
    replayedConversations: 0,
    replayedConversationTraces: 0,
    missingConversationTraces: 0,
    conversationsJudgedAgain: 0,
    cutSegments: 0,
    cutBytes: 0,
    skippedRecords: 0,
    skippedBytes: 0,
    unreadableRecords: 0,
    keptForRestart: 0,
    keptConversations: 0,
    refusedFull: 0,
    unwrittenAtStop: 0,
  };

  private constructor(readonly traces: DurableTraces) {}

  /** Opens the log and reads it back (throws on a folder it cannot use). */
  static open(options: StorageSettings): { storage: AdapterStorage; replay: Replay } {
    const { traces, replay } = DurableTraces.open(options);
    const storage = new AdapterStorage(traces);
    storage.counts.cutSegments = replay.damage.segments;
    storage.counts.cutBytes = replay.damage.bytes;
    storage.counts.skippedRecords = replay.damage.frames;
    storage.counts.skippedBytes = replay.damage.skippedBytes;
    storage.counts.unreadableRecords = replay.unreadable;
    storage.counts.replayedTraces = replay.traces.length;
    storage.counts.replayedReported = replay.traces.filter((trace) => trace.reported).length;
    return { storage, replay };
  }

  /** Counts the conversations held again at start. */
  restored(conversations: RestoredConversations): void {
    this.counts.replayedConversations = conversations.conversations;
    this.counts.replayedConversationTraces = conversations.traces;
    this.counts.missingConversationTraces = conversations.missingTraces;
    this.counts.conversationsJudgedAgain = conversations.judgedAgain;
  }

  /** Why a request cannot be taken now (the client retries), or undefined when it can. */
  refusal(raw: RawRequest | undefined, retryAfterSeconds: number): IngestResult | undefined {
    const { traces } = this;
    const failed = traces.log.failed;
    if (failed || raw === undefined) {
      const message = failed
        ? `storage: the span log in ${traces.log.dir} cannot be written (${failed.message})`
        : 'storage: durable mode needs the request body';
      return { kind: 'unavailable', reason: 'shutting_down', retryAfterSeconds: 5, message };
    }
    if (!traces.full()) return undefined;
    this.counts.refusedFull++;
    const mib = (traces.log.bytes / 2 ** 20).toFixed(0);
    return {
      kind: 'unavailable',
      reason: 'full',
      retryAfterSeconds,
      message: `storage full (about ${mib} MiB in ${traces.log.dir}, storage.maxBytes ${traces.maxBytes})`,
    };
  }

  /** `output`: the outputs that waited in the log (judged-output.ts); `finals`: conversations' (adapter-conversations.ts). */
  stats(
    output: { parked: number; outputs: number; spans: number },
    finals: { waiting: number; waited: number; deferred: number },
  ): StorageStats {
    return {
      ...this.traces.stats(),
      ...this.counts,
      parkedOutputs: output.parked,
      waitingOutputs: output.outputs,
      waitingSpans: output.spans,
      waitingFinals: finals.waiting,
      waitedFinals: finals.waited,
      deferredFinals: finals.deferred,
    };
  }
}
