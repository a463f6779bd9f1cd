import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecisionCache } from '../../src/judging/decision-cache.js';
import { type BufferedTrace, TraceBuffer } from '../../src/judging/trace-buffer.js';

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

  it('remembers each decision for its window after it was made, then forgets it', () => {
    const cache = new DecisionCache({ capacity: 10, windowMs: 100 });
    cache.set('a', true, 0);
    cache.set('b', false, 50);
    cache.expire(99);
    expect([cache.get('a'), cache.get('b')]).toEqual([true, false]);
    cache.expire(100);
    expect([cache.get('a'), cache.get('b')]).toEqual([undefined, false]);
    // A later decision expires the old ones too.
    cache.set('c', true, 151);
    expect([cache.get('b'), cache.get('c'), cache.size, cache.forgottenEarly]).toEqual([
      undefined,
      true,
      1,
      0,
    ]);
  });

  it('counts the decisions it forgets before their window to stay under the cap', () => {
    const cache = new DecisionCache({ capacity: 3, windowMs: 1_000 });
    for (const [n, id] of ['a', 'b', 'c', 'd', 'e'].entries()) cache.set(id, true, n);
    expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.size, cache.forgottenEarly]).toEqual([
      undefined,
      undefined,
      true,
      3,
      2,
    ]);
  });

  it('agrees with a list of decisions, through growth, wrap-around, repeats and expiry', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.record({ id: fc.nat(400), kept: fc.boolean(), step: fc.nat(3) }), { maxLength: 1_000 }),
        (capacity, windowMs, operations) => {
          const cache = new DecisionCache({ capacity, windowMs });
          // The model: ids in the order first decided, with when and what.
          let model: { id: string; at: number; kept: boolean }[] = [];
          let now = 0;
          for (const { id, kept, step } of operations) {
            now += step;
            model = model.filter((entry) => entry.at > now - windowMs);
            const key = String(id);
            const known = model.find((entry) => entry.id === key);
            if (known) known.kept = kept;
            else {
              if (model.length === capacity) model.shift();
              model.push({ id: key, at: now, kept });
            }
            cache.set(key, kept, now);
            expect(cache.size).toBe(model.length);
          }
          for (const entry of model) expect(cache.get(entry.id)).toBe(entry.kept);
        },
      ),
      { numRuns: 300 },
    );
  });
});
