/**
 * Long string values that extend an earlier one of the same request share its text: the text
 * must be exactly what decoding all the bytes gives, whatever the bytes (invalid UTF-8 and
 * multi-byte characters around the shared end included), and the protobuf decoder must give
 * what the JSON path gives for chat histories recorded by a real SDK provider.
 */
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ExtendingStrings, ExtendingTexts } from '../../src/collector/extending-texts.js';
import { decodeOtlpJsonText } from '../../src/collector/otlp-json.js';
import { decodeExportTraceProtobuf } from '../../src/collector/otlp-proto.js';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import { extensionOf, type TextNote, type TextRef } from '../../src/model/text-extensions.js';
import {
  expectLaterTurnsNoted,
  INPUT_MESSAGES,
  normalizeEach,
  recordConversations,
} from '../helpers/conversations.js';

type Utf8Buffer = Buffer & { utf8Slice(start: number, end: number): string };

/** The byte strings laid out one after another in one buffer, with where each is. */
function layOut(strings: readonly Uint8Array[]): { buf: Utf8Buffer; at: [number, number][] } {
  const buf = Buffer.concat(strings) as Utf8Buffer;
  const at: [number, number][] = [];
  let start = 0;
  for (const bytes of strings) {
    at.push([start, start + bytes.length]);
    start += bytes.length;
  }
  return { buf, at };
}

/** Reads each string with one ExtendingTexts: the values, and how many were read as extensions. */
function readAll(buf: Utf8Buffer, at: readonly [number, number][]): { values: string[]; extended: number } {
  const texts = new ExtendingTexts();
  let extended = 0;
  const values = at.map(([start, end]) => {
    const value = texts.read(buf, start, end);
    if (texts.note?.extension !== undefined) extended++;
    return value;
  });
  return { values, extended };
}

/** A chat history of `turns` turns, serialized as instrumentations record it: over 1 KiB from the first. */
function history(turns: number, note = ''): string {
  const messages: object[] = [
    {
      role: 'system',
      parts: [{ type: 'text', content: `You’re a support agent. ${note} ${'Be brief. '.repeat(110)}` }],
    },
  ];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'assistant',
      parts: [{ type: 'tool_call', id: `call_${i}`, name: 'get_order', arguments: { orderId: `A-${i}` } }],
    });
    messages.push({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: `call_${i}`, response: { note: 'ü ☃ 🙂 '.repeat(40 + i) } }],
    });
  }
  return JSON.stringify(messages);
}

describe('ExtendingStrings', () => {
  it('reads every string as itself, and notes truly how it extends an earlier one', () => {
    const tail = fc.string({ unit: 'binary', maxLength: 20 });
    const step = fc.record({
      extend: fc.nat(),
      fresh: fc.boolean(),
      base: fc.string({ unit: 'binary', minLength: 1030, maxLength: 1100 }),
      tail,
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 14 }), (steps) => {
        const strings = new ExtendingStrings();
        const read: string[] = [];
        const byRef = new Map<TextRef, string>();
        for (const { extend, fresh, base, tail } of steps) {
          const earlier = read[extend % Math.max(read.length, 1)];
          const text = fresh || earlier === undefined ? base : `${earlier.slice(0, -1)}${tail}`;
          // A copy: the reader must not rely on the text being the very string it made.
          const value = strings.read(` ${text}`.slice(1));
          expect(value).toBe(text);
          const note = strings.note as TextNote;
          expect(byRef.has(note.ref)).toBe(false);
          byRef.set(note.ref, value);
          if (note.extension !== undefined) {
            const { earlier: ref, added } = note.extension;
            expect((byRef.get(ref) as string).slice(0, -1) + added).toBe(text);
          }
          read.push(value);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads a growing conversation as extensions, conversations interleaved', () => {
    const strings = new ExtendingStrings();
    const texts: string[] = [];
    for (let turn = 0; turn < 6; turn++) texts.push(history(turn, 'first'), history(turn, 'second'));
    let extended = 0;
    const read = texts.map((text) => {
      const value = strings.read(text);
      if (strings.note?.extension !== undefined) extended++;
      return value;
    });
    expect(read).toEqual(texts);
    expect(extended).toBe(10);
  });
});

describe('ExtendingTexts', () => {
  it('reads every string as decoding its bytes does, whatever the bytes', () => {
    // Strings built to extend earlier ones (their bytes but the last, then more), around shared
    // ends that fall inside or right after multi-byte and invalid sequences, and unrelated ones.
    const tail = fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 20 }).map((s) => new Uint8Array(Buffer.from(s))),
      fc.constantFrom(
        new Uint8Array([0x7d, 0x5d]),
        new Uint8Array([0xe2, 0x80, 0x99, 0x5d]),
        new Uint8Array([0xe2, 0x80]),
        new Uint8Array([0x99, 0x5d]),
        new Uint8Array([0xf0, 0x9f, 0x99, 0x82]),
      ),
    );
    const step = fc.record({
      extend: fc.nat(),
      fresh: fc.boolean(),
      base: fc.uint8Array({ minLength: 1000, maxLength: 1100 }),
      tails: fc.array(tail, { maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 14 }), (steps) => {
        const strings: Uint8Array[] = [];
        for (const { extend, fresh, base, tails } of steps) {
          const earlier = strings[extend % Math.max(strings.length, 1)];
          const start = fresh || earlier === undefined ? base : earlier.subarray(0, earlier.length - 1);
          strings.push(new Uint8Array(Buffer.concat([start, ...tails])));
        }
        const { buf, at } = layOut(strings);
        const texts = new ExtendingTexts();
        for (const [start, end] of at) expect(texts.read(buf, start, end)).toBe(buf.utf8Slice(start, end));
      }),
      { numRuns: 300 },
    );
  });

  it('reads a growing conversation as extensions, conversations interleaved', () => {
    const strings: string[] = [];
    for (let turn = 0; turn < 6; turn++) strings.push(history(turn, 'first'), history(turn, 'second'));
    const { buf, at } = layOut(strings.map((s) => Buffer.from(s)));
    const { values, extended } = readAll(buf, at);
    expect(values).toEqual(strings);
    // Each history after a conversation's first extends that conversation's previous one.
    expect(extended).toBe(10);
  });

  it('decodes short strings whole and never extends one by a string it does not start', () => {
    const strings = [
      '[1,2]',
      history(2),
      `${history(2).slice(0, -2)}X]`,
      history(3).replace('You’re', 'You are'),
    ];
    const { buf, at } = layOut(strings.map((s) => Buffer.from(s)));
    const { values, extended } = readAll(buf, at);
    expect(values).toEqual(strings);
    expect(extended).toBe(0);
  });
});

const INPUT = INPUT_MESSAGES;

/** Hand-made protobuf: what an SDK serializer never writes (keys after values, a oneof set twice). */
const varint = (n: number): number[] => (n < 128 ? [n] : [(n % 128) | 128, ...varint(Math.floor(n / 128))]);
const field = (number: number, body: number[]) => [
  ...varint((number << 3) | 2),
  ...varint(body.length),
  ...body,
];
const utf8 = (text: string) => [...Buffer.from(text)];
const bigVarint = (n: bigint): number[] =>
  n < 128n ? [Number(n)] : [Number(n % 128n) | 128, ...bigVarint(n / 128n)];
const fixed64 = (number: number) => [(number << 3) | 1, 1, 0, 0, 0, 0, 0, 0, 0];
type Value =
  | { string: string }
  | { twice: [string, string] }
  | { thenInt: [string, number] }
  | { list: string[] }
  | { map: Entry[] };
type Entry = { key: string; value: Value; keyLast: boolean };
const anyValue = (value: Value): number[] => {
  if ('string' in value) return field(1, utf8(value.string));
  if ('twice' in value) return [...field(1, utf8(value.twice[0])), ...field(1, utf8(value.twice[1]))];
  // A string_value, then an int_value past 2^53: the value is the integer, as a decimal string.
  if ('thenInt' in value)
    return [...field(1, utf8(value.thenInt[0])), 24, ...bigVarint(2n ** 60n + BigInt(value.thenInt[1]))];
  if ('list' in value)
    return field(
      5,
      value.list.flatMap((text) => field(1, field(1, utf8(text)))),
    );
  return field(
    6,
    value.map.flatMap((entry) => field(1, keyValue(entry))),
  );
};
const keyValue = ({ key, value, keyLast }: Entry) =>
  keyLast
    ? [...field(2, anyValue(value)), ...field(1, utf8(key))]
    : [...field(1, utf8(key)), ...field(2, anyValue(value))];

describe('protobuf notes', () => {
  it('are true whatever the field order, nesting, repeated keys and oneof fields', () => {
    // Long texts, each extending an earlier one (all but its last character) or not.
    const pool = fc
      .array(
        fc.record({
          from: fc.nat(),
          add: fc.constantFrom(',a]', 'ü]', ',"q"}]', '☃]]', ']', ',c}'),
          fresh: fc.boolean(),
        }),
        {
          minLength: 1,
          maxLength: 10,
        },
      )
      .map((steps) => {
        const texts: string[] = [];
        for (const { from, add, fresh } of steps) {
          const earlier = texts[from % Math.max(1, texts.length)];
          texts.push(
            fresh || !earlier ? `[${'x'.repeat(1100)}${add}${texts.length}` : earlier.slice(0, -1) + add,
          );
        }
        return texts;
      });
    const keys = fc.constantFrom('a', 'b', '__proto__', INPUT);
    const entries = (texts: string[]) => {
      const text = fc.constantFrom(...texts);
      const value: fc.Arbitrary<Value> = fc.oneof(
        text.map((string) => ({ string })),
        fc.tuple(text, text).map((twice) => ({ twice })),
        fc.tuple(text, fc.nat()).map((thenInt) => ({ thenInt })),
        fc.array(text, { maxLength: 3 }).map((list) => ({ list })),
        fc
          .array(fc.record({ key: keys, value: text.map((string) => ({ string })), keyLast: fc.boolean() }), {
            maxLength: 3,
          })
          .map((map) => ({ map })),
      );
      return fc.array(fc.record({ key: keys, value, keyLast: fc.boolean() }), { maxLength: 5 });
    };
    const request = pool.chain((texts) =>
      fc.record({
        texts: fc.constant(texts),
        spans: fc.array(
          fc.record({ attributes: entries(texts), event: entries(texts), resource: entries(texts) }),
          {
            minLength: 1,
            maxLength: 4,
          },
        ),
      }),
    );
    let noted = 0;
    fc.assert(
      fc.property(request, ({ texts, spans }) => {
        const body = spans.flatMap((span, i) => {
          const event = [
            ...fixed64(1),
            ...field(2, utf8('e')),
            ...span.event.flatMap((e) => field(3, keyValue(e))),
          ];
          const bytes = [
            ...field(1, new Array(16).fill(1)),
            ...field(2, [1, 2, 3, 4, 5, 6, 7, i + 1]),
            ...field(5, utf8('chat')),
            ...span.attributes.flatMap((entry) => field(9, keyValue(entry))),
            ...field(11, event),
          ];
          const resource = field(
            1,
            span.resource.flatMap((entry) => field(1, keyValue(entry))),
          );
          return field(1, [...resource, ...field(2, field(2, bytes))]);
        });
        const decoded = decodeExportTraceProtobuf(new Uint8Array(body));
        expect(decoded.errors).toEqual([]);
        const check = (attributes: Attributes) => {
          for (const key of Object.keys(attributes)) {
            const value = attributes[key];
            const extension = extensionOf(attributes, key);
            if (extension !== undefined) {
              noted++;
              expect(texts.some((earlier) => earlier.slice(0, -1) + extension.added === value)).toBe(true);
            }
            if (
              value !== null &&
              typeof value === 'object' &&
              !Array.isArray(value) &&
              !(value instanceof Uint8Array)
            )
              check(value as Attributes);
          }
        };
        for (const span of decoded.spans) {
          check(span.attributes);
          check(span.resource);
          for (const event of span.events) check(event.attributes);
        }
      }),
      { numRuns: 300 },
    );
    expect(noted).toBeGreaterThan(100);
  });
});

describe('both OTLP decoders on growing chat histories', () => {
  const spans = recordConversations(3, 5);
  const decoders = {
    protobuf: () => decodeExportTraceProtobuf(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array),
    json: () =>
      decodeOtlpJsonText(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans) as Uint8Array)),
  };

  it('give the same records, whose strings outlive a reused body', () => {
    const body = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);
    const proto = decodeExportTraceProtobuf(body);
    body.fill(0);
    expect(proto).toEqual(decoders.json());
    expect(proto.spans.map((s) => s.attributes[INPUT])).toEqual(spans.map((s) => s.attributes[INPUT]));
  });

  for (const [name, decode] of Object.entries(decoders)) {
    it(`${name}: notes each history that extends the previous one of its conversation, and only those`, () => {
      const records = decode().spans;
      expectLaterTurnsNoted(records, 3, 5);
      for (const record of records)
        for (const key of Object.keys(record.attributes))
          if (key !== INPUT) expect(extensionOf(record.attributes, key)).toBeUndefined();
    });

    it(`${name}: normalizes as the in-process records do, parsing only what each history added`, () => {
      const inProcess = normalizeEach(spans.map(fromReadableSpan));
      const parse = vi.spyOn(JSON, 'parse');
      const records = decode().spans;
      parse.mockClear();
      const decoded = normalizeEach(records);
      const parsed = parse.mock.calls.map(([text]) => String(text));
      parse.mockRestore();
      expect(decoded).toEqual(inProcess);
      expect(decoded.flatMap((t) => t?.calls ?? [])).toHaveLength(15);
      // Only each conversation's first history is parsed whole (it holds the system prompt).
      expect(parsed.filter((text) => text.includes('Be brief.'))).toHaveLength(3);
    });
  }

  it('leave no note on a key set again in the same span', () => {
    const noted = decoders
      .protobuf()
      .spans.find((record) => extensionOf(record.attributes, INPUT) !== undefined) as SpanRecord;
    const attributes = noted.attributes;
    attributes[INPUT] = `${attributes[INPUT]}`.replace('Refund', 'Return');
    expect(extensionOf(attributes, INPUT)).toBeUndefined();
  });
});
