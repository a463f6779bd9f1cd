/**
 * The span log's segment files: how they are named and found in the storage folder, created
 * (never over another writer's), read back one frame at a time, written at an offset and synced,
 * and deleted. What goes in them, and when, is span-log.ts's.
 */
import {
  closeSync,
  fdatasync,
  fsyncSync,
  openSync,
  readdirSync,
  readSync,
  unlinkSync,
  writeSync,
  writev,
} from 'node:fs';
import { join } from 'node:path';
import { diag } from '@opentelemetry/api';
import { HEADER_BYTES, type LogPosition, MAGIC } from './span-log-frames.js';

/** One segment file of the log. */
export interface Segment {
  readonly id: number;
  readonly path: string;
  fd: number | undefined;
  /** Bytes appended (written or not yet). */
  bytes: number;
}

const SEGMENT_NAME = /^(\d{10})\.log$/;

/** The ids of the segments in `dir`, oldest first. */
export function segmentIds(dir: string): number[] {
  return readdirSync(dir)
    .map((name) => SEGMENT_NAME.exec(name)?.[1])
    .filter((id) => id !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/** Where segment `id` of the log in `dir` lives. */
export function segmentPath(dir: string, id: number): string {
  return join(dir, `${String(id).padStart(10, '0')}.log`);
}

/** Creates segment `id` in `dir`, open for writing, its magic written and its name synced. */
export function createSegment(dir: string, id: number): Segment {
  const path = segmentPath(dir, id);
  // 'wx+': a segment that exists is another writer's, never ours to empty.
  const fd = openSync(path, 'wx+');
  writeSync(fd, MAGIC);
  // The new file's name must survive a crash too: sync the folder once per segment.
  syncDir(dir);
  return { id, path, fd, bytes: MAGIC.length };
}

/** The payload of the frame at `at` in `segment`, read back. */
export function readPayload(segment: Segment, at: LogPosition): Buffer {
  const fd = segment.fd ?? openSync(segment.path, 'r');
  try {
    const frame = Buffer.allocUnsafe(at.bytes);
    readSync(fd, frame, 0, at.bytes, at.offset);
    return frame.subarray(HEADER_BYTES);
  } finally {
    if (segment.fd === undefined) closeSync(fd);
  }
}

/** Closes and deletes a segment's file; a failure to delete is said, not thrown. */
export function deleteSegmentFile(segment: Segment): void {
  if (segment.fd !== undefined) closeSync(segment.fd);
  segment.fd = undefined;
  try {
    unlinkSync(segment.path);
  } catch (error) {
    diag.error(`toolpath: could not delete ${segment.path}`, error);
  }
}

/** Writes every chunk at `position` onward, looping over short writes. */
export async function writeAll(fd: number, chunks: Buffer[], position: number): Promise<void> {
  let left = chunks;
  let at = position;
  while (left.length > 0) {
    const written = await new Promise<number>((resolve, reject) =>
      writev(fd, left, at, (error, bytes) => (error ? reject(error) : resolve(bytes))),
    );
    at += written;
    let skip = written;
    let index = 0;
    while (index < left.length && skip >= (left[index] as Buffer).length)
      skip -= (left[index++] as Buffer).length;
    left = left.slice(index);
    if (skip > 0 && left.length > 0) left[0] = (left[0] as Buffer).subarray(skip);
  }
}

/** Resolves once the data written to `fd` is on disk. */
export function dataSync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a folder; the data itself is still synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
