/**
 * Where a conversation's final findings go: an evaluation span under its latest trace's
 * evaluated span, with that span's resource. The front door remembers the resource when the
 * trace is judged (the trace itself is gone by the time the conversation goes idle); one entry
 * per conversation in progress, capped like the conversation state.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Report } from '../model/report.js';
import type { ConversationJudgement } from './conversation-judge.js';
import { evaluationSpan, hrTimeFromMillis } from './evaluation-span.js';

type Resource = ReadableSpan['resource'];

/** The latest trace's resource per conversation in progress. */
export class ConversationAnchors {
  readonly #byId = new Map<string, Resource>();

  constructor(private readonly capacity: number) {}

  /** A trace was judged: its conversations' latest resource is its evaluated span's. */
  remember(reports: readonly Report[], resource: Resource | undefined): void {
    if (resource === undefined) return;
    for (const report of reports) {
      const id = report.conversationId;
      if (id === undefined || report.final !== false) continue;
      this.keep(id, resource);
    }
  }

  /** Conversation `id`'s latest resource is `resource` (a conversation held again after a restart). */
  keep(id: string, resource: Resource): void {
    this.#byId.delete(id);
    if (this.#byId.size >= this.capacity) this.#byId.delete(this.#byId.keys().next().value as string);
    this.#byId.set(id, resource);
  }

  /**
   * The final judgement's evaluation span (undefined when it has nothing to write); forgets the
   * conversation. `spanId`: its span id (random when absent).
   */
  spanOf(judgement: ConversationJudgement, spanId?: string): ReadableSpan | undefined {
    const resource = this.#byId.get(judgement.conversationId);
    this.#byId.delete(judgement.conversationId);
    if (resource === undefined || judgement.evaluatedSpanId === undefined || judgement.events.length === 0)
      return undefined;
    return evaluationSpan({
      traceId: judgement.traceId,
      ...(spanId !== undefined && { spanId }),
      parentSpanId: judgement.evaluatedSpanId,
      resource,
      startTime: hrTimeFromMillis(judgement.startedAtMs),
      endTime: hrTimeFromMillis(judgement.endedAtMs),
      attributes: {
        'toolpath.evaluations': judgement.reports.length,
        'gen_ai.conversation.id': judgement.conversationId,
        'toolpath.conversation.final': true,
      },
      events: judgement.events,
    });
  }
}
