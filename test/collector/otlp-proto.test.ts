/**
 * OTLP protobuf decoding, proven against the official serializer: what otlp-transformer's
 * ProtobufTraceSerializer writes decodes to the same SpanRecords as its JsonTraceSerializer
 * output through the JSON path. Then bad bytes (truncated, random, wrong wire types, bad ids,
 * deep values) built with our schema's encoder or by hand, and the response.
 */
import { context, createTraceState, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DecodeError,
  type DecodeResult,
  decodeExportTraceRequest,
  parseOtlpJsonText,
} from '../../src/collector/otlp-json.js';
import {
  decodeExportTraceProtobuf,
  decodeExportTraceResponse,
  encodeExportTraceResponse,
} from '../../src/collector/otlp-proto.js';
import { ExportTraceServiceRequest } from '../../src/collector/otlp-proto-schema.js';
import { toReadableSpan } from '../../src/collector/to-readable-span.js';
import { TOO_DEEP_TEXT } from '../../src/model/json-depth.js';
import type { SpanRecord } from '../../src/model/span-record.js';

/** Both official serializations of `spans`, each through its decoder. */
function bothWays(spans: ReadableSpan[]): { proto: DecodeResult; json: DecodeResult } {
  const proto = decodeExportTraceProtobuf(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);
  const text = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans) as Uint8Array);
  return { proto, json: decodeExportTraceRequest(parseOtlpJsonText(text)) };
}

/** Spans recorded by a real SDK provider per resource. */
function recordSpans(...runs: [Resource, (provider: BasicTracerProvider) => void][]): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  for (const [resource, run] of runs)
    run(new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  return exporter.getFinishedSpans();
}

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN_A = 'b7ad6b7169203331';
const SPAN_B = '00f067aa0ba902b7';
const SPAN_PATH = 'resourceSpans[0].scopeSpans[0].spans';
const hex = (id: string) => Buffer.from(id, 'hex');
const kv = (key: string, value: Record<string, unknown>) => ({ key, value });
const encode = (request: object) =>
  ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(request)).finish();

/** A request encoded with our schema: one resource and scope around spans with valid ids unless given. */
function encodeRequest(...spans: Record<string, unknown>[]): Uint8Array {
  const span = { traceId: hex(TRACE), spanId: hex(SPAN_A), name: 'work', startTimeUnixNano: '1000' };
  const resource = { attributes: [kv('service.name', { stringValue: 'checkout' })] };
  const scopeSpans = [{ scope: { name: 'test' }, spans: spans.map((s) => ({ ...span, ...s })) }];
  return encode({ resourceSpans: [{ resource, scopeSpans }] });
}

/** Hand-made wire bytes: a varint, a length-delimited field, a KeyValue. */
const varint = (n: number): number[] => (n < 128 ? [n] : [(n % 128) | 128, ...varint(Math.floor(n / 128))]);
const len = (field: number, body: ArrayLike<number>) => [
  ...varint((field << 3) | 2),
  ...varint(body.length),
  ...Array.from(body),
];
const keyValue = (key: string, value: number[]) => [...len(1, Buffer.from(key)), ...len(2, value)];
const spanType = ExportTraceServiceRequest.root.lookupType('opentelemetry.proto.trace.v1.Span');
const spanBytes = (fields: Record<string, unknown> = {}) =>
  spanType
    .encode(spanType.fromObject({ traceId: hex(TRACE), spanId: hex(SPAN_A), name: 'work', ...fields }))
    .finish();
/** A request of one resource and scope around raw Span bodies. */
const rawRequest = (...spans: ArrayLike<number>[]) =>
  new Uint8Array(
    len(
      1,
      len(
        2,
        spans.flatMap((s) => len(2, s)),
      ),
    ),
  );

/** `levels` AnyValues nested around a string (arrays, or kvlists where `isArray` says no), as JSON and as bytes. */
function nested(levels: number, isArray: (level: number) => boolean) {
  let json: Record<string, unknown> = { stringValue: 'bottom' };
  let bytes = len(1, Buffer.from('bottom'));
  for (let i = 0; i < levels; i++) {
    json = isArray(i) ? { arrayValue: { values: [json] } } : { kvlistValue: { values: [kv('k', json)] } };
    bytes = isArray(i) ? len(5, len(1, bytes)) : len(6, len(1, keyValue('k', bytes)));
  }
  return { json, bytes };
}

describe('decodeExportTraceProtobuf against the official serializers', () => {
  const remote = { traceId: TRACE, spanId: SPAN_B, traceFlags: 1, isRemote: true };
  const spans = recordSpans(
    [
      resourceFromAttributes({ 'service.name': 'agent', 'deployment.environment': 'test' }),
      (provider) => {
        const tracer = provider.getTracer('agent-sdk', '1.2.3', {
          schemaUrl: 'https://opentelemetry.io/s/1.30.0',
        });
        const root = tracer.startSpan(
          'invoke_agent support',
          { kind: SpanKind.SERVER },
          trace.setSpanContext(context.active(), remote),
        );
        const inRoot = trace.setSpan(context.active(), root);
        const tool = tracer.startSpan(
          'execute_tool refund',
          { startTime: [1_795_971_782, 792_412_208] },
          inRoot,
        );
        tool.setAttributes({
          'app.amounts': [12.5, 99, -3],
          'app.flags': [true, false, null],
          'app.tags': ['a', '', 'ü ☃ 🙂'],
          'app.near_2_53': 2 ** 53 - 1,
          'app.negative': -(2 ** 53 - 1),
          'app.empty': [],
        });
        tool.addEvent('gen_ai.tool.message', { id: 'm1', count: 3 }, [1_795_971_782, 900_000_001]);
        tool.recordException(new Error('payment gateway timeout'));
        tool.setStatus({ code: SpanStatusCode.ERROR, message: 'payment gateway did not answer' });
        tool.end([1_795_971_783, 1]);
        const links = [
          { context: tool.spanContext(), attributes: { 'link.reason': 'retry' } },
          { context: remote },
        ];
        const chat = tracer.startSpan('chat model', { kind: SpanKind.CLIENT, links }, inRoot);
        chat.setStatus({ code: SpanStatusCode.OK });
        chat.end();
        root.end();
      },
    ],
    [
      resourceFromAttributes({ 'service.name': 'mcp-server', 'host.cores': 2 }),
      (provider) => {
        for (const scope of ['mcp', 'db']) {
          provider.getTracer(scope).startSpan(`${scope} call`, { kind: SpanKind.PRODUCER }).end();
          provider.getTracer(scope).startSpan(`${scope} receive`, { kind: SpanKind.CONSUMER }).end();
        }
      },
    ],
  );
  const { proto, json } = bothWays(spans);
  const named = (name: string) => proto.spans.find((s) => s.name === name);

  it('decodes every span, as the JSON path does', () => {
    expect(proto.errors).toEqual([]);
    expect(proto.rejectedSpans).toBe(0);
    expect(proto.spans).toHaveLength(7);
    expect(proto).toEqual(json);
  });

  it('keeps ids, remote parents, exact times, kinds, statuses, events and links', () => {
    const [root, tool, chat] = ['invoke_agent support', 'execute_tool refund', 'chat model'].map(named);
    expect(root).toMatchObject({ traceId: TRACE, parentSpanId: SPAN_B, kind: 'server' });
    expect(tool).toMatchObject({
      parentSpanId: root?.spanId,
      startTimeUnixNano: 1_795_971_782_792_412_208n,
      endTimeUnixNano: 1_795_971_783_000_000_001n,
      status: { code: 'error', message: 'payment gateway did not answer' },
      attributes: { 'app.flags': [true, false, null], 'app.near_2_53': 2 ** 53 - 1, 'app.empty': [] },
    });
    expect(tool?.events.map((e) => e.name)).toEqual(['gen_ai.tool.message', 'exception']);
    expect(tool?.events[0]).toEqual({
      name: 'gen_ai.tool.message',
      timeUnixNano: 1_795_971_782_900_000_001n,
      attributes: { id: 'm1', count: 3 },
    });
    expect(chat).toMatchObject({ kind: 'client', status: { code: 'ok' } });
    expect(chat?.links).toEqual([
      { traceId: TRACE, spanId: tool?.spanId, attributes: { 'link.reason': 'retry' } },
      { traceId: TRACE, spanId: SPAN_B, attributes: {} },
    ]);
  });

  it('shares one resource object per resource and one scope object per scope', () => {
    const [agent, mcp1, mcp2, db] = ['execute_tool refund', 'mcp call', 'mcp receive', 'db call'].map(named);
    expect(agent?.scope).toEqual({ name: 'agent-sdk', version: '1.2.3' });
    expect(mcp1?.resource).toEqual({ 'service.name': 'mcp-server', 'host.cores': 2 });
    expect(mcp1?.resource).toBe(db?.resource);
    expect(mcp1?.scope).toBe(mcp2?.scope);
    expect(mcp1?.scope).not.toBe(db?.scope);
  });

  it('matches the JSON path on random spans, attribute values and bad ids', () => {
    fc.assert(
      fc.property(fc.array(readableSpan(), { maxLength: 6 }), (random) => {
        const both = bothWays(random);
        expect(both.proto.spans).toEqual(both.json.spans);
        expect(both.proto.rejectedSpans).toBe(both.json.rejectedSpans);
        expect(both.proto.errors.map((e) => e.path)).toEqual(both.json.errors.map((e) => e.path));
      }),
      { numRuns: 150 },
    );
  });
});

describe('repeated strings and 64-bit times against protobufjs', () => {
  // Keys and names from a small pool of strings alike in length and in all but one byte (some
  // multibyte), in a random order on each span, over many requests one after another: what the
  // cache of repeated strings and its guess of the next one must never confuse. Times over the
  // whole 64-bit range. The oracle is protobufjs's own decode and toObject of the same bytes.
  const pool = [
    ...['attr.a0', 'bttr.a0', 'attr.a1', 'atxr.a0', 'attr.\u00e90', 'attr.\u00e91', 'attr.a'],
    ...['x', 'y', '', 'a'.repeat(64), `b${'a'.repeat(63)}`, 'a'.repeat(65)],
  ];
  const word = fc.constantFrom(...pool);
  const time = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
  const value = fc.oneof(word, fc.string({ unit: 'binary', maxLength: 8 }));
  const attributes = fc.uniqueArray(fc.tuple(word, value), { selector: ([key]) => key, maxLength: 6 });
  const span = fc.record({
    name: word,
    start: time,
    end: time,
    attributes,
    events: fc.array(fc.record({ name: word, time, attributes }), { maxLength: 2 }),
  });
  const keyValues = (list: [string, string][]) => list.map(([key, v]) => kv(key, { stringValue: v }));
  const plain = (list: [string, string][]) =>
    Object.fromEntries(list.map(([key, v]) => [key, v])) as Record<string, string>;

  it('decodes span for span what protobufjs reads', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(span, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 }),
        (requests) => {
          for (const spans of requests) {
            const bytes = encodeRequest(
              ...spans.map((s, i) => ({
                spanId: hex(`${(i + 1).toString(16).padStart(2, '0')}${SPAN_A.slice(2)}`),
                name: s.name,
                startTimeUnixNano: s.start.toString(),
                endTimeUnixNano: s.end.toString(),
                attributes: keyValues(s.attributes),
                events: s.events.map((e) => ({
                  name: e.name,
                  timeUnixNano: e.time.toString(),
                  attributes: keyValues(e.attributes),
                })),
              })),
            );
            const oracle = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(bytes), {
              longs: String,
              defaults: true,
            }) as {
              resourceSpans: {
                scopeSpans: {
                  spans: {
                    name: string;
                    startTimeUnixNano: string;
                    endTimeUnixNano: string;
                    attributes: { key: string; value: { stringValue: string } }[];
                    events: {
                      name: string;
                      timeUnixNano: string;
                      attributes: { key: string; value: { stringValue: string } }[];
                    }[];
                  }[];
                }[];
              }[];
            };
            const expected = (oracle.resourceSpans[0]?.scopeSpans[0]?.spans ?? []).map((o) => ({
              name: o.name,
              startTimeUnixNano: BigInt(o.startTimeUnixNano),
              endTimeUnixNano: o.endTimeUnixNano === '0' ? undefined : BigInt(o.endTimeUnixNano),
              attributes: plain(o.attributes.map((a) => [a.key, a.value.stringValue])),
              events: o.events.map((e) => ({
                name: e.name,
                timeUnixNano: BigInt(e.timeUnixNano),
                attributes: plain(e.attributes.map((a) => [a.key, a.value.stringValue])),
              })),
            }));
            const decoded = decodeExportTraceProtobuf(bytes);
            expect(decoded.errors).toEqual([]);
            expect(
              decoded.spans.map((d) => ({
                name: d.name,
                startTimeUnixNano: d.startTimeUnixNano,
                endTimeUnixNano: d.endTimeUnixNano,
                attributes: d.attributes,
                events: d.events,
              })),
            ).toEqual(expected);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('what a forwarded span carries on', () => {
  it('keeps tracestate and dropped counts from decoding through toReadableSpan and both serializers', () => {
    const [received] = decodeExportTraceRequest({
      resourceSpans: [
        {
          resource: { attributes: [kv('service.name', { stringValue: 'checkout' })] },
          scopeSpans: [
            {
              scope: { name: 'test' },
              spans: [
                {
                  traceId: TRACE,
                  spanId: SPAN_A,
                  traceState: 'vendor=a,other=b',
                  name: 'work',
                  kind: 1,
                  startTimeUnixNano: '1000',
                  endTimeUnixNano: '2000',
                  droppedAttributesCount: 4,
                  droppedEventsCount: 0,
                  droppedLinksCount: 9,
                  links: [{ traceId: TRACE, spanId: SPAN_B, traceState: 'x=y' }],
                },
              ],
            },
          ],
        },
      ],
    }).spans as [SpanRecord];
    expect(received).toMatchObject({ traceState: 'vendor=a,other=b', dropped: { attributes: 4, links: 9 } });
    const forwarded = toReadableSpan(received);
    expect(forwarded.spanContext().traceState?.serialize()).toBe('vendor=a,other=b');
    const { proto, json } = bothWays([forwarded]);
    expect(proto.spans).toEqual([received]);
    expect(json.spans).toEqual([received]);
  });

  it('forwards a tracestate exactly as received, even one the W3C parser would rewrite', () => {
    const raw = 'Vendor=Value,a=1,a=2';
    const record = {
      ...(decodeExportTraceProtobuf(encodeRequest({ traceState: raw })).spans[0] as SpanRecord),
      links: [{ traceId: TRACE, spanId: SPAN_B, attributes: {}, traceState: raw }],
    };
    expect(record.traceState).toBe(raw);
    const forwarded = toReadableSpan(record);
    expect(forwarded.spanContext().traceState?.serialize()).toBe(raw);
    const { proto, json } = bothWays([forwarded]);
    for (const { spans } of [proto, json]) {
      expect(spans[0]?.traceState).toBe(raw);
      expect(spans[0]?.links[0]?.traceState).toBe(raw);
    }
  });
});

/** Hand-built ReadableSpans (nested values and bad ids the SDK would not make) for both serializers. */
function readableSpan(): fc.Arbitrary<ReadableSpan> {
  // Values both serializations carry exactly: no NaN or infinities (JSON writes null), integers
  // within 2^53 (JSON writes a rounded decimal beyond), no lone surrogates (not UTF-8).
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.maxSafeInteger(),
      fc
        .double({ noNaN: true, noDefaultInfinity: true })
        .filter((d) => !Number.isInteger(d) || Number.isSafeInteger(d)),
      fc.boolean(),
      fc.constant(null),
      fc.uint8Array({ maxLength: 6 }),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('value'), { maxKeys: 3 }),
    ),
  }));
  const attributes = fc.dictionary(fc.string({ unit: 'binary', maxLength: 10 }), value, { maxKeys: 4 });
  // Mostly valid ids; sometimes empty, all zero or a byte too long, which both paths reject.
  const id = (size: number) =>
    fc
      .oneof(
        { weight: 8, arbitrary: fc.uint8Array({ minLength: size, maxLength: size }) },
        fc.constantFrom(new Uint8Array(0), new Uint8Array(size), new Uint8Array(size + 1).fill(7)),
      )
      .map((bytes) => Buffer.from(bytes).toString('hex'));
  const time = fc.tuple(fc.nat({ max: 2 ** 32 - 1 }), fc.nat({ max: 999_999_999 }));
  const traceState = fc.option(fc.constantFrom('a=b', 'vendor=x,other=y', 'k@t=v-1'), { nil: undefined });
  const count = fc.oneof(fc.constant(0), fc.nat({ max: 2 ** 32 - 1 }));
  const resources = [resourceFromAttributes({ 'service.name': 'a' }), resourceFromAttributes({ n: 1 })];
  const scopes = [{ name: 'one' }, { name: 'two', version: '2.0', attributes: { 'scope.attr': 'x' } }];
  const span = fc.record({
    traceId: id(16),
    spanId: id(8),
    parent: fc.option(id(8), { nil: undefined }),
    name: fc.string({ unit: 'binary', maxLength: 10 }),
    kind: fc.integer({ min: 0, max: 4 }),
    startTime: time,
    endTime: fc.oneof(time, fc.constant([0, 0])),
    attributes,
    status: fc.record({
      code: fc.integer({ min: 0, max: 2 }),
      message: fc.option(fc.string(), { nil: undefined }),
    }),
    events: fc.array(fc.record({ name: fc.string(), time, attributes }), { maxLength: 2 }),
    links: fc.array(fc.record({ traceId: id(16), spanId: id(8), attributes, traceState }), { maxLength: 2 }),
    resource: fc.nat({ max: 1 }),
    scope: fc.nat({ max: 1 }),
    traceState,
    dropped: fc.tuple(count, count, count),
  });
  return span.map(
    (s) =>
      ({
        ...s,
        spanContext: () => ({
          traceId: s.traceId,
          spanId: s.spanId,
          traceFlags: 1,
          traceState: s.traceState === undefined ? undefined : createTraceState(s.traceState),
        }),
        parentSpanContext: s.parent && { traceId: s.traceId, spanId: s.parent, traceFlags: 1 },
        links: s.links.map((l) => ({
          context: {
            traceId: l.traceId,
            spanId: l.spanId,
            traceFlags: 0,
            traceState: l.traceState === undefined ? undefined : createTraceState(l.traceState),
          },
          attributes: l.attributes,
        })),
        resource: resources[s.resource],
        instrumentationScope: scopes[s.scope],
        droppedAttributesCount: s.dropped[0],
        droppedEventsCount: s.dropped[1],
        droppedLinksCount: s.dropped[2],
      }) as unknown as ReadableSpan,
  );
}

describe('decodeExportTraceProtobuf on values', () => {
  it('reads every AnyValue kind as the JSON decoder does, int64 beyond 2^53 as decimal strings', () => {
    const int = (intValue: string | number) => ({ intValue });
    const values: [string, Record<string, unknown>][] = [
      ['max_safe', int(2 ** 53 - 1)],
      ['2^53', int('9007199254740992')],
      ['2^53+1', int('9007199254740993')],
      ['-2^53', int('-9007199254740992')],
      ['max', int('9223372036854775807')],
      ['min', int('-9223372036854775808')],
      ['minus_one', int(-1)],
      ['d', { doubleValue: -0.5 }],
      ['b', { boolValue: true }],
      ['bytes', { bytesValue: 'AAEC/w==' }],
      ['empty', {}],
      ['s', { stringValue: 'ü ☃ 🙂' }],
      ['list', { arrayValue: { values: [int(1), { stringValue: 'x' }, {}, { arrayValue: {} }] } }],
      ['map', { kvlistValue: { values: [kv('k', { kvlistValue: { values: [kv('__proto__', int(2))] } })] } }],
    ];
    const attributes = values.map(([key, value]) => kv(key, value));
    const proto = decodeExportTraceProtobuf(encodeRequest({ attributes }));
    const asJson = {
      resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: TRACE, spanId: SPAN_A, attributes }] }] }],
    };
    expect(proto.spans[0]?.attributes).toEqual(decodeExportTraceRequest(asJson).spans[0]?.attributes);
    expect(proto.spans[0]?.attributes).toMatchObject({
      max_safe: 2 ** 53 - 1,
      '2^53': '9007199254740992',
      '2^53+1': '9007199254740993',
      '-2^53': '-9007199254740992',
      min: '-9223372036854775808',
      minus_one: -1,
      bytes: new Uint8Array([0, 1, 2, 255]),
      empty: null,
    });
  });

  it('copies ids, strings and bytes out of the request, which can be reused at once', () => {
    const body = encodeRequest({ attributes: [kv('blob', { bytesValue: 'AQID' })] });
    const pool = new Uint8Array(body.length + 10);
    pool.set(body, 10);
    const { spans } = decodeExportTraceProtobuf(pool.subarray(10));
    pool.fill(0);
    const blob = spans[0]?.attributes.blob as Uint8Array;
    expect(spans[0]).toMatchObject({
      traceId: TRACE,
      spanId: SPAN_A,
      name: 'work',
      resource: { 'service.name': 'checkout' },
    });
    expect(blob).toEqual(new Uint8Array([1, 2, 3]));
    expect(blob.buffer.byteLength).toBe(3);
  });

  it('keeps values nested past 64 levels as the too-deep marker, as the JSON decoder does, and never recurses deeper', () => {
    // By hand: protobufjs's own encoder stops at 100 message levels.
    const deep = nested(66, (level) => level % 2 === 1);
    const spans = [
      { traceId: TRACE, spanId: SPAN_A, attributes: [kv('deep', deep.json)] },
      { traceId: TRACE, spanId: SPAN_B },
    ];
    const proto = decodeExportTraceProtobuf(
      rawRequest(
        [...spanBytes({ name: '' }), ...len(9, keyValue('deep', deep.bytes))],
        spanBytes({ name: '', spanId: hex(SPAN_B) }),
      ),
    );
    expect(proto).toEqual(decodeExportTraceRequest({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
    expect(proto.errors).toEqual([]);
    expect(proto.spans.map((s) => [s.spanId, s.attributes.deep])).toEqual([
      [SPAN_A, TOO_DEEP_TEXT],
      [SPAN_B, undefined],
    ]);

    const deeper = nested(2_000, () => true);
    const result = decodeExportTraceProtobuf(
      rawRequest([...spanBytes(), ...len(9, keyValue('a', deeper.bytes))], spanBytes()),
    );
    expect(result.errors).toEqual([]);
    expect(result.spans.map((s) => s.attributes.a)).toEqual([TOO_DEEP_TEXT, undefined]);
    const limit = nested(64, () => true);
    const kept = decodeExportTraceProtobuf(
      rawRequest([...spanBytes(), ...len(9, keyValue('a', limit.bytes))]),
    );
    expect(JSON.stringify(kept.spans[0]?.attributes.a)).toBe(`${'['.repeat(64)}"bottom"${']'.repeat(64)}`);
  });
});

describe('decodeExportTraceProtobuf on bad spans', () => {
  it('rejects each span with a bad id, kind or status code, naming its path, and keeps the others', () => {
    const bad = (fields: Record<string, unknown>) => ({ spanId: hex(SPAN_B), ...fields });
    const result = decodeExportTraceProtobuf(
      encodeRequest(
        {},
        bad({ traceId: Buffer.alloc(15, 1) }),
        bad({ spanId: Buffer.alloc(9, 1) }),
        bad({ traceId: Buffer.alloc(16) }),
        bad({ spanId: undefined }),
        bad({ parentSpanId: Buffer.alloc(7, 1) }),
        bad({ parentSpanId: Buffer.alloc(8) }),
        bad({ links: [{ traceId: hex(TRACE), spanId: Buffer.alloc(4, 1) }] }),
        bad({ kind: 9 }),
        bad({ status: { code: 5 } }),
        bad({ parentSpanId: Buffer.alloc(0) }),
      ),
    );
    expect(result.spans.map((s) => [s.spanId, s.parentSpanId])).toEqual([
      [SPAN_A, undefined],
      [SPAN_B, undefined],
    ]);
    expect(result.rejectedSpans).toBe(9);
    expect(result.errors.map((e) => `${e.path.slice(SPAN_PATH.length)}: ${e.message}`)).toEqual([
      '[1].traceId: expected a trace id of 16 bytes, got 15',
      '[2].spanId: expected a span id of 8 bytes, got 9',
      '[3].traceId: an all-zero trace id is invalid',
      '[4].spanId: expected a span id of 8 bytes, got none',
      '[5].parentSpanId: expected a span id of 8 bytes, got 7',
      '[6].parentSpanId: an all-zero span id is invalid',
      '[7].links[0].spanId: expected a span id of 8 bytes, got 4',
      '[8].kind: expected a SpanKind 0-5, got 9',
      '[9].status.code: expected a StatusCode 0-2, got 5',
    ]);
  });

  it('lists at most maxErrors errors and sums up the rest', () => {
    const spans = Array.from({ length: 5 }, () => ({ traceId: Buffer.alloc(3) }));
    const result = decodeExportTraceProtobuf(encodeRequest(...spans), { maxErrors: 2 });
    expect(result.errors.map((e) => e.path)).toEqual([
      `${SPAN_PATH}[0].traceId`,
      `${SPAN_PATH}[1].traceId`,
      '',
    ]);
    expect(result.errors[2]?.message).toBe('3 more errors not listed');
    expect(result.rejectedSpans).toBe(5);
  });

  it('keeps a resource or scope whose attributes nest too deep, with its spans', () => {
    const deep = keyValue('deep', nested(70, () => true).bytes);
    const span = len(2, spanBytes());
    const badSpan = len(2, spanBytes({ traceId: Buffer.alloc(1) }));
    const resourceSpans = [
      [...len(1, [...len(1, deep), ...len(1, deep)]), ...len(2, [...span, ...span]), ...len(2, span)],
      [...len(2, [...len(1, [...len(3, deep), ...len(3, deep)]), ...span, ...badSpan]), ...len(2, span)],
    ];
    const result = decodeExportTraceProtobuf(new Uint8Array(resourceSpans.flatMap((r) => len(1, r))));
    // Only the span with a one-byte trace id is rejected.
    expect(result.errors.map((e) => e.path)).toEqual(['resourceSpans[1].scopeSpans[0].spans[1].traceId']);
    expect(result.rejectedSpans).toBe(1);
    expect(result.spans).toHaveLength(5);
    expect(result.spans[0]?.resource).toEqual({ deep: TOO_DEEP_TEXT });
    expect(result.spans[3]?.scope.attributes).toEqual({ deep: TOO_DEEP_TEXT });
  });

  it('keeps reading a span, event or link after an attribute nested too deep', () => {
    const deep = keyValue('deep', nested(70, () => true).bytes);
    const twice = (field: number) => [...len(field, deep), ...len(field, deep)];
    const event = len(11, [...twice(3), ...len(3, keyValue('ok', len(1, [0x61])))]);
    const link = len(13, [...len(1, hex(TRACE)), ...len(2, hex(SPAN_B)), ...twice(4)]);
    const spans = [
      [...spanBytes(), ...event],
      [...spanBytes(), ...link],
      [...spanBytes(), ...twice(9)],
      spanBytes(),
    ];
    const result = decodeExportTraceProtobuf(rawRequest(...spans));
    expect(result.errors).toEqual([]);
    expect(result.spans.map((s) => [s.events[0]?.attributes, s.links[0]?.attributes, s.attributes])).toEqual([
      [{ deep: TOO_DEEP_TEXT, ok: 'a' }, undefined, {}],
      [undefined, { deep: TOO_DEEP_TEXT }, {}],
      [undefined, undefined, { deep: TOO_DEEP_TEXT }],
      [undefined, undefined, {}],
    ]);
  });

  it('reads legacy instrumentation_library_spans only when there are no scope_spans', () => {
    const span = (name: string) => ({ traceId: hex(TRACE), spanId: hex(SPAN_A), name });
    const legacy = { instrumentationLibrary: { name: 'old-lib', version: '0.1' }, spans: [span('legacy')] };
    const only = decodeExportTraceProtobuf(
      encode({ resourceSpans: [{ instrumentationLibrarySpans: [legacy] }] }),
    );
    expect(only.spans.map((s) => [s.name, s.scope])).toEqual([
      ['legacy', { name: 'old-lib', version: '0.1' }],
    ]);
    const both = { scopeSpans: [{ spans: [span('current')] }], instrumentationLibrarySpans: [legacy] };
    expect(decodeExportTraceProtobuf(encode({ resourceSpans: [both] })).spans.map((s) => s.name)).toEqual([
      'current',
    ]);
    // Legacy first (not the canonical order): what it added, a bad span's error too, is taken back.
    const legacyFirst = [
      ...len(1000, [
        ...len(2, spanBytes({ name: 'legacy' })),
        ...len(2, spanBytes({ spanId: Buffer.alloc(2) })),
      ]),
      ...len(2, len(2, spanBytes({ name: 'current' }))),
    ];
    const result = decodeExportTraceProtobuf(new Uint8Array(len(1, legacyFirst)));
    expect(result).toMatchObject({ spans: [{ name: 'current' }], errors: [], rejectedSpans: 0 });
  });

  it('skips unknown fields of every wire type', () => {
    const unknown = [
      ...[...varint((40 << 3) | 0), 150, 1],
      ...[...varint((41 << 3) | 1), 1, 2, 3, 4, 5, 6, 7, 8],
      ...[...varint((42 << 3) | 5), 1, 2, 3, 4],
      ...len(43, [1, 2]),
      ...[...varint((44 << 3) | 3), 8, 1, ...varint((44 << 3) | 4)],
    ];
    const result = decodeExportTraceProtobuf(
      new Uint8Array([...rawRequest([...spanBytes(), ...unknown]), ...unknown]),
    );
    expect(result).toMatchObject({ errors: [], spans: [{ name: 'work' }] });
  });
});

describe('decodeExportTraceProtobuf on bytes that are not a request', () => {
  const UNREADABLE = /^not a valid OTLP protobuf ExportTraceServiceRequest: /;
  function unreadable(bytes: Uint8Array): DecodeError {
    const result = decodeExportTraceProtobuf(bytes);
    expect(result).toMatchObject({
      spans: [],
      rejectedSpans: 0,
      errors: [{ message: expect.stringMatching(UNREADABLE) }],
    });
    expect(result.errors).toHaveLength(1);
    return result.errors[0] as DecodeError;
  }

  it('gives one error and no span for every truncation of a valid request', () => {
    const spans = recordSpans([
      resourceFromAttributes({ 'service.name': 's' }),
      (provider) => {
        const span = provider.getTracer('t').startSpan('work', { attributes: { a: [1, 2], b: 'x', c: 0.5 } });
        span.addEvent('e', { n: 1 });
        span.end();
      },
    ]);
    const body = ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array;
    expect(decodeExportTraceProtobuf(body).spans).toHaveLength(1);
    for (let cut = 1; cut < body.length; cut++) unreadable(body.subarray(0, cut));
  });

  it('says which field has a wrong wire type, and where', () => {
    expect(unreadable(rawRequest([...spanBytes(), ...len(6, [1])]))).toEqual({
      path: `${SPAN_PATH}[0]`,
      message: expect.stringContaining(
        'Span field 6 has wire type 2 (length-delimited), expected 0 (varint)',
      ),
    });
    const valueAsVarint = rawRequest([...spanBytes(), ...len(9, [...len(1, [0x61]), 0x10, 1])]);
    expect(unreadable(valueAsVarint).path).toBe(`${SPAN_PATH}[0].attributes[0]`);
    expect(unreadable(new Uint8Array([0x17, 0])).message).toMatch(/invalid wire type 7/);
    expect(unreadable(new Uint8Array([0x00, 0])).message).toMatch(/field number 0/);
  });

  it('rejects lengths that do not nest', () => {
    // A ScopeSpans of 4 bytes holding a Span whose name claims 4 bytes more: the body has them, the Span not.
    const overrun = [...len(1, len(2, [...varint((2 << 3) | 2), 2, ...varint((5 << 3) | 2), 4])), 0, 0, 0, 0];
    expect(unreadable(new Uint8Array(overrun)).message).toMatch(/runs past the end of its/);
  });

  it('never throws on random bytes: one error when unreadable, else errors with a span path', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const result = decodeExportTraceProtobuf(bytes);
        const messages = result.errors.map((e) => e.message);
        if (messages.some((m) => m.startsWith('not a valid'))) expect(result.errors).toHaveLength(1);
        else for (const e of result.errors) expect(e.path).toMatch(/^resourceSpans\[\d+\]/);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('ExportTraceServiceResponse', () => {
  it('is empty when every span was accepted', () => {
    expect(encodeExportTraceResponse()).toHaveLength(0);
    expect(decodeExportTraceResponse(encodeExportTraceResponse())).toEqual({});
  });

  it('carries partial_success, as otlp-transformer reads it', () => {
    const partial = {
      rejectedSpans: 2 ** 40,
      errorMessage: `${SPAN_PATH}[3].spanId: an all-zero span id is invalid`,
    };
    const bytes = encodeExportTraceResponse(partial);
    expect(decodeExportTraceResponse(bytes)).toEqual({ partialSuccess: partial });
    expect(ProtobufTraceSerializer.deserializeResponse(bytes)).toEqual({ partialSuccess: partial });
  });
});
