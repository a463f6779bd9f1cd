/**
 * Heap the adapter holds for long conversations whose turns arrive in separate requests, beside
 * the same spans in traces that share nothing, measured after GC in one process. Run by
 * test/collector/held-heap.test.ts as `node --expose-gc --import tsx test/helpers/held-heap.ts
 * TURNS_PER_REQUEST`; prints `{ shared, unshared }` in bytes.
 */
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { TraceAdapter } from '../../src/collector/adapter.js';
import { decodeExportTraceProtobuf } from '../../src/collector/otlp-proto.js';
import { decodeOptionsFor } from '../../src/collector/receiver-common.js';
import { toReadableSpan } from '../../src/collector/to-readable-span.js';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import { recordConversations } from './conversations.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const turnsPerRequest = Number(process.argv[2] ?? 1);
const CONVERSATIONS = 6;
const TURNS = 30;

/**
 * Request bodies of `turnsPerRequest` turns of every conversation (a chat span and a tool span
 * each); with `apart`, each request's spans in traces of their own, so nothing continues.
 */
function requests(spans: readonly ReadableSpan[], apart: boolean): Uint8Array[] {
  const perRequest = 2 * CONVERSATIONS * turnsPerRequest;
  const bodies: Uint8Array[] = [];
  for (let at = 0, n = 0; at < spans.length; at += perRequest, n++) {
    const chunk = spans.slice(at, at + perRequest).map((span) => {
      if (!apart) return span;
      const record = fromReadableSpan(span);
      return toReadableSpan({
        ...record,
        traceId: `${record.traceId.slice(0, 28)}${String(n).padStart(4, '0')}`,
      });
    });
    bodies.push(ProtobufTraceSerializer.serializeRequest(chunk) as Uint8Array);
  }
  return bodies;
}

function heldAfter(bodies: readonly Uint8Array[]): number {
  const adapter = new TraceAdapter({
    scenarios: [{ id: 'any', tools: { allowed: ['get_order'] } }],
    decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
    sweepIntervalMs: 1e9,
  });
  for (let i = 0; i < 3; i++) gc?.();
  const before = process.memoryUsage().heapUsed;
  // As the receivers decode: on the values the adapter holds for the request's traces.
  for (const body of bodies) adapter.ingest(decodeExportTraceProtobuf(body, decodeOptionsFor(adapter)));
  for (let i = 0; i < 3; i++) gc?.();
  const held = process.memoryUsage().heapUsed - before;
  void adapter.shutdown();
  return held;
}

const spans = recordConversations(CONVERSATIONS, TURNS);
const unshared = heldAfter(requests(spans, true));
const shared = heldAfter(requests(spans, false));
console.log(JSON.stringify({ shared, unshared }));
