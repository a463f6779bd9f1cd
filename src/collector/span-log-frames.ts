/**
 * The span log's frames on disk (span-log.ts writes them): a segment's header, and reading a
 * segment back, skipping a bad frame when whole ones follow it and cutting a torn tail.
 */
import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/** Every segment starts with this, so a file that is not ours is never read as records. */
export const MAGIC = Buffer.from('TPLOG001');
export const HEADER_BYTES = 8;
/** A length past this is a corrupt header, not a record (requests are capped far below it). */
const MAX_PAYLOAD_BYTES = 1 << 30;

/** Where a record is: its segment, and its frame's offset and size in it. */
export interface LogPosition {
  /** Records appended by this log before it, plus one (0: read back at open). */
  readonly seq: number;
  readonly segment: number;
  readonly offset: number;
  readonly bytes: number;
}

/** What reading the log at start found wrong and cut. */
export interface LogDamage {
  /** Segments whose tail was cut (a frame cut short or with a wrong CRC, or a bad file header). */
  segments: number;
  /** Bytes cut off. */
  bytes: number;
  /** Bad frames skipped with whole records after them (their length readable, their CRC wrong). */
  frames: number;
  /** Bytes of those frames. */
  skippedBytes: number;
}

/**
 * Reads one segment, giving each whole record to `visit`; returns the bytes kept. A frame whose
 * length is readable but whose payload fails its CRC (a flipped byte) is skipped alone when a
 * whole frame (or the file's end) follows it, or when one is found within `RESYNC_BYTES` after
 * it: counted, told to `onDamage`, and what follows read on. A bad file header, a frame past the
 * end of the file, or a bad one with nothing whole after it ends the segment: the file is cut
 * there and the damage counted.
 */
export function readSegment(
  path: string,
  id: number,
  visit: (payload: Buffer, at: LogPosition) => void,
  damage: LogDamage,
  onDamage: (() => void) | undefined,
): number {
  const data = readFileSync(path);
  let offset = 0;
  if (data.length >= MAGIC.length && data.subarray(0, MAGIC.length).equals(MAGIC)) offset = MAGIC.length;
  else if (data.length > 0) {
    throw new Error(
      `storage: ${path} is not a toolpath log segment (it does not start with ${MAGIC.toString()}); move it out of storage.directory`,
    );
  }
  while (offset < data.length) {
    const frame = frameAt(data, offset);
    if (frame === undefined) {
      const next = nextWholeFrame(data, offset);
      if (next === undefined) break;
      damage.frames++;
      damage.skippedBytes += next - offset;
      onDamage?.();
      offset = next;
      continue;
    }
    visit(frame, { seq: 0, segment: id, offset, bytes: HEADER_BYTES + frame.length });
    offset += HEADER_BYTES + frame.length;
  }
  const kept = data.length === 0 ? 0 : offset;
  if (kept < data.length) {
    damage.segments++;
    damage.bytes += data.length - kept;
    onDamage?.();
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, kept);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  return kept;
}

/** How far past a bad frame a whole one is looked for (a length that is itself damaged). */
const RESYNC_BYTES = 1 << 20;

/**
 * Where reading goes on after the bad frame at `offset`: past it, when its length leads to a
 * whole frame or to the end of the file; else the first offset within RESYNC_BYTES where a whole
 * frame starts; undefined when there is none (a torn tail: cut).
 */
function nextWholeFrame(data: Buffer, offset: number): number | undefined {
  if (offset + HEADER_BYTES <= data.length) {
    const length = data.readUInt32LE(offset);
    const after = offset + HEADER_BYTES + length;
    if (length <= MAX_PAYLOAD_BYTES && after <= data.length) {
      if (after === data.length) return after;
      if (frameAt(data, after) !== undefined) return after;
    }
  }
  const end = Math.min(data.length - HEADER_BYTES, offset + RESYNC_BYTES);
  // An empty frame is all zeros, which damaged bytes often are: not taken as a place to go on.
  for (let at = offset + 1; at <= end; at++)
    if (data.readUInt32LE(at) !== 0 && frameAt(data, at) !== undefined) return at;
  return undefined;
}

/** The payload of the frame at `offset`, or undefined when it is cut short or fails its CRC. */
function frameAt(data: Buffer, offset: number): Buffer | undefined {
  if (offset + HEADER_BYTES > data.length) return undefined;
  const length = data.readUInt32LE(offset);
  const crc = data.readUInt32LE(offset + 4);
  if (length > MAX_PAYLOAD_BYTES || offset + HEADER_BYTES + length > data.length) return undefined;
  const payload = data.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length);
  return crc32(payload) >>> 0 === crc ? payload : undefined;
}
