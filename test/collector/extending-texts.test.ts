/**
 * Long string values that extend an earlier one of the same request share its text: the text
 * must be exactly what decoding all the bytes gives, whatever the bytes (invalid UTF-8 and
 * multi-byte characters around the shared end included), and the protobuf decoder must give
 * what the JSON path gives for chat histories recorded by a real SDK provider.
 */
import { SpanKind } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExtendingTexts } from '../../src/collector/extending-texts.js';
import { decodeOtlpJsonText } from '../../src/collector/otlp-json.js';
import { decodeExportTraceProtobuf } from '../../src/collector/otlp-proto.js';

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

describe('decodeExportTraceProtobuf with growing chat histories', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'agent' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('agent-sdk');
  for (let turn = 0; turn < 5; turn++) {
    for (const who of ['first', 'second']) {
      const chat = tracer.startSpan('chat gpt-4o', { kind: SpanKind.CLIENT });
      chat.setAttributes({ 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': history(turn, who) });
      chat.end();
    }
  }
  const spans = exporter.getFinishedSpans();

  it('gives what the JSON path gives, and keeps its strings when the body is reused', () => {
    const body = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);
    const proto = decodeExportTraceProtobuf(body);
    body.fill(0);
    const text = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans) as Uint8Array);
    expect(proto).toEqual(decodeOtlpJsonText(text));
    expect(proto.spans.map((s) => s.attributes['gen_ai.input.messages'])).toEqual(
      spans.map((s) => s.attributes['gen_ai.input.messages']),
    );
  });
});
