import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BufferedTrace, DecisionCache, TraceBuffer } from '../../src/processor/trace-buffer.js';

const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('span' as const), trace: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('take' as const), trace: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('due' as const), now: fc.nat(100) }) },
);

describe('TraceBuffer', () => {
  it('never holds more than its caps, and every span is buffered, refused or let go exactly once', () => {
    fc.assert(
      fc.property(
        fc.record({
          maxTraces: fc.integer({ min: 1, max: 6 }),
          maxSpansPerTrace: fc.integer({ min: 1, max: 8 }),
          maxSpans: fc.integer({ min: 1, max: 20 }),
        }),
        fc.constantFrom('evict-oldest' as const, 'refuse' as const),
        fc.array(op, { maxLength: 300 }),
        (caps, whenFull, ops) => {
          let evictedSpans = 0;
          const buffer = new TraceBuffer<number>(
            { ...caps, whenFull },
            { newState: () => undefined, onEvict: (trace) => (evictedSpans += trace.spans.length) },
          );
          let offered = 0;
          let refused = 0;
          let taken = 0;
          let clock = 0;
          for (const step of ops) {
            clock++;
            if (step.kind === 'span') {
              offered++;
              const trace = buffer.open(`t${step.trace}`, clock);
              if (!trace || !buffer.add(trace, offered)) refused++;
            } else if (step.kind === 'take') {
              taken += buffer.take(`t${step.trace}`)?.spans.length ?? 0;
            } else {
              for (const trace of buffer.takeDue(clock, step.now)) taken += trace.spans.length;
            }
            expect(buffer.size).toBeLessThanOrEqual(caps.maxTraces);
            expect(buffer.spanCount).toBeLessThanOrEqual(caps.maxSpans);
          }
          const held = buffer.takeAll().reduce((sum, trace) => sum + trace.spans.length, 0);
          expect(held + taken + evictedSpans + refused).toBe(offered);
          const dropped = buffer.droppedCounts();
          if (whenFull === 'refuse') expect(dropped.evicted).toBe(0);
          expect(dropped.trace_too_large + dropped.buffer_full).toBeLessThanOrEqual(refused);
        },
      ),
    );
  });

  it('evicts the oldest trace first and hands it to onEvict', () => {
    const evicted: BufferedTrace<string>[] = [];
    const buffer = new TraceBuffer<string>(
      { maxTraces: 2, maxSpansPerTrace: 10, maxSpans: 100, whenFull: 'evict-oldest' },
      { newState: () => undefined, onEvict: (trace) => evicted.push(trace) },
    );
    for (const id of ['a', 'b', 'c']) buffer.add(buffer.open(id, 0) as BufferedTrace<string>, `${id}1`);
    expect(evicted.map((trace) => trace.traceId)).toEqual(['a']);
    expect(buffer.droppedCounts().evicted).toBe(1);
    expect(buffer.get('a')).toBeUndefined();
  });

  it('takes traces due by age or by a wait after the root, each once', () => {
    const buffer = new TraceBuffer<string>(
      { maxTraces: 10, maxSpansPerTrace: 10, maxSpans: 100, whenFull: 'refuse' },
      { newState: () => undefined },
    );
    const old = buffer.open('old', 0) as BufferedTrace<string>;
    const rooted = buffer.open('rooted', 50) as BufferedTrace<string>;
    buffer.open('young', 90);
    buffer.markRoot(rooted, 60);
    buffer.markRoot(old, 61);
    expect(buffer.takeDue(100, 100, 30).map((trace) => trace.traceId)).toEqual(['old', 'rooted']);
    expect(buffer.takeDue(100, 10).map((trace) => trace.traceId)).toEqual(['young']);
  });
});

describe('DecisionCache', () => {
  it('forgets the oldest decision past its capacity', () => {
    const cache = new DecisionCache(2);
    cache.set('a', true);
    cache.set('b', false);
    cache.set('c', true);
    expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.size]).toEqual([undefined, false, true, 2]);
  });
});
