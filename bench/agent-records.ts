/**
 * The judging benches' input: bench/processor.ts's agent conversations, made by a real
 * TracerProvider and turned into span records as the processor turns them.
 */
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { fromReadableSpan } from '../src/io/readable-span.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { agentTrace } from './processor.js';

/**
 * Keeps the spans of the conversation being made. Not a SimpleSpanProcessor: in a loop that never
 * awaits, its pending-export promises pile up, and the growing heap would be timed as GC work.
 */
class Collecting implements SpanProcessor {
  spans: ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

const collected = new Collecting();
const tracer = new TracerProvider({ spanProcessors: [collected] }).getTracer('bench');

/** Conversation `n` (every 7th out of order, every 11th with a made-up id), as span records. */
export function agentRecords(n: number): SpanRecord[] {
  collected.spans = [];
  const run = agentTrace(tracer, n, ROOT_CONTEXT);
  while (!run.next().done);
  return collected.spans.map(fromReadableSpan);
}

/** The JSON-valued attributes of a trace's spans: what a judge must parse, the benches' reference. */
export function jsonAttributes(trace: readonly SpanRecord[]): string[] {
  const texts: string[] = [];
  for (const span of trace)
    for (const value of Object.values(span.attributes))
      if (typeof value === 'string' && (value[0] === '{' || value[0] === '[')) texts.push(value);
  return texts;
}
