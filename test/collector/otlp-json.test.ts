import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeOtlpJson } from '../../src/cli/promote-fixture.js';
import { decodeExportTraceRequest, parseOtlpJsonText } from '../../src/collector/otlp-json.js';
import { TOO_DEEP_TEXT } from '../../src/model/json-depth.js';
import type { SpanRecord } from '../../src/model/span-record.js';

const SPANS_DIR = join(import.meta.dirname, '..', 'spans');
const fixture = (name: string) => readFileSync(join(SPANS_DIR, name), 'utf8');

/** The raw spans of a request as plain JSON.parse sees them (strings stay exact). */
interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  events: { name: string; timeUnixNano: string }[];
}
function rawSpans(request: unknown): RawSpan[] {
  const { resourceSpans } = request as { resourceSpans: { scopeSpans: { spans: RawSpan[] }[] }[] };
  return resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
}

function decodeText(text: string) {
  return decodeExportTraceRequest(parseOtlpJsonText(text));
}

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN_A = 'b7ad6b7169203331';
const SPAN_B = '00f067aa0ba902b7';

/** A request holding the given spans; each span gets valid ids unless it sets its own. */
function request(...spans: Record<string, unknown>[]) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
        scopeSpans: [{ scope: { name: 'test-scope', version: '1.0.0' }, spans }],
      },
    ],
  };
}
function span(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    traceId: TRACE,
    spanId: SPAN_A,
    name: 'work',
    startTimeUnixNano: '1000',
    endTimeUnixNano: '2000',
    ...fields,
  };
}
function decodeOne(fields: Record<string, unknown>): SpanRecord {
  const result = decodeExportTraceRequest(request(span(fields)));
  expect(result.errors).toEqual([]);
  return result.spans[0] as SpanRecord;
}
function errorOf(fields: Record<string, unknown>) {
  const result = decodeExportTraceRequest(request(span(fields)));
  expect(result.spans).toEqual([]);
  expect(result.errors).toHaveLength(1);
  return result.errors[0];
}
const SPAN_PATH = 'resourceSpans[0].scopeSpans[0].spans[0]';

describe('decodeExportTraceRequest on SDK-captured fixtures', () => {
  const text = fixture('sdk-genai-refund.otlp.json');
  const raw = rawSpans(JSON.parse(text));
  const { spans, errors, rejectedSpans } = decodeText(text);
  const byName = (name: string) => spans.filter((s) => s.name === name);
  const root = byName('invoke_agent support-agent')[0] as SpanRecord;

  it('decodes every span of the refund trace', () => {
    expect(errors).toEqual([]);
    expect(rejectedSpans).toBe(0);
    expect(spans).toHaveLength(13);
    expect(spans.map((s) => s.spanId).sort()).toEqual(raw.map((s) => s.spanId).sort());
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([raw[0]?.traceId]));
  });

  it('links every span to the agent root', () => {
    expect(root.parentSpanId).toBeUndefined();
    expect(root.kind).toBe('internal');
    expect(root.attributes['gen_ai.agent.name']).toBe('support-agent');
    for (const s of spans) if (s !== root) expect(s.parentSpanId).toBe(root.spanId);
    expect(byName('chat mock-model').map((s) => s.kind)).toEqual(Array(6).fill('client'));
  });

  it('keeps nanosecond times exactly as written', () => {
    for (const r of raw) {
      const decoded = spans.find((s) => s.spanId === r.spanId) as SpanRecord;
      expect(decoded.startTimeUnixNano.toString()).toBe(r.startTimeUnixNano);
      expect(decoded.endTimeUnixNano?.toString()).toBe(r.endTimeUnixNano);
      expect(decoded.events.map((e) => e.timeUnixNano.toString())).toEqual(
        r.events.map((e) => e.timeUnixNano),
      );
    }
  });

  it('decodes the failing tool’s status, error type and exception event', () => {
    const [failed, retried] = byName('execute_tool issue_refund') as [SpanRecord, SpanRecord];
    expect(failed.status).toEqual({
      code: 'error',
      message: 'payment gateway did not answer within 5000 ms',
    });
    expect(failed.attributes['error.type']).toBe('PaymentGatewayTimeout');
    expect(failed.events.map((e) => e.name)).toEqual(['exception']);
    expect(failed.events[0]?.attributes['exception.type']).toBe('PaymentGatewayTimeout');
    expect(retried.status).toEqual({ code: 'unset' });
    expect(JSON.parse(String(retried.attributes['gen_ai.tool.call.result']))).toMatchObject({
      refund_id: 'RF-88213',
    });
  });

  it('decodes attribute values of every type the SDK wrote', () => {
    const chat = byName('chat mock-model')[1] as SpanRecord;
    expect(chat.attributes['gen_ai.request.temperature']).toBe(0.2);
    expect(chat.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_call']);
    expect(Number.isInteger(chat.attributes['gen_ai.usage.input_tokens'])).toBe(true);
    const output = JSON.parse(String(chat.attributes['gen_ai.output.messages']));
    expect(output[0].parts.map((p: { name: string }) => p.name)).toEqual([
      'get_refund_policy',
      'get_customer',
    ]);
    const tool = byName('execute_tool get_order')[0] as SpanRecord;
    expect(tool.attributes['gen_ai.tool.call.id']).toBe('call_gord_01');
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({
      order_id: 'ORD-20417',
    });
  });

  it('shares one resource and one scope object per group', () => {
    expect(new Set(spans.map((s) => s.resource)).size).toBe(1);
    expect(root.resource['service.name']).toBe('support-agent-service');
    const chats = byName('chat mock-model');
    expect(new Set(chats.map((s) => s.scope)).size).toBe(1);
    expect(chats[0]?.scope).toEqual({ name: 'mock-llm-client', version: '0.9.0' });
    expect(root.scope).toEqual({ name: 'support-agent-framework', version: '1.4.2' });
  });

  it('reads the Collector’s style (int64 as strings, defaults left out) the same as the SDK’s', () => {
    const lines = fixture('sdk-genai-file-exporter.jsonl').trim().split('\n');
    const fromLines = lines.flatMap((line) => {
      const result = decodeText(line);
      expect(result.errors).toEqual([]);
      return result.spans;
    });
    expect(fromLines).toHaveLength(13 + 4 + 2);
    const refundTrace = fromLines.filter((s) => s.traceId === root.traceId);
    const sort = (list: SpanRecord[]) => [...list].sort((a, b) => a.spanId.localeCompare(b.spanId));
    expect(sort(refundTrace)).toEqual(sort(spans));
  });

  it('decodes an ordinary HTTP trace', () => {
    const [agentRequest, httpRequest] = JSON.parse(fixture('sdk-genai-two-traces.otlp.json'));
    expect(decodeExportTraceRequest(agentRequest).spans).toHaveLength(4);
    const http = decodeExportTraceRequest(httpRequest).spans;
    const server = http.find((s) => s.kind === 'server') as SpanRecord;
    const db = http.find((s) => s.kind === 'client') as SpanRecord;
    expect(server.name).toBe('GET /api/orders/:id');
    expect(server.attributes['http.response.status_code']).toBe(200);
    expect(db.parentSpanId).toBe(server.spanId);
    expect(db.attributes['server.port']).toBe(5432);
  });

  it('decodes every stored OTLP fixture without an error', () => {
    const files = readdirSync(SPANS_DIR).filter((f) => f.endsWith('.otlp.json'));
    expect(files.length).toBeGreaterThan(2);
    for (const file of files) {
      const text = fixture(file);
      const document = JSON.parse(text);
      const requests = Array.isArray(document) ? document : [document];
      const decoded = requests.map((r: unknown) => decodeExportTraceRequest(r));
      expect(
        decoded.flatMap((d) => d.errors),
        file,
      ).toEqual([]);
      expect(decoded.flatMap((d) => d.spans).length, file).toBe(requests.flatMap(rawSpans).length);
    }
  });
});

describe('decodeExportTraceRequest field rules', () => {
  it('accepts upper-case hex ids and returns them lowercase', () => {
    const s = decodeOne({
      traceId: TRACE.toUpperCase(),
      spanId: SPAN_A.toUpperCase(),
      parentSpanId: SPAN_B.toUpperCase(),
    });
    expect([s.traceId, s.spanId, s.parentSpanId]).toEqual([TRACE, SPAN_A, SPAN_B]);
  });

  it('treats an empty or absent parentSpanId as a root', () => {
    expect(decodeOne({ parentSpanId: '' }).parentSpanId).toBeUndefined();
    expect(decodeOne({}).parentSpanId).toBeUndefined();
  });

  it('accepts enum numbers and proto enum names', () => {
    expect(decodeOne({ kind: 2, status: { code: 2, message: 'boom' } })).toMatchObject({
      kind: 'server',
      status: { code: 'error', message: 'boom' },
    });
    expect(decodeOne({ kind: 'SPAN_KIND_CONSUMER', status: { code: 'STATUS_CODE_OK' } })).toMatchObject({
      kind: 'consumer',
      status: { code: 'ok' },
    });
    expect(decodeOne({})).toMatchObject({ kind: 'unspecified', status: { code: 'unset' } });
  });

  it('reads a missing or zero end time as a span that had not ended', () => {
    expect(decodeOne({ endTimeUnixNano: undefined }).endTimeUnixNano).toBeUndefined();
    expect(decodeOne({ endTimeUnixNano: '0' }).endTimeUnixNano).toBeUndefined();
    expect(decodeOne({ endTimeUnixNano: 5000 }).endTimeUnixNano).toBe(5000n);
  });

  it('ignores unknown fields everywhere', () => {
    const plain = decodeOne({ attributes: [{ key: 'k', value: { stringValue: 'v' } }] });
    const noisy = decodeExportTraceRequest({
      futureField: 1,
      resourceSpans: [
        {
          resource: {
            attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }],
            entityRefs: [],
          },
          schemaUrl: 'https://opentelemetry.io/schemas/1.37.0',
          scopeSpans: [
            {
              scope: { name: 'test-scope', version: '1.0.0', droppedAttributesCount: 0 },
              spans: [
                span({
                  flags: 257,
                  attributes: [{ key: 'k', value: { stringValue: 'v', x: 1 } }],
                }),
              ],
            },
          ],
        },
      ],
    });
    expect(noisy.errors).toEqual([]);
    expect(noisy.spans).toEqual([plain]);
  });

  it('keeps tracestate and dropped counts, so a forwarded span carries them on; leaves out empty ones', () => {
    const link = { traceId: TRACE, spanId: SPAN_B, traceState: 'x=y' };
    const kept = decodeOne({
      traceState: 'vendor=a,other=b',
      droppedAttributesCount: 3,
      droppedEventsCount: '2',
      links: [link, { ...link, traceState: '' }],
    });
    expect(kept.traceState).toBe('vendor=a,other=b');
    expect(kept.dropped).toEqual({ attributes: 3, events: 2, links: 0 });
    expect(kept.links.map((l) => l.traceState)).toEqual(['x=y', undefined]);
    const plain = decodeOne({ traceState: '', droppedAttributesCount: 0, droppedLinksCount: '0' });
    expect(plain).not.toHaveProperty('traceState');
    expect(plain).not.toHaveProperty('dropped');
  });

  it('writes them back into stored traces (encodeOtlpJson), so a promoted trace keeps them', () => {
    const kept = decodeOne({
      traceState: 'vendor=a',
      droppedLinksCount: 1,
      links: [{ traceId: TRACE, spanId: SPAN_B, traceState: 'x=y' }],
    });
    expect(decodeExportTraceRequest(encodeOtlpJson([kept])).spans).toEqual([kept]);
  });

  it('keeps a span whose tracestate or dropped counts are malformed, leaving those out', () => {
    for (const bad of [
      { droppedEventsCount: -1 },
      { droppedLinksCount: 2 ** 32 },
      { droppedAttributesCount: 1.5 },
      { droppedAttributesCount: 'many' },
      { traceState: 7 },
      { traceState: {} },
    ]) {
      const span = decodeOne({ ...bad, links: [{ traceId: TRACE, spanId: SPAN_B, traceState: 5 }] });
      expect(span.spanId).toBe(SPAN_A);
      expect(span).not.toHaveProperty('traceState');
      expect(span).not.toHaveProperty('dropped');
      expect(span.links[0]).not.toHaveProperty('traceState');
    }
    expect(decodeOne({ droppedEventsCount: -1, droppedLinksCount: 2 }).dropped).toEqual({
      attributes: 0,
      events: 0,
      links: 2,
    });
  });

  it('decodes every AnyValue form', () => {
    const bytes = Uint8Array.from([0, 1, 254, 255]);
    const attributes = decodeOne({
      attributes: [
        { key: 's', value: { stringValue: 'x' } },
        { key: 'b', value: { boolValue: false } },
        { key: 'i', value: { intValue: '42' } },
        { key: 'big', value: { intValue: '9007199254740993' } },
        { key: 'min', value: { intValue: '-9223372036854775808' } },
        { key: 'n', value: { intValue: 7 } },
        { key: 'd', value: { doubleValue: 1.5 } },
        { key: 'nan', value: { doubleValue: 'NaN' } },
        { key: 'inf', value: { doubleValue: 'Infinity' } },
        { key: 'ninf', value: { doubleValue: '-Infinity' } },
        { key: 'bytes', value: { bytesValue: Buffer.from(bytes).toString('base64') } },
        { key: 'empty', value: {} },
        { key: 'absent' },
        // What the JS serializer writes for NaN / Infinity attributes, and for 1e21.
        { key: 'nullDouble', value: { doubleValue: null } },
        { key: 'hugeNumber', value: { intValue: 1e21 } },
        { key: 'arr', value: { arrayValue: { values: [{ intValue: 1 }, { stringValue: 'two' }, {}] } } },
        { key: 'emptyArr', value: { arrayValue: {} } },
        { key: 'map', value: { kvlistValue: { values: [{ key: 'inner', value: { boolValue: true } }] } } },
        { key: '__proto__', value: { stringValue: 'not a prototype' } },
      ],
    }).attributes;
    expect(attributes).toEqual({
      s: 'x',
      b: false,
      i: 42,
      big: '9007199254740993',
      min: '-9223372036854775808',
      n: 7,
      d: 1.5,
      nan: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      ninf: Number.NEGATIVE_INFINITY,
      bytes,
      empty: null,
      absent: null,
      nullDouble: null,
      hugeNumber: '1000000000000000000000',
      arr: [1, 'two', null],
      emptyArr: [],
      map: { inner: true },
      ['__proto__']: 'not a prototype',
    });
    expect(Object.getPrototypeOf(attributes)).toBe(Object.prototype);
    expect(Object.hasOwn(attributes, '__proto__')).toBe(true);
  });

  it('reads legacy instrumentationLibrarySpans', () => {
    const result = decodeExportTraceRequest({
      resourceSpans: [
        {
          instrumentationLibrarySpans: [
            { instrumentationLibrary: { name: 'old-lib' }, spans: [span(), span({ spanId: 'x' })] },
          ],
        },
      ],
    });
    expect(result.spans.map((s) => s.scope)).toEqual([{ name: 'old-lib' }]);
    expect(result.errors[0]?.path).toBe('resourceSpans[0].instrumentationLibrarySpans[0].spans[1].spanId');
  });

  it('decodes events and links', () => {
    const s = decodeOne({
      events: [
        {
          name: 'exception',
          timeUnixNano: '1500',
          attributes: [{ key: 'exception.type', value: { stringValue: 'E' } }],
        },
      ],
      links: [
        { traceId: TRACE, spanId: SPAN_B, attributes: [{ key: 'why', value: { stringValue: 'retry' } }] },
      ],
    });
    expect(s.events).toEqual([
      { name: 'exception', timeUnixNano: 1500n, attributes: { 'exception.type': 'E' } },
    ]);
    expect(s.links).toEqual([{ traceId: TRACE, spanId: SPAN_B, attributes: { why: 'retry' } }]);
  });
});

describe('decodeExportTraceRequest rejections', () => {
  it('rejects a request that is not an object with one error and no spans', () => {
    for (const bad of [null, 'x', 42, [request(span())]]) {
      const result = decodeExportTraceRequest(bad);
      expect(result.spans).toEqual([]);
      expect(result.errors).toHaveLength(1);
      expect(result.errors[0]?.message).toMatch(/^expected an ExportTraceServiceRequest object/);
    }
    expect(decodeExportTraceRequest({ resourceSpans: {} }).errors).toEqual([
      { path: 'resourceSpans', message: 'expected an array, got an object' },
    ]);
    expect(decodeExportTraceRequest({})).toEqual({ spans: [], errors: [], rejectedSpans: 0 });
  });

  it('keeps the good spans next to a bad one', () => {
    const result = decodeExportTraceRequest(
      request(span(), span({ spanId: 'abc' }), span({ spanId: SPAN_B })),
    );
    expect(result.spans.map((s) => s.spanId)).toEqual([SPAN_A, SPAN_B]);
    expect(result.rejectedSpans).toBe(1);
    expect(result.errors).toEqual([
      {
        path: 'resourceSpans[0].scopeSpans[0].spans[1].spanId',
        message: 'expected 16 hex characters, got "abc" (3 characters)',
      },
    ]);
  });

  it('says that base64 ids are not OTLP JSON', () => {
    const base64Trace = Buffer.from(TRACE, 'hex').toString('base64');
    expect(errorOf({ traceId: base64Trace })).toEqual({
      path: `${SPAN_PATH}.traceId`,
      message: `expected 32 hex characters, got "${base64Trace}" (24 characters); OTLP JSON ids are hex, not base64`,
    });
    const base64Span = Buffer.from(SPAN_A, 'hex').toString('base64');
    expect(errorOf({ parentSpanId: base64Span })?.message).toContain('OTLP JSON ids are hex, not base64');
    expect(errorOf({ spanId: `${SPAN_A}00` })?.message).not.toContain('base64');
  });

  it('rejects all-zero and missing ids', () => {
    expect(errorOf({ traceId: '0'.repeat(32) })).toEqual({
      path: `${SPAN_PATH}.traceId`,
      message: 'an all-zero trace id is invalid',
    });
    expect(errorOf({ spanId: '0'.repeat(16) })?.message).toBe('an all-zero span id is invalid');
    expect(errorOf({ parentSpanId: '0'.repeat(16) })?.path).toBe(`${SPAN_PATH}.parentSpanId`);
    expect(errorOf({ spanId: undefined })?.message).toBe(
      'expected a span id of 16 hex characters, got nothing',
    );
    expect(errorOf({ traceId: 7 })?.message).toBe('expected a trace id of 32 hex characters, got number 7');
  });

  it('names the field of a wrong type', () => {
    expect(errorOf({ name: 5 })).toEqual({
      path: `${SPAN_PATH}.name`,
      message: 'expected a string, got number 5',
    });
    expect(errorOf({ kind: 9 })?.message).toMatch(/^expected 0-5 or SPAN_KIND_UNSPECIFIED, .*, got 9$/);
    expect(errorOf({ kind: 'server' })?.path).toBe(`${SPAN_PATH}.kind`);
    expect(errorOf({ status: { code: 'ERROR' } })?.path).toBe(`${SPAN_PATH}.status.code`);
    expect(errorOf({ startTimeUnixNano: '-5' })).toEqual({
      path: `${SPAN_PATH}.startTimeUnixNano`,
      message: 'expected nanoseconds since the epoch (an unsigned 64-bit integer), got "-5"',
    });
    expect(errorOf({ attributes: {} })).toEqual({
      path: `${SPAN_PATH}.attributes`,
      message: 'expected an array of {"key", "value"}, got an object',
    });
    expect(errorOf({ events: [{ name: 'e', timeUnixNano: 'soon' }] })?.path).toBe(
      `${SPAN_PATH}.events[0].timeUnixNano`,
    );
    expect(errorOf({ links: [{ traceId: TRACE, spanId: 'zz' }] })?.path).toBe(`${SPAN_PATH}.links[0].spanId`);
  });

  it('gives the full path into a bad attribute value', () => {
    const attributes = [{ key: 'ok', value: { stringValue: 'fine' } }, { value: { stringValue: 'no key' } }];
    expect(errorOf({ attributes })).toEqual({
      path: `${SPAN_PATH}.attributes[1].key`,
      message: 'missing key',
    });
    const nested = [
      {
        key: 'list',
        value: {
          arrayValue: {
            values: [
              { intValue: 1 },
              { kvlistValue: { values: [{ key: 'flag', value: { boolValue: 'yes' } }] } },
            ],
          },
        },
      },
    ];
    expect(errorOf({ attributes: nested })).toEqual({
      path: `${SPAN_PATH}.attributes[0].value.arrayValue.values[1].kvlistValue.values[0].value.boolValue`,
      message: 'expected true or false, got "yes"',
    });
    expect(errorOf({ attributes: [{ key: 'n', value: { intValue: '12.5' } }] })?.path).toBe(
      `${SPAN_PATH}.attributes[0].value.intValue`,
    );
    expect(errorOf({ attributes: [{ key: 'two', value: { stringValue: 'a', intValue: 1 } }] })?.message).toBe(
      'an AnyValue holds one value, got both stringValue and intValue',
    );
  });

  it('rejects every span of a resource whose attributes are bad, with one error', () => {
    const bad = {
      resourceSpans: [
        { resource: { attributes: 'x' }, scopeSpans: [{ spans: [span(), span()] }, { spans: [span()] }] },
      ],
    };
    expect(decodeExportTraceRequest(bad)).toEqual({
      spans: [],
      errors: [
        {
          path: 'resourceSpans[0].resource.attributes',
          message: 'expected an array of {"key", "value"}, got a string ("x")',
        },
      ],
      rejectedSpans: 3,
    });
  });

  it('bounds the error list and counts the rest', () => {
    const bad = Array.from({ length: 5 }, () => span({ spanId: 'bad' }));
    const result = decodeExportTraceRequest(request(...bad), { maxErrors: 2 });
    expect(result.rejectedSpans).toBe(5);
    expect(result.errors).toHaveLength(3);
    expect(result.errors[2]).toEqual({ path: '', message: '3 more errors not listed' });
  });

  it('keeps a span whose value nests too deep, the value as the too-deep marker, and never overflows the stack', () => {
    let value: unknown = { stringValue: 'bottom' };
    for (let i = 0; i < 100_000; i++) value = { arrayValue: { values: [value] } };
    let inKvlist: unknown = { stringValue: 'bottom' };
    for (let i = 0; i < 65; i++) inKvlist = { kvlistValue: { values: [{ key: 'k', value: inKvlist }] } };
    const result = decodeExportTraceRequest(
      request(
        span({
          attributes: [
            { key: 'deep', value },
            { key: 'kvlist', value: inKvlist },
            { key: 'ok', value: { stringValue: 'x' } },
          ],
        }),
      ),
    );
    expect(result.errors).toEqual([]);
    expect(result.spans[0]?.attributes).toEqual({ deep: TOO_DEEP_TEXT, kvlist: TOO_DEEP_TEXT, ok: 'x' });
    // 64 levels are read as they are.
    let limit: unknown = { stringValue: 'bottom' };
    for (let i = 0; i < 64; i++) limit = { arrayValue: { values: [limit] } };
    const kept = decodeExportTraceRequest(request(span({ attributes: [{ key: 'a', value: limit }] })));
    expect(JSON.stringify(kept.spans[0]?.attributes.a)).toBe(`${'['.repeat(64)}"bottom"${']'.repeat(64)}`);
  });
});

describe('ids and times read span after span', () => {
  // The decoder keeps the last trace and parent id it read, so the spans after share its string,
  // and reads decimal times without a regex. Spans one after another from small pools of ids (one
  // in two cases, all zero, too short, base64, not hex) and of tricky times, over many requests:
  // each span is kept or rejected as the field rules written out here say.
  const hexOf = (length: number) => new RegExp(`^[0-9a-fA-F]{${length}}$`);
  const validId = (raw: unknown, length: number) =>
    typeof raw === 'string' && hexOf(length).test(raw) && /[1-9a-fA-F]/.test(raw)
      ? raw.toLowerCase()
      : undefined;
  const validTime = (raw: string) =>
    /^-?[0-9]+$/.test(raw) && BigInt(raw) >= 0n && BigInt(raw) < 2n ** 64n ? BigInt(raw) : undefined;
  const ids = (id: string) =>
    fc.constantFrom(
      id,
      id.toUpperCase(),
      '0'.repeat(id.length),
      id.slice(1),
      'q'.repeat(id.length),
      'AAAAAAAAAAAA',
    );
  const traceId = fc.oneof(ids(TRACE), ids('4bf92f3577b34da6a3ce929d0e0e4736'));
  const parentId = fc.option(fc.oneof(ids(SPAN_B), ids('a3ce929d0e0e4736')), { nil: undefined });
  const time = fc.oneof(
    fc.constantFrom(
      '',
      '-',
      '-0',
      '-1',
      '01',
      '1e3',
      ' 12',
      '12 ',
      '+5',
      '18446744073709551615',
      '18446744073709551616',
    ),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  );
  const spanFields = fc.record({ traceId, parentSpanId: parentId, startTimeUnixNano: time });

  it('keeps and rejects each span as the field rules say', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(spanFields, { minLength: 1, maxLength: 6 }), { maxLength: 4 }),
        (requests) => {
          for (const fields of requests) {
            const result = decodeExportTraceRequest(request(...fields.map((f) => span(f))));
            const expected = fields.flatMap((f) => {
              const trace = validId(f.traceId, 32);
              const parent = f.parentSpanId === undefined ? undefined : validId(f.parentSpanId, 16);
              const start = validTime(f.startTimeUnixNano);
              if (
                trace === undefined ||
                (f.parentSpanId !== undefined && parent === undefined) ||
                start === undefined
              )
                return [];
              return [{ traceId: trace, parentSpanId: parent, startTimeUnixNano: start }];
            });
            expect(
              result.spans.map((s) => ({
                traceId: s.traceId,
                parentSpanId: s.parentSpanId,
                startTimeUnixNano: s.startTimeUnixNano,
              })),
            ).toEqual(expected);
            expect(result.rejectedSpans).toBe(fields.length - expected.length);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('attribute keys through the cache of repeated keys', () => {
  // Keys are looked up in a few slots, each predicting the next: spans from small pools of keys
  // (so slots are hit, predicted and collide), long, empty, unusual and `__proto__` keys, repeated
  // keys, in any order, over many requests. Each span's attributes are exactly its list's entries,
  // a repeated key with its last value, in the order an object given them one by one keeps.
  const pooled = fc.constantFrom(
    'gen_ai.operation.name',
    'gen_ai.tool.name',
    'gen_ai.tool.call.id',
    'gen_ai.input.messages',
    'gen_ai.output.messages',
    'http.route',
    'a',
    'b',
    'ab',
    'ba',
    '',
    '__proto__',
    'constructor',
    'x'.repeat(65),
    'x'.repeat(64),
    'é',
  );
  const key = fc.oneof(
    { weight: 4, arbitrary: pooled },
    { weight: 1, arbitrary: fc.string({ maxLength: 80 }) },
  );
  const entry = fc.record({ key, value: fc.string({ maxLength: 8 }) });
  const spanAttributes = fc.array(entry, { maxLength: 8 });

  it('keeps every key as written, whatever came before', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(spanAttributes, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 }),
        (requests) => {
          for (const lists of requests) {
            const spans = lists.map((list) =>
              span({ attributes: list.map((e) => ({ key: e.key, value: { stringValue: e.value } })) }),
            );
            const result = decodeExportTraceRequest(request(...spans));
            expect(result.spans).toHaveLength(lists.length);
            lists.forEach((list, i) => {
              const expected: Record<string, string> = {};
              for (const e of list)
                Object.defineProperty(expected, e.key, {
                  value: e.value,
                  enumerable: true,
                  writable: true,
                  configurable: true,
                });
              const attributes = result.spans[i]?.attributes ?? {};
              expect(Object.entries(attributes)).toEqual(Object.entries(expected));
              expect(Object.getPrototypeOf(attributes)).toBe(Object.prototype);
            });
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
