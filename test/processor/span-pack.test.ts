/**
 * The span pack that carries spans to the judging worker: whatever SDK spans hold, unpacking gives
 * exactly the records `fromReadableSpan` makes of them; a damaged pack is refused with a message.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import { extensionOf } from '../../src/model/text-extensions.js';
import { packTraces, type SpanPack, unpackTraces } from '../../src/processor/span-pack.js';
import {
  expectLaterTurnsNoted,
  INPUT_MESSAGES,
  normalizeEach,
  recordConversations,
} from '../helpers/conversations.js';

const hex = (length: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: length, maxLength: length });
const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }));
const hrTime = fc.tuple(
  fc.oneof(fc.integer({ min: 0, max: 2 ** 33 }), fc.constant(Number.NaN), fc.double()),
  fc.oneof(fc.integer({ min: 0, max: 999_999_999 }), fc.constant(Number.NaN)),
);

/** What SDK attributes can hold at run time, the odd values included. */
const { value: attributeValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constantFrom(null, undefined, 10n, () => 1, Symbol('s')),
    fc.uint8Array({ maxLength: 8 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
}));
const attributes = fc.oneof(
  fc.dictionary(fc.oneof(text, fc.constant('__proto__')), attributeValue, { maxKeys: 5 }),
  fc.constant(undefined),
);

const resource = attributes.map((attrs) => ({ attributes: attrs ?? {} }));
const scope = fc.record(
  { name: text, version: fc.option(text, { nil: undefined }), attributes },
  { requiredKeys: ['name'] },
);

function spanOf(
  traceId: string,
  fields: {
    spanId: string;
    parent?: string;
    name: string;
    kind: number;
    start: [number, number];
    end: [number, number];
    ended: boolean;
    status: { code: number; message?: string };
    attributes?: Record<string, unknown>;
    events: { name: string; time: [number, number]; attributes?: Record<string, unknown> }[];
    links: { traceId: string; spanId: string; attributes?: Record<string, unknown> }[];
  },
  res: { attributes: Record<string, unknown> },
  sc: { name: string },
): ReadableSpan {
  return {
    name: fields.name,
    kind: fields.kind,
    spanContext: () => ({ traceId, spanId: fields.spanId, traceFlags: 1 }),
    parentSpanContext:
      fields.parent === undefined ? undefined : { traceId, spanId: fields.parent, traceFlags: 1 },
    startTime: fields.start,
    endTime: fields.end,
    ended: fields.ended,
    status: fields.status,
    attributes: fields.attributes ?? {},
    events: fields.events.map((event) => ({ ...event, attributes: event.attributes })),
    links: fields.links.map((link) => ({
      context: { traceId: link.traceId, spanId: link.spanId, traceFlags: 1 },
      attributes: link.attributes,
    })),
    resource: res,
    instrumentationScope: sc,
    duration: [0, 0],
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as unknown as ReadableSpan;
}

const spanFields = fc.record(
  {
    spanId: hex(16),
    parent: fc.option(fc.oneof(hex(16), fc.constant('')), { nil: undefined }),
    name: text,
    kind: fc.oneof(fc.integer({ min: -1, max: 6 }), fc.constant(Number.NaN)),
    start: hrTime,
    end: hrTime,
    ended: fc.boolean(),
    status: fc.record({
      code: fc.integer({ min: -1, max: 3 }),
      message: fc.option(text, { nil: undefined }),
    }),
    attributes,
    events: fc.array(fc.record({ name: text, time: hrTime, attributes }), { maxLength: 3 }),
    links: fc.array(fc.record({ traceId: hex(32), spanId: hex(16), attributes }), { maxLength: 2 }),
  },
  { requiredKeys: ['spanId', 'name', 'kind', 'start', 'end', 'ended', 'status', 'events', 'links'] },
);

/** Traces whose spans draw on a few shared resources and scopes, as spans of a few tracers do. */
const traces = fc
  .record({
    resources: fc.array(resource, { minLength: 1, maxLength: 3 }),
    scopes: fc.array(scope, { minLength: 1, maxLength: 3 }),
    traces: fc.array(
      fc.tuple(hex(32), fc.array(fc.tuple(spanFields, fc.nat(), fc.nat()), { maxLength: 6 })),
      { maxLength: 4 },
    ),
  })
  .map(({ resources, scopes, traces }) =>
    traces.map(([traceId, spans]) =>
      spans.map(([fields, r, s]) =>
        spanOf(
          traceId,
          fields,
          resources[r % resources.length] as { attributes: Record<string, unknown> },
          scopes[s % scopes.length] as { name: string },
        ),
      ),
    ),
  );

describe('span pack', () => {
  it('unpacks exactly the records fromReadableSpan makes, whatever the spans hold', () => {
    fc.assert(
      fc.property(traces, (batch) => {
        expect(unpackTraces(packTraces(batch))).toEqual(batch.map((spans) => spans.map(fromReadableSpan)));
      }),
      { numRuns: 300 },
    );
  });

  it('packs a long string that extends an earlier one as that one plus what it adds, and notes it', () => {
    // Long strings of a batch, each extending one before it (all but its last character) or not,
    // as attribute values at the top, in lists and in maps, spread over spans and traces.
    const step = fc.record({
      extend: fc.nat(),
      fresh: fc.boolean(),
      base: fc.string({ unit: 'binary', minLength: 1024, maxLength: 1060 }),
      tail: fc.string({ unit: 'binary', maxLength: 12 }),
      place: fc.constantFrom('top', 'list', 'map'),
    });
    const base = fc.sample(
      traces.filter((t) => t.length > 0 && t[0]?.length !== 0),
      { numRuns: 1, seed: 11 },
    )[0] as ReadableSpan[][];
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        const texts: string[] = [];
        const spans = base.flat();
        for (const [i, { extend, fresh, base: start, tail, place }] of steps.entries()) {
          const earlier = texts[extend % Math.max(texts.length, 1)];
          const text = fresh || earlier === undefined ? start : `${earlier.slice(0, -1)}${tail}`;
          texts.push(text);
          const span = spans[i % spans.length] as ReadableSpan;
          const value = place === 'top' ? text : place === 'list' ? ['x', text] : { inner: text };
          (span.attributes as Record<string, unknown>)[`long.${i}`] = value;
        }
        const unpacked = unpackTraces(packTraces(base));
        expect(unpacked).toEqual(base.map((t) => t.map(fromReadableSpan)));
        for (const record of unpacked.flat())
          for (const key of Object.keys(record.attributes)) {
            const extension = extensionOf(record.attributes, key);
            if (extension === undefined) continue;
            expect(typeof record.attributes[key]).toBe('string');
            // It extends one of the batch's long strings (which may sit in a list, with no note of its own).
            const value = record.attributes[key];
            expect(texts.some((earlier) => earlier.slice(0, -1) + extension.added === value)).toBe(true);
          }
        for (const span of spans)
          for (const key of Object.keys(span.attributes))
            if (key.startsWith('long.')) delete (span.attributes as Record<string, unknown>)[key];
      }),
      { numRuns: 200 },
    );
  });

  it('carries growing chat histories noted, and they normalize as the in-process records do', () => {
    const spans = recordConversations(3, 5);
    const unpacked = unpackTraces(packTraces([spans])).flat();
    expectLaterTurnsNoted(unpacked, 3, 5);
    // The pack carries each history's new part only: all its text is shorter than the histories whole.
    const whole = spans.reduce((n, span) => n + String(span.attributes[INPUT_MESSAGES] ?? '').length, 0);
    expect(packTraces([spans]).texts.join('').length).toBeLessThan(whole);
    expect(normalizeEach(unpacked)).toEqual(normalizeEach(spans.map(fromReadableSpan)));
  });

  it('refuses an extension of a string it has not seen', () => {
    const spans = recordConversations(1, 2);
    const pack = packTraces([spans]);
    const tape = pack.tape.slice();
    // Tag.Extension (8) is followed by the number of the string it extends: point it past the end.
    const at = tape.findIndex((value, i) => value === 8 && tape[i + 1] === 0);
    expect(at).toBeGreaterThan(-1);
    tape[at + 1] = 5;
    expect(() => unpackTraces({ texts: pack.texts, tape })).toThrow('an extension of string 5 of 1');
  });

  it('survives being posted to another thread (the strings cloned, the tape transferred)', async () => {
    const batch = fc.sample(traces, { numRuns: 5, seed: 7 });
    const { port1, port2 } = new MessageChannel();
    for (const spans of batch) {
      const pack = packTraces(spans);
      const received = new Promise<SpanPack>((resolve) => port2.once('message', resolve));
      port1.postMessage(pack, [pack.tape.buffer]);
      expect(unpackTraces(await received)).toEqual(spans.map((trace) => trace.map(fromReadableSpan)));
    }
    port1.close();
  });

  it('refuses a damaged pack with its message, never another error', () => {
    const [batch] = fc.sample(
      traces.filter((t) => t.some((spans) => spans.length > 0)),
      { numRuns: 1, seed: 3 },
    );
    const pack = packTraces(batch as ReadableSpan[][]);
    fc.assert(
      fc.property(fc.nat(pack.tape.length - 1), fc.double(), (at, value) => {
        const tape = pack.tape.slice();
        tape[at] = value;
        let records: unknown;
        try {
          records = unpackTraces({ texts: pack.texts, tape });
        } catch (error) {
          expect(String(error)).toMatch(/a damaged span pack/);
          return;
        }
        // A change the format cannot see (a number changed to another number) unpacks; anything else throws.
        expect(records).toBeDefined();
      }),
    );
    expect(() => unpackTraces({ texts: pack.texts, tape: pack.tape.slice(0, -1) })).toThrow(
      'a damaged span pack',
    );
    expect(() => unpackTraces({ texts: [...pack.texts, 'x'], tape: pack.tape })).toThrow(
      'data after the last trace',
    );
  });
});
