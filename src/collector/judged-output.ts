/**
 * Where a judged trace's output goes: its report lines (onJudged), and to the next hop its
 * evaluation span and, as configured, its spans; in durable mode, the log's `judged` and `done`
 * records around them, so that a crash neither loses the output nor writes a report twice.
 */
import { diag } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { EvaluatedTrace } from '../judging/evaluation-span.js';
import { evaluationSpanOf } from '../judging/evaluation-span.js';
import { samplingAttributes } from '../judging/risk-sampler.js';
import type { Judgement } from '../judging/trace-judge.js';
import type { SpanRecord } from '../model/span-record.js';
import type { AdapterOptions, ForwardSpans } from './adapter-options.js';
import type { Membership } from './durable-records.js';
import { type DurableTraces, derivedSpanId } from './durable-traces.js';
import type { ForwardQueue } from './forward-queue.js';
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

/** See the module comment. */
export class JudgedOutput {
  constructor(private readonly routes: OutputRoutes) {}

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
    queue.push(out, evaluation ? [evaluation] : [], () => durable.done(trace.traceId, decision.keep));
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
