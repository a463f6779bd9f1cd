/**
 * A long value that continues a value of the same trace received in an earlier request is held
 * as that value's text joined to its new part, and noted so: the values must be exactly what was
 * sent, every note true, and judging must give what the in-process records give, whichever
 * request each turn of a conversation arrives in.
 */

import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { TraceAdapter } from '../../src/collector/adapter.js';
import { type DecodeResult, decodeOtlpJsonText } from '../../src/collector/otlp-json.js';
import { decodeExportTraceProtobuf } from '../../src/collector/otlp-proto.js';
import { decodeOptionsFor } from '../../src/collector/receiver-common.js';
import { toReadableSpan } from '../../src/collector/to-readable-span.js';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { extensionOf, noteOf } from '../../src/model/text-extensions.js';
import {
  expectLaterTurnsNoted,
  INPUT_MESSAGES,
  normalizeEach,
  notedTexts,
  recordConversations,
} from '../helpers/conversations.js';

const NOW_NS = BigInt(Date.now()) * 1_000_000n;

type Decode = (spans: ReadableSpan[], adapter: TraceAdapter) => DecodeResult;

const DECODERS: Record<string, Decode> = {
  // As durable mode's replay decodes: the request alone.
  protobuf: (spans) =>
    decodeExportTraceProtobuf(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array),
  // As the receivers decode: on the values the adapter holds for the request's traces.
  'protobuf on held texts': (spans, adapter) =>
    decodeExportTraceProtobuf(
      ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array,
      decodeOptionsFor(adapter),
    ),
  json: (spans) =>
    decodeOtlpJsonText(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans) as Uint8Array)),
};
const PROTOBUF = DECODERS.protobuf as Decode;
const ON_HELD_TEXTS = DECODERS['protobuf on held texts'] as Decode;

/**
 * The spans as the adapter holds them once every request is in: each request decoded and
 * ingested in turn, then all judged (onJudged hands over each trace's spans, in arrival order).
 */
function ingestAll(requests: readonly ReadableSpan[][], decode: Decode) {
  const held: SpanRecord[] = [];
  const adapter = new TraceAdapter({
    scenarios: [{ id: 'any', tools: { allowed: ['get_order'] } }],
    decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
    sweepIntervalMs: 1e9,
    onJudged: (spans) => held.push(...spans),
  });
  for (const spans of requests) expect(adapter.ingest(decode(spans, adapter)).kind).toBe('accepted');
  adapter.judgeAllNow();
  void adapter.shutdown();
  return held;
}

/** Consecutive runs of `size` spans, as a batch exporter on a timer would send them. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
}

/** Values by span id, to compare what the adapter holds with what was sent whatever the order. */
function bySpanId(records: readonly SpanRecord[]): Map<string, SpanRecord['attributes']> {
  return new Map(records.map((record) => [record.spanId, record.attributes]));
}

describe('histories continued across requests', () => {
  const CONVERSATIONS = 3;
  const TURNS = 6;
  const spans = recordConversations(CONVERSATIONS, TURNS);
  const sent = spans.map(fromReadableSpan);
  // A turn of every conversation is a chat span and a tool span.
  const perTurn = 2 * CONVERSATIONS;

  for (const [name, decode] of Object.entries(DECODERS)) {
    for (const turnsPerRequest of [1, 2, 3]) {
      it(`${name}, ${turnsPerRequest} turn(s) a request: the values sent, each later turn noted, judged as in process`, () => {
        const held = ingestAll(chunks(spans, perTurn * turnsPerRequest), decode);
        const sentValues = bySpanId(sent);
        for (const record of held) expect(record.attributes).toEqual(sentValues.get(record.spanId));
        expectLaterTurnsNoted(held, CONVERSATIONS, TURNS);
        const parse = vi.spyOn(JSON, 'parse');
        const judged = normalizeEach(held);
        const parsed = parse.mock.calls.map(([text]) => String(text));
        parse.mockRestore();
        expect(judged).toEqual(normalizeEach(sent));
        // Only each conversation's first history is parsed whole (it holds the system prompt).
        expect(parsed.filter((text) => text.includes('Be brief.'))).toHaveLength(CONVERSATIONS);
      });
    }
  }

  it('decodes a history continuing one its trace holds from its new bytes alone, on held texts', () => {
    // Bytes decoded into text, per request, with and without the held texts: a turn a request.
    const decodedBytes = (decode: Decode) => {
      const utf8Slice = vi.spyOn(Buffer.prototype, 'utf8Slice');
      const held = ingestAll(chunks(spans, perTurn), decode);
      const bytes = utf8Slice.mock.calls.reduce(
        (sum, [start, end]) => sum + (Number(end) - Number(start)),
        0,
      );
      utf8Slice.mockRestore();
      return { held, bytes };
    };
    const alone = decodedBytes(PROTOBUF);
    const onHeld = decodedBytes(ON_HELD_TEXTS);
    const historyBytes = sent.reduce(
      (sum, record) => sum + Buffer.byteLength(String(record.attributes[INPUT_MESSAGES] ?? '')),
      0,
    );
    // Alone, every history is decoded whole, with the rest; on held texts, the rest is the same.
    const otherBytes = alone.bytes - historyBytes;
    expect(otherBytes).toBeGreaterThan(0);
    expect(onHeld.bytes - otherBytes).toBeLessThan(historyBytes / 3);
    expect(onHeld.held.map((record) => record.attributes)).toEqual(
      alone.held.map((record) => record.attributes),
    );
    expectLaterTurnsNoted(onHeld.held, CONVERSATIONS, TURNS);
    expect(normalizeEach(onHeld.held)).toEqual(normalizeEach(sent));
  });

  it('continues each of several conversations of one trace (sub-agents) under the same key', () => {
    const oneTrace = spans.map((span) =>
      toReadableSpan({
        ...fromReadableSpan(span),
        traceId: fromReadableSpan(spans[0] as ReadableSpan).traceId,
      }),
    );
    const held = ingestAll(chunks(oneTrace, perTurn), ON_HELD_TEXTS);
    expectLaterTurnsNoted(held, CONVERSATIONS, TURNS);
    const sentValues = bySpanId(sent);
    for (const record of held) expect(record.attributes).toEqual(sentValues.get(record.spanId));
  });

  it('leaves a history alone when its trace holds nothing it continues', () => {
    // Every conversation's turns in separate requests, but each trace id made new per request.
    const requests = chunks(spans, perTurn).map((chunk, n) =>
      chunk.map((span) => {
        const record = fromReadableSpan(span);
        return toReadableSpan({
          ...record,
          traceId: `${record.traceId.slice(0, 28)}${String(n).padStart(4, '0')}`,
        });
      }),
    );
    const held = ingestAll(requests, ON_HELD_TEXTS);
    expect(
      held.filter((record) => extensionOf(record.attributes, INPUT_MESSAGES) !== undefined),
    ).toHaveLength(0);
    const sentValues = bySpanId(sent);
    for (const record of held)
      expect(record.attributes[INPUT_MESSAGES]).toEqual(sentValues.get(record.spanId)?.[INPUT_MESSAGES]);
  });
});

/**
 * Long texts (over 1 KiB) built by continuing earlier ones, one character closing each, and the
 * trace of each: mostly its earlier text's, as a conversation's turns are.
 */
const growing = fc
  .array(
    fc.record({
      continues: fc.nat(),
      added: fc.string({
        unit: fc.constantFrom('a', ',', 'ü', '☃', '🙂', '"', '\\'),
        minLength: 0,
        maxLength: 40,
      }),
      close: fc.constantFrom(']', '}', 'ü', '☃'),
      fresh: fc.boolean(),
      trace: fc.nat(2),
      otherTrace: fc.boolean(),
      // A history that agrees with an earlier one but for one character: it must not continue it.
      editAt: fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() }),
    }),
    { minLength: 1, maxLength: 24 },
  )
  .map((steps) => {
    const texts: { text: string; trace: number }[] = [];
    for (const { continues, added, close, fresh, trace, otherTrace, editAt } of steps) {
      // Mostly one of the latest few, as conversations go; sometimes any earlier one.
      const back = continues % 5 === 0 ? continues : continues % 3;
      const earlier =
        texts.length === 0 || fresh ? undefined : texts[texts.length - 1 - (back % texts.length)];
      let base = earlier === undefined ? `[${'x'.repeat(1_030)}${added}` : earlier.text.slice(0, -1);
      if (editAt !== null) {
        let at = editAt % base.length;
        // Not half of a surrogate pair: a lone one would not survive UTF-8.
        while ((base.charCodeAt(at) & 0xf800) === 0xd800) at--;
        base = `${base.slice(0, at)}${base[at] === 'Z' ? 'Y' : 'Z'}${base.slice(at + 1)}`;
      }
      texts.push({
        text: `${base}${added}${close}`,
        trace: earlier === undefined || otherTrace ? trace : earlier.trace,
      });
    }
    return texts;
  });

/** Chat span `n` of a trace, with these attributes. */
function chatRecord(traceId: string, n: number, attributes: SpanRecord['attributes']): SpanRecord {
  return {
    traceId,
    spanId: `${String(n).padStart(4, '0')}cafe0000cafe`,
    parentSpanId: 'ffffffffffffffff',
    name: 'chat',
    kind: 'client',
    // Now, not 1970: a span of an unknown trace that ended long ago is late, and dropped.
    startTimeUnixNano: NOW_NS + BigInt(n),
    endTimeUnixNano: NOW_NS + 1_000n + BigInt(n),
    attributes,
    status: { code: 'unset' },
    events: [],
    links: [],
    resource: { attributes: {} },
    scope: { name: 'test' },
  };
}

/** One chat span of trace `trace` (its id that text repeated) whose input history is `text`. */
function historySpan(trace: string, n: number, text: string): ReadableSpan {
  return toReadableSpan(chatRecord(trace.repeat(32 / trace.length), n, { [INPUT_MESSAGES]: text }));
}

describe('histories decoded on the texts their trace holds', () => {
  it('compares a held text longer than a chunk by its bytes, a surrogate pair across the chunk edge', () => {
    // 🙂 is two code units: one at either side of the 16,384th, where the comparison cuts its chunks.
    const first = `[${'a'.repeat(16_382)}🙂${'ü'.repeat(20_000)}]`;
    const second = `${first.slice(0, -1)},"☃ next"]`;
    const held = ingestAll([[historySpan('ab', 0, first)], [historySpan('ab', 1, second)]], ON_HELD_TEXTS);
    expect(held.map((record) => record.attributes[INPUT_MESSAGES])).toEqual([first, second]);
    expect(extensionOf((held[1] as SpanRecord).attributes, INPUT_MESSAGES)?.added).toBe(',"☃ next"]');
  });

  it('never takes bytes for a held text with a lone surrogate, which UTF-8 writes as U+FFFD', () => {
    // A JSON request can carry a lone surrogate; protobuf's UTF-8 cannot, and writes U+FFFD for it.
    const first = `[${'x'.repeat(1_100)}\ud800]`;
    expect((first as string & { isWellFormed(): boolean }).isWellFormed()).toBe(false);
    const second = `${first.slice(0, -1)},1]`;
    // The first request as JSON, the second as protobuf on the held texts.
    const decoders = [DECODERS.json as Decode, ON_HELD_TEXTS];
    let request = 0;
    const held = ingestAll(
      [[historySpan('cd', 0, first)], [historySpan('cd', 1, second)]],
      (spans, adapter) => (decoders[request++] as Decode)(spans, adapter),
    );
    const replaced = `${second.slice(0, 1_101)}\ufffd,1]`;
    expect((held[0] as SpanRecord).attributes[INPUT_MESSAGES]).toBe(first);
    // What the bytes say, not the held text.
    expect((held[1] as SpanRecord).attributes[INPUT_MESSAGES]).toBe(replaced);
    expect(extensionOf((held[1] as SpanRecord).attributes, INPUT_MESSAGES)).toBeUndefined();
  });

  it('shares nothing with a held text the bytes differ from, however little', () => {
    const first = `[${'é'.repeat(1_500)}]`;
    const second = `[${'é'.repeat(700)}e${'é'.repeat(799)},2]`;
    const held = ingestAll([[historySpan('ef', 0, first)], [historySpan('ef', 1, second)]], ON_HELD_TEXTS);
    expect((held[1] as SpanRecord).attributes[INPUT_MESSAGES]).toBe(second);
    expect(extensionOf((held[1] as SpanRecord).attributes, INPUT_MESSAGES)).toBeUndefined();
  });
});

describe('continued values, whatever the texts and however they are split', () => {
  it('are the values sent, and every note is true', () => {
    let acrossRequests = 0;
    fc.assert(
      fc.property(
        growing,
        fc.array(fc.nat(3), { minLength: 24, maxLength: 24 }),
        fc.constantFrom(...Object.keys(DECODERS)),
        fc.constantFrom('gen_ai.input.messages', 'other'),
        (texts, requestOf, decoder, secondKey) => {
          const records: SpanRecord[] = texts.map(({ text, trace }, n) =>
            chatRecord(
              `${String(trace).padStart(2, '0')}${'ab'.repeat(15)}`,
              n,
              n % 3 === 2 ? { [secondKey]: text, n } : { 'gen_ai.input.messages': text, n },
            ),
          );
          // Requests in order: the spans of request 0, then 1, ...; each request in span order.
          const requests: ReadableSpan[][] = [[], [], [], []];
          for (const [n, record] of records.entries())
            requests[requestOf[n] as number]?.push(toReadableSpan(record));
          const held = ingestAll(
            requests.filter((spans) => spans.length > 0),
            DECODERS[decoder] as Decode,
          );
          expect(held).toHaveLength(records.length);
          const sentValues = bySpanId(records);
          for (const record of held) expect(record.attributes).toEqual(sentValues.get(record.spanId));
          const known = notedTexts(held);
          const requestOfRef = new Map(
            held.flatMap((record) =>
              Object.keys(record.attributes).map((key) => [
                noteOf(record.attributes, key)?.ref,
                requestOf[Number(record.attributes.n)],
              ]),
            ),
          );
          for (const record of held)
            for (const key of Object.keys(record.attributes)) {
              const extension = noteOf(record.attributes, key)?.extension;
              if (extension === undefined) continue;
              const earlier = known.get(extension.earlier);
              expect(earlier).toBeDefined();
              expect(`${(earlier as string).slice(0, -1)}${extension.added}`).toBe(record.attributes[key]);
              if (requestOfRef.get(extension.earlier) !== requestOf[Number(record.attributes.n)])
                acrossRequests++;
            }
        },
      ),
      { numRuns: 150 },
    );
    expect(acrossRequests).toBeGreaterThan(40);
  });
});
