/**
 * OTLP protobuf decoding: `decodeExportTraceProtobuf` (bytes to SpanRecords, ids hex, values
 * converted) against bare protobufjs `Type.decode` of the same request with our schema
 * (message objects only, nothing converted), measured side by side in the same run, on a Buffer
 * as a server receives it. Each run is timed in process CPU time, medians of interleaved rounds:
 * the machine is shared and noisy, so compare the ratio, not absolute times.
 * Budget (DESIGN.md): end-to-end ingest at least 0.5x the throughput of bare protobuf decoding,
 * so decoding alone must be well above that.
 *
 *   npx tsx bench/proto-decode.ts          (ROUNDS=1000 for steadier figures)
 */
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { decodeExportTraceProtobuf } from '../src/collector/otlp-proto.js';
import { ExportTraceServiceRequest } from '../src/collector/otlp-proto-schema.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { syntheticAgentSpans } from './synthetic-trace.js';

const SPANS = 1_000;
const ROUNDS = Number(process.env.ROUNDS ?? 200);

/** The spans as the SDK's exporter would send them: ReadableSpans through the official serializer. */
function otlpProtobufOf(spans: readonly SpanRecord[]): Buffer {
  const resource = resourceFromAttributes({ 'service.name': 'bench', 'telemetry.sdk.language': 'nodejs' });
  const scope = { name: 'bench', version: '1.0.0' };
  const hrTime = (ns: bigint): [number, number] => [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
  const readable = spans.map((s) => ({
    name: s.name,
    kind: 0,
    spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags: 1 }),
    parentSpanContext: s.parentSpanId && { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: 1 },
    startTime: hrTime(s.startTimeUnixNano),
    endTime: hrTime(s.endTimeUnixNano ?? 0n),
    status: { code: 0 },
    attributes: s.attributes,
    events: [],
    links: [],
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  }));
  // A Buffer, as an HTTP or gRPC server hands the body over (protobufjs then decodes strings natively too).
  return Buffer.from(
    ProtobufTraceSerializer.serializeRequest(readable as unknown as ReadableSpan[]) as Uint8Array,
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

// 666 tool calls: 333 chat spans, 666 tool spans and the agent span.
const spans = syntheticAgentSpans(666, ['search', 'lookup', 'fetch', 'rank', 'pay', 'notify']);
const body = otlpProtobufOf(spans);
const decoded = decodeExportTraceProtobuf(body);
if (decoded.spans.length !== SPANS || decoded.errors.length > 0)
  throw new Error(
    `expected ${SPANS} clean spans, got ${decoded.spans.length} and ${decoded.errors.length} errors`,
  );

const contenders: [string, () => unknown][] = [
  ['protobufjs Type.decode (baseline)', () => ExportTraceServiceRequest.decode(body)],
  ['decodeExportTraceProtobuf', () => decodeExportTraceProtobuf(body)],
  [
    'Type.decode + toObject (reflection route, for comparison)',
    () => ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String }),
  ],
];
const times = contenders.map((): number[] => []);
for (let round = -20; round < ROUNDS; round++) {
  // Interleaved, so drift in machine load falls on every contender alike; the first rounds warm up.
  for (const [i, [, run]] of contenders.entries()) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    const elapsed = (used.user + used.system) / 1000;
    if (round >= 0) times[i]?.push(elapsed);
  }
}

console.log(
  `OTLP protobuf request: ${SPANS} GenAI-like spans, ${(body.length / 1024).toFixed(0)} KiB, ${ROUNDS} rounds`,
);
const baseline = median(times[0] as number[]);
for (const [i, [name]] of contenders.entries()) {
  const ms = median(times[i] as number[]);
  const spansPerSecond = Math.round(SPANS / (ms / 1000));
  console.log(
    `  ${name.padEnd(58)} ${ms.toFixed(2).padStart(7)} ms  ${spansPerSecond.toLocaleString('en').padStart(9)} spans/s  ${(baseline / ms).toFixed(2)}x`,
  );
}
const ratio = baseline / median(times[1] as number[]);
console.log(
  `decodeExportTraceProtobuf throughput / bare protobufjs decode: ${ratio.toFixed(2)}x (budget for all of ingest: >= 0.5x)`,
);
