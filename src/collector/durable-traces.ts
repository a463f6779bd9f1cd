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
  readRecord,
  requestHead,
  traceMark,
} from './durable-records.js';
import {
  addFact,
  finalKey,
  type LogFacts,
  newFacts,
  readSpans,
  replayConversations,
} from './durable-replay.js';
import {
  type DurableReports,
  type FinalMark,
  type LiveTrace,
  LiveTraces,
  type Mark,
  NeededRecords,
  type Replay,
  type ReplayedTrace,
  type RequestRecord,
  type StorageSettings,
} from './durable-use.js';
import { SpanLog } from './span-log.js';

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
    const { maxBytes } = options;
    const segmentBytes =
      options.segmentBytes ?? Math.max(2 ** 20, Math.min(64 * 2 ** 20, Math.floor(maxBytes / 16)));
    // What each record says, without its body: the log may be large, the ids are not.
    const facts = newFacts();
    let unreadable = 0;
    // Where the first damage was, as an offset of the reports file: a record lost there (a
    // `judged` mark) is known again from the lines after the last record before it.
    let damagedAfter = Number.POSITIVE_INFINITY;
    const { log, damage } = SpanLog.open(
      options.directory,
      (payload, at) => {
        try {
          const record = readRecord(payload);
          // After damage, a `done` is not taken as the end of its trace: the record lost may be
          // the trace's `member`, and its conversation needs its spans. Judged again for its
          // output only (its report line is read back), it is done again.
          if (record?.type === DONE && damagedAfter !== Number.POSITIVE_INFINITY) return;
          if (record) addFact(facts, record, at);
          else unreadable++;
        } catch {
          unreadable++;
        }
      },
      {
        segmentBytes,
        onDamage: () => {
          damagedAfter = Math.min(damagedAfter, facts.reportsEnd);
        },
        ...(options.reports && { beforeWrite: () => options.reports?.sync() ?? Promise.resolve() }),
      },
    );
    const store = new DurableTraces(log, options);
    facts.reportsEnd = Math.min(facts.reportsEnd, damagedAfter);
    const replay = store.rebuild(facts);
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

  /** Takes back what the log's records say is still needed; says what to judge and hold again. */
  private rebuild(facts: LogFacts): Omit<Replay, 'damage' | 'unreadable'> {
    for (const { at, traceIds } of facts.requests) this.live.note(at, traceIds);
    const done = new Map<string, boolean>();
    for (const [traceId, fact] of facts.traces) {
      const member = fact.member;
      const released =
        member !== undefined && ((member.flags & RELEASED) !== 0 || facts.released.has(traceId));
      let trace = this.live.get(traceId);
      // A member with no spans left (let go at the cap) is done: there is nothing to judge.
      const forgotten = member !== undefined && ((member.flags & FORGOTTEN) !== 0 || !trace);
      const isDone = fact.done !== undefined || forgotten;
      if (isDone) done.set(traceId, fact.done?.keep ?? true);
      if (isDone && (!member || released)) {
        this.live.finish(traceId);
        continue;
      }
      if (!trace && member) {
        trace = { records: [], lastSeq: 0, done: true };
        this.live.add(traceId, trace);
      }
      if (!trace) continue;
      trace.done = isDone;
      if (!isDone && fact.judged) trace.judged = this.needed.placeAt(fact.judged);
      if (isDone && !forgotten && fact.done) trace.doneMark = this.needed.placeAt(fact.done.at);
      if (member) {
        const flags = member.flags | (forgotten ? FORGOTTEN : 0) | (released ? RELEASED : 0);
        const { membership } = member;
        trace.member = {
          conversationId: membership.conversationId,
          flags,
          mark: this.needed.placeAt(member.at),
          membership,
        };
      }
      if (forgotten) this.live.releaseRecords(traceId, trace);
    }
    for (const { at, conversationId, traceIds, evicted } of facts.finals.values())
      this.finals.add(this.needed.placeAt<Final>(at, { at, conversationId, traceIds, evicted }));
    for (const [conversationId, { at }] of facts.lost)
      this.lostMarks.set(conversationId, this.needed.placeAt(at));
    this.markWrittenReports(facts.reportsEnd);
    const records = new Set<RequestRecord>();
    for (const [, trace] of this.live.entries()) for (const record of trace.records) records.add(record);
    const spans = readSpans([...records], (at) => this.log.read(at));
    const traces: ReplayedTrace[] = [];
    const judgedBefore = new Set<string>();
    for (const [traceId, trace] of this.live.entries()) {
      if (trace.done) continue;
      traces.push({ traceId, spans: spans.get(traceId) ?? [], reported: trace.judged !== undefined });
      if (trace.member) judgedBefore.add(traceId);
    }
    const lost = [...facts.lost].map(([conversationId, { lost }]) => ({ conversationId, lost }));
    const conversations = replayConversations(this.finals, this.live.members(), spans);
    return { traces, done, judgedBefore, conversations, lost };
  }

  /**
   * A report line written just before a crash may lack the record that says so: the lines after
   * the last record's offset are read, and their traces marked judged, their conversations' finals
   * written. Said in the log before any later record moves the offset past those lines.
   */
  private markWrittenReports(reportsEnd: number): void {
    if (!this.reports || this.live.size === 0) return;
    const written = this.reports.writtenSince(reportsEnd);
    for (const traceId of written.traces) {
      const trace = this.live.get(traceId);
      if (!trace || trace.done || trace.judged) continue;
      trace.judged = this.needed.place(traceMark(JUDGED, reportsEnd, traceId));
    }
    const known = new Set([...this.finals].map((final) => finalKey(final.conversationId, final.traceIds)));
    for (const { conversationId, traceIds, evicted } of written.finals) {
      const held = traceIds.filter((id) => {
        const member = this.live.get(id)?.member;
        return member?.conversationId === conversationId && !(member.flags & RELEASED);
      });
      if (held.length === 0 || known.has(finalKey(conversationId, traceIds))) continue;
      const at = this.log.append(finalMark(FINAL, reportsEnd, conversationId, traceIds, evicted));
      this.finals.add(this.needed.placeAt<Final>(at, { at, conversationId, traceIds, evicted }));
    }
  }
}
