/**
 * Judging on a worker thread (`worker: true`), the app's side of it: posting waiting traces,
 * taking judgements back, and keeping the worker's conversations honest. The conversation state
 * lives on the worker, where the traces are judged; the app's thread sends its clock with each
 * batch, asks for the idle ones when one is due, and, should the worker exit, judges the
 * conversations it held as lost ({@link WorkerConversations}).
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { ConversationJudgement } from '../judging/conversation-judge.js';
import type { ConversationLimits } from '../judging/conversation-state.js';
import { LaterOnce } from '../judging/later-once.js';
import { type EvaluatorOptions, type Judgement, TraceEvaluator } from '../judging/trace-evaluator.js';
import { JudgementSinks, type SinkOptions } from '../judging/trace-judge.js';
import type { WaitingTraces } from '../judging/waiting-traces.js';
import {
  type ConversationAnswer,
  type ConversationRequest,
  type TraceToJudge,
  WorkerJudge,
  workerEvaluatorOptions,
} from './judge-worker.js';
import { type Buffered, incompleteReason } from './live-trace.js';
import type { SpanOutlet } from './span-outlet.js';
import { packTraces } from './span-pack.js';
import type { TraceDrain } from './trace-drain.js';
import { WorkerConversations } from './worker-conversations.js';

/**
 * Posts every trace waiting its turn to a {@link WorkerJudge} in one batch (packing is all the
 * app's thread does), and applies each judgement that comes back. The traces stay held, in
 * `waiting`, until then.
 */
export class WorkerDrain implements TraceDrain {
  readonly sinks: JudgementSinks;
  judged = 0;
  private readonly worker: WorkerJudge;
  /** Only with conversation scenarios. */
  private readonly conversations: WorkerConversations | undefined;
  /** Posting is cheap: done as soon as the code that ended the trace returns, so the worker starts at once. */
  private readonly later = new LaterOnce(() => this.post(), 'toolpath: judging failed', queueMicrotask);
  /** A batch asking only for the idle conversations is out: the sweep does not ask again meanwhile. */
  private askingIdle = false;

  /**
   * Starts the worker. Throws at once for scenarios it cannot be given (loaded Scenario objects),
   * and for anything the worker's evaluator would refuse (a scenario that cannot be loaded, a bad
   * sampling ratio): one is made here first, so a setup mistake shows at setup.
   */
  constructor(
    options: Omit<EvaluatorOptions, 'conversations'> &
      SinkOptions & { conversations: ConversationLimits | false },
    private readonly waiting: WaitingTraces<ReadableSpan, Buffered>,
    private readonly output: SpanOutlet,
    timeoutMs: number,
  ) {
    const evaluatorOptions = workerEvaluatorOptions(options);
    const check = new TraceEvaluator(evaluatorOptions);
    this.conversations =
      check.conversations && options.conversations !== false
        ? new WorkerConversations(options.conversations.maxConversations)
        : undefined;
    this.sinks = new JudgementSinks(options);
    this.worker = new WorkerJudge(evaluatorOptions, timeoutMs, () => this.exited());
  }

  /** Times the worker died and was started again. */
  get restarts(): number {
    return this.worker.restarts;
  }

  get conversationsLost(): number {
    return this.conversations?.lost ?? 0;
  }

  get conversationsCoalesced(): number {
    return this.conversations?.coalesced ?? 0;
  }

  schedule(): void {
    this.later.schedule();
  }

  drainAll(): void {
    this.post();
  }

  /** Resolves when every batch posted so far is answered. */
  settled(): Promise<void> {
    return this.worker.settled();
  }

  /** Asks the worker for its idle conversations when the one idle longest is due. */
  sweep(now: number): void {
    const dueAt = this.conversations?.dueAt;
    if (dueAt === undefined || now < dueAt || this.askingIdle) return;
    this.askingIdle = true;
    this.send([], this.conversationRequest(now));
  }

  /** Every conversation judged final, then the worker stopped; what its exit lost is judged as lost. */
  async close(): Promise<void> {
    if (this.conversations) this.send([], this.conversations.request(performance.now(), 'all'));
    await this.worker.terminate();
    // Still known: the worker's answer did not come (it died, or the batch failed), so their state is gone.
    this.exited();
  }

  private post(): void {
    const traces: Buffered[] = [];
    for (let trace = this.waiting.sendOldest(); trace; trace = this.waiting.sendOldest()) traces.push(trace);
    if (traces.length > 0) this.send(traces, this.conversationRequest(performance.now()));
  }

  private conversationRequest(now: number): ConversationRequest | undefined {
    return this.conversations?.request(now);
  }

  private send(traces: Buffered[], request: ConversationRequest | undefined): void {
    const requests: TraceToJudge[] = traces.map((trace) => ({
      traceId: trace.traceId,
      incomplete: incompleteReason(trace),
      partlyPassedOn: trace.state.flushed > 0,
    }));
    this.worker.judge(
      requests,
      () => packTraces(traces.map((trace) => trace.spans)),
      (judgements, error, answer) => this.answered(traces, request, judgements, error, answer),
      request,
    );
  }

  private answered(
    traces: readonly Buffered[],
    request: ConversationRequest | undefined,
    judgements: Judgement[] | undefined,
    error: Error | undefined,
    answer: ConversationAnswer | undefined,
  ): void {
    if (traces.length === 0) this.askingIdle = false;
    if (judgements && request && this.conversations) {
      try {
        this.conversations.answered(request, judgements, answer);
        this.deliver(answer?.closed ?? []);
      } catch (failure) {
        const message = 'toolpath: could not apply the conversations judged on the worker';
        this.sinks.fail({ stage: 'worker', message, error: failure });
      }
    }
    for (const [k, trace] of traces.entries()) {
      this.waiting.release(trace);
      const judgement = judgements?.[k];
      try {
        if (!judgement) throw error ?? new Error('no judgement came back');
        this.judged++;
        this.sinks.record(trace.traceId, judgement);
        this.output.finish(trace, judgement, false);
      } catch (failure) {
        // Its spans go on first: reporting the failure could fail too (a broken meter).
        this.output.letGo(trace);
        const message = `toolpath: could not judge trace ${trace.traceId} on the worker; passing it on unjudged`;
        this.sinks.fail({ stage: 'worker', message, error: failure });
      }
    }
  }

  /** The worker exited (or was stopped with conversations unanswered): those it held are judged as lost. */
  private exited(): void {
    if (this.conversations) this.deliver(this.conversations.exited());
  }

  private deliver(judged: readonly ConversationJudgement[]): void {
    if (judged.length === 0) return;
    for (const judgement of judged) this.sinks.recordConversation(judgement);
    this.output.writeConversations(judged);
  }
}
