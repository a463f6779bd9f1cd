/**
 * The text layer of OTLP JSON: 64-bit integers kept exact through JSON.parse, checked on
 * examples and on random values written the way producers write them (numbers bare in the text).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  decodeExportTraceRequest,
  decodeOtlpJsonText,
  parseOtlpJsonText,
} from '../../src/collector/otlp-json.js';
import type { AttributeValue } from '../../src/model/span-record.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', 'spans', name), 'utf8');

describe('parseOtlpJsonText', () => {
  it('keeps bare 64-bit timestamps and intValues exact (integers of up to 15 digits are exact as numbers)', () => {
    const text =
      '{"startTimeUnixNano":1795971782792412208,"endTimeUnixNano" : 18446744073709551615,' +
      '"timeUnixNano":\n9007199254740993,"observedTimeUnixNano":1,"value":{"intValue":-9223372036854775808}}';
    expect(parseOtlpJsonText(text)).toEqual({
      startTimeUnixNano: '1795971782792412208',
      endTimeUnixNano: '18446744073709551615',
      timeUnixNano: '9007199254740993',
      observedTimeUnixNano: 1,
      value: { intValue: '-9223372036854775808' },
    });
  });

  it('leaves string contents that look like those keys untouched', () => {
    const content = '{"intValue":12345678901234567890, "startTimeUnixNano": 1795971782792412208}';
    const text = `{"stringValue":${JSON.stringify(content)},"other":"x\\"timeUnixNano\\":5"}`;
    expect(parseOtlpJsonText(text)).toEqual({ stringValue: content, other: 'x"timeUnixNano":5' });
  });

  it('does not treat a key that ends in an escaped quote plus intValue as intValue', () => {
    // The key is `a"intValue`: its opening quote is preceded by `{`, but the match would start at the escaped one.
    expect(parseOtlpJsonText('{"a\\"intValue":5}')).toEqual({ 'a"intValue': 5 });
  });

  it('leaves non-integer numbers and other keys to JSON.parse', () => {
    expect(
      parseOtlpJsonText('{"intValue":1e+21,"doubleValue":12345678901234567890,"x":{"intValue":2.5}}'),
    ).toEqual({
      intValue: 1e21,
      doubleValue: Number('12345678901234567890'),
      x: { intValue: 2.5 },
    });
  });

  it('reads pretty-printed text with keys after newlines', () => {
    const text =
      '{\n  "timeUnixNano": 1795971782792412208,\n  "value": {\n    "intValue": -12345678901234567\n  }\n}';
    expect(parseOtlpJsonText(text)).toEqual({
      timeUnixNano: '1795971782792412208',
      value: { intValue: '-12345678901234567' },
    });
  });

  it('rejects integers JSON forbids instead of quoting them into validity', () => {
    expect(() => parseOtlpJsonText('{"intValue":007}')).toThrow(SyntaxError);
    expect(() => parseOtlpJsonText('{"intValue":-}')).toThrow(SyntaxError);
  });

  it('is JSON.parse when no bare integers are present', () => {
    // The Collector's style writes every int64 as a string.
    const text = fixture('sdk-genai-file-exporter.jsonl').split('\n')[0] as string;
    expect(text).not.toMatch(/"intValue":\d/);
    expect(parseOtlpJsonText(text)).toEqual(JSON.parse(text));
  });

  it('decodeOtlpJsonText parses once when every int64 is a string or small, twice when one may be rounded', () => {
    const body = (time: string) =>
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c",` +
      `"spanId":"00f067aa0ba902b7","startTimeUnixNano":${time},"attributes":[{"key":"n","value":{"intValue":42}}]}]}]}]}`;
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(decodeOtlpJsonText(body('"1795971782792412208"')).spans[0]?.startTimeUnixNano).toBe(
        1795971782792412208n,
      );
      expect(parse).toHaveBeenCalledTimes(1);
      parse.mockClear();
      expect(decodeOtlpJsonText(body('1795971782792412208')).spans[0]?.startTimeUnixNano).toBe(
        1795971782792412208n,
      );
      expect(parse).toHaveBeenCalledTimes(2);
    } finally {
      parse.mockRestore();
    }
    expect(() => decodeOtlpJsonText('{"resourceSpans":[}')).toThrow(SyntaxError);
    // A bad time beyond 2^53 is quoted in the error as written, not as JSON.parse rounded it.
    expect(decodeOtlpJsonText(body('-9007199254740993')).errors[0]?.message).toContain('"-9007199254740993"');
  });

  it('throws JSON.parse’s error with positions in the original text', () => {
    const text = '{"intValue":123456789012345678901,"startTimeUnixNano":1,}';
    let expected = '';
    try {
      JSON.parse(text);
    } catch (error) {
      expected = (error as Error).message;
    }
    expect(expected).not.toBe('');
    expect(() => parseOtlpJsonText(text)).toThrow(new SyntaxError(expected));
  });
});

/** A random AnyValue, described so the test can write its OTLP JSON text and its expected decoding independently. */
type Model =
  | { type: 'string'; value: string }
  | { type: 'bool'; value: boolean }
  | { type: 'int'; value: bigint; quoted: boolean }
  | { type: 'double'; value: number }
  | { type: 'bytes'; value: Uint8Array }
  | { type: 'empty' }
  | { type: 'array'; items: Model[] }
  | { type: 'kvlist'; entries: [string, Model][] };

const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const EXACT_INT_KEYS = [
  'startTimeUnixNano',
  'endTimeUnixNano',
  'timeUnixNano',
  'observedTimeUnixNano',
  'intValue',
];
/** Strings that look like the keys the text pass rewrites, to prove string contents are left alone. */
const trickyString = fc.oneof(
  fc.string(),
  fc
    .tuple(fc.constantFrom(...EXACT_INT_KEYS), fc.bigInt(INT64), fc.constantFrom('', ' ', '\n'))
    .map(([key, n, ws]) => `{"${key}"${ws}:${ws}${n},"x":1}`),
);

const { model } = fc.letrec<{ model: Model; array: Model; kvlist: Model }>((tie) => ({
  model: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    trickyString.map((value) => ({ type: 'string' as const, value })),
    fc.boolean().map((value) => ({ type: 'bool' as const, value })),
    fc.record({ type: fc.constant('int' as const), value: fc.bigInt(INT64), quoted: fc.boolean() }),
    fc.double().map((value) => ({ type: 'double' as const, value })),
    fc.uint8Array({ maxLength: 8 }).map((value) => ({ type: 'bytes' as const, value })),
    fc.constant({ type: 'empty' as const }),
    tie('array'),
    tie('kvlist'),
  ),
  array: fc.array(tie('model'), { maxLength: 4 }).map((items) => ({ type: 'array' as const, items })),
  kvlist: fc
    .uniqueArray(fc.tuple(fc.string(), tie('model')), { selector: ([key]) => key, maxLength: 4 })
    .map((entries) => ({ type: 'kvlist' as const, entries })),
}));

/** OTLP JSON text of a value, integers bare unless `quoted`, with the given whitespace around colons. */
function encode(m: Model, ws: string): string {
  switch (m.type) {
    case 'string':
      return `{"stringValue"${ws}:${ws}${JSON.stringify(m.value)}}`;
    case 'bool':
      return `{"boolValue":${m.value}}`;
    case 'int':
      return `{${ws}"intValue"${ws}:${ws}${m.quoted ? `"${m.value}"` : m.value}${ws}}`;
    case 'double':
      return `{"doubleValue":${Number.isFinite(m.value) ? JSON.stringify(m.value) : `"${m.value}"`}}`;
    case 'bytes':
      return `{"bytesValue":"${Buffer.from(m.value).toString('base64')}"}`;
    case 'empty':
      return '{}';
    case 'array':
      return `{"arrayValue":{"values":[${m.items.map((item) => encode(item, ws)).join(',')}]}}`;
    case 'kvlist': {
      const entries = m.entries.map(
        ([key, value]) => `{"key":${JSON.stringify(key)},"value":${encode(value, ws)}}`,
      );
      return `{"kvlistValue":{"values":[${entries.join(',')}]}}`;
    }
  }
}

/** What the decoder must return for a value: the contract, written out. */
function expected(m: Model): AttributeValue {
  switch (m.type) {
    case 'string':
    case 'bool':
    case 'bytes':
      return m.value;
    case 'int':
      return m.value >= BigInt(Number.MIN_SAFE_INTEGER) && m.value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(m.value)
        : m.value.toString();
    case 'double':
      // JSON has no -0: it is written as 0.
      return Object.is(m.value, -0) ? 0 : m.value;
    case 'empty':
      return null;
    case 'array':
      return m.items.map(expected);
    case 'kvlist':
      return Object.fromEntries(m.entries.map(([key, value]) => [key, expected(value)]));
  }
}

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const uint64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const whitespace = fc.constantFrom('', ' ', '\n', '\t ', '\r\n  ');

describe('OTLP JSON text properties', () => {
  it('decodes random AnyValues and 64-bit times, written bare, to their exact values', () => {
    fc.assert(
      fc.property(model, uint64, uint64, uint64, whitespace, (value, start, end, eventTime, ws) => {
        const text =
          `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${TRACE}","spanId":"00f067aa0ba902b7",` +
          `"startTimeUnixNano"${ws}:${ws}${start},${ws}"endTimeUnixNano":${end}${ws},` +
          `"attributes":[{"key":"v","value":${encode(value, ws)}}],` +
          `"events":[{"name":"e","timeUnixNano":${ws}${eventTime}${ws}}]}]}]}]}`;
        // Both ways the receivers could read it: exact integers first, and bare JSON.parse first.
        for (const { spans, errors } of [
          decodeExportTraceRequest(parseOtlpJsonText(text)),
          decodeOtlpJsonText(text),
        ]) {
          expect(errors).toEqual([]);
          expect(spans[0]?.attributes.v).toEqual(expected(value));
          expect(spans[0]?.startTimeUnixNano).toBe(start);
          expect(spans[0]?.endTimeUnixNano).toBe(end === 0n ? undefined : end);
          expect(spans[0]?.events[0]?.timeUnixNano).toBe(eventTime);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('leaves the content of any string exactly as written', () => {
    fc.assert(
      fc.property(fc.oneof(trickyString, fc.json()), (content) => {
        expect(parseOtlpJsonText(`{"stringValue":${JSON.stringify(content)}}`)).toEqual({
          stringValue: content,
        });
      }),
    );
  });

  it('never throws from decodeExportTraceRequest on garbage', () => {
    fc.assert(
      fc.property(fc.anything(), (garbage) => {
        const result = decodeExportTraceRequest(garbage);
        expect(result.spans.length + result.rejectedSpans).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects or keeps each span whole when any of its fields is garbage', () => {
    const fields = [
      'traceId',
      'spanId',
      'parentSpanId',
      'name',
      'kind',
      'startTimeUnixNano',
      'endTimeUnixNano',
      'status',
      'attributes',
      'events',
      'links',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...fields),
        fc.anything(),
        fc.anything(),
        (field, garbage, attributeValue) => {
          const span = {
            traceId: TRACE,
            spanId: '00f067aa0ba902b7',
            attributes: [{ key: 'a', value: attributeValue }],
            [field]: garbage,
          };
          const result = decodeExportTraceRequest({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] });
          expect(result.spans.length + result.rejectedSpans).toBe(1);
          expect(result.errors).toHaveLength(result.rejectedSpans);
          for (const error of result.errors)
            expect(error.path).toMatch(/^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]/);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('either parses text or throws a SyntaxError', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json().map((json) => json.slice(0, -1)),
        ),
        (text) => {
          try {
            parseOtlpJsonText(text);
          } catch (error) {
            expect(error).toBeInstanceOf(SyntaxError);
          }
        },
      ),
    );
  });
});
