import { describe, expect, it } from 'vitest';
import { newSpanId } from '../../src/judging/evaluation-span.js';

describe('newSpanId', () => {
  it('gives valid, distinct span ids across refills of its pool', () => {
    // 5,000 ids: the 512-id pool is refilled nine times.
    const ids = Array.from({ length: 5_000 }, () => newSpanId());
    for (const id of ids) expect(id).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Random across the whole id: every hex digit shows up in every position.
    for (let position = 0; position < 16; position++)
      expect(new Set(ids.map((id) => id[position])).size).toBe(16);
  });
});
