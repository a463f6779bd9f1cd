/**
 * `toolpath serve` decodes a history whose conversation's earlier turn it holds from the new
 * bytes alone: its receivers pass the adapter's held values to the protobuf decoder. A real
 * service on loopback ports, the official OTLP/HTTP protobuf and gRPC exporters sending a
 * conversation one turn per request.
 */
import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { type RunningService, startService } from '../../src/collector/serve.js';

const running: RunningService[] = [];
afterAll(async () => {
  for (const service of running) await service.close();
});

/** A conversation's chat turns, each input history the one before it and a turn more (over 8 KB each). */
function conversation(turns: number): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] });
  const tracer = provider.getTracer('serve-held-texts');
  const root = tracer.startSpan('invoke_agent support', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent' },
  });
  const parent = trace.setSpan(context.active(), root);
  const messages: object[] = [
    { role: 'system', parts: [{ type: 'text', content: 'Be brief, be kind ☺. '.repeat(400) }] },
  ];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({
      role: 'user',
      parts: [{ type: 'text', content: `question ${turn}: où est ma commande ?` }],
    });
    const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': JSON.stringify(messages) };
    tracer.startSpan('chat gpt-4o', { attributes }, parent).end();
  }
  root.end();
  return memory.getFinishedSpans();
}

function exportWith(exporter: SpanExporter, spans: ReadableSpan[]): Promise<number> {
  return new Promise((resolve) => exporter.export(spans, (result) => resolve(result.code)));
}

describe('toolpath serve, a conversation one turn a request', () => {
  for (const via of ['http/protobuf', 'grpc']) {
    it(`${via}: decodes each later history from its new bytes alone`, async () => {
      const config = parseAdapterConfig(
        {
          receivers: { otlp: { http: { endpoint: '127.0.0.1:0' }, grpc: { endpoint: '127.0.0.1:0' } } },
          decision: { waitAfterRoot: '50ms' },
        },
        'test.yaml',
      );
      const service = await startService(config, { baseDir: process.cwd(), log: () => {} });
      running.push(service);
      const exporter =
        via === 'grpc'
          ? new GrpcExporter({ url: `http://${service.grpcAddress}` })
          : new ProtoExporter({ url: `${service.httpUrl}/v1/traces` });
      const spans = conversation(4);
      const chats = spans.filter((span) => span.name.startsWith('chat'));
      const utf8Slice = vi.spyOn(Buffer.prototype, 'utf8Slice');
      let longest = 0;
      for (const [turn, chat] of chats.entries()) {
        utf8Slice.mockClear();
        expect(await exportWith(exporter, [chat])).toBe(0);
        const decoded = utf8Slice.mock.calls.map(([start, end]) => Number(end) - Number(start));
        if (turn > 0) longest = Math.max(longest, ...decoded);
      }
      utf8Slice.mockRestore();
      await exporter.shutdown();
      const history = (turn: number) =>
        Buffer.byteLength(String(chats[turn]?.attributes['gen_ai.input.messages']));
      // The first history is decoded whole; each later one only past the one before it.
      expect(history(1)).toBeGreaterThan(8_000);
      expect(longest).toBeLessThan(history(1) - history(0) + 200);
    }, 30_000);
  }
});
