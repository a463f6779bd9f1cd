/**
 * What the receivers hand decoded spans to. The receivers (OTLP/HTTP, OTLP/gRPC) only speak the
 * protocol: decode, check limits, answer; the adapter behind this interface buffers, judges and
 * forwards. One interface, so both receivers answer the same way for the same situation.
 */

import type { RawRequest } from './durable-traces.js';
import type { HeldTexts } from './extending-texts.js';
import type { DecodeResult } from './otlp-json.js';

/** What happened to one export request's spans. */
export type IngestResult =
  /**
   * Taken. The decoder's rejected spans, and `droppedSpans` the adapter could not keep (over its
   * per-trace cap), are reported as partial success.
   */
  | {
      kind: 'accepted';
      droppedSpans?: number;
      dropReason?: string;
      /** Durable mode: resolves once the spans are on disk; the answer waits for it. */
      committed?: Promise<void>;
    }
  /**
   * Not taken: the buffer is full (or the adapter is shutting down). HTTP answers 429 (full) or
   * 503 (shutting down) with Retry-After; gRPC UNAVAILABLE with RetryInfo (the OTLP spec's throttling).
   */
  | { kind: 'unavailable'; reason: 'full' | 'shutting_down'; retryAfterSeconds: number; message: string };

/** The adapter, as the receivers see it. */
export interface TraceIngest {
  /** Takes the decoded spans of one request (`raw`: its body, for durable mode). Never throws. */
  ingest(decoded: DecodeResult, raw?: RawRequest): IngestResult;
  /** False while starting or shutting down: readiness probes answer 503. */
  ready(): boolean;
  /**
   * The long values held for a buffered trace, which the protobuf decoder may build a request's
   * values on (ProtobufDecodeOptions.heldTexts); the receivers decode with it when there is one.
   */
  heldTexts?(traceId: string): HeldTexts | undefined;
}
