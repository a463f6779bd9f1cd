import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type TraceFlags, trace } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { decodeExportTraceRequest, parseOtlpJsonText } from '../../src/collector/otlp-json.js';
import { fromReadableSpan, hrTimeToNanos } from '../../src/io/readable-span.js';
import type { SpanRecord } from '../../src/model/span-record.js';

function newProvider() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'refund-service', 'service.instance.id': 'i-7' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return { exporter, provider };
}

/** A small agent-like trace covering every field a SpanRecord has, made by the real SDK. */
function makeTrace() {
  const { exporter, provider } = newProvider();
  const agent = provider.getTracer('agent-framework', '3.2.1');
  const http = provider.getTracer('http-client');
  const root = agent.startSpan('invoke_agent support-agent', {
    kind: SpanKind.SERVER,
    startTime: [1_795_971_772, 316_123_457],
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support-agent',
      'app.retries': 3,
      'app.ratio': 0.25,
      'app.big': 2 ** 52 + 1,
      'app.flag': true,
      'app.tags': ['refund', 'priority'],
      'app.sizes': [1, 2.5, 3],
      'app.checks': [true, false],
      'app.sparse': ['a', null, 'c'],
    },
  });
  const rootContext = trace.setSpan(ROOT_CONTEXT, root);
  const tool = agent.startSpan('execute_tool issue_refund', { kind: SpanKind.INTERNAL }, rootContext);
  tool.setAttributes({
    'gen_ai.tool.name': 'issue_refund',
    'gen_ai.tool.call.arguments': '{"order_id":"ORD-20417"}',
  });
  tool.addEvent(
    'exception',
    { 'exception.type': 'PaymentGatewayTimeout', 'exception.message': 'timed out' },
    [1_795_971_772, 500_000_001],
  );
  tool.setStatus({ code: SpanStatusCode.ERROR, message: 'payment gateway did not answer' });
  tool.end([1_795_971_772, 999_999_999]);
  const call = http.startSpan('POST /payments', { kind: SpanKind.CLIENT }, trace.setSpan(ROOT_CONTEXT, tool));
  call.setStatus({ code: SpanStatusCode.OK });
  call.end();
  const queued = agent.startSpan(
    'publish refund.issued',
    {
      kind: SpanKind.PRODUCER,
      links: [{ context: tool.spanContext(), attributes: { 'link.reason': 'caused by' } }],
    },
    rootContext,
  );
  queued.end();
  agent.startSpan('consume refund.issued', { kind: SpanKind.CONSUMER }, rootContext).end();
  // Still open when captured: the SDK's Span is itself a ReadableSpan.
  const open = agent.startSpan('wait for approval', {}, rootContext) as unknown as ReadableSpan;
  root.end([1_795_971_773, 1]);
  return { spans: [...exporter.getFinishedSpans(), open], open };
}

function byId(records: SpanRecord[]): Map<string, SpanRecord> {
  return new Map(records.map((r) => [r.spanId, r]));
}

describe('fromReadableSpan', () => {
  const { spans, open } = makeTrace();
  const records = spans.map(fromReadableSpan);
  const named = (name: string) => records.find((r) => r.name === name) as SpanRecord;

  it('round-trips through the OTLP JSON serializer to the same records', () => {
    const text = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));
    const decoded = decodeExportTraceRequest(parseOtlpJsonText(text));
    expect(decoded.errors).toEqual([]);
    expect(decoded.spans).toHaveLength(spans.length);
    expect(byId(decoded.spans)).toEqual(byId(records));
  });

  it('takes ids, parents and kinds from the span', () => {
    const root = named('invoke_agent support-agent');
    const tool = named('execute_tool issue_refund');
    expect(root.traceId).toBe(spans[0]?.spanContext().traceId);
    expect(root.parentSpanId).toBeUndefined();
    expect(tool.parentSpanId).toBe(root.spanId);
    expect(named('POST /payments').parentSpanId).toBe(tool.spanId);
    expect(records.map((r) => [r.name, r.kind])).toEqual(
      expect.arrayContaining([
        ['invoke_agent support-agent', 'server'],
        ['execute_tool issue_refund', 'internal'],
        ['POST /payments', 'client'],
        ['publish refund.issued', 'producer'],
        ['consume refund.issued', 'consumer'],
      ]),
    );
  });

  it('converts HrTime to exact nanoseconds', () => {
    const root = named('invoke_agent support-agent');
    expect(root.startTimeUnixNano).toBe(1_795_971_772_316_123_457n);
    expect(root.endTimeUnixNano).toBe(1_795_971_773_000_000_001n);
    expect(named('execute_tool issue_refund').events[0]?.timeUnixNano).toBe(1_795_971_772_500_000_001n);
    expect(hrTimeToNanos([0, 0])).toBe(0n);
    expect(hrTimeToNanos([18_446_744_073, 709_551_615])).toBe(2n ** 64n - 1n);
  });

  it('leaves the end time out of a span that has not ended', () => {
    expect(open.ended).toBe(false);
    expect(fromReadableSpan(open).endTimeUnixNano).toBeUndefined();
  });

  it('copies status, attributes, events and links', () => {
    const root = named('invoke_agent support-agent');
    expect(root.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support-agent',
      'app.retries': 3,
      'app.ratio': 0.25,
      'app.big': 2 ** 52 + 1,
      'app.flag': true,
      'app.tags': ['refund', 'priority'],
      'app.sizes': [1, 2.5, 3],
      'app.checks': [true, false],
      'app.sparse': ['a', null, 'c'],
    });
    const tool = named('execute_tool issue_refund');
    expect(tool.status).toEqual({ code: 'error', message: 'payment gateway did not answer' });
    expect(named('POST /payments').status).toEqual({ code: 'ok' });
    expect(root.status).toEqual({ code: 'unset' });
    expect(tool.events).toEqual([
      {
        name: 'exception',
        timeUnixNano: 1_795_971_772_500_000_001n,
        attributes: { 'exception.type': 'PaymentGatewayTimeout', 'exception.message': 'timed out' },
      },
    ]);
    expect(named('publish refund.issued').links).toEqual([
      { traceId: tool.traceId, spanId: tool.spanId, attributes: { 'link.reason': 'caused by' } },
    ]);
  });

  it('shares one resource and one scope object between spans of the same tracer', () => {
    const agentSpans = records.filter((r) => r.scope.name === 'agent-framework');
    expect(agentSpans.length).toBeGreaterThan(2);
    expect(new Set(agentSpans.map((r) => r.scope)).size).toBe(1);
    expect(new Set(records.map((r) => r.resource)).size).toBe(1);
    expect(agentSpans[0]?.scope).toEqual({ name: 'agent-framework', version: '3.2.1' });
    expect(named('POST /payments').scope).toEqual({ name: 'http-client' });
    expect(records[0]?.resource).toEqual({ 'service.name': 'refund-service', 'service.instance.id': 'i-7' });
  });

  it('copies attributes, so neither the span nor the record changes with the other', () => {
    const { provider } = newProvider();
    const span = provider.getTracer('t').startSpan('s', { attributes: { step: 1, tags: ['a'] } });
    const open = fromReadableSpan(span as unknown as ReadableSpan);
    span.setAttribute('step', 2);
    expect(open.attributes).toEqual({ step: 1, tags: ['a'] });
    span.end();
    const ended = fromReadableSpan(span as unknown as ReadableSpan);
    // What an onReport callback might do to the trajectory's root attributes.
    ended.attributes.note = 'changed by a reader';
    expect((span as unknown as ReadableSpan).attributes).toEqual({ step: 2, tags: ['a'] });
  });

  it('turns undefined array items into null, for ended spans too', () => {
    const span = spans.find((s) => s.name === 'invoke_agent support-agent') as ReadableSpan;
    const attributes = { ...span.attributes, holes: [1, undefined] };
    const record = fromReadableSpan({
      ...span,
      spanContext: () => span.spanContext(),
      ended: true,
      attributes,
    });
    expect(record.attributes.holes).toEqual([1, null]);
    expect(attributes.holes).toEqual([1, undefined]);
  });

  it('needs only the ReadableSpan interface (as the 3.x SDK provides it)', () => {
    // A plain object, no SDK class behind it: upper-case ids, undefined array items, no optional fields.
    const plain: ReadableSpan = {
      name: 'plain',
      kind: SpanKind.CLIENT,
      spanContext: () => ({
        traceId: '0AF7651916CD43DD8448EB211C80319C',
        spanId: 'B7AD6B7169203331',
        traceFlags: 1 as TraceFlags,
      }),
      parentSpanContext: {
        traceId: '0AF7651916CD43DD8448EB211C80319C',
        spanId: '00F067AA0BA902B7',
        traceFlags: 1,
        isRemote: true,
      },
      startTime: [10, 5],
      endTime: [11, 0],
      status: { code: SpanStatusCode.UNSET, message: '' },
      attributes: { list: [1, undefined, 3], gone: undefined },
      links: [],
      events: [{ name: 'tick', time: [10, 6] }],
      duration: [0, 999_999_995],
      ended: true,
      resource: resourceFromAttributes({}),
      instrumentationScope: { name: 'custom', version: '' },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
    expect(fromReadableSpan(plain)).toEqual({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      parentSpanId: '00f067aa0ba902b7',
      name: 'plain',
      kind: 'client',
      startTimeUnixNano: 10_000_000_005n,
      endTimeUnixNano: 11_000_000_000n,
      status: { code: 'unset' },
      attributes: { list: [1, null, 3], gone: null },
      events: [{ name: 'tick', timeUnixNano: 10_000_000_006n, attributes: {} }],
      links: [],
      resource: {},
      scope: { name: 'custom' },
    });
  });
});
