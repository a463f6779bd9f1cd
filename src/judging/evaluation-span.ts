/**
 * The `toolpath.evaluate` span: a child of the evaluated agent span that carries the
 * evaluation events when they cannot go on that span itself (it had already ended, or the
 * trace arrived over OTLP). Built as a finished ReadableSpan and handed straight to the
 * exporting processor: it never passes through a tracer, so toolpath never sees (or judges)
 * its own spans.
 */
import { randomFillSync } from 'node:crypto';
import { type Attributes, type HrTime, SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { scenarioLabel } from '../model/report.js';
import { TOOLPATH_VERSION } from '../model/version.js';
import { EVALUATION_SPAN_NAME, type EvaluationEvent } from './evaluation-events.js';
import type { Judgement } from './trace-judge.js';

/** The instrumentation scope of everything toolpath emits. */
export const TOOLPATH_SCOPE = { name: 'toolpath', version: TOOLPATH_VERSION } as const;

/** What an evaluation span is made of. */
export interface EvaluationSpanInput {
  traceId: string;
  /** Its own span id; a random one when absent. */
  spanId?: string;
  /** The evaluated span: the new span's parent. */
  parentSpanId: string;
  /** The evaluated span's resource, so the evaluation shows under the same service. */
  resource: ReadableSpan['resource'];
  startTime: HrTime;
  endTime: HrTime;
  attributes: Attributes;
  events: readonly EvaluationEvent[];
}

/** Random bytes for span ids, filled 512 ids at a time: one `randomBytes(8)` costs 4-6 µs, the pool a tenth of that. */
const idPool = Buffer.allocUnsafe(8 * 512);
let idPoolAt = idPool.length;

/** A random span id: 16 lowercase hex characters, never all zeros (an invalid id). */
export function newSpanId(): string {
  for (;;) {
    if (idPoolAt === idPool.length) {
      randomFillSync(idPool);
      idPoolAt = 0;
    }
    const id = idPool.toString('hex', idPoolAt, idPoolAt + 8);
    idPoolAt += 8;
    if (id !== '0000000000000000') return id;
  }
}

/** A finished, sampled span ready for `SpanProcessor.onEnd` or `SpanExporter.export`. */
export function evaluationSpan(input: EvaluationSpanInput): ReadableSpan {
  const context = {
    traceId: input.traceId,
    spanId: input.spanId ?? newSpanId(),
    traceFlags: TraceFlags.SAMPLED,
  };
  const parent = { traceId: input.traceId, spanId: input.parentSpanId, traceFlags: TraceFlags.SAMPLED };
  return {
    name: EVALUATION_SPAN_NAME,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    parentSpanContext: parent,
    startTime: input.startTime,
    endTime: input.endTime,
    duration: hrTimeDifference(input.startTime, input.endTime),
    status: { code: SpanStatusCode.UNSET },
    attributes: input.attributes,
    links: [],
    events: input.events.map((event) => ({
      name: event.name,
      attributes: event.attributes,
      time: input.endTime,
    })),
    ended: true,
    resource: input.resource,
    instrumentationScope: TOOLPATH_SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** How the evaluation span finds the evaluated span among SDK spans (the processor's). */
export const SDK_SPAN_VIEW = {
  spanId: (span: ReadableSpan) => span.spanContext().spanId,
  resource: (span: ReadableSpan) => span.resource,
};

/** The evaluated trace, as both front doors hold it. */
export interface EvaluatedTrace<T> {
  traceId: string;
  spans: readonly T[];
}

/**
 * The `toolpath.evaluate` span of a judgement: a child of the evaluated span, with the judgement's
 * events, under the evaluated span's resource. Undefined when there is nothing to write.
 */
export function evaluationSpanOf<T>(
  trace: EvaluatedTrace<T>,
  judgement: Judgement,
  view: { spanId: (span: T) => string; resource: (span: T) => ReadableSpan['resource'] },
  extraAttributes: Attributes = {},
  spanId?: (scenarios: readonly string[]) => string,
): ReadableSpan | undefined {
  const parentSpanId = judgement.evaluatedSpanId;
  if (parentSpanId === undefined || judgement.events.length === 0) return undefined;
  const evaluated = trace.spans.find((span) => view.spanId(span) === parentSpanId) ?? trace.spans[0];
  if (evaluated === undefined) return undefined;
  return evaluationSpan({
    traceId: trace.traceId,
    ...(spanId && { spanId: spanId(judgement.reports.map((report) => scenarioLabel(report.scenario))) }),
    parentSpanId,
    resource: view.resource(evaluated),
    startTime: hrTimeFromMillis(judgement.startedAtMs),
    endTime: hrTimeFromMillis(judgement.endedAtMs),
    attributes: {
      'toolpath.trace.spans': trace.spans.length,
      'toolpath.evaluations': judgement.reports.length,
      ...extraAttributes,
    },
    events: judgement.events,
  });
}

/** Milliseconds since the epoch (with fractions) as HrTime. */
export function hrTimeFromMillis(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

function hrTimeDifference(start: HrTime, end: HrTime): HrTime {
  let seconds = end[0] - start[0];
  let nanos = end[1] - start[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  }
  return seconds < 0 ? [0, 0] : [seconds, nanos];
}
