import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { TraceAdapter } from '../../src/collector/adapter.js';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { type RunningService, startService } from '../../src/collector/serve.js';
import type { Report } from '../../src/model/report.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { freePort } from '../helpers/free-port.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { REFUND_SCENARIO } from '../processor/vercel-agent.js';
import {
  agentSpans,
  type ClientProtocol,
  eventually,
  type NextHop,
  sendWith,
  startNextHop,
} from './next-hop.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

function scenarioDir(): string {
  const dir = temporaryDir('toolpath-serve-');
  writeFileSync(join(dir, 'refund.json'), JSON.stringify(REFUND_SCENARIO));
  return dir;
}

interface RawRequest {
  path: string;
  body: Buffer;
  /** The HTTP content type; gRPC requests have none here. */
  contentType?: string;
}

/** An OTLP/HTTP endpoint that keeps every request's raw body and answers 200. */
async function rawHttpHop(): Promise<{ url: string; received: RawRequest[]; close: () => Promise<void> }> {
  const { createServer: createHttpServer } = await import('node:http');
  const received: RawRequest[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        body: Buffer.concat(chunks),
        contentType: req.headers['content-type'],
      });
      const json = req.headers['content-type'] === 'application/json';
      res
        .writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
        .end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** An OTLP/gRPC endpoint (traces and metrics) that keeps every request's raw bytes and answers an empty response. */
async function rawGrpcHop(): Promise<{ url: string; received: RawRequest[]; close: () => Promise<void> }> {
  const grpc = await import('@grpc/grpc-js');
  const received: RawRequest[] = [];
  const server = new grpc.Server();
  for (const path of [
    '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
  ]) {
    const service = {
      Export: {
        path,
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: Buffer) => value,
        requestDeserialize: (bytes: Buffer) => bytes,
        responseSerialize: (value: Buffer) => value,
        responseDeserialize: (bytes: Buffer) => bytes,
      },
    };
    server.addService(service, {
      Export: (call: { request: Buffer }, callback: (error: null, response: Buffer) => void) => {
        received.push({ path, body: call.request });
        callback(null, Buffer.alloc(0)); // an empty Export*ServiceResponse
      },
    });
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** POSTs spans to the service as an OTLP/HTTP JSON export request. */
async function postJson(httpUrl: string | undefined, spans: ReadableSpan[]): Promise<Response> {
  const { JsonTraceSerializer } = await import('@opentelemetry/otlp-transformer');
  return fetch(`${httpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JsonTraceSerializer.serializeRequest(spans) as Uint8Array),
  });
}

async function service(dir: string, document: Record<string, unknown>): Promise<RunningService> {
  const config = parseAdapterConfig(
    {
      receivers: { otlp: { http: { endpoint: '127.0.0.1:0' }, grpc: { endpoint: '127.0.0.1:0' } } },
      scenarios: ['*.json'],
      decision: { wait: '10s', waitAfterRoot: '50ms' },
      ...document,
    },
    'test.yaml',
  );
  const running = await startService(config, { baseDir: dir, log: () => {} });
  cleanup.push(() => running.close());
  return running;
}

const evaluationSpans = (hop: NextHop) => hop.spans.filter((span) => span.name === 'toolpath.evaluate');
const resultOf = (span: SpanRecord) => span.events.find((event) => event.name === 'gen_ai.evaluation.result');

describe('toolpath serve, end to end over loopback', () => {
  it.each<ClientProtocol>(['http/json', 'http/protobuf+gzip', 'grpc'])(
    'judges a trace sent with the %s exporter and forwards findings to the next hop',
    async (protocol) => {
      const hop = await startNextHop();
      cleanup.push(() => hop.close());
      const dir = scenarioDir();
      const port = await freePort();
      const running = await service(dir, {
        exporters: { otlp: { endpoint: hop.url, protocol: 'http/json' } },
        forward: { spans: 'sampled' },
        reports: { file: 'reports.jsonl' },
        metrics: { prometheus: { endpoint: `127.0.0.1:${port}` } },
      });
      const spans = await agentSpans('refund-before-policy');
      const target = protocol === 'grpc' ? `http://${running.grpcAddress}` : (running.httpUrl as string);
      expect(await sendWith(protocol, target, spans)).toBe(0);

      await eventually(() => evaluationSpans(hop).length === 1, 'the evaluation span at the next hop');
      await running.adapter.flush();
      const agent = spans.find((span) => span.name.startsWith('invoke_agent'));
      const [evaluation] = evaluationSpans(hop);
      expect(evaluation?.parentSpanId).toBe(agent?.spanContext().spanId);
      expect(evaluation?.traceId).toBe(agent?.spanContext().traceId);
      expect(resultOf(evaluation as SpanRecord)?.attributes['gen_ai.evaluation.score.label']).toBe('fail');
      const rules = evaluation?.events.map((event) => event.attributes['toolpath.finding.rule']);
      expect(rules).toContain('order.before');
      // Kept by risk (a hard finding): the trace's own spans went on too, stamped.
      await eventually(() => hop.spans.length === spans.length + 1, 'the forwarded spans');
      const forwardedAgent = hop.spans.find((span) => span.spanId === agent?.spanContext().spanId);
      expect(forwardedAgent?.attributes['toolpath.sampling.reason']).toBe('hard_finding');

      const metrics = await (await fetch(running.metricsUrl as string)).text();
      expect(metrics).toMatch(/toolpath_evaluations(_total)?\{[^}]*toolpath_verdict="fail"[^}]*\} 1/);
      await running.close();
      const lines = readFileSync(join(dir, 'reports.jsonl'), 'utf8').trim().split('\n');
      const report = JSON.parse(lines[0] as string) as Report;
      expect([lines.length, report.verdict, report.scenario.id]).toEqual([1, 'fail', 'support.refund']);
    },
  );

  it.each(['http/protobuf', 'grpc'] as const)(
    'forwards findings to a next hop speaking %s',
    async (protocol) => {
      const hop = await startNextHop(0, protocol === 'grpc' ? 'grpc' : 'http');
      cleanup.push(() => hop.close());
      const running = await service(scenarioDir(), { exporters: { otlp: { endpoint: hop.url, protocol } } });
      expect(
        await sendWith('http/json', running.httpUrl as string, await agentSpans('made-up-confirmation')),
      ).toBe(0);
      await eventually(() => evaluationSpans(hop).length === 1, 'the evaluation span at the next hop');
      const rules = evaluationSpans(hop)[0]?.events.map((event) => event.attributes['toolpath.finding.rule']);
      expect(rules).toContain('grounding.source');
    },
  );

  it.each(['http/json', 'http/protobuf', 'grpc'] as const)(
    'sends its metrics over OTLP (%s) to the exporter endpoint as well',
    async (protocol) => {
      const hop = protocol === 'grpc' ? await rawGrpcHop() : await rawHttpHop();
      cleanup.push(hop.close);
      const running = await service(scenarioDir(), { exporters: { otlp: { endpoint: hop.url, protocol } } });
      expect(await sendWith('http/json', running.httpUrl as string, await agentSpans('good'))).toBe(0);
      await eventually(() => running.adapter.stats().judgedTraces === 1, 'the trace judged');
      await running.close(); // flushes the metrics
      const metrics = hop.received.filter((request) => /metrics/i.test(request.path));
      expect(metrics.length).toBeGreaterThan(0);
      const contentType = {
        'http/json': 'application/json',
        'http/protobuf': 'application/x-protobuf',
        grpc: undefined,
      };
      expect(new Set(metrics.map((request) => request.contentType))).toEqual(
        new Set([contentType[protocol]]),
      );
      // Metric names are strings in JSON and in protobuf alike.
      expect(Buffer.concat(metrics.map((request) => request.body)).includes('toolpath.evaluations')).toBe(
        true,
      );
      expect(
        hop.received.some(
          (request) => request.path.endsWith('traces') || request.path.endsWith('TraceService/Export'),
        ),
      ).toBe(true);
    },
  );

  it('assembles a trace whose spans arrive in several requests over both protocols, and judges it once', async () => {
    const hop = await startNextHop();
    cleanup.push(() => hop.close());
    const running = await service(scenarioDir(), {
      exporters: { otlp: { endpoint: hop.url, protocol: 'http/protobuf' } },
    });
    const spans = await agentSpans('good');
    const half = Math.floor(spans.length / 2);
    // Children first (as SDK batches send them), the root last: the wait starts at the root.
    expect(await sendWith('grpc', `http://${running.grpcAddress}`, spans.slice(0, half))).toBe(0);
    expect(await sendWith('http/json', running.httpUrl as string, spans.slice(half))).toBe(0);
    await eventually(() => evaluationSpans(hop).length === 1, 'the evaluation span');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(evaluationSpans(hop)).toHaveLength(1);
    expect(resultOf(evaluationSpans(hop)[0] as SpanRecord)?.attributes).toMatchObject({
      'gen_ai.evaluation.score.label': 'pass',
      'toolpath.trajectory.tool_calls': 4,
    });
    expect(running.adapter.stats().judgedTraces).toBe(1);
  });
});

describe('the adapter around bad input', () => {
  it('judges a trace intact when garbage, bombs and bad ids arrive between its parts', async () => {
    const hop = await startNextHop();
    cleanup.push(() => hop.close());
    const running = await service(scenarioDir(), {
      exporters: { otlp: { endpoint: hop.url, protocol: 'http/json' } },
      limits: { maxRequestBytes: 1024 * 1024 },
      decision: { wait: '10s', waitAfterRoot: '300ms' },
    });
    const url = `${running.httpUrl}/v1/traces`;
    const post = (body: Uint8Array | string, type: string, encoding?: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': type, ...(encoding && { 'content-encoding': encoding }) },
        body,
      }).then((response) => response.status);
    const spans = await agentSpans('refund-before-policy');
    const { gzipSync } = await import('node:zlib');
    const { JsonTraceSerializer } = await import('@opentelemetry/otlp-transformer');
    const badIds = JSON.parse(
      Buffer.from(JsonTraceSerializer.serializeRequest(spans.slice(0, 1)) as Uint8Array).toString(),
    );
    badIds.resourceSpans[0].scopeSpans[0].spans[0].spanId = 'abc';

    expect(await sendWith('http/json', running.httpUrl as string, spans.slice(0, 3))).toBe(0);
    expect(await post('{"resourceSpans": [', 'application/json')).toBe(400);
    expect(await post(new Uint8Array([0x0a, 0xff, 0xff, 0x01, 0x02]), 'application/x-protobuf')).toBe(400);
    expect(await post(gzipSync(Buffer.alloc(8 * 1024 * 1024)), 'application/json', 'gzip')).toBe(413);
    expect(await post('hello', 'text/plain')).toBe(415);
    expect(await post(JSON.stringify(badIds), 'application/json')).toBe(200); // partial success
    expect(await sendWith('grpc', `http://${running.grpcAddress}`, spans.slice(3))).toBe(0);

    await eventually(() => evaluationSpans(hop).length === 1, 'the evaluation span');
    const result = resultOf(evaluationSpans(hop)[0] as SpanRecord);
    expect(result?.attributes).toMatchObject({
      'gen_ai.evaluation.score.label': 'fail',
      'toolpath.trajectory.tool_calls': spans.filter((span) => span.name.startsWith('execute_tool')).length,
    });
    expect(result?.attributes['toolpath.trace.incomplete']).toBeUndefined();
    expect(running.adapter.stats().judgedTraces).toBe(1);
  });
});

describe('the adapter over its limits', () => {
  it('answers partial success for spans over maxSpansPerTrace and judges the trace as incomplete', async () => {
    const dir = scenarioDir();
    const running = await service(dir, {
      limits: { maxSpansPerTrace: 3 },
      decision: { wait: '10s', waitAfterRoot: '20ms' },
      reports: { file: 'reports.jsonl' },
    });
    const spans = await agentSpans('good');
    const response = await postJson(running.httpUrl, spans);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      partialSuccess?: { rejectedSpans: string; errorMessage: string };
    };
    expect(Number(body.partialSuccess?.rejectedSpans)).toBe(spans.length - 3);
    expect(body.partialSuccess?.errorMessage).toContain('maxSpansPerTrace');
    await eventually(() => running.adapter.stats().judgedTraces === 1, 'the trace judged');
    await running.close();
    const report = JSON.parse(readFileSync(join(dir, 'reports.jsonl'), 'utf8')) as Report;
    expect(report.incomplete).toBe(`${spans.length - 3} spans over limits.maxSpansPerTrace not judged`);
  });
});

describe('the adapter under faults', () => {
  it('judges each trace once when its late spans arrive while it waits to be judged', async () => {
    const judged: string[] = [];
    const adapter = new TraceAdapter({
      scenarios: [REFUND_SCENARIO],
      sweepIntervalMs: 10,
      decision: { waitAfterRootMs: 0 },
      onReport: (report) => {
        judged.push(report.traceId);
        const until = performance.now() + 15; // a judge slower than a slice: traces wait their turn
        while (performance.now() < until);
      },
    });
    cleanup.push(() => adapter.shutdown());
    const { fromReadableSpan } = await import('../../src/io/readable-span.js');
    const traces = [];
    for (let i = 0; i < 6; i++) traces.push((await agentSpans('good')).map(fromReadableSpan));
    for (const spans of traces) adapter.ingest({ spans: spans.slice(1), errors: [], rejectedSpans: 0 });
    await new Promise((resolve) => setTimeout(resolve, 25));
    // The first span of each trace arrives late: some traces are judged, some wait, some are buffered.
    for (const spans of traces) adapter.ingest({ spans: spans.slice(0, 1), errors: [], rejectedSpans: 0 });
    await adapter.shutdown();
    expect(judged.sort()).toEqual(traces.map((spans) => spans[0]?.traceId).sort());
  });

  it('keeps findings while the next hop is down and delivers them when it is back, counting what did not fit', async () => {
    const port = await freePort();
    const reports: Report[] = [];
    const adapter = new TraceAdapter({
      scenarios: [REFUND_SCENARIO],
      decision: { waitAfterRootMs: 0 },
      exporter: new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({
        url: `http://127.0.0.1:${port}/v1/traces`,
        timeoutMillis: 500,
      }),
      queue: { maxQueueSize: 3, maxBatchSize: 1, flushDelayMs: 0, initialBackoffMs: 50, maxBackoffMs: 200 },
      onReport: (report) => reports.push(report),
    });
    cleanup.push(() => adapter.shutdown());
    const { fromReadableSpan } = await import('../../src/io/readable-span.js');
    for (let i = 0; i < 5; i++) {
      const records = (await agentSpans('refund-before-policy')).map(fromReadableSpan);
      expect(adapter.ingest({ spans: records, errors: [], rejectedSpans: 0 })).toEqual({ kind: 'accepted' });
    }
    adapter.judgeAllNow();
    expect(reports).toHaveLength(5);
    await new Promise((resolve) => setTimeout(resolve, 700)); // the next hop is still down
    expect(adapter.stats().forward).toMatchObject({ exported: 0, dropped: 2, queued: 3 });

    const hop = await startNextHop(port);
    cleanup.push(() => hop.close());
    await eventually(
      () => evaluationSpans(hop).length === 3,
      'the queued evaluation spans after the hop came back',
    );
    // The hop has the spans before the exporter has read its answer and counted the export.
    await eventually(() => adapter.stats().forward?.exported === 3, 'the exports counted');
    expect(adapter.stats().forward).toMatchObject({ exported: 3, dropped: 2, queued: 0 });
  });

  it('answers 429 with Retry-After when the buffer is full, and takes the trace once there is room', async () => {
    const running = await service(scenarioDir(), {
      decision: { wait: '10s', waitAfterRoot: '300ms' },
      limits: { maxTraces: 1 },
    });
    const [first, second] = [await agentSpans('good'), await agentSpans('good')];
    const post = (spans: typeof first) => postJson(running.httpUrl, spans);
    expect((await post(first)).status).toBe(200);
    const refused = await post(second);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    await eventually(() => running.adapter.stats().judgedTraces === 1, 'the first trace judged');
    expect((await post(second)).status).toBe(200);
    expect(running.adapter.stats().dropped.buffer_full).toBe(second.length);
  });

  it('answers 429 once the buffered spans hold limits.maxBufferedBytes', async () => {
    const running = await service(scenarioDir(), {
      decision: { wait: '10s', waitAfterRoot: '300ms' },
      limits: { maxBufferedBytes: 1 },
    });
    const [first, second] = [await agentSpans('good'), await agentSpans('good')];
    expect((await postJson(running.httpUrl, first)).status).toBe(200);
    const refused = await postJson(running.httpUrl, second);
    expect(refused.status).toBe(429);
    expect(running.adapter.stats().dropped.buffer_full).toBe(second.length);
  });

  it('on shutdown judges pending traces as incomplete and flushes their findings', async () => {
    const hop = await startNextHop();
    cleanup.push(() => hop.close());
    const dir = scenarioDir();
    const running = await service(dir, {
      decision: { wait: '1m', waitAfterRoot: '1m' },
      exporters: { otlp: { endpoint: hop.url, protocol: 'http/json' } },
      reports: { file: 'reports.jsonl' },
    });
    const spans = await agentSpans('good');
    expect(await sendWith('http/json', running.httpUrl as string, spans)).toBe(0);
    expect(running.adapter.stats().bufferedTraces).toBe(1);
    await running.close();

    expect(evaluationSpans(hop)).toHaveLength(1);
    const report = JSON.parse(readFileSync(join(dir, 'reports.jsonl'), 'utf8')) as Report;
    expect(report.incomplete).toBe('shutdown');
    const status = await fetch(`${running.httpUrl}/readyz`).catch(() => undefined);
    expect(status).toBeUndefined(); // no longer listening
  });
});
