/**
 * Durable mode's record payloads: every mark reads back as written (a property over any ids,
 * places and codes), one cut short is refused rather than read as something else, and at start
 * a record whose CRC matched but that cannot be read is skipped and counted, the rest replayed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DONE,
  FINAL,
  FINAL_DONE,
  finalMark,
  JUDGED,
  LOST,
  lostMark,
  MEMBER,
  memberMark,
  readRecord,
  traceMark,
} from '../../src/collector/durable-records.js';
import { DurableTraces } from '../../src/collector/durable-traces.js';
import { SpanLog } from '../../src/collector/span-log.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const traceId = fc.stringMatching(/^[0-9a-f]{32}$/);
/** Conversation ids: any text up to the 256 characters an id may have. */
const conversationId = fc.string({ unit: 'grapheme', maxLength: 256 });
const reportsEnd = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const lost = fc.constantFrom(undefined, 'max_calls', 'max_conversations', 'storage' as const);
const evicted = fc.constantFrom(undefined, 'max_calls', 'max_conversations', 'shutdown' as const);

/** Every kind of mark, with what it should read back as. */
const marks = fc.oneof(
  fc.tuple(reportsEnd, traceId, fc.boolean()).map(([end, id, keep]) => ({
    parts: traceMark(DONE, end, id, keep),
    expected: { type: DONE, reportsEnd: end, traceId: id, keep },
  })),
  fc.tuple(reportsEnd, traceId).map(([end, id]) => ({
    parts: traceMark(JUDGED, end, id),
    expected: { type: JUDGED, reportsEnd: end, traceId: id },
  })),
  fc
    .record({
      end: reportsEnd,
      id: traceId,
      conversation: conversationId,
      index: fc.nat({ max: 2 ** 32 - 1 }),
      lost,
      atMs: fc.double({ min: 0, max: 4e12, noNaN: true }),
      flags: fc.nat({ max: 3 }),
    })
    .map(({ end, id, conversation, index, lost, atMs, flags }) => ({
      parts: memberMark(end, id, { conversationId: conversation, index, lost, atMs }, flags),
      expected: {
        type: MEMBER,
        reportsEnd: end,
        traceId: id,
        flags,
        member: { conversationId: conversation, index, lost, atMs },
      },
    })),
  fc
    .tuple(
      fc.constantFrom(FINAL, FINAL_DONE),
      reportsEnd,
      conversationId,
      fc.array(traceId, { maxLength: 20 }),
      evicted,
    )
    .map(([type, end, conversation, ids, evicted]) => ({
      parts: finalMark(type, end, conversation, ids, evicted),
      expected: { type, reportsEnd: end, conversationId: conversation, traceIds: ids, evicted },
    })),
  fc
    .tuple(reportsEnd, conversationId, fc.constantFrom('max_calls', 'max_conversations', 'storage' as const))
    .map(([end, conversation, lost]) => ({
      parts: lostMark(end, conversation, lost),
      expected: { type: LOST, reportsEnd: end, conversationId: conversation, lost },
    })),
);

describe('durable record payloads', () => {
  it('reads every mark back as written (property)', () => {
    fc.assert(
      fc.property(marks, ({ parts, expected }) => {
        expect(readRecord(Buffer.concat(parts))).toEqual(expected);
      }),
    );
  });

  it('refuses a mark cut short anywhere, never reading it as another (property)', () => {
    fc.assert(
      fc.property(
        marks,
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        ({ parts }, where) => {
          const payload = Buffer.concat(parts);
          const cut = payload.subarray(0, Math.floor(where * payload.length));
          expect(() => readRecord(cut)).toThrow();
        },
      ),
    );
  });

  it('skips and counts a record whose CRC matched but that cannot be read, and replays the rest', async () => {
    const dir = temporaryDir('toolpath-durable-records-');
    const { log } = SpanLog.open(dir, () => undefined);
    const member = Buffer.concat(
      memberMark(0, 'a'.repeat(32), { conversationId: 'c', index: 0, lost: undefined, atMs: 0 }),
    );
    // Written so, with a good CRC: a member record cut short, and a type this version does not know.
    log.append([member.subarray(0, member.length - 3)]);
    log.append([Buffer.from([99, 0, 1, 2])]);
    log.append(finalMark(FINAL, 0, 'c', ['b'.repeat(32)]));
    await log.commit();
    await log.close();
    const { traces, replay } = DurableTraces.open({
      directory: dir,
      maxBytes: 2 ** 30,
      maxConversations: 10_000,
    });
    expect(replay.unreadable).toBe(2);
    expect(replay.damage).toEqual({ segments: 0, bytes: 0, frames: 0, skippedBytes: 0 });
    // The final after them was read: its conversation is given back, to be judged again.
    expect(replay.conversations).toMatchObject([
      { conversationId: 'c', final: { traceIds: ['b'.repeat(32)] } },
    ]);
    await traces.close();
  });
});
