/**
 * The durable mode's log on a real folder: records come back in order after a reopen, a burst
 * of commits shares its fsyncs, and a tail damaged by a crash mid-write (cut short, or with a
 * wrong CRC) is detected, cut, counted, and the records before it replayed.
 */
import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { type LogDamage, type LogPosition, SpanLog } from '../../src/collector/span-log.js';
import {
  canLimitFileSize,
  fileSizeLimitNote,
  liftFileSizeLimit,
  limitFileSize,
} from '../helpers/file-size-limit.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

function reopen(dir: string): {
  log: SpanLog;
  records: string[];
  damage: LogDamage;
} {
  const records: string[] = [];
  const { log, damage } = SpanLog.open(dir, (payload) => records.push(payload.toString('utf8')));
  return { log, records, damage };
}

const segments = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.log'))
    .sort();

describe('span log', () => {
  it('gives back every committed record in order after a reopen, across segments', async () => {
    const dir = temporaryDir('toolpath-span-log-');
    const { log } = SpanLog.open(dir, () => undefined, { segmentBytes: 4096 });
    const written = Array.from({ length: 500 }, (_, n) => `record ${n} ${'x'.repeat(n % 97)}`);
    for (const text of written) log.append([Buffer.from(text)]);
    await log.commit();
    await log.close();
    expect(segments(dir).length).toBeGreaterThan(3);
    const { records, damage } = reopen(dir);
    expect(records).toEqual(written);
    expect(damage).toEqual({ segments: 0, bytes: 0, frames: 0, skippedBytes: 0 });
  });

  it('writes on in the last segment when the next cannot be started, and starts it once it can', async () => {
    const dir = temporaryDir('toolpath-span-log-');
    const { log } = SpanLog.open(dir, () => undefined, { segmentBytes: 4096 });
    const [first] = segments(dir);
    // What is in the way of the next segment (as root, a folder made read-only is not): a folder
    // of its name, so opening it as a new file fails.
    const blocker = join(dir, `${String(Number(first?.slice(0, 10)) + 1).padStart(10, '0')}.log`);
    mkdirSync(blocker);
    const written = Array.from({ length: 200 }, (_, n) => `record ${n} ${'y'.repeat(40)}`);
    for (const text of written.slice(0, 100)) log.append([Buffer.from(text)]);
    await log.commit();
    expect(log.segmentFailures).toBe(1);
    expect(statSync(join(dir, first as string)).size).toBeGreaterThan(4096);
    rmSync(blocker, { recursive: true });
    // Tried again a second later, not on every record.
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now + 1_500);
    try {
      for (const text of written.slice(100)) log.append([Buffer.from(text)]);
      await log.commit();
    } finally {
      clock.mockRestore();
    }
    await log.close();
    expect(segments(dir).length).toBeGreaterThan(1);
    const { records, damage } = reopen(dir);
    expect(records).toEqual(written);
    expect(damage).toEqual({ segments: 0, bytes: 0, frames: 0, skippedBytes: 0 });
  });

  // The limit is the whole process's: only where this file has a process to itself (Vitest's
  // forks pool), not in a worker thread beside other files.
  it.skipIf(!canLimitFileSize() || !isMainThread)(
    `keeps a write that fails (a file-size limit), tries it again every second, and writes it once the limit is lifted${
      isMainThread
        ? fileSizeLimitNote()
        : " (skipped: the limit is the whole process's, and this file runs in a worker thread)"
    }`,
    async () => {
      const dir = temporaryDir('toolpath-span-log-');
      const { log } = SpanLog.open(dir, () => undefined);
      const written = Array.from({ length: 60 }, (_, n) => `record ${n} ${'z'.repeat(200)}`);
      for (const text of written.slice(0, 20)) log.append([Buffer.from(text)]);
      await log.commit();
      const file = join(dir, segments(dir)[0] as string);
      // This process's files may not grow past the segment's size: the next write gets EFBIG.
      limitFileSize(process.pid, statSync(file).size);
      try {
        for (const text of written.slice(20, 40)) log.append([Buffer.from(text)]);
        await expect(log.commit()).rejects.toThrow(/EFBIG|too large/);
        expect(log.failed?.message).toMatch(/EFBIG|too large/);
        // Refused at once while failed; what is appended meanwhile waits with what failed.
        await expect(log.commit()).rejects.toThrow();
        for (const text of written.slice(40, 50)) log.append([Buffer.from(text)]);
        expect(log.unwritten).toBe(30);
        // Tried again a second later: still over the limit.
        const before = log.writeFailures;
        await log.settled();
        expect(log.writeFailures).toBe(before + 1);
        expect(log.failed).toBeDefined();
      } finally {
        liftFileSizeLimit(process.pid);
      }
      // The next retry lands: nothing to restart.
      for (let tries = 0; log.failed !== undefined && tries < 5; tries++) await log.settled();
      expect(log.failed).toBeUndefined();
      expect(log.unwritten).toBe(0);
      for (const text of written.slice(50)) log.append([Buffer.from(text)]);
      await log.commit();
      await log.close();
      const { records, damage } = reopen(dir);
      expect(records).toEqual(written);
      expect(damage).toEqual({ segments: 0, bytes: 0, frames: 0, skippedBytes: 0 });
    },
  );

  it('commits a burst of 200 requests with a handful of fsyncs, each answered only once written', async () => {
    const dir = temporaryDir('toolpath-span-log-');
    let batches = 0;
    const { log } = SpanLog.open(dir, () => undefined, {
      beforeWrite: async () => {
        batches++;
      },
    });
    const commits: Promise<void>[] = [];
    for (let n = 0; n < 200; n++) {
      log.append([Buffer.from(`request ${n}`)]);
      commits.push(log.commit());
    }
    await Promise.all(commits);
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThanOrEqual(3);
    // Every answered record is in the file before the answer.
    const { records } = reopen(dir);
    expect(records.length).toBe(200);
  });

  it('cuts a tail cut short mid-frame, counts it, and replays what came before', async () => {
    const dir = temporaryDir('toolpath-span-log-');
    const { log } = SpanLog.open(dir, () => undefined);
    const positions: LogPosition[] = [];
    for (let n = 0; n < 10; n++) positions.push(log.append([Buffer.from(`record ${n}`)]));
    await log.commit();
    await log.close();
    const file = join(dir, segments(dir)[0] as string);
    const last = positions[9] as LogPosition;
    // A crash mid-write: the last frame only half there.
    truncateSync(file, last.offset + Math.floor(last.bytes / 2));
    const { log: again, records, damage } = reopen(dir);
    expect(records).toEqual(Array.from({ length: 9 }, (_, n) => `record ${n}`));
    expect(damage.segments).toBe(1);
    expect(damage.bytes).toBe(Math.floor(last.bytes / 2));
    expect(statSync(file).size).toBe(last.offset);
    // Writing goes on after the cut, and what is written then comes back too.
    again.append([Buffer.from('after the crash')]);
    await again.commit();
    await again.close();
    expect(reopen(dir).records).toEqual([...records, 'after the crash']);
  });

  it('skips just a frame whose CRC does not match when whole frames follow it, and counts it', async () => {
    const dir = temporaryDir('toolpath-span-log-');
    const { log } = SpanLog.open(dir, () => undefined);
    const positions: LogPosition[] = [];
    for (let n = 0; n < 5; n++) positions.push(log.append([Buffer.from(`record ${n}`)]));
    await log.commit();
    await log.close();
    const file = join(dir, segments(dir)[0] as string);
    const bytes = readFileSync(file);
    const third = positions[2] as LogPosition;
    bytes[third.offset + 10] = (bytes[third.offset + 10] as number) ^ 0xff;
    writeFileSync(file, bytes);
    const { records, damage } = reopen(dir);
    expect(records).toEqual(['record 0', 'record 1', 'record 3', 'record 4']);
    expect(damage).toEqual({ segments: 0, bytes: 0, frames: 1, skippedBytes: third.bytes });
    // The file is kept as it is: the next start finds the same.
    expect(statSync(file).size).toBe(bytes.length);
    expect(reopen(dir).records).toEqual(records);
  });

  it("finds the next whole frame when the bad frame's length is itself damaged", async () => {
    const dir = temporaryDir('toolpath-span-log-');
    const { log } = SpanLog.open(dir, () => undefined);
    const positions: LogPosition[] = [];
    for (let n = 0; n < 6; n++) positions.push(log.append([Buffer.from(`record ${n}`.repeat(20))]));
    await log.commit();
    await log.close();
    const file = join(dir, segments(dir)[0] as string);
    const bytes = readFileSync(file);
    const second = positions[1] as LogPosition;
    bytes[second.offset] = (bytes[second.offset] as number) ^ 0x10;
    writeFileSync(file, bytes);
    const { records, damage } = reopen(dir);
    expect(records).toEqual([0, 2, 3, 4, 5].map((n) => `record ${n}`.repeat(20)));
    expect(damage).toMatchObject({ segments: 0, frames: 1, skippedBytes: second.bytes });
  });

  it('cuts at a bad frame with nothing whole after it (garbage written over the tail)', async () => {
    const dir = temporaryDir('toolpath-span-log-');
    const { log } = SpanLog.open(dir, () => undefined);
    const positions: LogPosition[] = [];
    for (let n = 0; n < 5; n++) positions.push(log.append([Buffer.from(`record ${n}`)]));
    await log.commit();
    await log.close();
    const file = join(dir, segments(dir)[0] as string);
    const bytes = readFileSync(file);
    const third = positions[2] as LogPosition;
    bytes.fill(0xab, third.offset + 10);
    writeFileSync(file, bytes);
    const { records, damage } = reopen(dir);
    expect(records).toEqual(['record 0', 'record 1']);
    expect(damage).toEqual({ segments: 1, bytes: bytes.length - third.offset, frames: 0, skippedBytes: 0 });
  });

  it('refuses a file in the folder that is not a log segment, saying which and what to do', () => {
    const dir = temporaryDir('toolpath-span-log-');
    writeFileSync(join(dir, '0000000001.log'), 'not ours');
    expect(() => reopen(dir)).toThrow(
      /0000000001\.log is not a toolpath log segment .*move it out of storage\.directory/,
    );
  });

  it('keeps every whole record before any cut point, for any records and any cut (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 300 }), { minLength: 1, maxLength: 30 }),
        fc.nat(),
        fc.option(fc.uint8Array({ minLength: 1, maxLength: 40 }), { nil: undefined }),
        async (payloads, cutSeed, garbage) => {
          const dir = temporaryDir('toolpath-span-log-');
          const { log } = SpanLog.open(dir, () => undefined);
          const ends: number[] = [];
          for (const payload of payloads) {
            const at = log.append([payload]);
            ends.push(at.offset + at.bytes);
          }
          await log.commit();
          await log.close();
          const file = join(dir, segments(dir)[0] as string);
          const written = readFileSync(file);
          const cut = 8 + (cutSeed % (written.length - 7));
          truncateSync(file, cut);
          if (garbage) appendFileSync(file, garbage);
          // Garbage may put back the very bytes cut off (a cut 0 and a 0 appended): the records
          // whole again are those the file holds exactly as written.
          const damaged = readFileSync(file);
          const kept: Buffer[] = [];
          SpanLog.open(dir, (payload) => kept.push(Buffer.from(payload)));
          let same = 0;
          while (same < damaged.length && same < written.length && damaged[same] === written[same]) same++;
          const whole = ends.filter((end) => end <= same).length;
          // Other garbage does not read as a frame: its CRC would have to match.
          expect(kept.slice(0, whole).map((b) => [...b])).toEqual(
            payloads.slice(0, whole).map((p) => [...p]),
          );
          expect(kept.length).toBe(whole);
        },
      ),
      // The case fast-check found: the last byte cut, and the same byte appended.
      {
        numRuns: 60,
        examples: [[[Uint8Array.from([0]), Uint8Array.from([0])], 244790013, Uint8Array.from([0])]],
      },
    );
  });
});
