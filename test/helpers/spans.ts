/**
 * Hand-built SpanRecords for the edge cases real SDKs will not produce on demand (cycles,
 * duplicate ids, open spans). The main paths are tested on spans from a real provider.
 */
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';

let counter = 0;

/** A fresh span id, unique within a test run. */
export function spanId(): string {
  counter += 1;
  return counter.toString(16).padStart(16, '0');
}

export const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

/** A span with sensible defaults; times in milliseconds for readability. */
export function spanRecord(
  fields: Partial<Omit<SpanRecord, 'startTimeUnixNano' | 'endTimeUnixNano'>> & {
    start?: number;
    end?: number | null;
  },
): SpanRecord {
  const { start = 0, end = start + 1, ...rest } = fields;
  return {
    traceId: TRACE_ID,
    spanId: spanId(),
    name: 'span',
    kind: 'internal',
    startTimeUnixNano: BigInt(start) * 1_000_000n,
    ...(end !== null && { endTimeUnixNano: BigInt(end) * 1_000_000n }),
    status: { code: 'unset' },
    attributes: {},
    events: [],
    links: [],
    resource: {},
    scope: { name: 'test' },
    ...rest,
  };
}

/** An `execute_tool` span of the OTel GenAI conventions. */
export function toolSpan(
  tool: string,
  fields: Partial<Omit<SpanRecord, 'startTimeUnixNano' | 'endTimeUnixNano'>> & {
    start?: number;
    end?: number | null;
    callId?: string;
    args?: unknown;
    result?: unknown;
    extra?: Attributes;
  } = {},
): SpanRecord {
  const { callId, args, result, extra, ...rest } = fields;
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool,
    ...(callId !== undefined && { 'gen_ai.tool.call.id': callId }),
    ...(args !== undefined && {
      'gen_ai.tool.call.arguments': typeof args === 'string' ? args : JSON.stringify(args),
    }),
    ...(result !== undefined && { 'gen_ai.tool.call.result': JSON.stringify(result) }),
    ...extra,
  };
  return spanRecord({ name: `execute_tool ${tool}`, ...rest, attributes });
}
