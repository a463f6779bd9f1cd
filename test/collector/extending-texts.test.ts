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
import type { SpanRecord } from '../../src/model/span-record.js';
import { extensionOf, type TextExtension } from '../../src/model/text-extensions.js';
import { fromReadableSpan } from '../../src/processor/readable-span.js';
import { INPUT_MESSAGES, normalizeEach, recordConversations } from '../helpers/conversations.js';

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
        for (const { extend, fresh, base, tail } of steps) {
          const earlier = read[extend % Math.max(read.length, 1)];
          const text = fresh || earlier === undefined ? base : `${earlier.slice(0, -1)}${tail}`;
          // A copy: the reader must not rely on the text being the very string it made.
          const value = strings.read(` ${text}`.slice(1));
          expect(value).toBe(text);
          const extension = strings.extension;
          if (extension !== undefined) {
            expect(read).toContain(extension.earlier);
            expect(extension.earlier.slice(0, -1) + extension.added).toBe(text);
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
    expect(texts.map((text) => strings.read(text))).toEqual(texts);
    expect(strings.extended).toBe(10);
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
    const texts = new ExtendingTexts();
    expect(at.map(([start, end]) => texts.read(buf, start, end))).toEqual(strings);
    // Each history after a conversation's first extends that conversation's previous one.
    expect(texts.extended).toBe(10);
  });

  it('decodes short strings whole and never extends one by a string it does not start', () => {
    const strings = [
      '[1,2]',
      history(2),
      `${history(2).slice(0, -2)}X]`,
      history(3).replace('You’re', 'You are'),
    ];
    const { buf, at } = layOut(strings.map((s) => Buffer.from(s)));
    const texts = new ExtendingTexts();
    expect(at.map(([start, end]) => texts.read(buf, start, end))).toEqual(strings);
    expect(texts.extended).toBe(0);
  });
});

const INPUT = INPUT_MESSAGES;

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
      const chats = records.filter((record) => typeof record.attributes[INPUT] === 'string');
      const noted = chats.filter((record) => extensionOf(record.attributes, INPUT) !== undefined);
      // Every turn after each conversation's first.
      expect(noted).toHaveLength(3 * 4);
      for (const record of noted) {
        const { earlier, added } = extensionOf(record.attributes, INPUT) as TextExtension;
        expect(earlier.slice(0, -1) + added).toBe(record.attributes[INPUT]);
        expect(chats.some((other) => other.attributes[INPUT] === earlier)).toBe(true);
      }
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
