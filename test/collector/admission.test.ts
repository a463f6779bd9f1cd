import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admit, type Room } from '../../src/collector/admission.js';
import type { SpanRecord } from '../../src/model/span-record.js';

const NOW = 10_000_000_000n;
const LATE_BEFORE = NOW - 1_000n;

function span(trace: number, end: bigint = NOW): SpanRecord {
  return {
    traceId: trace.toString(16).padStart(32, '0'),
    spanId: '1'.padStart(16, '0'),
    name: 'work',
    kind: 'internal',
    startTimeUnixNano: end - 1n,
    endTimeUnixNano: end,
    attributes: {},
    status: { code: 'unset' },
    events: [],
    links: [],
    resource: {},
    scope: { name: 'test' },
  };
}

const room = (traces: number, spans: number, maxTraces = 10, maxSpans = 100): Room => ({
  traces,
  spans,
  maxTraces,
  maxSpans,
});
const none = () => false;

describe('admit', () => {
  it('takes a request that fits, whole', () => {
    const decision = admit([span(1), span(2), span(2)], none, LATE_BEFORE, room(10, 100));
    expect(decision).toMatchObject({ kind: 'take', newTraces: 2, rejectedSpans: 0, lateSpans: 0 });
  });

  it('refuses, for a retry, a request that does not fit now but fits an idle adapter', () => {
    expect(admit([span(1), span(2)], none, LATE_BEFORE, room(1, 100))).toEqual({ kind: 'retry' });
    expect(admit([span(1), span(1)], none, LATE_BEFORE, room(5, 1))).toEqual({ kind: 'retry' });
  });

  it('takes the new traces that fit of a request no adapter could hold, whole, and rejects the rest naming the limit', () => {
    const spans = [span(1), span(2), span(3), span(2)];
    const decision = admit(spans, none, LATE_BEFORE, room(2, 100, 2));
    expect(decision).toMatchObject({
      kind: 'take',
      newTraces: 3,
      rejectedSpans: 1,
      limit: 'limits.maxTraces',
    });
    if (decision.kind !== 'take') throw new Error('taken');
    expect([...decision.rejected]).toEqual([span(3).traceId]);
    const bySpans = admit([span(1), span(1), span(2), span(2), span(2)], none, LATE_BEFORE, room(5, 4, 5, 4));
    expect(bySpans).toMatchObject({ kind: 'take', rejectedSpans: 3, limit: 'limits.maxSpans' });
  });

  it('refuses, for a retry, a request no adapter could hold when none of it fits now', () => {
    expect(admit([span(1), span(2), span(3)], none, LATE_BEFORE, room(0, 100, 2))).toEqual({ kind: 'retry' });
  });

  it('sets apart the traces it does not know whose every span ended before lateBefore', () => {
    const known = (id: string) => id === span(9).traceId;
    const spans = [span(1, 5n), span(2, 5n), span(2, NOW), span(9, 5n), span(3, 0n)];
    const decision = admit(spans, known, LATE_BEFORE, room(10, 100));
    expect(decision).toMatchObject({ kind: 'take', newTraces: 2, lateSpans: 1 });
    if (decision.kind !== 'take') throw new Error('taken');
    // A known trace's old span joins it; a trace with one recent span is new; no time is not late.
    expect([...decision.late]).toEqual([span(1).traceId]);
  });

  it('takes whole traces within the room, and refuses for a retry only what a retry can take', () => {
    const request = fc.array(fc.record({ trace: fc.nat(12), late: fc.boolean(), known: fc.boolean() }), {
      maxLength: 40,
    });
    const rooms = fc
      .record({ maxTraces: fc.integer({ min: 1, max: 10 }), maxSpans: fc.integer({ min: 1, max: 30 }) })
      .chain(({ maxTraces, maxSpans }) =>
        fc.record({
          traces: fc.integer({ min: 0, max: maxTraces }),
          spans: fc.integer({ min: 0, max: maxSpans }),
          maxTraces: fc.constant(maxTraces),
          maxSpans: fc.constant(maxSpans),
        }),
      );
    fc.assert(
      fc.property(request, rooms, (items, space) => {
        const knownTraces = new Set(
          items.filter((item) => item.known).map((item) => span(item.trace).traceId),
        );
        const spans = items.map((item) => span(item.trace, item.late ? 5n : NOW));
        const decision = admit(spans, (id) => knownTraces.has(id), LATE_BEFORE, space);
        // The brute-force view of the request: its new, late and known traces.
        const byTrace = new Map<string, SpanRecord[]>();
        for (const s of spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s]);
        const fresh = [...byTrace].filter(
          ([id, list]) =>
            !knownTraces.has(id) && list.some((s) => (s.endTimeUnixNano as bigint) >= LATE_BEFORE),
        );
        const knownSpans = spans.filter((s) => knownTraces.has(s.traceId)).length;
        const wanted = knownSpans + fresh.reduce((n, [, list]) => n + list.length, 0);
        const fitsIdle = fresh.length <= space.maxTraces && wanted <= space.maxSpans;
        const fitsNow = fresh.length <= space.traces && wanted <= space.spans;
        if (decision.kind === 'retry') {
          // A retry can succeed: it fits once there is room, or none of it fits now and some will.
          expect(fitsNow).toBe(false);
          expect(fitsIdle || knownSpans === 0).toBe(true);
          return;
        }
        if (fitsNow) expect(decision.rejectedSpans).toBe(0);
        else expect(fitsIdle).toBe(false);
        const taken = fresh.filter(([id]) => !decision.rejected.has(id));
        expect(taken.length).toBeLessThanOrEqual(space.traces);
        if (!fitsNow) {
          // Spans of known traces join them (the buffer caps them span by span); new ones fit the rest.
          const takenSpans = taken.reduce((n, [, list]) => n + list.length, 0);
          expect(takenSpans).toBeLessThanOrEqual(Math.max(0, space.spans - knownSpans));
          expect(knownSpans + taken.length).toBeGreaterThan(0);
        }
        // Rejections are of whole new traces, counted span by span.
        for (const id of decision.rejected) expect(fresh.some(([freshId]) => freshId === id)).toBe(true);
        const rejectedSpans = fresh
          .filter(([id]) => decision.rejected.has(id))
          .reduce((n, [, l]) => n + l.length, 0);
        expect(decision.rejectedSpans).toBe(rejectedSpans);
      }),
      { numRuns: 2_000 },
    );
  });
});
