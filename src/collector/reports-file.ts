/**
 * The adapter's reports file: one JSON report per line, as `toolpath compare` reads it. With a
 * trace folder, the spans of judged traces (failed ones by default) are stored beside it as OTLP
 * JSON, and each report line names its file (`traceFile`, relative to the reports file), so
 * `toolpath promote TRACE_ID --reports FILE` can turn a production failure into a fixture.
 * Bounded: lines are dropped (and counted) when the disk falls behind; trace files stop at a cap.
 */
import { createWriteStream, mkdirSync, type WriteStream, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { diag } from '@opentelemetry/api';
import { encodeOtlpJson } from '../cli/promote-fixture.js';
import type { Report } from '../model/report.js';
import type { SpanRecord } from '../model/span-record.js';
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

/** See the module comment. */
export class ReportsFile {
  private readonly stream: WriteStream;
  private droppedLines = 0;
  private storedTraces = 0;
  private skippedTraces = 0;

  constructor(
    readonly path: string,
    private readonly traces?: TraceStorage,
    /** Where report lines dropped are counted. */
    private readonly losses?: Losses,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    if (traces) mkdirSync(traces.dir, { recursive: true });
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
    for (const report of reports) {
      if (this.stream.writableLength > MAX_PENDING_BYTES) {
        this.droppedLines++;
        this.losses?.add('reports', 'reports_file_behind', 1);
        continue;
      }
      const line: ReportLine = traceFile === undefined ? report : { ...report, traceFile };
      this.stream.write(`${JSON.stringify(line)}\n`);
    }
  }

  /** Flushes and closes; says what was dropped. */
  close(): Promise<void> {
    if (this.droppedLines > 0)
      diag.warn(`toolpath: ${this.droppedLines} reports not written to ${this.path}`);
    if (this.skippedTraces > 0)
      diag.warn(`toolpath: ${this.skippedTraces} traces not stored (reports.maxTraceFiles reached)`);
    return new Promise((resolve) => this.stream.end(resolve));
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
