/** How a span's operation ended, by the OTel status and exception conventions every framework shares. */
import type { SpanEventRecord, SpanRecord } from '../model/span-record.js';
import type { CallOutcome } from '../model/trajectory.js';
import { stringAttribute } from './attributes.js';

/**
 * Status ERROR is an error even without `error.type` (the Vercel AI SDK sets only the status and
 * an exception event); `error.type` or an exception event on an unset status is an error too;
 * an explicit OK wins (the instrumentation handled the exception). A span that never ended has
 * no result.
 */
export function spanOutcome(span: SpanRecord): CallOutcome {
  if (span.endTimeUnixNano === undefined) return { status: 'no_result' };
  if (span.status.code === 'ok') return { status: 'ok' };
  const exception = firstException(span);
  const errorType =
    stringAttribute(span.attributes, 'error.type') ??
    (exception ? stringAttribute(exception.attributes, 'exception.type') : undefined);
  if (span.status.code === 'unset' && errorType === undefined && !exception) return { status: 'ok' };
  const message =
    (span.status.message?.trim() || undefined) ??
    (exception ? stringAttribute(exception.attributes, 'exception.message') : undefined);
  // Assigned, not spread: spreading optional fields into a literal takes a slow path in V8.
  const outcome: CallOutcome = { status: 'error' };
  if (errorType) outcome.errorType = errorType;
  if (message) outcome.message = message;
  return outcome;
}

/** The span's first `exception` event (an indexed loop: no closure, no iterator made per span). */
function firstException(span: SpanRecord): SpanEventRecord | undefined {
  const events = span.events;
  for (let i = 0; i < events.length; i++)
    if ((events[i] as SpanEventRecord).name === 'exception') return events[i];
  return undefined;
}
