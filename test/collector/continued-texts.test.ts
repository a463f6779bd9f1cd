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

const DECODERS: Record<string, (spans: ReadableSpan[]) => DecodeResult> = {
  protobuf: (spans) =>
    decodeExportTraceProtobuf(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array),
  json: (spans) =>
    decodeOtlpJsonText(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans) as Uint8Array)),
};

/**
 * The spans as the adapter holds them once every request is in: each request decoded and
 * ingested in turn, then all judged (onJudged hands over each trace's spans, in arrival order).
 */
function ingestAll(requests: readonly ReadableSpan[][], decode: (spans: ReadableSpan[]) => DecodeResult) {
  const held: SpanRecord[] = [];
  const adapter = new TraceAdapter({
    scenarios: [{ id: 'any', tools: { allowed: ['get_order'] } }],
    decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
    sweepIntervalMs: 1e9,
    onJudged: (spans) => held.push(...spans),
  });
  for (const spans of requests) expect(adapter.ingest(decode(spans)).kind).toBe('accepted');
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

  it('continues each of several conversations of one trace (sub-agents) under the same key', () => {
    const oneTrace = spans.map((span) =>
      toReadableSpan({
        ...fromReadableSpan(span),
        traceId: fromReadableSpan(spans[0] as ReadableSpan).traceId,
      }),
    );
    const held = ingestAll(
      chunks(oneTrace, perTurn),
      DECODERS.protobuf as (spans: ReadableSpan[]) => DecodeResult,
    );
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
    const held = ingestAll(requests, DECODERS.protobuf as (spans: ReadableSpan[]) => DecodeResult);
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
          const records: SpanRecord[] = texts.map(({ text, trace }, n) => ({
            traceId: `${String(trace).padStart(2, '0')}${'ab'.repeat(15)}`,
            spanId: `${String(n).padStart(4, '0')}cafe0000cafe`,
            parentSpanId: 'ffffffffffffffff',
            name: 'chat',
            kind: 'client',
            // Now, not 1970: a span of an unknown trace that ended long ago is late, and dropped.
            startTimeUnixNano: NOW_NS + BigInt(n),
            endTimeUnixNano: NOW_NS + 1_000n + BigInt(n),
            attributes: n % 3 === 2 ? { [secondKey]: text, n } : { 'gen_ai.input.messages': text, n },
            status: { code: 'unset' },
            events: [],
            links: [],
            resource: { attributes: {} },
            scope: { name: 'test' },
          }));
          // Requests in order: the spans of request 0, then 1, ...; each request in span order.
          const requests: ReadableSpan[][] = [[], [], [], []];
          for (const [n, record] of records.entries())
            requests[requestOf[n] as number]?.push(toReadableSpan(record));
          const held = ingestAll(
            requests.filter((spans) => spans.length > 0),
            DECODERS[decoder] as (spans: ReadableSpan[]) => DecodeResult,
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
