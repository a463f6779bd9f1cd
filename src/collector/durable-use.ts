/**
 * Durable mode's types, and what each segment of the log holds that is still needed (request
 * records of live traces, marks): a segment goes once it holds none, and compaction copies what
 * the oldest still holds forward. What the records mean is durable-traces.ts's.
 */
import type { ConversationEviction, LostHistory } from '../judging/conversation-state.js';
import type { SpanRecord } from '../model/span-record.js';
import { FORGOTTEN, type Membership, RELEASED, withTraceIds } from './durable-records.js';
import type { LogDamage, LogPosition, SpanLog } from './span-log.js';

/** The reports file as durable mode needs it (reports-file.ts). */
export interface DurableReports {
  /** Bytes written so far (every line written is whole). */
  end(): number;
  /** Makes every line written so far durable. */
  sync(): Promise<void>;
  /** What the lines from `offset` to the end are of: traces, and conversations' final judgements. */
  writtenSince(offset: number): { traces: Set<string>; finals: WrittenFinal[] };
}

/** A conversation's final judgement as its report lines say it. */
export interface WrittenFinal {
  conversationId: string;
  traceIds: string[];
  evicted: ConversationEviction | undefined;
}

/** Durable mode's settings. */
export interface StorageOptions {
  directory: string;
  /** Requests are refused (429 / UNAVAILABLE) while the log holds this much (default: config/schema.ts). */
  maxBytes?: number | undefined;
  /** Size of one segment file (default maxBytes / 16, between 1 and 64 MiB). */
  segmentBytes?: number;
  reports?: DurableReports;
}

/** Storage options parsed: the defaults filled in, and the conversations remembered as closed over a cap. */
export interface StorageSettings extends StorageOptions {
  maxBytes: number;
  /** `conversations.maxConversations`. */
  maxConversations: number;
}

/** A trace the log holds that is not done: to be judged again. */
export interface ReplayedTrace {
  traceId: string;
  /** Its spans, each once, in the order they were received. */
  spans: SpanRecord[];
  /** Its report lines were written already: judge it only for its output to the next hop. */
  reported: boolean;
}

/** A conversation's final judgement written and its output not delivered (durable-traces.ts keeps it). */
export interface FinalMark {
  at: LogPosition;
  readonly conversationId: string;
  /** The traces it was judged on. */
  readonly traceIds: string[];
  readonly evicted?: ConversationEviction | undefined;
}

/** A conversation not judged final (or judged, its output not delivered) before the restart. */
export interface ConversationReplay {
  conversationId: string;
  /** Its traces in the order they joined it; `spans` undefined for one let go at the cap. */
  traces: { traceId: string; spans: SpanRecord[] | undefined }[];
  /** What it had lost before the restart (a cap it was closed over). */
  lost: LostHistory | undefined;
  /** When its latest trace joined it (ms since the epoch). */
  lastAtMs: number;
  /** Its final judgement was written: judge it again at once, for its output only. */
  final?: FinalMark;
}

/** What opening the log found. */
export interface Replay {
  traces: ReplayedTrace[];
  /** Traces done, with their sampling decision (late spans follow it). */
  done: Map<string, boolean>;
  /** Traces judged into a conversation before, among `traces`: not to be added to one again. */
  judgedBefore: Set<string>;
  conversations: ConversationReplay[];
  /** Conversations closed over a cap with no trace since: the next ones are judged as such. */
  lost: { conversationId: string; lost: LostHistory }[];
  damage: LogDamage;
  /** Records whose CRC matched but that could not be read (not of this version): skipped. */
  unreadable: number;
}

/** One request record, and the traces it holds spans of that are still needed. */
export interface RequestRecord {
  at: LogPosition;
  live: Set<string>;
}

/** A small record needed while what it speaks of is live; compaction moves it. */
export interface Mark {
  at: LogPosition;
}

interface SegmentUse {
  requests: Set<RequestRecord>;
  /** Bytes of those request records. */
  bytes: number;
  marks: Set<Mark>;
}

/**
 * What each segment of the log holds that is still needed. Segments are deleted oldest first once
 * nothing in them is (a `done` record must outlive the request records it closes); compaction
 * copies what the oldest still holds forward.
 */
export class NeededRecords {
  private readonly bySegment = new Map<number, SegmentUse>();
  compactions = 0;

  constructor(readonly log: SpanLog) {}

  addRequest(record: RequestRecord): void {
    const use = this.of(record.at.segment);
    use.requests.add(record);
    use.bytes += record.at.bytes;
  }

  deleteRequest(record: RequestRecord): void {
    const use = this.bySegment.get(record.at.segment);
    if (use?.requests.delete(record)) use.bytes -= record.at.bytes;
  }

  /** Appends a mark record (or moves `mark` to it) and counts it needed. */
  place<M extends Mark>(parts: readonly Uint8Array[], mark?: M): M {
    return this.placeAt(this.log.append(parts), mark);
  }

  /** Counts the record at `at` needed, as `mark`. */
  placeAt<M extends Mark>(at: LogPosition, mark?: M): M {
    const placed = (mark ?? { at }) as M;
    placed.at = at;
    this.of(at.segment).marks.add(placed);
    return placed;
  }

  unplace(mark: Mark | undefined): void {
    if (mark) this.bySegment.get(mark.at.segment)?.marks.delete(mark);
  }

  /** The request records of the oldest segment anything is needed from, but the active one. */
  oldestRequests(): ReadonlySet<RequestRecord> {
    const oldest = this.oldestNeeded();
    return (oldest && this.bySegment.get(oldest.id)?.requests) ?? new Set();
  }

  /** The oldest segment but the active one that is still needed (those before it go once written). */
  private oldestNeeded(): { id: number; bytes: number } | undefined {
    for (const segment of this.log.list()) {
      if (segment.id === this.log.activeSegment) return undefined;
      if (this.needed(segment.id)) return segment;
    }
    return undefined;
  }

  /** Bytes of the oldest segments nothing is needed from (deleted, or about to be). */
  deadPrefixBytes(): number {
    let bytes = 0;
    for (const segment of this.log.list()) {
      if (segment.id === this.log.activeSegment || this.needed(segment.id)) break;
      bytes += segment.bytes;
    }
    return bytes;
  }

  /** Deletes the oldest segments while nothing in them is needed. */
  dropDeadSegments(): void {
    for (const { id } of this.log.list()) {
      if (id === this.log.activeSegment || this.needed(id)) return;
      this.bySegment.delete(id);
      this.log.remove(id);
    }
  }

  /**
   * Copies what the oldest segment still needed holds (its request records, with only the
   * live trace ids, and its marks) to the active one, then deletes it once the copies are on
   * disk. A crash between the two leaves both, and replay takes each span once. `copied` is told
   * of each request record's copy.
   */
  compact(copied: (record: RequestRecord, copy: RequestRecord) => void): void {
    const oldest = this.oldestNeeded();
    if (oldest === undefined) return;
    const use = this.bySegment.get(oldest.id);
    // Worth it only when most of the segment is not needed any more.
    if (use && use.bytes > oldest.bytes / 2) return;
    for (const record of [...(use?.requests ?? [])]) {
      const at = this.log.append(withTraceIds(this.log.read(record.at), record.live));
      const copy: RequestRecord = { at, live: new Set(record.live) };
      copied(record, copy);
      this.deleteRequest(record);
      this.addRequest(copy);
    }
    for (const mark of [...(use?.marks ?? [])]) {
      this.unplace(mark);
      this.place([this.log.read(mark.at)], mark);
    }
    this.compactions++;
    // The old segment goes once its copies are durable.
    this.log.commit().then(
      () => this.dropDeadSegments(),
      () => undefined,
    );
  }

  private needed(segment: number): boolean {
    const use = this.bySegment.get(segment);
    return use !== undefined && (use.requests.size > 0 || use.marks.size > 0);
  }

  private of(segment: number): SegmentUse {
    let use = this.bySegment.get(segment);
    if (!use) {
      use = { requests: new Set(), bytes: 0, marks: new Set() };
      this.bySegment.set(segment, use);
    }
    return use;
  }
}

/** A trace the log holds something needed of. */
export interface LiveTrace {
  records: RequestRecord[];
  /** The seq of its last request record written by this process (0: all read back). */
  lastSeq: number;
  /** Its own output is done; it stays for its conversation. */
  done: boolean;
  judged?: Mark;
  doneMark?: Mark;
  /** Its output for the next hop, waiting in the log for room in the forward queue. */
  output?: Mark;
  member?: { conversationId: string; flags: number; mark: Mark; membership: Membership };
}

/** The traces the log holds something needed of, and their request records. */
export class LiveTraces {
  private readonly byId = new Map<string, LiveTrace>();

  constructor(private readonly needed: NeededRecords) {}

  get size(): number {
    return this.byId.size;
  }

  get(traceId: string): LiveTrace | undefined {
    return this.byId.get(traceId);
  }

  /** A trace with no request records (a conversation's, let go at the cap). */
  add(traceId: string, trace: LiveTrace): void {
    this.byId.set(traceId, trace);
  }

  entries(): IterableIterator<[string, LiveTrace]> {
    return this.byId.entries();
  }

  /** A request record that brought spans to `traceIds`. */
  note(at: LogPosition, traceIds: Iterable<string>): void {
    const record: RequestRecord = { at, live: new Set(traceIds) };
    if (record.live.size === 0) return;
    for (const traceId of record.live) {
      let trace = this.byId.get(traceId);
      if (!trace) {
        trace = { records: [], lastSeq: 0, done: false };
        this.byId.set(traceId, trace);
      }
      trace.records.push(record);
      trace.lastSeq = Math.max(trace.lastSeq, at.seq);
    }
    this.needed.addRequest(record);
  }

  /** Lets go of the trace's request records. */
  releaseRecords(traceId: string, trace: LiveTrace): void {
    for (const record of trace.records) {
      record.live.delete(traceId);
      if (record.live.size === 0) this.needed.deleteRequest(record);
    }
    trace.records = [];
  }

  /** Nothing of the trace is needed any more. */
  finish(traceId: string): void {
    const trace = this.byId.get(traceId);
    if (!trace) return;
    this.byId.delete(traceId);
    this.releaseRecords(traceId, trace);
    this.needed.unplace(trace.judged);
    this.needed.unplace(trace.doneMark);
    this.needed.unplace(trace.member?.mark);
    this.needed.unplace(trace.output);
  }

  /** Compacts the log, the traces' records following their copies. */
  compact(): void {
    this.needed.compact((record, copy) => {
      for (const traceId of copy.live) {
        const trace = this.byId.get(traceId) as LiveTrace;
        trace.records = trace.records.map((r) => (r === record ? copy : r));
      }
    });
  }

  /** The traces held in a conversation not judged final and delivered. */
  *members(): Iterable<{ traceId: string; membership: Membership; forgotten: boolean }> {
    for (const [traceId, trace] of this.byId) {
      const member = trace.member;
      if (!member || member.flags & RELEASED) continue;
      yield { traceId, membership: member.membership, forgotten: (member.flags & FORGOTTEN) !== 0 };
    }
  }
}
