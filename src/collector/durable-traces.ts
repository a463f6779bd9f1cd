/**
 * Durable mode's bookkeeping over the span log: which requests still hold spans of traces not
 * yet done, which traces are judged (report written, findings queued) and which are done
 * (findings delivered, or lost and counted). Three records:
 *
 * - `request`: the body of one acknowledged request as it arrived (OTLP JSON or protobuf,
 *   inflated) and the ids of the traces it brought spans to; written before the answer.
 * - `judged`: the trace's report lines are written and its output queued for the next hop.
 * - `done`: nothing more is owed for the trace (and whether sampling kept it).
 *
 * At start the log is replayed: traces with no `done` are judged again (those `judged` already,
 * or whose report line is in the reports file, without a second line), and the ids of done
 * traces are remembered, so retried requests follow their decision. Segments are deleted
 * oldest first once nothing in them is needed; when the oldest holds a few long-waiting traces,
 * their records are copied forward so it can go (compaction). Requests are refused once the
 * log holds `maxBytes`.
 */
import { createHash } from 'node:crypto';
import type { SpanRecord } from '../model/span-record.js';
import { decodeOtlpJsonText } from './otlp-json.js';
import { decodeExportTraceProtobuf } from './otlp-proto.js';
import { type LogDamage, type LogPosition, SpanLog } from './span-log.js';

/** A request's body as the receiver read it. */
export interface RawRequest {
  format: 'json' | 'protobuf';
  bytes: Uint8Array;
}

/** The reports file as durable mode needs it (reports-file.ts). */
export interface DurableReports {
  /** Bytes written so far (every line written is whole). */
  end(): number;
  /** Makes every line written so far durable. */
  sync(): Promise<void>;
  /** The trace ids of the lines from `offset` to the end. */
  traceIdsSince(offset: number): Set<string>;
}

/** Durable mode's settings. */
export interface StorageOptions {
  directory: string;
  /** Requests are refused (429 / UNAVAILABLE) while the log holds this much (default 1 GiB). */
  maxBytes?: number;
  /** Size of one segment file (default maxBytes / 16, between 1 and 64 MiB). */
  segmentBytes?: number;
  reports?: DurableReports;
}

/** A trace the log holds that is not done: to be judged again. */
export interface ReplayedTrace {
  traceId: string;
  /** Its spans, each once, in the order they were received. */
  spans: SpanRecord[];
  /** Its report lines were written already: judge it only for its output to the next hop. */
  reported: boolean;
}

/** What opening the log found. */
export interface Replay {
  traces: ReplayedTrace[];
  /** Traces done, with their sampling decision (late spans follow it). */
  done: Map<string, boolean>;
  damage: LogDamage;
}

const REQUEST = 1;
const JUDGED = 2;
const DONE = 3;
const FORMATS = ['json', 'protobuf'] as const;

/** One request record, and the traces it holds spans of that are not done. */
interface RequestRecord {
  at: LogPosition;
  live: Set<string>;
}

interface LiveTrace {
  records: RequestRecord[];
  /** The seq of its last request record written by this process (0: all read back). */
  lastSeq: number;
  /** The segment holding its `judged` record. */
  judgedIn?: number;
}

interface SegmentUse {
  /** Request records with live traces, and their bytes. */
  records: number;
  bytes: number;
  /** `judged` records of live traces. */
  judged: number;
}

/** See the module comment. */
export class DurableTraces {
  readonly log: SpanLog;
  readonly maxBytes: number;
  private readonly live = new Map<string, LiveTrace>();
  private readonly use = new Map<number, SegmentUse>();
  private readonly reports: DurableReports | undefined;
  private compactions = 0;

  private constructor(log: SpanLog, options: StorageOptions) {
    this.log = log;
    this.maxBytes = options.maxBytes ?? 2 ** 30;
    this.reports = options.reports;
  }

  /** Opens (or creates) the log in `options.directory` and replays it. Throws on a folder it cannot use. */
  static open(options: StorageOptions): { traces: DurableTraces; replay: Replay } {
    const maxBytes = options.maxBytes ?? 2 ** 30;
    const segmentBytes =
      options.segmentBytes ?? Math.max(2 ** 20, Math.min(64 * 2 ** 20, Math.floor(maxBytes / 16)));
    const done = new Map<string, boolean>();
    let reportsEnd = 0;
    // What each record says, without its body: the log may be large, the ids are not.
    const records: { type: number; at: LogPosition; ids: string[]; keep: boolean }[] = [];
    const { log, damage } = SpanLog.open(
      options.directory,
      (payload, at) => {
        const type = payload[0] as number;
        if (type === REQUEST) records.push({ type, at, ids: readIds(payload, 2).ids, keep: false });
        else if (type === JUDGED || type === DONE) {
          reportsEnd = Math.max(reportsEnd, Number(payload.readBigUInt64LE(2)));
          records.push({ type, at, ids: readIds(payload, 10).ids, keep: payload[1] === 1 });
        }
      },
      {
        segmentBytes,
        ...(options.reports && { beforeWrite: () => options.reports?.sync() ?? Promise.resolve() }),
      },
    );
    const store = new DurableTraces(log, options);
    for (const { type, at, ids, keep } of records) {
      if (type === REQUEST) store.note(at, ids);
      else if (type === JUDGED) for (const traceId of ids) store.markJudged(traceId, at.segment);
      else
        for (const traceId of ids) {
          store.finish(traceId);
          done.set(traceId, keep);
        }
    }
    records.length = 0;
    const traces = store.replayLive(reportsEnd);
    store.dropDeadSegments();
    return { traces: store, replay: { traces, done, damage } };
  }

  /** At or over `maxBytes`, once what can be compacted was. */
  full(): boolean {
    if (this.log.bytes < this.maxBytes) return false;
    this.compact();
    // The oldest segments with nothing needed in them go as soon as the copies are on disk.
    return this.log.bytes - this.deadPrefixBytes() >= this.maxBytes;
  }

  /** Bytes of the oldest segments nothing is needed from (deleted, or about to be). */
  private deadPrefixBytes(): number {
    let bytes = 0;
    for (const segment of this.log.list()) {
      const use = this.use.get(segment.id);
      if (segment.id === this.log.activeSegment || (use && (use.records > 0 || use.judged > 0))) break;
      bytes += segment.bytes;
    }
    return bytes;
  }

  /** Logs an acknowledged request that brought spans to `traceIds`; resolves once it is on disk. */
  logRequest(raw: RawRequest, traceIds: ReadonlySet<string>): Promise<void> {
    if (traceIds.size === 0) return Promise.resolve();
    const ids = encodeIds(traceIds);
    const head = Buffer.from([REQUEST, FORMATS.indexOf(raw.format)]);
    const at = this.log.append([head, ids, raw.bytes]);
    this.note(at, traceIds);
    return this.log.commit();
  }

  /** The trace's report lines are written and its output queued. */
  judged(traceId: string): void {
    const trace = this.live.get(traceId);
    if (!trace || trace.judgedIn !== undefined) return;
    const at = this.log.append(this.mark(JUDGED, traceId, false));
    this.markJudged(traceId, at.segment);
    this.log.flushSoon();
  }

  /** Nothing more is owed for the trace. */
  done(traceId: string, keep: boolean): void {
    this.log.append(this.mark(DONE, traceId, keep));
    this.finish(traceId);
    this.dropDeadSegments();
    this.log.flushSoon();
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

  /** Resolves once everything appended so far is on disk (or writing it failed). */
  settled(): Promise<void> {
    return this.log.commit().catch(() => undefined);
  }

  /** Whether the trace's report lines are known written (replayed traces). */
  reported(traceId: string): boolean {
    const trace = this.live.get(traceId);
    return trace !== undefined && trace.judgedIn !== undefined;
  }

  /** What the log holds, for stats. */
  stats(): { bytes: number; segments: number; liveTraces: number; compactions: number } {
    return {
      bytes: this.log.bytes,
      segments: this.log.list().length,
      liveTraces: this.live.size,
      compactions: this.compactions,
    };
  }

  close(): Promise<void> {
    return this.log.close();
  }

  private mark(type: number, traceId: string, keep: boolean): Buffer[] {
    const head = Buffer.alloc(10);
    head[0] = type;
    head[1] = keep ? 1 : 0;
    head.writeBigUInt64LE(BigInt(this.reports?.end() ?? 0), 2);
    return [head, encodeIds([traceId])];
  }

  private segmentUse(id: number): SegmentUse {
    let use = this.use.get(id);
    if (!use) {
      use = { records: 0, bytes: 0, judged: 0 };
      this.use.set(id, use);
    }
    return use;
  }

  private note(at: LogPosition, traceIds: Iterable<string>): void {
    const record: RequestRecord = { at, live: new Set(traceIds) };
    if (record.live.size === 0) return;
    for (const traceId of record.live) {
      let trace = this.live.get(traceId);
      if (!trace) {
        trace = { records: [], lastSeq: 0 };
        this.live.set(traceId, trace);
      }
      trace.records.push(record);
      trace.lastSeq = Math.max(trace.lastSeq, at.seq);
    }
    const use = this.segmentUse(at.segment);
    use.records++;
    use.bytes += at.bytes;
  }

  private markJudged(traceId: string, segment: number): void {
    const trace = this.live.get(traceId);
    if (!trace) return;
    if (trace.judgedIn !== undefined) this.segmentUse(trace.judgedIn).judged--;
    trace.judgedIn = segment;
    this.segmentUse(segment).judged++;
  }

  private finish(traceId: string): void {
    const trace = this.live.get(traceId);
    if (!trace) return;
    this.live.delete(traceId);
    for (const record of trace.records) {
      record.live.delete(traceId);
      if (record.live.size > 0) continue;
      const use = this.segmentUse(record.at.segment);
      use.records--;
      use.bytes -= record.at.bytes;
    }
    if (trace.judgedIn !== undefined) this.segmentUse(trace.judgedIn).judged--;
  }

  /**
   * Deletes the oldest segments while nothing in them is needed. Oldest first only: a `done`
   * record must outlive the request records it closes.
   */
  private dropDeadSegments(): void {
    for (const { id } of this.log.list()) {
      if (id === this.log.activeSegment) return;
      const use = this.use.get(id);
      if (use && (use.records > 0 || use.judged > 0)) return;
      this.use.delete(id);
      this.log.remove(id);
    }
  }

  /**
   * Copies what the oldest segment still holds for live traces (their request records, with
   * only the live trace ids, and their `judged` records) to the active one, then deletes it once
   * the copies are on disk. A crash between the two leaves both, and replay takes each span once.
   */
  private compact(): void {
    const oldest = this.log.list()[0];
    if (oldest === undefined || oldest.id === this.log.activeSegment) return;
    // Worth it only when most of the segment is not needed any more.
    if ((this.use.get(oldest.id)?.bytes ?? 0) > oldest.bytes / 2) return;
    const copied = new Set<RequestRecord>();
    for (const [traceId, trace] of this.live) {
      for (const record of trace.records) {
        if (record.at.segment !== oldest.id || copied.has(record)) continue;
        copied.add(record);
      }
      if (trace.judgedIn === oldest.id) {
        const at = this.log.append(this.mark(JUDGED, traceId, false));
        this.markJudged(traceId, at.segment);
      }
    }
    for (const record of copied) {
      const payload = this.log.read(record.at);
      const { end } = readIds(payload, 2);
      const at = this.log.append([payload.subarray(0, 2), encodeIds(record.live), payload.subarray(end)]);
      const copy: RequestRecord = { at, live: new Set(record.live) };
      for (const traceId of copy.live) {
        const trace = this.live.get(traceId) as LiveTrace;
        trace.records = trace.records.map((r) => (r === record ? copy : r));
      }
      const from = this.segmentUse(oldest.id);
      from.records--;
      from.bytes -= record.at.bytes;
      const to = this.segmentUse(at.segment);
      to.records++;
      to.bytes += at.bytes;
    }
    this.compactions++;
    // The old segment goes once its copies are durable.
    this.log.commit().then(
      () => this.dropDeadSegments(),
      () => undefined,
    );
  }

  /** The spans of every live trace, read back from their request records, each span once. */
  private replayLive(reportsEnd: number): ReplayedTrace[] {
    const records = new Set<RequestRecord>();
    for (const trace of this.live.values()) for (const record of trace.records) records.add(record);
    const ordered = [...records].sort((a, b) => a.at.segment - b.at.segment || a.at.offset - b.at.offset);
    const spans = new Map<string, SpanRecord[]>();
    const seen = new Map<string, Set<string>>();
    for (const record of ordered) {
      const payload = this.log.read(record.at);
      const { end } = readIds(payload, 2);
      const body = payload.subarray(end);
      const decoded =
        FORMATS[payload[1] as 0 | 1] === 'protobuf'
          ? decodeExportTraceProtobuf(body)
          : decodeOtlpJsonText(body.toString('utf8'));
      for (const span of decoded.spans) {
        if (!record.live.has(span.traceId)) continue;
        let ids = seen.get(span.traceId);
        if (!ids) {
          ids = new Set();
          seen.set(span.traceId, ids);
          spans.set(span.traceId, []);
        }
        if (ids.has(span.spanId)) continue;
        ids.add(span.spanId);
        spans.get(span.traceId)?.push(span);
      }
    }
    // A report line written just before a crash may lack its `judged` record.
    const unmarked = [...this.live].some(([, trace]) => trace.judgedIn === undefined);
    const written = unmarked && this.reports ? this.reports.traceIdsSince(reportsEnd) : new Set<string>();
    const replayed: ReplayedTrace[] = [];
    for (const [traceId, trace] of this.live) {
      if (written.has(traceId) && trace.judgedIn === undefined) {
        // Said in the log before any later record moves the reports offset past its line.
        const at = this.log.append(this.mark(JUDGED, traceId, false));
        this.markJudged(traceId, at.segment);
      }
      replayed.push({
        traceId,
        spans: spans.get(traceId) ?? [],
        reported: trace.judgedIn !== undefined,
      });
    }
    return replayed;
  }
}

/** `[count u32][length u8, id]...`: trace ids are short (32 hex characters). */
function encodeIds(ids: Iterable<string>): Buffer {
  const list = [...ids].map((id) => Buffer.from(id, 'utf8'));
  const out = Buffer.allocUnsafe(4 + list.reduce((sum, id) => sum + 1 + Math.min(255, id.length), 0));
  out.writeUInt32LE(list.length, 0);
  let at = 4;
  for (const id of list) {
    const length = Math.min(255, id.length);
    out[at++] = length;
    id.copy(out, at, 0, length);
    at += length;
  }
  return out;
}

function readIds(payload: Buffer, offset: number): { ids: string[]; end: number } {
  const count = payload.readUInt32LE(offset);
  const ids: string[] = [];
  let at = offset + 4;
  for (let i = 0; i < count; i++) {
    const length = payload[at++] as number;
    ids.push(payload.toString('utf8', at, at + length));
    at += length;
  }
  return { ids, end: at };
}

/** Drops the spans whose id came before, in place. */
export function takeOnce(spans: SpanRecord[]): void {
  const ids = new Set<string>();
  let kept = 0;
  for (const span of spans) {
    if (ids.has(span.spanId)) continue;
    ids.add(span.spanId);
    spans[kept++] = span;
  }
  spans.length = kept;
}

/** A span id from the trace id and the scenarios judged: the same on every replay. */
export function derivedSpanId(traceId: string, scenarios: readonly string[]): string {
  const id = createHash('sha256')
    .update(`${traceId}\n${scenarios.join('\n')}`)
    .digest('hex')
    .slice(0, 16);
  return id === '0000000000000000' ? '0000000000000001' : id;
}
