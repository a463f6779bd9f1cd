// Shared OpenTelemetry setup for the OpenInference capture scripts.
// SDK 2.x: BasicTracerProvider + SimpleSpanProcessor(InMemorySpanExporter),
// AsyncLocalStorageContextManager registered globally, OTLP JSON via
// JsonTraceSerializer from @opentelemetry/otlp-transformer.
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
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

const here = dirname(fileURLToPath(import.meta.url));
/** test/spans/ (fixtures live there). */
export const SPANS_DIR = resolve(here, '..', '..', '..');

export function setupOtel() {
  const contextManager = new AsyncLocalStorageContextManager();
  contextManager.enable();
  context.setGlobalContextManager(contextManager);

  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'toolpath-capture-openinference' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  trace.setGlobalTracerProvider(provider);
  return { provider, exporter };
}

/**
 * Serialises every finished span in the exporter to one OTLP JSON
 * ExportTraceServiceRequest, writes it to test/spans/<fileName>, and resets
 * the exporter. Spans are sorted by start time for a stable reading order
 * (the OTLP request itself has no required order).
 */
export async function writeFixture({ provider, exporter }, fileName, { expectSpans = 1 } = {}) {
  await provider.forceFlush();
  const spans = [...exporter.getFinishedSpans()].sort((a, b) => {
    const [as, an] = a.startTime;
    const [bs, bn] = b.startTime;
    return as - bs || an - bn;
  });
  if (spans.length < expectSpans) {
    throw new Error(`${fileName}: expected at least ${expectSpans} spans, got ${spans.length}`);
  }
  const bytes = JsonTraceSerializer.serializeRequest(spans);
  if (!bytes) throw new Error(`${fileName}: serializer returned nothing`);
  // Re-indent for readable diffs; content is byte-for-byte the serializer's JSON.
  const json = JSON.stringify(JSON.parse(Buffer.from(bytes).toString('utf8')), null, 2);
  const out = resolve(SPANS_DIR, fileName);
  writeFileSync(out, `${json}\n`);
  exporter.reset();
  console.log(`wrote ${out} (${spans.length} spans)`);
  return spans;
}
