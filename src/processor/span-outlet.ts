/**
 * The processor's way out to the wrapped processor: a judged trace's spans as its decision says
 * (with its evaluation span when its events are not on its root), a trace let go unjudged, the
 * spans a flush passes on early, and the evaluation spans of conversations judged final.
 */
import { diag } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { ConversationAnchors } from '../judging/conversation-anchors.js';
import type { ConversationJudgement } from '../judging/conversation-judge.js';
import type { DecisionCache } from '../judging/decision-cache.js';
import { evaluationSpanOf, SDK_SPAN_VIEW } from '../judging/evaluation-span.js';
import type { HeldBytes } from '../judging/held-bytes.js';
import { samplingAttributes, stamped } from '../judging/risk-sampler.js';
import type { DropReason } from '../judging/trace-buffer.js';
import type { Judgement } from '../judging/trace-judge.js';
import type { Buffered } from './live-trace.js';

/** What {@link SpanOutlet} shares with the rest of the processor. */
export interface OutletRoutes {
  /** The wrapped processor. */
  next?: SpanProcessor;
  /** Where each trace's decision is remembered, for its late spans. */
  decisions: DecisionCache;
  held: HeldBytes;
  /** Stamp kept spans with why sampling kept them. */
  stampSampling: boolean;
  /** Counts what is dropped (the buffer's counts, so `stats()` and the metric agree). */
  count: (reason: DropReason, count: number) => void;
  /** Conversations in progress at once (their latest trace's resource is remembered). */
  maxConversations: number;
}

/** See the module comment. Never throws into the caller for the wrapped processor's sake. */
export class SpanOutlet {
  /** Traces whose spans a `forceFlush` passed on before they were judged or let go. */
  flushedBeforeJudging = 0;
  /** The latest trace's resource per conversation in progress, for its final evaluation span. */
  private readonly anchors: ConversationAnchors;

  constructor(private readonly routes: OutletRoutes) {
    this.anchors = new ConversationAnchors(routes.maxConversations);
  }

  /**
   * Applies the decision: kept traces go on (with the evaluation span when needed), others are
   * dropped. A trace a flush passed on in part is always kept (its judge said so): only the spans
   * after those go on now.
   */
  finish(trace: Buffered, judgement: Judgement, eventsWritten: boolean): void {
    const { decision } = judgement;
    const { decisions, held, stampSampling } = this.routes;
    if (judgement.conversations) this.writeConversations(judgement.conversations);
    if (judgement.reports.some((report) => report.conversationId !== undefined)) {
      const evaluated =
        trace.spans.find((span) => span.spanContext().spanId === judgement.evaluatedSpanId) ?? trace.spans[0];
      this.anchors.remember(judgement.reports, evaluated?.resource);
    }
    held.release(trace.state);
    decisions.set(trace.traceId, decision.keep, performance.now());
    if (!decision.keep) {
      this.routes.count('sampled_out', 1);
      return;
    }
    for (let i = trace.state.flushed; i < trace.spans.length; i++) {
      const span = trace.spans[i] as ReadableSpan;
      this.forward(stampSampling ? stamped(span, decision) : span);
    }
    if (eventsWritten) return;
    const evaluation = evaluationSpanOf(
      trace,
      judgement,
      SDK_SPAN_VIEW,
      stampSampling ? samplingAttributes(decision) : {},
    );
    if (evaluation) this.forward(evaluation);
  }

  /** A trace let go unjudged (evicted): its spans go on (those a flush has not already), and so do its later spans. */
  letGo(trace: Buffered): void {
    this.routes.held.release(trace.state);
    this.routes.decisions.set(trace.traceId, true, performance.now());
    for (let i = trace.state.flushed; i < trace.spans.length; i++)
      this.forward(trace.spans[i] as ReadableSpan);
  }

  /** A flush: the trace's spans not yet passed on go on now, before it is judged. */
  passOnHeld(trace: Buffered): void {
    const { spans, state } = trace;
    if (state.flushed === spans.length) return;
    if (state.flushed === 0) this.flushedBeforeJudging++;
    // Counted before each span goes, so nothing could send it twice.
    while (state.flushed < spans.length) this.forward(spans[state.flushed++] as ReadableSpan);
  }

  /** Conversations judged final: their findings go on, on an evaluation span under their latest trace. */
  writeConversations(judged: readonly ConversationJudgement[]): void {
    for (const judgement of judged) {
      const span = this.anchors.spanOf(judgement);
      if (span) this.forward(span);
    }
  }

  forward(span: ReadableSpan): void {
    try {
      this.routes.next?.onEnd(span);
    } catch (error) {
      diag.error('toolpath: the wrapped processor threw in onEnd', error);
    }
  }
}
