/**
 * The OTLP receivers against real clients: the official OTLP exporters (HTTP JSON, HTTP
 * protobuf with gzip, gRPC with gzip) exporting spans of a real TracerProvider, and raw
 * node:http / grpc-js calls for what no exporter sends: bad JSON, bad protobuf, wrong types,
 * gzip bombs, oversized and 100,000-span bodies, ids of the wrong length, a full buffer, auth.
 * Each gets its status, the receiver stays up, and good traces sent around them arrive intact.
 */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ContinuedTexts, TraceTexts } from '../../src/collector/continued-texts.js';
import {
  type ExportResponse,
  startGrpcReceiver,
  TRACE_EXPORT_PATH,
  traceServiceDefinition,
} from '../../src/collector/grpc-receiver.js';
import { type RunningReceiver, startHttpReceiver } from '../../src/collector/http-receiver.js';
import type { IngestResult, TraceIngest } from '../../src/collector/ingest.js';
import type { DecodeResult } from '../../src/collector/otlp-json.js';
import { decodeExportTraceProtobuf, decodeExportTraceResponse } from '../../src/collector/otlp-proto.js';
import { ExportTraceServiceRequest } from '../../src/collector/otlp-proto-schema.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { extensionOf } from '../../src/model/text-extensions.js';

/**
 * A real TraceIngest that keeps what it took and answers as told; it holds its traces' long
 * values as the adapter does, for the decoder to continue (TraceIngest.heldTexts).
 */
class RecordingIngest implements TraceIngest {
  taken: DecodeResult[] = [];
  answer: IngestResult | 'throw' = { kind: 'accepted' };
  isReady = true;
  held = new Map<string, TraceTexts>();
  /** What the decoder noted of each span's input history, as the span arrived (the ingest notes too). */
  arrivedNoted: (string | undefined)[] = [];
  ingest(decoded: DecodeResult): IngestResult {
    if (this.answer === 'throw') throw new Error('adapter exploded');
    if (this.answer.kind === 'accepted') {
      this.taken.push(decoded);
      const texts = new ContinuedTexts();
      for (const span of decoded.spans) {
        this.arrivedNoted.push(extensionOf(span.attributes, 'gen_ai.input.messages')?.added);
        const held = this.held.get(span.traceId) ?? new TraceTexts();
        this.held.set(span.traceId, held);
        texts.take(span, held);
      }
    }
    return this.answer;
  }
  heldTexts(traceId: string): TraceTexts | undefined {
    return this.held.get(traceId);
  }
  ready(): boolean {
    return this.isReady;
  }
  spans(): SpanRecord[] {
    return this.taken.flatMap((d) => d.spans);
  }
}

const LIMIT = 1024 * 1024;
const TOKEN = 's3cret-token';
const FULL: IngestResult = {
  kind: 'unavailable',
  reason: 'full',
  retryAfterSeconds: 4.2,
  message: 'buffer full',
};
const CLOSING: IngestResult = {
  kind: 'unavailable',
  reason: 'shutting_down',
  retryAfterSeconds: 0,
  message: 'closing',
};
const GZIP = 'gzip' as unknown as NonNullable<ConstructorParameters<typeof ProtoExporter>[0]>['compression'];

/** Spans of one agent trace from a real provider: a root and one child per name. */
function agentTrace(...names: string[]): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] });
  const tracer = provider.getTracer('receivers-test', '1.0.0');
  const root = tracer.startSpan('invoke_agent', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
  const parent = trace.setSpan(context.active(), root);
  for (const name of names)
    tracer.startSpan(name, { attributes: { 'gen_ai.tool.name': name } }, parent).end();
  root.end();
  return memory.getFinishedSpans();
}

function exportWith(exporter: SpanExporter, spans: ReadableSpan[]): Promise<{ code: number; error?: Error }> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

/** Every span of `spans` reached `ingest` with its ids, parent, name and attributes. */
function expectIntact(ingest: RecordingIngest, spans: ReadableSpan[]): void {
  const got = new Map(ingest.spans().map((s) => [s.spanId, s]));
  for (const span of spans) {
    expect(got.get(span.spanContext().spanId)).toMatchObject({
      traceId: span.spanContext().traceId,
      parentSpanId: span.parentSpanContext?.spanId,
      name: span.name,
      attributes: span.attributes,
      scope: { name: 'receivers-test', version: '1.0.0' },
    });
  }
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json: () => Record<string, unknown>;
}

/** Sockets whose write errors (after the answer arrived) are ignored. */
const quieted = new WeakSet<object>();

/** A raw request; `body` as an array is sent chunked (no Content-Length). */
function request(url: string, method: string, headers: object, body?: Uint8Array | Uint8Array[]) {
  return new Promise<Reply>((resolve, reject) => {
    const req = http.request(url, { method, headers: headers as http.OutgoingHttpHeaders }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          json: () => JSON.parse(`${body}`),
        });
      });
    });
    req.on('error', reject);
    // The receiver may cut the connection while the rest of a refused body is still being written:
    // after the answer has arrived, a reset of that write is expected, not a failure of the test.
    // Once per socket: the global agent keeps sockets alive across requests.
    req.on('socket', (socket) => {
      if (quieted.has(socket)) return;
      quieted.add(socket);
      socket.on('error', () => {});
    });
    if (Array.isArray(body)) for (const chunk of body) req.write(chunk);
    req.end(Array.isArray(body) ? undefined : body);
  });
}
const J = { 'content-type': 'application/json' };
const P = { 'content-type': 'application/x-protobuf' };
const JZ = { ...J, 'content-encoding': 'gzip' };
/** POST to the plain receiver's /v1/traces (or `url`). */
const post = (headers: object, body: Uint8Array | Uint8Array[], url = traces(plain)) =>
  request(url, 'POST', headers, body);
const get = (path: string, receiver = plain) => request(`${receiver.url}${path}`, 'GET', {});

/** One raw span per `traceId/spanId` (hex, any length), in one ResourceSpans. */
function rawRequest<T>(ids: string[], id: (hex: string) => T) {
  const spans = ids.map((pair, i) => {
    const [t = '', s = ''] = pair.split('/');
    return { traceId: id(t), spanId: id(s), name: `s${i}`, startTimeUnixNano: '1', endTimeUnixNano: '2' };
  });
  return { resourceSpans: [{ scopeSpans: [{ scope: { name: 'raw' }, spans }] }] };
}
const jsonRequest = (...ids: string[]) => Buffer.from(JSON.stringify(rawRequest(ids, (h) => h)));
/** Encoded with our schema, which (unlike the SDK's serializer) writes ids of any length. */
const protoRequest = (...ids: string[]) =>
  ExportTraceServiceRequest.encode(rawRequest(ids, (h) => Buffer.from(h, 'hex'))).finish();
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** google.rpc.Status and its OTLP details, written from googleapis' .proto files, to read our encoder's bytes. */
const rpc = protobuf.parse(`syntax = "proto3"; package google.rpc;
  message Any { string type_url = 1; bytes value = 2; }
  message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
  message FieldViolation { string field = 1; string description = 2; }
  message BadRequest { repeated FieldViolation field_violations = 1; }
  message Duration { int64 seconds = 1; int32 nanos = 2; }
  message RetryInfo { Duration retry_delay = 1; }`).root;
function readStatus(bytes: Uint8Array): { code: number; message: string; details: Record<string, unknown> } {
  const type = rpc.lookupType('google.rpc.Status');
  const status = type.toObject(type.decode(bytes), { longs: Number, defaults: true });
  const details: Record<string, unknown> = {};
  for (const any of status.details as { typeUrl: string; value: Uint8Array }[]) {
    const type = rpc.lookupType(any.typeUrl.replace('type.googleapis.com/', ''));
    details[type.name] = type.toObject(type.decode(any.value), { longs: Number });
  }
  return { code: status.code, message: status.message, details };
}

const ingest = new RecordingIngest();
let plain: RunningReceiver;
let guarded: RunningReceiver;
let grpcPlain: RunningReceiver;
let grpcGuarded: RunningReceiver;
const traces = (r: RunningReceiver) => `${r.url}/v1/traces`;

const BASE = { host: '127.0.0.1', port: 0, ingest, maxRequestBytes: LIMIT };
beforeAll(async () => {
  [plain, guarded, grpcPlain, grpcGuarded] = await Promise.all([
    startHttpReceiver(BASE),
    startHttpReceiver({ ...BASE, bearerToken: TOKEN }),
    startGrpcReceiver(BASE),
    startGrpcReceiver({ ...BASE, bearerToken: TOKEN }),
  ]);
});
afterAll(() => Promise.all([plain, guarded, grpcPlain, grpcGuarded].map((r) => r?.close())));
beforeEach(() => {
  ingest.taken = [];
  ingest.held = new Map();
  ingest.arrivedNoted = [];
  ingest.answer = { kind: 'accepted' };
  ingest.isReady = true;
});

describe('OTLP/HTTP receiver', () => {
  it('takes spans from the official JSON and gzip-protobuf exporters intact', async () => {
    const jsonSpans = agentTrace('search', 'fetch');
    const protoSpans = agentTrace('write_file');
    const json = new JsonExporter({ url: traces(plain) });
    const proto = new ProtoExporter({ url: traces(plain), compression: GZIP });
    expect((await exportWith(json, jsonSpans)).code).toBe(0);
    expect((await exportWith(proto, protoSpans)).code).toBe(0);
    await Promise.all([json.shutdown(), proto.shutdown()]);
    expect(ingest.spans()).toHaveLength(5);
    expectIntact(ingest, [...jsonSpans, ...protoSpans]);
  });

  it('answers bad data with 400 and a google.rpc.Status in the request encoding', async () => {
    const json = await post(J, Buffer.from('{"resourceSpans": ['));
    expect([json.status, json.headers['content-type']]).toEqual([400, 'application/json']);
    expect(json.json()).toMatchObject({ code: 3, message: expect.stringContaining('invalid JSON') });

    const good = ProtobufTraceSerializer.serializeRequest(agentTrace('x')) as Uint8Array;
    for (const bytes of [good.subarray(0, good.length - 7), Buffer.alloc(6, 0xff)]) {
      const reply = await post(P, bytes);
      expect([reply.status, reply.headers['content-type']]).toEqual([400, 'application/x-protobuf']);
      const status = readStatus(reply.body);
      expect(status).toMatchObject({
        code: 3,
        message: expect.stringContaining('not a valid OTLP protobuf'),
      });
      expect(status.details.BadRequest).toMatchObject({ fieldViolations: [{ description: status.message }] });
    }
    expect((await post(JZ, Buffer.from('not gzip'))).status).toBe(400);
    expect(ingest.taken).toHaveLength(0);
  });

  it('answers random protobuf with 400 exactly when the decoder cannot read it, else 200', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), async (bytes) => {
        const { spans, rejectedSpans, errors } = decodeExportTraceProtobuf(bytes);
        const unreadable = spans.length === 0 && rejectedSpans === 0 && errors.length > 0;
        expect((await post(P, bytes)).status).toBe(unreadable ? 400 : 200);
      }),
      { numRuns: 40 },
    );
  });

  it('refuses wrong types (415), methods (405), paths (404); serves health and readiness', async () => {
    const text = await post({ 'content-type': 'text/plain' }, Buffer.from('hi'));
    expect(text.status).toBe(415);
    expect(text.json().message).toContain('application/x-protobuf');
    const charset = await post({ 'content-type': 'application/json; charset=utf-8' }, jsonRequest());
    expect(charset.status).toBe(200);
    expect((await post({ ...J, 'content-encoding': 'br' }, Buffer.from('{}'))).status).toBe(415);
    const wrongMethod = await get('/v1/traces');
    expect([wrongMethod.status, wrongMethod.headers.allow]).toEqual([405, 'POST']);
    expect((await post(J, Buffer.from('{}'), `${plain.url}/v1/metrics`)).status).toBe(404);
    expect([(await get('/healthz')).status, (await get('/readyz')).status]).toEqual([200, 200]);
    ingest.isReady = false;
    expect([(await get('/healthz')).status, (await get('/readyz')).status]).toEqual([200, 503]);
  });

  it('answers 413 past the limit: declared, streamed, and inflated from a gzip bomb; then serves on', async () => {
    expect((await post(J, Buffer.alloc(LIMIT + 1000, 0x20))).status).toBe(413);
    const streamed = await post(J, Array(20).fill(Buffer.alloc(64 * 1024, 0x20)));
    expect([streamed.status, streamed.json().message]).toEqual([413, expect.stringContaining('on the wire')]);
    const bomb = gzipSync(Buffer.alloc(32 * LIMIT, 0x20));
    expect(bomb.length).toBeLessThan(LIMIT / 8);
    const inflated = await post(JZ, bomb);
    expect(inflated.status).toBe(413);
    expect(inflated.json().message).toContain('after decompression');
    // A body far past what is worth discarding: the connection is cut, the receiver serves on.
    await post(J, Array(160).fill(Buffer.alloc(64 * 1024))).catch(() => undefined);
    const spans = agentTrace('after_bomb');
    const exporter = new JsonExporter({ url: traces(plain) });
    expect((await exportWith(exporter, spans)).code).toBe(0);
    await exporter.shutdown();
    expectIntact(ingest, spans);
  });

  it('takes a 100,000-span request under a large limit and refuses it (413) under a small one', async () => {
    const body = jsonRequest(
      ...Array.from({ length: 100_000 }, (_, i) => `${hex(1 + (i >> 4), 32)}/${hex(i + 1, 16)}`),
    );
    const roomy = await startHttpReceiver({ ...BASE, maxRequestBytes: 64 * LIMIT });
    try {
      const reply = await post(J, body, traces(roomy));
      expect([reply.status, `${reply.body}`]).toEqual([200, '{}']);
      expect(ingest.spans()).toHaveLength(100_000);
      expect(ingest.spans()[99_999]).toMatchObject({ spanId: hex(100_000, 16), name: 's99999' });
    } finally {
      await roomy.close();
    }
    expect((await post(J, body)).status).toBe(413);
    expect((await post(JZ, gzipSync(body))).status).toBe(413);
  });

  it('answers ids of the wrong length with 200 partial_success; the valid spans are taken', async () => {
    const T = hex(7, 32);
    const short = `${T.slice(2)}/${hex(2, 16)}`; // a 15-byte trace id
    const reply = await post(
      J,
      jsonRequest(`${T}/${hex(1, 16)}`, short, `${T}/${hex(3, 12)}`, `${T}/${hex(4, 16)}`),
    );
    expect(reply.status).toBe(200);
    const partial = reply.json().partialSuccess as Record<string, string>;
    expect(partial.rejectedSpans).toBe('2');
    expect(partial.errorMessage).toMatch(/2 of 4 spans rejected.*spans\[1\]\.traceId.*spans\[2\]\.spanId/);
    expect(ingest.spans().map((s) => s.spanId)).toEqual([hex(1, 16), hex(4, 16)]);

    const protoReply = await post(P, protoRequest(`${T}/${hex(5, 16)}`, `${T}/${hex(6, 14)}`));
    expect(protoReply.status).toBe(200);
    expect(decodeExportTraceResponse(protoReply.body).partialSuccess?.rejectedSpans).toBe(1);
  });

  it('answers a full buffer with 429 and a closing one with 503, both with Retry-After', async () => {
    ingest.answer = FULL;
    const full = await post(P, new Uint8Array(0));
    expect([full.status, full.headers['retry-after']]).toEqual([429, '5']);
    expect(readStatus(full.body).details.RetryInfo).toEqual({ retryDelay: { seconds: 5 } });
    ingest.answer = CLOSING;
    const closing = await post(J, jsonRequest());
    expect([closing.status, closing.headers['retry-after']]).toEqual([503, '1']);
    expect(closing.json()).toMatchObject({ code: 14, message: 'closing' });
    ingest.answer = 'throw';
    expect((await post(J, jsonRequest())).status).toBe(500);
  });

  it('requires the bearer token when configured (401 otherwise)', async () => {
    const anonymous = await post(J, jsonRequest(), traces(guarded));
    expect([anonymous.status, anonymous.headers['www-authenticate']]).toEqual([401, 'Bearer']);
    const wrong = await post({ ...J, authorization: 'Bearer nope' }, jsonRequest(), traces(guarded));
    expect(wrong.status).toBe(401);
    const spans = agentTrace('guarded');
    const headers = { Authorization: `Bearer ${TOKEN}` };
    const exporter = new JsonExporter({ url: traces(guarded), headers });
    expect((await exportWith(exporter, spans)).code).toBe(0);
    await exporter.shutdown();
    expectIntact(ingest, spans);
    expect((await get('/healthz', guarded)).status).toBe(200);
  });

  it('keeps good traces intact when bad requests arrive around them', async () => {
    const before = agentTrace('before');
    const after = agentTrace('after');
    const exporter = new ProtoExporter({ url: traces(plain), compression: GZIP });
    const results = await Promise.all([
      exportWith(exporter, before),
      post(JZ, gzipSync(Buffer.alloc(8 * LIMIT))),
      post(J, Buffer.from('{"resourceSpans":[{"scopeSpans":[{"spans":[')),
      post(P, Buffer.from([0x0a, 0xff, 0x01])),
      exportWith(exporter, after),
    ]);
    await exporter.shutdown();
    expect(results.map((r) => ('status' in r ? r.status : r.code))).toEqual([0, 413, 400, 400, 0]);
    expect(ingest.spans()).toHaveLength(before.length + after.length);
    expectIntact(ingest, [...before, ...after]);
  });
});

describe('OTLP/gRPC receiver', () => {
  const method = traceServiceDefinition.Export as grpc.MethodDefinition<Uint8Array, ExportResponse>;
  /** A raw TraceService/Export call (gzip-compressed if asked); resolves with the response or the error. */
  function call(
    receiver: RunningReceiver,
    bytes: Uint8Array,
    options: { token?: string; gzip?: boolean } = {},
  ) {
    const gzip = { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip };
    const address = receiver.url.replace('http://', '');
    const client = new grpc.Client(address, grpc.credentials.createInsecure(), options.gzip ? gzip : {});
    const metadata = new grpc.Metadata();
    if (options.token) metadata.set('authorization', `Bearer ${options.token}`);
    return new Promise<{ error: grpc.ServiceError | null; response?: ExportResponse }>((resolve) => {
      const done = (error: grpc.ServiceError | null, response?: ExportResponse) => {
        client.close();
        resolve({ error, response });
      };
      const { requestSerialize: serialize, responseDeserialize: deserialize } = method;
      client.makeUnaryRequest(TRACE_EXPORT_PATH, serialize, deserialize, bytes, metadata, done);
    });
  }
  const detailsOf = (error: grpc.ServiceError | null) =>
    readStatus(error?.metadata.get('grpc-status-details-bin')[0] as Buffer).details;

  it('takes spans from the official gRPC exporter, plain and gzip, intact', async () => {
    const first = agentTrace('grpc_search');
    const second = agentTrace('grpc_fetch', 'grpc_write');
    const gzip = new GrpcExporter({ url: grpcPlain.url, compression: GZIP });
    const none = new GrpcExporter({ url: grpcPlain.url });
    expect((await exportWith(gzip, first)).code).toBe(0);
    expect((await exportWith(none, second)).code).toBe(0);
    await Promise.all([gzip.shutdown(), none.shutdown()]);
    expectIntact(ingest, [...first, ...second]);
  });

  it('answers bad data INVALID_ARGUMENT, ids of the wrong length with partial_success', async () => {
    const bad = await call(grpcPlain, Buffer.from([0x0a, 0x05, 0x01]));
    expect(bad.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.error?.details).toContain('not a valid OTLP protobuf');
    expect(detailsOf(bad.error).BadRequest).toBeDefined();
    const T = hex(9, 32);
    const partial = await call(grpcPlain, protoRequest(`${T}/${hex(1, 16)}`, `${T.slice(2)}/${hex(2, 16)}`));
    expect(partial.error).toBeNull();
    expect(partial.response?.partial?.rejectedSpans).toBe(1);
    expect(ingest.spans().map((s) => [s.traceId, s.spanId])).toEqual([[T, hex(1, 16)]]);
  });

  it('answers a full or closing adapter UNAVAILABLE with RetryInfo; a throwing one INTERNAL', async () => {
    for (const answer of [FULL, CLOSING]) {
      ingest.answer = answer;
      const { error } = await call(grpcPlain, new Uint8Array(0));
      expect(error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(detailsOf(error).RetryInfo).toEqual({ retryDelay: { seconds: answer === FULL ? 5 : 1 } });
    }
    ingest.answer = 'throw';
    expect((await call(grpcPlain, new Uint8Array(0))).error?.code).toBe(grpc.status.INTERNAL);
  });

  it('answers RESOURCE_EXHAUSTED past the limit, also when it is reached only by inflating', async () => {
    expect((await call(grpcPlain, Buffer.alloc(LIMIT + 10))).error?.code).toBe(
      grpc.status.RESOURCE_EXHAUSTED,
    );
    const bomb = await call(grpcPlain, Buffer.alloc(8 * LIMIT), { gzip: true });
    expect(bomb.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const spans = agentTrace('after_big');
    expect(
      (await call(grpcPlain, ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array)).error,
    ).toBeNull();
    expectIntact(ingest, spans);
  });

  it('requires the bearer token when configured (UNAUTHENTICATED otherwise)', async () => {
    expect((await call(grpcGuarded, new Uint8Array(0))).error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await call(grpcGuarded, new Uint8Array(0), { token: 'nope' })).error?.code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
    const spans = agentTrace('grpc_guarded');
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${TOKEN}`);
    const exporter = new GrpcExporter({ url: grpcGuarded.url, metadata, compression: GZIP });
    expect((await exportWith(exporter, spans)).code).toBe(0);
    await exporter.shutdown();
    expectIntact(ingest, spans);
  });
});

describe('both receivers, a history continued across requests', () => {
  /** Two turns of one conversation, each a chat span whose input history holds the one before. */
  function twoTurns(): [ReadableSpan, ReadableSpan, string] {
    const memory = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] });
    const tracer = provider.getTracer('receivers-test', '1.0.0');
    const root = tracer.startSpan('invoke_agent');
    const parent = trace.setSpan(context.active(), root);
    const first = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'ü☃🙂 '.repeat(400) }] }]);
    const added = ',{"role":"assistant","parts":[{"type":"text","content":"done ✓"}]}]';
    for (const history of [first, `${first.slice(0, -1)}${added}`])
      tracer.startSpan('chat', { attributes: { 'gen_ai.input.messages': history } }, parent).end();
    root.end();
    const [one, two] = memory.getFinishedSpans() as [ReadableSpan, ReadableSpan];
    return [one, two, added];
  }

  for (const via of ['OTLP/HTTP protobuf', 'OTLP/gRPC']) {
    it(`${via}: decoded from its new bytes on the value the ingest holds`, async () => {
      const [one, two, added] = twoTurns();
      const exporter =
        via === 'OTLP/gRPC'
          ? new GrpcExporter({ url: grpcPlain.url })
          : new ProtoExporter({ url: traces(plain) });
      expect((await exportWith(exporter, [one])).code).toBe(0);
      expect((await exportWith(exporter, [two])).code).toBe(0);
      await exporter.shutdown();
      expectIntact(ingest, [one, two]);
      const second = ingest.spans().find((span) => span.spanId === two.spanContext().spanId) as SpanRecord;
      // Noted across requests as it arrived, before the ingest took it: only the decoder notes so.
      expect(ingest.arrivedNoted).toEqual([undefined, added]);
      expect(second.attributes['gen_ai.input.messages']).toBe(two.attributes['gen_ai.input.messages']);
    });
  }
});
