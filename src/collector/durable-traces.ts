/**
 * Durable mode's bookkeeping over the span log: which requests still hold spans of traces owed
 * something, which traces are judged (report written, findings queued) and which are done
 * (findings delivered, or lost and counted), and which traces a conversation not yet judged final
 * is made of. Records (durable-records.ts):
 *
 * - `request`: the body of one acknowledged request as it arrived (OTLP JSON or protobuf,
 *   inflated) and the ids of the traces it brought spans to; written before the answer.
 * - `judged`: the trace's report lines are written and its output queued for the next hop.
 * - `done`: nothing more is owed for the trace's own output (and whether sampling kept it).
 * - `member`: the trace is held in its conversation's state; its request records stay until the
 *   conversation's final judgement is delivered (`final`, then `final done`).
 * - `lost`: a conversation closed over a cap may go on, its next traces judged without the first.
 *
 * At start the log is replayed: traces not done are judged again (without a second report line
 * when theirs is written), conversations not final are held again from their traces' spans, and
 * the ids of done traces are remembered, so retried requests follow their decision. What is
 * still needed is counted per segment; segments are deleted oldest first once nothing in them is,
 * and when the oldest holds a little, it is copied forward (compaction). Requests are refused
 * once the log holds `maxBytes`; before that, the oldest conversation traces are let go.
 */
import type { ConversationEviction, LostHistory } from '../judging/conversation-state.js';
import type { StorageStats } from './adapter-options.js';
import {
  DONE,
  FINAL,
  FINAL_DONE,
  FORGOTTEN,
  finalMark,
  JUDGED,
  lostMark,
  type Membership,
  memberMark,
  OUTPUT,
  outputMark,
  type ParkedOutput,
  RELEASED,
  readOutput,
  requestHead,
  traceMark,
} from './durable-records.js';
import { readLog, restore } from './durable-restore.js';
import {
  type DurableReports,
  type FinalMark,
  type LiveTrace,
  LiveTraces,
  type Mark,
  NeededRecords,
  type Replay,
  type StorageSettings,
} from './durable-use.js';
import type { SpanLog } from './span-log.js';

export { derivedSpanId, takeOnce } from './durable-records.js';
export type {
  ConversationReplay,
  DurableReports,
  FinalMark,
  Replay,
  ReplayedTrace,
  StorageOptions,
  StorageSettings,
} from './durable-use.js';

/** A request's body as the receiver read it. */
export interface RawRequest {
  format: 'json' | 'protobuf';
  bytes: Uint8Array;
}

type Final = FinalMark;

/** See the module comment. */
export class DurableTraces {
  readonly log: SpanLog;
  readonly maxBytes: number;
  private readonly needed: NeededRecords;
  private readonly live: LiveTraces;
  private readonly finals = new Set<Final>();
  /** Conversations closed over a cap, whose next traces must know it (capped, oldest let go). */
  private readonly lostMarks = new Map<string, Mark>();
  private readonly reports: DurableReports | undefined;
  private readonly maxLost: number;
  private forgotten = 0;

  private constructor(log: SpanLog, options: StorageSettings) {
    this.log = log;
    this.needed = new NeededRecords(log);
    this.live = new LiveTraces(this.needed);
    this.maxBytes = options.maxBytes;
    this.reports = options.reports;
    this.maxLost = options.maxConversations;
  }

  /** Opens (or creates) the log in `options.directory` and replays it. Throws on a folder it cannot use. */
  static open(options: StorageSettings): { traces: DurableTraces; replay: Replay } {
    const { log, damage, facts, unreadable } = readLog(options);
    const store = new DurableTraces(log, options);
    const replay = restore(
      {
        log,
        needed: store.needed,
        live: store.live,
        finals: store.finals,
        lostMarks: store.lostMarks,
        reports: store.reports,
      },
      facts,
    );
    store.needed.dropDeadSegments();
    return { traces: store, replay: { ...replay, damage, unreadable } };
  }

  /** At or over `maxBytes`, once what can be compacted was, and conversation traces let go if need be. */
  full(): boolean {
    if (this.log.bytes < this.maxBytes) return false;
    // The oldest segments with nothing needed in them go as soon as the copies are on disk.
    const over = () => this.log.bytes - this.needed.deadPrefixBytes() >= this.maxBytes;
    for (let segments = this.log.list().length; segments > 0; segments--) {
      this.live.compact();
      if (!over()) return false;
      // Still over: the oldest segment's done conversation traces are let go, and it is compacted next.
      if (this.forgetOldest() === 0) break;
    }
    return over();
  }

  /** Logs an acknowledged request that brought spans to `traceIds`; resolves once it is on disk. */
  logRequest(raw: RawRequest, traceIds: ReadonlySet<string>): Promise<void> {
    if (traceIds.size === 0) return Promise.resolve();
    const at = this.log.append([...requestHead(raw.format, traceIds), raw.bytes]);
    this.live.note(at, traceIds);
    return this.log.commit();
  }

  /** The trace's report lines are written and its output queued. */
  judged(traceId: string): void {
    const trace = this.live.get(traceId);
    if (!trace || trace.done || trace.judged) return;
    trace.judged = this.needed.place(traceMark(JUDGED, this.reportsEnd(), traceId));
    this.log.flushSoon();
  }

  /**
   * Keeps a judged trace's output in the log until the forward queue has room for it; returns
   * its record, or undefined for a trace the log holds nothing of.
   */
  park(output: ParkedOutput): Mark | undefined {
    const trace = this.live.get(output.traceId);
    if (!trace || trace.done) return undefined;
    this.needed.unplace(trace.output);
    trace.output = this.needed.place(outputMark(this.reportsEnd(), output));
    this.log.flushSoon();
    return trace.output;
  }

  /** The output parked as `mark`, once its record is on disk (undefined before). */
  readParked(mark: Mark): ParkedOutput | undefined {
    if (!this.log.written(mark.at.seq)) return undefined;
    const payload = this.log.read(mark.at);
    // Undefined means "not on disk yet" to the caller, which waits: any other record is an error.
    if (payload[0] !== OUTPUT) throw new Error(`the record at ${mark.at.seq} is not a parked output`);
    return readOutput(payload);
  }

  /** The trace's parked output is in the forward queue: its record is not needed any more. */
  unparked(traceId: string): void {
    const trace = this.live.get(traceId);
    if (!trace) return;
    this.needed.unplace(trace.output);
    trace.output = undefined;
  }

  /** Nothing more is owed for the trace's own output; it stays while its conversation needs it. */
  done(traceId: string, keep: boolean): void {
    const at = this.log.append(traceMark(DONE, this.reportsEnd(), traceId, keep));
    const trace = this.live.get(traceId);
    if (trace?.member && !(trace.member.flags & RELEASED)) {
      trace.done = true;
      this.needed.unplace(trace.judged);
      trace.judged = undefined;
      trace.doneMark = this.needed.placeAt(at);
    } else this.live.finish(traceId);
    this.needed.dropDeadSegments();
    this.log.flushSoon();
  }

  /** The trace is held in its conversation's state: its spans stay until the conversation is final. */
  member(traceId: string, membership: Membership): void {
    const trace = this.live.get(traceId);
    if (!trace || trace.member) return;
    const mark = this.needed.place(memberMark(this.reportsEnd(), traceId, membership));
    trace.member = { conversationId: membership.conversationId, flags: 0, mark, membership };
    // The conversation carries what it lost in its members now.
    if (membership.lost !== undefined) this.releaseLost(membership.conversationId);
  }

  /** Whether the trace is known held in a conversation (so its member record is written). */
  isMember(traceId: string): boolean {
    return this.live.get(traceId)?.member !== undefined;
  }

  /**
   * A conversation's final report lines are written and its output queued: returns the mark to
   * give {@link conversationDone} once the output is delivered. Closed over a cap, the
   * conversation is remembered as such, for its next traces.
   */
  conversationJudged(
    conversationId: string,
    traceIds: readonly string[],
    evicted: ConversationEviction | undefined,
  ): Final {
    const at = this.log.append(finalMark(FINAL, this.reportsEnd(), conversationId, traceIds, evicted));
    const final = this.needed.placeAt<Final>(at, { at, conversationId, traceIds: [...traceIds], evicted });
    this.finals.add(final);
    if (evicted === 'max_calls' || evicted === 'max_conversations') this.lost(conversationId, evicted);
    else if (evicted === undefined) this.releaseLost(conversationId);
    this.log.flushSoon();
    return final;
  }

  /** A conversation's final output is delivered (or lost and counted): its traces are let go. */
  conversationDone(final: Final): void;
  conversationDone(conversationId: string, traceIds: readonly string[]): void;
  conversationDone(final: Final | string, given: readonly string[] = []): void {
    const conversationId = typeof final === 'string' ? final : final.conversationId;
    const traceIds = typeof final === 'string' ? given : final.traceIds;
    const evicted = typeof final === 'string' ? undefined : final.evicted;
    this.log.append(finalMark(FINAL_DONE, this.reportsEnd(), conversationId, traceIds, evicted));
    if (typeof final !== 'string' && this.finals.delete(final)) this.needed.unplace(final);
    for (const traceId of traceIds) {
      const trace = this.live.get(traceId);
      if (!trace?.member) continue;
      if (trace.done) this.live.finish(traceId);
      else this.flagMember(traceId, trace, RELEASED);
    }
    this.needed.dropDeadSegments();
    this.log.flushSoon();
  }

  /** Remembers, for the next start, that conversation `conversationId` lost earlier traces. */
  lost(conversationId: string, lost: LostHistory): void {
    this.releaseLost(conversationId);
    if (this.lostMarks.size >= this.maxLost) {
      const [first] = this.lostMarks.keys();
      this.releaseLost(first as string);
    }
    this.lostMarks.set(conversationId, this.needed.place(lostMark(this.reportsEnd(), conversationId, lost)));
  }

  private releaseLost(conversationId: string): void {
    const mark = this.lostMarks.get(conversationId);
    if (!mark) return;
    this.lostMarks.delete(conversationId);
    this.needed.unplace(mark);
  }

  /**
   * Whether every request that brought the trace spans is on disk. Only then may it be judged:
   * a report written for spans a crash then lost would be written again when the client resends
   * them.
   */
  onDisk(traceId: string): boolean {
    const trace = this.live.get(traceId);
    return trace === undefined || this.log.written(trace.lastSeq);
  }

  /** Resolves once everything appended so far is on disk, or an attempt to write it failed. */
  settled(): Promise<void> {
    return this.log.settled();
  }

  /** Whether the trace's report lines are known written (replayed traces). */
  reported(traceId: string): boolean {
    return this.live.get(traceId)?.judged !== undefined;
  }

  /** What the log holds, for stats. */
  stats(): Pick<
    StorageStats,
    | 'bytes'
    | 'segments'
    | 'liveTraces'
    | 'conversationTraces'
    | 'forgottenTraces'
    | 'compactions'
    | 'segmentFailures'
    | 'writeFailures'
  > {
    let members = 0;
    for (const [, trace] of this.live.entries()) if (trace.member) members++;
    return {
      bytes: this.log.bytes,
      segments: this.log.list().length,
      liveTraces: this.live.size,
      conversationTraces: members,
      forgottenTraces: this.forgotten,
      compactions: this.needed.compactions,
      segmentFailures: this.log.segmentFailures,
      writeFailures: this.log.writeFailures,
    };
  }

  close(): Promise<void> {
    return this.log.close();
  }

  private reportsEnd(): number {
    return this.reports?.end() ?? 0;
  }

  /** Writes the trace's member record again with `flag` added. */
  private flagMember(traceId: string, trace: LiveTrace, flag: number): void {
    const member = trace.member;
    if (!member || member.flags & flag) return;
    member.flags |= flag;
    this.needed.unplace(member.mark);
    this.needed.place(memberMark(this.reportsEnd(), traceId, member.membership, member.flags), member.mark);
  }

  /**
   * At the cap: lets go of the request records of the done conversation traces in the oldest
   * segment, their member records saying so (after a restart their conversations are judged
   * inconclusive for it, not whole). Returns how many.
   */
  private forgetOldest(): number {
    const ids = new Set<string>();
    for (const record of this.needed.oldestRequests()) for (const traceId of record.live) ids.add(traceId);
    let count = 0;
    for (const traceId of ids) {
      const trace = this.live.get(traceId);
      if (!trace?.done || !trace.member || trace.member.flags & FORGOTTEN) continue;
      this.flagMember(traceId, trace, FORGOTTEN);
      this.live.releaseRecords(traceId, trace);
      this.needed.unplace(trace.doneMark);
      trace.doneMark = undefined;
      count++;
    }
    this.forgotten += count;
    return count;
  }
}
