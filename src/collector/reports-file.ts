/**
 * The adapter's reports file: one JSON report per line, as `toolpath compare` reads it. With a
 * trace folder, the spans of judged traces (failed ones by default) are stored beside it as OTLP
 * JSON, and each report line names its file (`traceFile`, relative to the reports file), so
 * `toolpath promote TRACE_ID --reports FILE` can turn a production failure into a fixture.
 * Bounded: lines are dropped (and counted) when the disk falls behind; trace files stop at a cap.
 */
import {
  closeSync,
  createWriteStream,
  existsSync,
  fdatasync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  type WriteStream,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { diag } from '@opentelemetry/api';
import { encodeOtlpJson } from '../io/otlp-json-encode.js';
import type { ConversationEviction } from '../judging/conversation-state.js';
import type { Report } from '../model/report.js';
import type { SpanRecord } from '../model/span-record.js';
import type { DurableReports, WrittenFinal } from './durable-use.js';
import type { Losses } from './losses.js';

/** What to store beside the reports. */
export interface TraceStorage {
  dir: string;
  keep: 'failed' | 'all';
  maxFiles: number;
}

/** A report line as written: the report, and where its trace's spans are when they were stored. */
export type ReportLine = Report & { traceFile?: string };

const MAX_PENDING_BYTES = 16 * 1024 * 1024;
const TRACE_ID = /^[0-9a-f]{32}$/;

/**
 * See the module comment. With `durable`, lines are written at once (a trace's lines in one
 * write), so durable mode knows which lines are in the file before it marks their trace
 * judged; a line cut short by a crash is cut off at start.
 */
export class ReportsFile implements DurableReports {
  private readonly stream: WriteStream | undefined;
  private readonly fd: number | undefined;
  private written = 0;
  private unsynced = false;
  private droppedLines = 0;
  private storedTraces = 0;
  private skippedTraces = 0;

  constructor(
    readonly path: string,
    private readonly traces?: TraceStorage,
    /** Where report lines dropped are counted. */
    private readonly losses?: Losses,
    durable = false,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    if (traces) mkdirSync(traces.dir, { recursive: true });
    if (durable) {
      this.fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
      this.written = wholeLines(this.fd);
      return;
    }
    this.stream = createWriteStream(path, { flags: 'a' });
    this.stream.on('error', (error) => diag.error(`toolpath: reports file ${path}`, error));
  }

  /** Writes the reports of one judged trace, storing its spans first if they are to be kept. */
  writeTrace(spans: readonly SpanRecord[], reports: readonly Report[]): void {
    if (reports.length === 0) return;
    this.writeReports(reports, this.store(spans, reports));
  }

  /** Writes reports with no trace of their own to store (a conversation's final judgement). */
  writeReports(reports: readonly Report[], traceFile?: string): void {
    const lines: string[] = [];
    for (const report of reports) {
      if (this.stream && this.stream.writableLength > MAX_PENDING_BYTES) {
        this.droppedLines++;
        this.losses?.add('reports', 'reports_file_behind', 1);
        continue;
      }
      const line: ReportLine = traceFile === undefined ? report : { ...report, traceFile };
      lines.push(`${JSON.stringify(line)}\n`);
    }
    if (this.stream) for (const line of lines) this.stream.write(line);
    else if (this.fd !== undefined) {
      const bytes = Buffer.from(lines.join(''), 'utf8');
      let at = 0;
      while (at < bytes.length) at += writeSync(this.fd, bytes, at, bytes.length - at, this.written + at);
      this.written += bytes.length;
      this.unsynced = true;
    }
  }

  /** Bytes of whole lines in the file (durable mode). */
  end(): number {
    return this.written;
  }

  /** Makes the lines written so far durable (durable mode). */
  sync(): Promise<void> {
    const fd = this.fd;
    if (fd === undefined || !this.unsynced) return Promise.resolve();
    this.unsynced = false;
    return new Promise((resolve, reject) =>
      fdatasync(fd, (error) => {
        // Synced again by the log's next attempt.
        if (error) this.unsynced = true;
        return error ? reject(error) : resolve();
      }),
    );
  }

  /**
   * What the lines from byte `offset` on are of (durable mode, at start): their trace ids, and the
   * conversations judged final in them, with the traces each was judged on.
   */
  writtenSince(offset: number): { traces: Set<string>; finals: WrittenFinal[] } {
    const traces = new Set<string>();
    const finals = new Map<string, WrittenFinal>();
    if (this.fd === undefined || offset >= this.written) return { traces, finals: [] };
    const bytes = Buffer.allocUnsafe(this.written - offset);
    readSync(this.fd, bytes, 0, bytes.length, offset);
    for (const line of bytes.toString('utf8').split('\n')) {
      if (line === '') continue;
      let report: Partial<Record<keyof Report, unknown>>;
      try {
        report = JSON.parse(line);
      } catch {
        continue; // Not a report line: nothing to learn from it.
      }
      if (typeof report.traceId === 'string') traces.add(report.traceId);
      const { conversationId, traceIds } = report;
      if (report.final !== true || typeof conversationId !== 'string' || !Array.isArray(traceIds)) continue;
      const ids = traceIds.filter((id): id is string => typeof id === 'string');
      finals.set(`${conversationId}\n${ids.join('\n')}`, {
        conversationId,
        traceIds: ids,
        evicted: evictionOf(report.incomplete),
      });
    }
    return { traces, finals: [...finals.values()] };
  }

  /** Flushes and closes; says what was dropped. */
  async close(): Promise<void> {
    if (this.droppedLines > 0)
      diag.warn(`toolpath: ${this.droppedLines} reports not written to ${this.path}`);
    if (this.skippedTraces > 0)
      diag.warn(`toolpath: ${this.skippedTraces} traces not stored (reports.maxTraceFiles reached)`);
    if (this.fd !== undefined) {
      await this.sync();
      closeSync(this.fd);
      return;
    }
    const stream = this.stream as WriteStream;
    await new Promise((resolve) => stream.end(resolve));
  }

  private store(spans: readonly SpanRecord[], reports: readonly Report[]): string | undefined {
    const storage = this.traces;
    const traceId = spans[0]?.traceId;
    if (!storage || traceId === undefined || !TRACE_ID.test(traceId)) return undefined;
    if (storage.keep === 'failed' && reports.every((report) => report.verdict === 'pass')) return undefined;
    if (this.storedTraces >= storage.maxFiles) {
      this.skippedTraces++;
      return undefined;
    }
    const file = join(storage.dir, `${traceId}.otlp.json`);
    try {
      writeFileSync(file, JSON.stringify(encodeOtlpJson(spans)));
    } catch (error) {
      diag.error(`toolpath: cannot store trace ${traceId}`, error);
      return undefined;
    }
    this.storedTraces++;
    return relative(dirname(this.path), file);
  }
}

/** Why a conversation was judged final early, from its report's `incomplete` (`max_calls: …`). */
function evictionOf(incomplete: unknown): ConversationEviction | undefined {
  if (typeof incomplete !== 'string') return undefined;
  const reason = incomplete.slice(0, incomplete.indexOf(':'));
  return reason === 'max_calls' || reason === 'max_conversations' || reason === 'shutdown'
    ? reason
    : undefined;
}

/** The size of the file's whole lines; a last line with no newline (cut by a crash) is cut off. */
function wholeLines(fd: number): number {
  const size = fstatSync(fd).size;
  const tail = Buffer.allocUnsafe(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - tail.length);
    readSync(fd, tail, 0, end - start, start);
    const newline = tail.subarray(0, end - start).lastIndexOf(10);
    if (newline >= 0) {
      end = start + newline + 1;
      break;
    }
    end = start;
  }
  if (end < size) ftruncateSync(fd, end);
  return end;
}
