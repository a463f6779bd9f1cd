/**
 * Which spans of one export request the adapter takes. A request is taken whole when it fits;
 * refused whole (the client retries, 429) when it does not fit now but would fit an idle adapter;
 * and when it could never fit (more new traces than `limits.maxTraces`, more spans than
 * `limits.maxSpans`), the new traces that fit now are taken, whole, and the rest rejected for
 * good (partial success): a retry of the same request would be refused for ever. Spans of traces
 * the adapter no longer knows that ended too long ago to be anything but late are set apart.
 */

import type { TraceBufferLimits } from '../judging/trace-buffer.js';
import type { SpanRecord } from '../model/span-record.js';
import type { IngestResult } from './ingest.js';

/** What the adapter has room for now, and at most. */
export interface Room {
  traces: number;
  spans: number;
  maxTraces: number;
  maxSpans: number;
}

/** The decision on one request. */
export type Admission =
  | { kind: 'retry' }
  | {
      kind: 'take';
      /** New traces rejected for good, and their spans. */
      rejected: ReadonlySet<string>;
      rejectedSpans: number;
      /** The limit the request could never fit within, when traces were rejected. */
      limit?: 'limits.maxTraces' | 'limits.maxSpans';
      /** New traces in the request. */
      newTraces: number;
      /** Traces unknown to the adapter whose every span ended before `lateBefore`, and their spans. */
      late: ReadonlySet<string>;
      lateSpans: number;
    };

/** What a request holds of one trace the adapter does not know. */
interface Unknown {
  spans: number;
  /** Some span ended at or after `lateBefore` (or has no time). */
  recent: boolean;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Decides a request. `known` tells a trace the adapter buffers, waits to judge or remembers as
 * judged (its spans join it); `lateBefore` is the end time (Unix ns) before which a span of an
 * unknown trace is late.
 */
export function admit(
  spans: readonly SpanRecord[],
  known: (traceId: string) => boolean,
  lateBefore: bigint,
  room: Room,
): Admission {
  const unknown = new Map<string, Unknown>();
  let knownSpans = 0;
  for (const span of spans) {
    const seen = unknown.get(span.traceId);
    if (seen === undefined && known(span.traceId)) {
      knownSpans++;
      continue;
    }
    const end = span.endTimeUnixNano ?? span.startTimeUnixNano;
    // No time (zero) says nothing about lateness.
    const recent = !(end > 0n) || end >= lateBefore;
    if (seen === undefined) unknown.set(span.traceId, { spans: 1, recent });
    else {
      seen.spans++;
      if (recent) seen.recent = true;
    }
  }
  const fresh: [string, number][] = [];
  const late = new Set<string>();
  let lateSpans = 0;
  let wanted = knownSpans;
  for (const [traceId, trace] of unknown) {
    if (trace.recent) {
      fresh.push([traceId, trace.spans]);
      wanted += trace.spans;
    } else {
      late.add(traceId);
      lateSpans += trace.spans;
    }
  }
  const taken = { kind: 'take' as const, newTraces: fresh.length, late, lateSpans };
  if (fresh.length <= room.traces && wanted <= room.spans)
    return { ...taken, rejected: NONE, rejectedSpans: 0 };
  // It would fit once judging frees room: the client retries the whole request.
  if (fresh.length <= room.maxTraces && wanted <= room.maxSpans) return { kind: 'retry' };
  const rejected = new Set<string>();
  let rejectedSpans = 0;
  let traceRoom = room.traces;
  let spanRoom = room.spans - knownSpans;
  for (const [traceId, count] of fresh) {
    if (traceRoom > 0 && count <= spanRoom) {
      traceRoom--;
      spanRoom -= count;
    } else {
      rejected.add(traceId);
      rejectedSpans += count;
    }
  }
  // Nothing fits now, but some would later: a retry can succeed.
  if (knownSpans === 0 && rejected.size === fresh.length) return { kind: 'retry' };
  const limit = fresh.length > room.maxTraces ? 'limits.maxTraces' : 'limits.maxSpans';
  return { ...taken, rejected, rejectedSpans, limit };
}

/**
 * The answer to a request taken: what of it was not kept, and why, for the client (partial
 * success). `overTrace` and `overTotal`: spans the buffer did not take, over
 * `limits.maxSpansPerTrace` for their trace and over `limits.maxSpans`.
 */
export function notKept(
  admission: Extract<Admission, { kind: 'take' }>,
  overTrace: number,
  overTotal: number,
  limits: TraceBufferLimits,
): IngestResult {
  const { rejected, rejectedSpans, late, lateSpans } = admission;
  const total = overTrace + overTotal + rejectedSpans + lateSpans;
  if (total === 0) return { kind: 'accepted' };
  // One reason alone reads as before: "N of M spans not kept: over limits.maxSpansPerTrace for their trace".
  if (overTrace === total)
    return {
      kind: 'accepted',
      droppedSpans: total,
      dropReason: 'over limits.maxSpansPerTrace for their trace',
    };
  const reasons: string[] = [];
  if (overTrace > 0) reasons.push(`${overTrace} over limits.maxSpansPerTrace for their trace`);
  if (overTotal > 0) reasons.push(`${overTotal} past limits.maxSpans (${limits.maxSpans} spans at once)`);
  if (rejectedSpans > 0) {
    const cap =
      admission.limit === 'limits.maxTraces' ? `${limits.maxTraces} traces` : `${limits.maxSpans} spans`;
    reasons.push(
      `${rejectedSpans} of ${rejected.size} traces past ${admission.limit} (${cap} at once; the request brought ${admission.newTraces} new traces): send fewer per request`,
    );
  }
  if (lateSpans > 0) {
    reasons.push(
      `${lateSpans} of ${late.size} traces no longer known that ended more than decision.wait + decision.lateWindow ago (late_unknown)`,
    );
  }
  return { kind: 'accepted', droppedSpans: total, dropReason: reasons.join('; ') };
}
