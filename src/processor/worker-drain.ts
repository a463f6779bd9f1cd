/** The processor's side of judging on a worker thread: posting waiting traces, taking judgements back. */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { type EvaluatorOptions, type Judgement, TraceEvaluator } from '../judging/trace-evaluator.js';
import type { WaitingTraces } from '../judging/waiting-traces.js';
import { type TraceToJudge, WorkerJudge, workerEvaluatorOptions } from './judge-worker.js';
import { type Buffered, incompleteReason } from './live-trace.js';
import { packTraces } from './span-pack.js';

/** What the processor does with a trace whose judgement is back, or whose batch was lost. */
export interface WorkerOutcomes {
  judged(trace: Buffered, judgement: Judgement): void;
  lost(trace: Buffered, error: unknown): void;
}

/**
 * Posts every trace waiting its turn to a {@link WorkerJudge} in one batch (packing is all the
 * app's thread does), and hands each judgement back. The traces stay held, in `waiting`, until then.
 */
export class WorkerDrain {
  private readonly worker: WorkerJudge;

  /**
   * Starts the worker. Throws at once for scenarios it cannot be given (loaded Scenario objects),
   * and for anything the worker's evaluator would refuse (a scenario that cannot be loaded, a bad
   * sampling ratio): one is made here first, so a setup mistake shows at setup.
   */
  constructor(
    options: EvaluatorOptions,
    private readonly waiting: WaitingTraces<ReadableSpan, Buffered>,
    private readonly outcomes: WorkerOutcomes,
    timeoutMs: number,
  ) {
    const evaluatorOptions = workerEvaluatorOptions(options);
    new TraceEvaluator(evaluatorOptions);
    this.worker = new WorkerJudge(evaluatorOptions, timeoutMs);
  }

  /** Times the worker died and was started again. */
  get restarts(): number {
    return this.worker.restarts;
  }

  post(): void {
    const traces: Buffered[] = [];
    const requests: TraceToJudge[] = [];
    for (let trace = this.waiting.sendOldest(); trace; trace = this.waiting.sendOldest()) {
      traces.push(trace);
      const partlyPassedOn = trace.state.flushed > 0;
      requests.push({ traceId: trace.traceId, incomplete: incompleteReason(trace), partlyPassedOn });
    }
    if (traces.length === 0) return;
    this.worker.judge(
      requests,
      () => packTraces(traces.map((trace) => trace.spans)),
      (judgements, error) => this.answered(traces, judgements, error),
    );
  }

  /** Resolves when every batch posted so far is answered. */
  settled(): Promise<void> {
    return this.worker.settled();
  }

  /** Waits for the batches out, then stops the worker. */
  terminate(): Promise<void> {
    return this.worker.terminate();
  }

  private answered(traces: readonly Buffered[], judgements: Judgement[] | undefined, error?: Error): void {
    for (const [k, trace] of traces.entries()) {
      this.waiting.release(trace);
      const judgement = judgements?.[k];
      try {
        if (!judgement) throw error ?? new Error('no judgement came back');
        this.outcomes.judged(trace, judgement);
      } catch (failure) {
        this.outcomes.lost(trace, failure);
      }
    }
  }
}
