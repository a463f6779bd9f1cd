// Shared OpenTelemetry setup for the capture scripts: one global BasicTracerProvider (SDK 2.x)
// with an in-memory exporter, an AsyncLocalStorage context manager, and a writer that stores
// the finished spans as one OTLP JSON ExportTraceServiceRequest (JsonTraceSerializer bytes).

import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Registers the global provider; returns the exporter and a function that writes a fixture. */
export function setupOtel(serviceName) {
  const contextManager = new AsyncLocalStorageContextManager();
  contextManager.enable();
  context.setGlobalContextManager(contextManager);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    provider,
    /** Writes the spans exported so far to test/spans/<file> and resets the exporter. */
    write(file) {
      const spans = exporter.getFinishedSpans();
      writeFileSync(join(OUT_DIR, file), Buffer.from(JsonTraceSerializer.serializeRequest(spans)));
      exporter.reset();
      return spans;
    },
  };
}

// The same order data for every framework, so the fixtures are comparable.
export const PROMPT = 'Order A1001 arrived broken. Please refund me.';
export const ORDER = {
  orderId: 'A1001',
  status: 'delivered',
  item: 'ceramic teapot',
  amount: 42.5,
  currency: 'EUR',
  customerEmail: 'ana@example.com',
};
export const POLICY = { refundable: true, windowDays: 30, maxAmount: 100, reason: 'damaged on arrival' };
export const REFUND_FAILURE = 'payment gateway timeout';
