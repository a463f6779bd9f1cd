/**
 * The adapter's conversations: where each one's final findings go (an evaluation span under its
 * latest trace), its final judgements written (report lines, that span to the next hop), and in
 * durable mode what lets a restart hold each conversation again and judge it final exactly once:
 * a `member` record for each trace it holds, `final` and `final done` records around its final
 * output, and at start the conversations the log gives back, held again without being re-judged.
 */
import { diag } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ConversationAnchors } from '../judging/conversation-anchors.js';
import type { ConversationJudge, ConversationJudgement } from '../judging/conversation-judge.js';
import type { LostHistory } from '../judging/conversation-state.js';
import { evaluatedSpanOf, type Judgement, type TraceJudge } from '../judging/trace-judge.js';
import { scenarioLabel } from '../model/report.js';
import type { SpanRecord } from '../model/span-record.js';
import type { Trajectory } from '../model/trajectory.js';
import { normalizeTrace } from '../normalizers/normalize.js';
import type { AdapterOptions } from './adapter-options.js';
import type { Membership } from './durable-records.js';
import {
  type ConversationReplay,
  type DurableTraces,
  derivedSpanId,
  type FinalMark,
  type Replay,
} from './durable-traces.js';
import type { ForwardQueue } from './forward-queue.js';
import type { Losses } from './losses.js';
import { resourceOf } from './to-readable-span.js';

/** What {@link AdapterConversations} writes through. */
export interface ConversationRoutes {
  judge: TraceJudge;
  queue?: ForwardQueue;
  durable?: DurableTraces;
  losses: Losses;
  maxConversations: number;
  onConversationJudged?: AdapterOptions['onConversationJudged'];
}

/** What a start took back from the log (stats). */
export interface RestoredConversations {
  /** Conversations held again, and their traces. */
  conversations: number;
  traces: number;
  /** Traces of them not in storage any more (let go at `storage.maxBytes`). */
  missingTraces: number;
  /** Finals written before the restart and judged again for their output. */
  judgedAgain: number;
}

/** See the module comment. */
export class AdapterConversations {
  private readonly anchors: ConversationAnchors;
  /**
   * Durable mode: final findings the forward queue had no room for, oldest first, until it has.
   * Their `final` records are in the log, so past the cap one waits for the next start instead.
   */
  private readonly waiting: { span: ReadableSpan; final: FinalMark }[] = [];
  /** Finals that waited for room in the forward queue, in all; and those left to the next start. */
  private waitedTotal = 0;
  private deferredTotal = 0;

  constructor(private readonly routes: ConversationRoutes) {
    this.anchors = new ConversationAnchors(routes.maxConversations);
  }

  /** Conversations held now. */
  get size(): number {
    return this.routes.judge.conversations?.state.size ?? 0;
  }

  /**
   * A trace was judged: its conversations' final findings will go under it, those closed to make
   * room are written. Returns where its conversation holds it, for the log (durable mode).
   */
  afterTrace(spans: readonly SpanRecord[], judgement: Judgement): Membership | undefined {
    if (judgement.conversations) this.write(judgement.conversations);
    if (judgement.reports.some((report) => report.conversationId !== undefined)) {
      const evaluated = spans.find((span) => span.spanId === judgement.evaluatedSpanId) ?? spans[0];
      this.anchors.remember(judgement.reports, evaluated && resourceOf(evaluated));
    }
    const { durable } = this.routes;
    const conversationId = judgement.trajectory?.conversationId;
    const traceId = judgement.trajectory?.traceId;
    if (!durable || conversationId === undefined || traceId === undefined || durable.isMember(traceId))
      return undefined;
    const place = this.routes.judge.conversations?.state.placeOf(conversationId, traceId);
    return place && { conversationId, index: place.index, lost: place.lost, atMs: Date.now() };
  }

  /** Judges the conversations idle at `now` final, and writes them. */
  sweep(now: number): void {
    this.write(this.routes.judge.expireConversations(now));
  }

  /**
   * At shutdown: without storage, every conversation is judged final; with it, none is (they are
   * held again at the next start). Returns how many were kept for it.
   */
  shutdown(): number {
    if (this.routes.durable) return this.size;
    this.write(this.routes.judge.closeConversations());
    return 0;
  }

  /**
   * Conversations judged final: their report lines (not again for `replayed`, a final written
   * before a restart), their findings on an evaluation span under their latest trace, and in
   * durable mode the records around that output.
   */
  write(judged: readonly ConversationJudgement[], replayed?: FinalMark): void {
    const { queue, durable } = this.routes;
    for (const judgement of judged) {
      if (!replayed) {
        try {
          this.routes.onConversationJudged?.(judgement);
        } catch (error) {
          diag.error('toolpath: onConversationJudged failed', error);
        }
      }
      // Sent again after a restart, the findings keep their span id.
      const labels = judgement.reports.map((report) => scenarioLabel(report.scenario));
      const spanId =
        durable && derivedSpanId(judgement.traceId, ['conversation', judgement.conversationId, ...labels]);
      const span = this.anchors.spanOf(judgement, spanId);
      if (!durable) {
        if (span && queue) queue.push([span], [span]);
        continue;
      }
      // The adapter judges on no worker: no conversation of it ends by a worker's exit.
      const evicted = judgement.evicted === 'worker_exit' ? undefined : judgement.evicted;
      const final =
        replayed ?? durable.conversationJudged(judgement.conversationId, judgement.traceIds, evicted);
      if (span && queue) this.sendFinal(queue, durable, span, final);
      else durable.conversationDone(final);
    }
  }

  /** Finals waiting for room in the forward queue now, in all, and left to the next start (stats). */
  finalsWaiting(): { waiting: number; waited: number; deferred: number } {
    return { waiting: this.waiting.length, waited: this.waitedTotal, deferred: this.deferredTotal };
  }

  /** Moves waiting finals to the forward queue, oldest first, while it has room. */
  sendWaiting(): void {
    const { queue, durable } = this.routes;
    if (!queue || !durable) return;
    for (let head = this.waiting[0]; head !== undefined && queue.room > 0; head = this.waiting[0]) {
      this.waiting.shift();
      const { final } = head;
      queue.push([head.span], [head.span], () => durable.conversationDone(final));
    }
  }

  /**
   * A final is marked done only once its span is through the queue: dropped for want of room, its
   * `final done` record would keep a restart from sending it again, and the findings were lost.
   */
  private sendFinal(queue: ForwardQueue, durable: DurableTraces, span: ReadableSpan, final: FinalMark): void {
    if (this.waiting.length === 0 && queue.room > 0) {
      queue.push([span], [span], () => durable.conversationDone(final));
      return;
    }
    this.waitedTotal++;
    // One span each, bounded by the larger of the queue's spans and the conversations held: a
    // held conversation costs more than its final's span.
    if (this.waiting.length < this.maxWaiting(queue)) {
      this.waiting.push({ span, final });
      return;
    }
    // Not marked done: the next start judges it again for its output and sends it then.
    this.deferredTotal++;
    if (this.deferredTotal === 1)
      diag.warn(
        `toolpath: ${this.maxWaiting(queue)} conversation finals wait for the next hop; later ones are sent after the next start`,
      );
  }

  private maxWaiting(queue: ForwardQueue): number {
    return Math.max(queue.capacity, this.routes.maxConversations);
  }

  /**
   * Durable mode, at start: holds again each conversation the log gives back, from its traces'
   * spans, without judging them again; those whose final was written are judged final again at
   * once, for their output only. Where traces are missing, the conversation is judged as such.
   */
  restore(replay: Replay, now: number): RestoredConversations {
    const counts: RestoredConversations = { conversations: 0, traces: 0, missingTraces: 0, judgedAgain: 0 };
    const durable = this.routes.durable as DurableTraces;
    const conversations = this.routes.judge.conversations;
    // Finals first (they are judged at once), then the others in the order they were last active.
    const ordered = [
      ...replay.conversations.filter((conversation) => conversation.final),
      ...replay.conversations
        .filter((conversation) => !conversation.final)
        .sort((a, b) => a.lastAtMs - b.lastAtMs),
    ];
    for (const conversation of ordered) {
      const traceIds = conversation.traces.map((trace) => trace.traceId);
      const release = () =>
        conversation.final
          ? durable.conversationDone(conversation.final)
          : durable.conversationDone(conversation.conversationId, traceIds);
      // No conversation scenarios any more (the configuration changed): nothing to hold them for.
      if (!conversations) {
        release();
        continue;
      }
      const held = this.hold(conversations, conversation, now);
      counts.traces += held.traces;
      counts.missingTraces += held.missing;
      if (held.traces === 0) {
        release();
        if (conversation.final) this.routes.losses.add('findings', 'storage_forced_out', 1);
        if (held.missing > 0 && !conversation.final) {
          conversations.state.markLost(conversation.conversationId, 'storage');
          durable.lost(conversation.conversationId, 'storage');
        }
        continue;
      }
      counts.conversations++;
      if (!conversation.final) continue;
      const judgement = conversations.closeNow(conversation.conversationId, conversation.final.evicted);
      if (!judgement) continue;
      this.routes.judge.sinks.recordConversation(judgement);
      this.write([judgement], conversation.final);
      counts.judgedAgain++;
    }
    if (conversations) {
      for (const { conversationId, lost } of replay.lost) conversations.state.markLost(conversationId, lost);
      conversations.judgedBefore(replay.judgedBefore);
    }
    return counts;
  }

  /** Holds one conversation's traces again; says how many were held and how many were missing. */
  private hold(
    conversations: ConversationJudge,
    conversation: ConversationReplay,
    now: number,
  ): { traces: number; missing: number } {
    const { conversationId } = conversation;
    const found: { trajectory: Trajectory; spans: SpanRecord[] }[] = [];
    for (const { traceId, spans } of conversation.traces) {
      const trajectory = spans && spans.length > 0 ? normalized(traceId, spans) : undefined;
      if (spans && trajectory?.conversationId === conversationId) found.push({ trajectory, spans });
    }
    const missing = conversation.traces.length - found.length;
    const lost: LostHistory | undefined = missing > 0 ? 'storage' : conversation.lost;
    // The idle timeout goes on from when its latest trace joined it.
    const lastActive = now - Math.max(0, Date.now() - conversation.lastAtMs);
    for (const { trajectory, spans } of found) {
      const evaluatedSpanId = evaluatedSpanOf(trajectory);
      const closed = conversations.restore(conversationId, trajectory, evaluatedSpanId, lastActive, lost);
      for (const judgement of closed) this.routes.judge.sinks.recordConversation(judgement);
      this.write(closed);
      const evaluated = spans.find((span) => span.spanId === evaluatedSpanId) ?? spans[0];
      if (evaluated) this.anchors.keep(conversationId, resourceOf(evaluated));
    }
    return { traces: found.length, missing };
  }
}

function normalized(traceId: string, spans: readonly SpanRecord[]): Trajectory | undefined {
  try {
    return normalizeTrace(traceId, spans);
  } catch (error) {
    diag.error(`toolpath: could not normalize trace ${traceId} to hold its conversation again`, error);
    return undefined;
  }
}
