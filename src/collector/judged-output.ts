/**
 * Where a judged trace's output goes: its report lines (onJudged), and to the next hop its
 * evaluation span and, as configured, its spans; in durable mode, the log's `judged` and `done`
 * records around them, so that a crash neither loses the output nor writes a report twice. In
 * durable mode an output the forward queue has no room for (a slow or down next hop) waits in
 * the log, not in memory, and goes to the queue, oldest first, once there is room: the log's
 * `storage.maxBytes` bounds it, and refuses requests (429) when it is reached.
 */
import { diag } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { encodeOtlpJson } from '../io/otlp-json-encode.js';
import { fromReadableSpan } from '../io/readable-span.js';
import { EVALUATION_SPAN_NAME } from '../judging/evaluation-events.js';
import type { EvaluatedTrace } from '../judging/evaluation-span.js';
import { evaluationSpanOf } from '../judging/evaluation-span.js';
import { samplingAttributes } from '../judging/risk-sampler.js';
import type { Judgement } from '../judging/trace-judge.js';
import type { SpanRecord } from '../model/span-record.js';
import type { AdapterOptions, ForwardSpans } from './adapter-options.js';
import type { Membership } from './durable-records.js';
import { type DurableTraces, derivedSpanId } from './durable-traces.js';
import type { Mark } from './durable-use.js';
import type { ForwardQueue } from './forward-queue.js';
import { decodeOtlpJsonText } from './otlp-json.js';
import { resourceOf, toReadableSpan } from './to-readable-span.js';

/** What {@link JudgedOutput} sends through. */
export interface OutputRoutes {
  queue?: ForwardQueue;
  durable?: DurableTraces;
  forwardSpans: ForwardSpans;
  /** Stamp forwarded spans with why sampling kept them. */
  stampSampling: boolean;
  onJudged?: AdapterOptions['onJudged'];
}

/**
 * The queue's room for traces' outputs: a tenth is left for what cannot wait in the log
 * (conversations' final findings, late spans).
 */
function roomFor(queue: ForwardQueue): number {
  return queue.room - Math.floor(queue.capacity / 10);
}

/** See the module comment. */
export class JudgedOutput {
  /** Outputs waiting in the log for room in the forward queue, oldest first. */
  private readonly parked: { traceId: string; mark: Mark; spans: number }[] = [];
  /** Outputs that waited in the log, in all. */
  parkedTotal = 0;

  constructor(private readonly routes: OutputRoutes) {}

  /** Outputs waiting in the log now, and their spans. */
  waiting(): { outputs: number; spans: number } {
    let spans = 0;
    for (const entry of this.parked) spans += entry.spans;
    return { outputs: this.parked.length, spans };
  }

  /** Sends the output of one judged trace; `member`: where its conversation holds it (durable mode). */
  send(trace: EvaluatedTrace<SpanRecord>, judgement: Judgement, member?: Membership): void {
    const { queue, durable, forwardSpans, onJudged } = this.routes;
    const { decision } = judgement;
    // Replayed after a crash with its report written: judged again only for its output.
    if (!durable?.reported(trace.traceId)) {
      try {
        onJudged?.(trace.spans, judgement);
      } catch (error) {
        diag.error('toolpath: onJudged failed', error);
      }
    }
    // Before its own marks: once those are on disk, so is its place in the conversation.
    if (member) durable?.member(trace.traceId, member);
    const out: ReadableSpan[] = [];
    if (queue && (forwardSpans === 'all' || (forwardSpans === 'sampled' && decision.keep))) {
      const stamp = this.routes.stampSampling ? samplingAttributes(decision) : undefined;
      for (const span of trace.spans) out.push(toReadableSpan(span, stamp));
    }
    const evaluation = queue && this.evaluationSpanOf(trace, judgement);
    if (evaluation) out.push(evaluation);
    if (!queue || out.length === 0) {
      durable?.done(trace.traceId, decision.keep);
      return;
    }
    if (!durable) {
      queue.push(out, evaluation ? [evaluation] : []);
      return;
    }
    durable.judged(trace.traceId);
    // Behind what waits already, or no room for it now: it waits in the log.
    if (this.parked.length > 0 || roomFor(queue) < out.length) {
      const evaluationSpanId = evaluation?.spanContext().spanId;
      if (this.park(trace.traceId, out, evaluationSpanId, decision.keep)) return;
    }
    queue.push(out, evaluation ? [evaluation] : [], () => durable.done(trace.traceId, decision.keep));
  }

  /** Moves waiting outputs to the forward queue, oldest first, while it has room for them. */
  sendParked(): void {
    const { queue, durable } = this.routes;
    if (!queue || !durable) return;
    for (let head = this.parked[0]; head !== undefined; head = this.parked[0]) {
      // One larger than the whole queue goes once it is empty (and what does not fit is counted).
      if (roomFor(queue) < head.spans && queue.size > 0) return;
      let output: ReturnType<DurableTraces['readParked']>;
      let spans: ReadableSpan[];
      try {
        output = durable.readParked(head.mark);
        if (output === undefined) return; // its record is not on disk yet
        spans = decodeOtlpJsonText(output.body.toString('utf8')).spans.map((span) => toReadableSpan(span));
      } catch (error) {
        // Left not done: judged again for its output at the next start.
        diag.error(
          `toolpath: the output of trace ${head.traceId} could not be read back from the log`,
          error,
        );
        this.parked.shift();
        durable.unparked(head.traceId);
        continue;
      }
      this.parked.shift();
      durable.unparked(head.traceId);
      const findings = spans.filter(
        (span) => span.name === EVALUATION_SPAN_NAME && span.spanContext().spanId === output.evaluationSpanId,
      );
      queue.push(spans, findings, () => durable.done(output.traceId, output.keep));
    }
  }

  private park(
    traceId: string,
    out: readonly ReadableSpan[],
    evaluationSpanId: string | undefined,
    keep: boolean,
  ): boolean {
    const durable = this.routes.durable as DurableTraces;
    const body = Buffer.from(JSON.stringify(encodeOtlpJson(out.map(fromReadableSpan))), 'utf8');
    const mark = durable.park({ traceId, keep, evaluationSpanId, body });
    if (mark === undefined) return false;
    this.parked.push({ traceId, mark, spans: out.length });
    this.parkedTotal++;
    return true;
  }

  /** Findings always go on, whatever sampling said about the spans: they are the adapter's output. */
  private evaluationSpanOf(
    trace: EvaluatedTrace<SpanRecord>,
    judgement: Judgement,
  ): ReadableSpan | undefined {
    return evaluationSpanOf(
      trace,
      judgement,
      { spanId: (span) => span.spanId, resource: resourceOf },
      {
        'toolpath.sampling.reason': judgement.decision.reason,
        'toolpath.sampling.kept': judgement.decision.keep,
      },
      // Durable mode sends a replayed trace's findings again: the same span id makes that idempotent.
      this.routes.durable && ((scenarios) => derivedSpanId(trace.traceId, scenarios)),
    );
  }
}
