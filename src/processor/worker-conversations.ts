/**
 * What the app's thread knows of the conversations the judging worker holds (`worker: true`,
 * `scope: conversation` scenarios): which are in progress, when the one idle longest is due, and,
 * for each, its final reports in case the worker exits with their state. A worker that exits
 * loses no conversation silently: each is judged final here, inconclusive with a hard
 * `conversation.lost` finding, and the next worker is told, so its later traces are judged as
 * truncated (`conversation.truncated`) rather than as a whole conversation.
 */
import type { ConversationJudgement } from '../judging/conversation-judge.js';
import { type EvaluationEvent, reportEvents } from '../judging/evaluation-events.js';
import type { Judgement } from '../judging/trace-evaluator.js';
import type { Report } from '../model/report.js';
import type { ConversationAnswer, ConversationRequest } from './judge-worker.js';

/** A conversation in progress on the worker, as its latest provisional reports left it. */
interface Known {
  traceId: string;
  evaluatedSpanId: string | undefined;
  /** Per conversation scenario, the report to give should the worker exit: made from the provisional one. */
  ifLost: Report[];
}

/** See the module comment. Bounded: `capacity` conversations (the worker's `maxConversations`). */
export class WorkerConversations {
  readonly #byId = new Map<string, Known>();
  /** Lost conversations the next worker must be told of, until a batch that told it is answered. */
  readonly #toTell = new Set<string>();
  /** When the worker's conversation idle longest goes idle (the app's clock); undefined when it holds none. */
  dueAt: number | undefined;
  /** Conversations lost with a worker that exited. */
  lost = 0;
  /** Traces whose provisional judgement the worker coalesced into a later one (a long conversation). */
  coalesced = 0;

  constructor(private readonly capacity: number) {}

  /** What the next batch asks of the worker's conversations, at `now`. */
  request(now: number, close?: 'all'): ConversationRequest {
    const request: ConversationRequest = { now };
    if (close) request.close = close;
    if (this.#toTell.size > 0) request.lost = [...this.#toTell];
    return request;
  }

  /**
   * A batch was answered: the conversations it judged final are forgotten, then each trace's
   * provisional reports remembered, in the order the worker made them.
   */
  answered(
    request: ConversationRequest,
    judgements: readonly Judgement[],
    answer?: ConversationAnswer,
  ): void {
    for (const id of request.lost ?? []) this.#toTell.delete(id);
    for (const closed of answer?.closed ?? []) this.#byId.delete(closed.conversationId);
    for (const judgement of judgements) {
      for (const closed of judgement.conversations ?? []) this.#byId.delete(closed.conversationId);
      this.#remember(judgement);
    }
    this.dueAt = answer?.dueAt;
  }

  /** The worker exited: every conversation it held, judged final as lost (for the caller to record and write). */
  exited(): ConversationJudgement[] {
    const now = Date.now();
    const judged: ConversationJudgement[] = [];
    for (const [conversationId, known] of this.#byId) {
      const events: EvaluationEvent[] = [];
      for (const report of known.ifLost) reportEvents(report, events);
      judged.push({
        conversationId,
        traceId: known.traceId,
        traceIds: known.ifLost[0]?.traceIds ?? [known.traceId],
        evaluatedSpanId: known.evaluatedSpanId,
        reports: known.ifLost,
        events,
        evicted: 'worker_exit',
        startedAtMs: now,
        endedAtMs: now,
        failures: [],
      });
      this.#tell(conversationId);
    }
    this.lost += this.#byId.size;
    this.#byId.clear();
    this.dueAt = undefined;
    return judged;
  }

  #remember(judgement: Judgement): void {
    let latest: { id: string; known: Known } | undefined;
    let coalesced = false;
    for (const report of judgement.reports) {
      const id = report.conversationId;
      if (id === undefined || report.final !== false) continue;
      // A trace's provisional reports are each conversation scenario's, on its one conversation.
      if (latest?.id !== id) {
        latest = {
          id,
          known: { traceId: report.traceId, evaluatedSpanId: judgement.evaluatedSpanId, ifLost: [] },
        };
        this.#byId.delete(id);
        if (this.#byId.size >= this.capacity) this.#byId.delete(this.#byId.keys().next().value as string);
        this.#byId.set(id, latest.known);
      }
      latest.known.ifLost.push(lostReport(report));
      if (report.findings.some((finding) => finding.rule === 'conversation.coalesced')) coalesced = true;
    }
    if (coalesced) this.coalesced++;
  }

  #tell(id: string): void {
    this.#toTell.delete(id);
    if (this.#toTell.size >= this.capacity) this.#toTell.delete(this.#toTell.values().next().value as string);
    this.#toTell.add(id);
  }
}

/**
 * The final report of a conversation whose state was lost: inconclusive, never a verdict on part
 * of it. Keeps what the provisional report said of the conversation so far (its traces, stats,
 * scores); its findings were in the provisional reports already.
 */
function lostReport(provisional: Report): Report {
  const reason = `the judging worker exited, and the state of conversation ${provisional.conversationId} with it`;
  // A long conversation's provisional report keeps only its latest trace ids (provisional-bounds.ts).
  const cutIds = provisional.cut?.traceIds ?? 0;
  const traces = (provisional.traceIds?.length ?? 1) + cutIds;
  const report: Report = {
    traceId: provisional.traceId,
    final: true,
    scenario: provisional.scenario,
    toolpathVersion: provisional.toolpathVersion,
    verdict: 'inconclusive',
    pass: false,
    scores: provisional.scores,
    findings: [
      {
        rule: 'conversation.lost',
        severity: 'hard',
        message: `${reason}, so it cannot be judged whole: the provisional reports after each of its ${traces} traces so far are all there is`,
        calls: [],
        spans: [],
        inconclusive: true,
        traceIds: [],
      },
    ],
    assertions: provisional.assertions.map(({ name }) => ({ name, status: 'inconclusive', reason })),
    stats: provisional.stats,
    incomplete: `worker_exit: ${reason}`,
  };
  if (provisional.conversationId !== undefined) report.conversationId = provisional.conversationId;
  if (provisional.traceIds !== undefined) report.traceIds = provisional.traceIds;
  if (cutIds > 0) report.cut = { traceIds: cutIds };
  return report;
}
