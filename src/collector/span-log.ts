/**
 * The durable mode's log: append-only segment files of framed records, written with group
 * commit (every record appended while one write-and-fsync runs goes out in the next one, so a
 * burst of requests costs one fsync, not one each). A frame is its payload's length and CRC-32,
 * then the payload; a frame failing its CRC (a bad disk) is skipped when whole frames follow it,
 * and a tail cut short or bad (a crash mid-write) is cut off the file; both are counted. A write
 * that fails (a file-size limit, a full disk, an I/O error) is kept and tried again every second,
 * at the same offsets, until it lands: the log is `failed` meanwhile. What records mean is the
 * caller's (durable-traces.ts); this module only keeps them.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { diag } from '@opentelemetry/api';
import { HEADER_BYTES, type LogDamage, type LogPosition, readSegment } from './span-log-frames.js';
import {
  createSegment,
  dataSync,
  deleteSegmentFile,
  readPayload,
  type Segment,
  segmentIds,
  segmentPath,
  writeAll,
} from './span-log-segments.js';
import { lockStorage, type StorageLock } from './storage-lock.js';

export type { LogDamage, LogPosition } from './span-log-frames.js';

/** Settings of a {@link SpanLog}. */
export interface SpanLogOptions {
  /** A new segment is started once the active one holds this many bytes (default 64 MiB). */
  segmentBytes?: number;
  /** Awaited before each batch is written: what the records speak of must be on disk first. */
  beforeWrite?: () => Promise<void>;
  /** Told, while the log is read at open, where damage was found: after the records visited so far. */
  onDamage?: () => void;
}

interface Batch {
  /** Frames by segment, in order. */
  writes: { segment: Segment; chunks: Buffer[]; at: number }[];
  waiters: { resolve: () => void; reject: (error: Error) => void }[];
  scheduled: boolean;
  /** The seq of its last record. */
  last: number;
}

/** See the module comment. */
export class SpanLog {
  private readonly segments = new Map<number, Segment>();
  private active: Segment;
  private batch: Batch = newBatch();
  private writing = false;
  /** The last write's error, until a write lands. */
  private failure: Error | undefined;
  /** The next attempt after a failed write. */
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private failedWrites = 0;
  private closed = false;
  /** Told once the write running (or the next) has ended, landed or not. */
  private attemptWaiters: (() => void)[] = [];
  private readonly segmentBytes: number;
  private appended = 0;
  private onDisk = 0;
  private readonly pendingRemovals = new Set<number>();
  /** When the next segment may be tried again, after starting one failed (ms since the epoch). */
  private nextRollover = 0;
  private rolloverFailures = 0;

  private constructor(
    readonly dir: string,
    private readonly options: SpanLogOptions,
    existing: Segment[],
    private readonly lock: StorageLock,
  ) {
    this.segmentBytes = options.segmentBytes ?? 64 * 2 ** 20;
    for (const segment of existing) this.segments.set(segment.id, segment);
    this.active = this.startSegment((existing.at(-1)?.id ?? 0) + 1);
  }

  /**
   * Opens the log in `dir` (made if missing): reads every segment, oldest first, giving each
   * whole record to `visit`, cuts off damaged tails, and starts a new segment for what comes.
   */
  static open(
    dir: string,
    visit: (payload: Buffer, at: LogPosition) => void,
    options: SpanLogOptions = {},
  ): { log: SpanLog; damage: LogDamage } {
    mkdirSync(dir, { recursive: true });
    // Before anything is read: what another process holds is not ours to replay.
    const lock = lockStorage(dir);
    try {
      return SpanLog.read(dir, visit, options, lock);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  private static read(
    dir: string,
    visit: (payload: Buffer, at: LogPosition) => void,
    options: SpanLogOptions,
    lock: StorageLock,
  ): { log: SpanLog; damage: LogDamage } {
    const damage: LogDamage = { segments: 0, bytes: 0, frames: 0, skippedBytes: 0 };
    const existing: Segment[] = [];
    for (const id of segmentIds(dir)) {
      const path = segmentPath(dir, id);
      const bytes = readSegment(path, id, visit, damage, options.onDamage);
      existing.push({ id, path, fd: undefined, bytes });
    }
    return { log: new SpanLog(dir, options, existing, lock), damage };
  }

  /** Bytes in every segment, written or about to be. */
  get bytes(): number {
    let total = 0;
    for (const segment of this.segments.values()) total += segment.bytes;
    return total;
  }

  /** The segment new records go to. */
  get activeSegment(): number {
    return this.active.id;
  }

  /** The segments, oldest first, with their sizes. */
  list(): { id: number; bytes: number }[] {
    return [...this.segments.values()].map(({ id, bytes }) => ({ id, bytes }));
  }

  /** Whether the record appended as `seq` is on disk. */
  written(seq: number): boolean {
    return seq <= this.onDisk;
  }

  /**
   * Set while the last write or fsync failed, until a retry lands: nothing appended meanwhile can
   * be promised durable.
   */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** Writes that failed (each was tried again). */
  get writeFailures(): number {
    return this.failedWrites;
  }

  /** Records appended and not on disk yet. */
  get unwritten(): number {
    return this.appended - this.onDisk;
  }

  /**
   * Appends one record, its payload in `parts`, to the next batch; durable once a later
   * {@link commit} resolves.
   */
  append(parts: readonly Uint8Array[]): LogPosition {
    let length = 0;
    let crc = 0;
    for (const part of parts) {
      length += part.length;
      crc = crc32(part, crc);
    }
    const header = Buffer.allocUnsafe(HEADER_BYTES);
    header.writeUInt32LE(length, 0);
    header.writeUInt32LE(crc >>> 0, 4);
    if (this.active.bytes >= this.segmentBytes) this.rollOver();
    const segment = this.active;
    const at: LogPosition = {
      seq: ++this.appended,
      segment: segment.id,
      offset: segment.bytes,
      bytes: HEADER_BYTES + length,
    };
    this.batch.last = at.seq;
    const last = this.batch.writes.at(-1);
    const write = last?.segment === segment ? last : { segment, chunks: [] as Buffer[], at: segment.bytes };
    if (write !== last) this.batch.writes.push(write);
    write.chunks.push(header, ...parts.map(asBuffer));
    segment.bytes += at.bytes;
    return at;
  }

  /**
   * Resolves once every record appended so far is on disk; rejects if writing it failed (the
   * records stay, and are written by a later attempt), at once while the log is failed.
   */
  commit(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error(`span log: ${this.dir} is closed`));
    const batch = this.batch;
    const done = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
    this.schedule();
    return done;
  }

  /** Writes what is appended soon, with nobody waiting (marks that only need to get there). */
  flushSoon(): void {
    if (this.batch.writes.length > 0) this.schedule();
  }

  /**
   * Resolves once what is appended so far is on disk or an attempt to write it failed: while the
   * log is failed, at the next retry.
   */
  settled(): Promise<void> {
    if (this.failure === undefined) return this.commit().catch(() => undefined);
    if (!this.writing && this.batch.writes.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.attemptWaiters.push(resolve));
  }

  /** The payload of the record at `at`, read back (compaction). */
  read(at: LogPosition): Buffer {
    const segment = this.segments.get(at.segment);
    if (!segment) throw new Error(`span log: segment ${at.segment} is gone`);
    return readPayload(segment, at);
  }

  /** Deletes a segment other than the active one (none of its records is needed any more). */
  remove(id: number): void {
    const segment = this.segments.get(id);
    if (!segment || segment === this.active) return;
    // Its last writes may still be in flight: it goes once they are done.
    if (this.batch.writes.some((write) => write.segment === segment) || this.writing) {
      this.pendingRemovals.add(id);
      return;
    }
    this.segments.delete(id);
    deleteSegmentFile(segment);
  }

  /**
   * Writes what is appended and waits for it (one last attempt when the log is failed: what it
   * cannot write is said and left out); closes the files.
   */
  async close(): Promise<void> {
    while (this.writing) await new Promise<void>((resolve) => this.attemptWaiters.push(resolve));
    if (this.batch.writes.length > 0 || this.batch.waiters.length > 0) await this.write();
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.failure)
      diag.error(`toolpath: ${this.unwritten} records of the span log in ${this.dir} could not be written`);
    for (const segment of this.segments.values()) {
      if (segment.fd !== undefined) closeSync(segment.fd);
      segment.fd = undefined;
    }
    this.lock.release();
  }

  /**
   * Starts the next segment; where that fails (the folder made read-only, no inode left, a file
   * in the way), the record goes on in the active one, which is still open and writable, and
   * the next segment is tried again a second later: a full segment is a size, not a limit.
   */
  private rollOver(): void {
    const now = Date.now();
    if (now < this.nextRollover) return;
    try {
      this.active = this.startSegment(this.active.id + 1);
      this.nextRollover = 0;
    } catch (error) {
      this.nextRollover = now + ROLLOVER_RETRY_MS;
      if (this.rolloverFailures++ === 0)
        diag.warn(
          `toolpath: could not start a new span log segment in ${this.dir}; writing on in the last`,
          error,
        );
    }
  }

  /** Times a new segment could not be started (the records went on in the active one). */
  get segmentFailures(): number {
    return this.rolloverFailures;
  }

  private startSegment(id: number): Segment {
    const segment = createSegment(this.dir, id);
    this.segments.set(id, segment);
    return segment;
  }

  private schedule(): void {
    // While failed, the retry timer writes next.
    if (this.batch.scheduled || this.writing || this.retryTimer !== undefined || this.closed) return;
    this.batch.scheduled = true;
    // Requests answered in the same turn of the event loop share the write.
    setImmediate(() => {
      // Not when close() wrote the batch first.
      if (this.batch.scheduled) void this.write();
    });
  }

  private async write(): Promise<void> {
    const batch = this.batch;
    this.batch = newBatch();
    this.writing = true;
    let landed = 0;
    try {
      await this.options.beforeWrite?.();
      for (const write of batch.writes) {
        const fd = write.segment.fd ?? openSync(write.segment.path, 'r+');
        write.segment.fd = fd;
        await writeAll(fd, write.chunks, write.at);
        await dataSync(fd);
        landed++;
      }
      this.onDisk = Math.max(this.onDisk, batch.last);
      if (this.failure) diag.warn(`toolpath: the span log in ${this.dir} is written again`);
      this.failure = undefined;
      for (const waiter of batch.waiters) waiter.resolve();
    } catch (error) {
      const first = this.failure === undefined;
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.failedWrites++;
      if (first)
        diag.error(
          'toolpath: the span log could not be written; durable mode refuses spans (503) and tries again every second',
          error,
        );
      // What did not land goes first next time, at the offsets it was given; who waits for it
      // and for what came after it is told now (the client retries).
      const after = this.batch;
      this.batch = {
        writes: [...batch.writes.slice(landed), ...after.writes],
        waiters: [],
        scheduled: false,
        last: Math.max(batch.last, after.last),
      };
      for (const waiter of [...batch.waiters, ...after.waiters]) waiter.reject(this.failure);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.schedule();
      }, WRITE_RETRY_MS);
      this.retryTimer.unref?.();
    } finally {
      this.writing = false;
    }
    for (const resolve of this.attemptWaiters.splice(0)) resolve();
    for (const write of batch.writes) {
      // A sealed segment keeps no descriptor: it is only read back, rarely.
      if (write.segment !== this.active && write.segment.fd !== undefined) {
        closeSync(write.segment.fd);
        write.segment.fd = undefined;
      }
    }
    for (const id of [...this.pendingRemovals]) {
      this.pendingRemovals.delete(id);
      this.remove(id);
    }
    if (this.batch.waiters.length > 0 || this.batch.writes.length > 0) this.schedule();
  }
}

function newBatch(): Batch {
  return { writes: [], waiters: [], scheduled: false, last: 0 };
}

/** How long after a failed segment start the next is tried. */
const ROLLOVER_RETRY_MS = 1_000;
/** How long after a failed write it is tried again. */
const WRITE_RETRY_MS = 1_000;

function asBuffer(part: Uint8Array): Buffer {
  return Buffer.isBuffer(part) ? part : Buffer.from(part.buffer, part.byteOffset, part.byteLength);
}
