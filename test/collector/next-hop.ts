/**
 * Test helpers for the adapter: spans from a real agent library, sent by the real OTLP
 * exporters, and a real OTLP receiver standing as the next hop that records what arrives.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { startGrpcReceiver } from '../../src/collector/grpc-receiver.js';
import { startHttpReceiver } from '../../src/collector/http-receiver.js';
import type { TraceIngest } from '../../src/collector/ingest.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { type AgentScript, runRefundAgent } from '../processor/vercel-agent.js';

let contextManagerSet = false;

/** The finished spans of one Vercel AI SDK conversation, as an app's exporter would get them. */
export async function agentSpans(script: AgentScript): Promise<ReadableSpan[]> {
  if (!contextManagerSet) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  await runRefundAgent(provider.getTracer('app'), script);
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

/** How a client sends: the three OTLP exporters the SDK ships. */
export type ClientProtocol = 'http/json' | 'http/protobuf+gzip' | 'grpc';

/** Sends spans with the real exporter for `protocol`; resolves with the export result code (0 = success). */
export async function sendWith(
  protocol: ClientProtocol,
  target: string,
  spans: ReadableSpan[],
): Promise<number> {
  const exporter =
    protocol === 'grpc'
      ? new GrpcExporter({ url: target })
      : protocol === 'http/json'
        ? new JsonExporter({ url: `${target}/v1/traces` })
        : new ProtobufExporter({ url: `${target}/v1/traces`, compression: 'gzip' as never });
  const code = await new Promise<number>((resolve) =>
    exporter.export(spans, (result) => resolve(result.code)),
  );
  await exporter.shutdown();
  return code;
}

/** A real OTLP/HTTP receiver that records every span it is sent. */
export interface NextHop {
  url: string;
  port: number;
  spans: SpanRecord[];
  close(): Promise<void>;
}

/** Starts the next hop on `port` (0: any free port), speaking OTLP/HTTP or OTLP/gRPC. */
export async function startNextHop(port = 0, protocol: 'http' | 'grpc' = 'http'): Promise<NextHop> {
  const spans: SpanRecord[] = [];
  const ingest: TraceIngest = {
    ingest: (decoded) => {
      spans.push(...decoded.spans);
      return { kind: 'accepted' };
    },
    ready: () => true,
  };
  const options = { host: '127.0.0.1', port, ingest, maxRequestBytes: 64 * 1024 * 1024 };
  const receiver = protocol === 'grpc' ? await startGrpcReceiver(options) : await startHttpReceiver(options);
  return { url: receiver.url, port: receiver.port, spans, close: () => receiver.close() };
}

/** Resolves when `condition` holds, polling; rejects after `timeoutMs` with `what`. */
export async function eventually(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A next hop that answers each export `delayMs` after it arrived (what it got is kept at once). */
export async function startSlowHop(
  delayMs: number,
  cleanup: (() => Promise<unknown>)[],
): Promise<{ url: string; spans: SpanRecord[] }> {
  const spans: SpanRecord[] = [];
  const ingest: TraceIngest = {
    ingest: (decoded) => {
      spans.push(...decoded.spans);
      return { kind: 'accepted', committed: new Promise((resolve) => setTimeout(resolve, delayMs)) };
    },
    ready: () => true,
  };
  const receiver = await startHttpReceiver({ host: '127.0.0.1', port: 0, ingest, maxRequestBytes: 1 << 24 });
  cleanup.push(() => receiver.close());
  return { url: receiver.url, spans };
}
