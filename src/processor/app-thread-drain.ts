/** Judging on the app's thread (without `worker`): in slices off the span's end, or inline in `onEnding`. */
import { diag } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { fromReadableSpan } from '../io/readable-span.js';
import type { ConversationLimits } from '../judging/conversation-state.js';
import { LaterOnce } from '../judging/later-once.js';
import {
  type Judgement,
  type JudgementSinks,
  type JudgeOptions,
  TraceJudge,
} from '../judging/trace-judge.js';
import type { WaitingTraces } from '../judging/waiting-traces.js';
import type { SpanRecord } from '../model/span-record.js';
import { type Buffered, incompleteReason } from './live-trace.js';
import type { SpanOutlet } from './span-outlet.js';
import type { TraceDrain } from './trace-drain.js';

/** Deferred judging yields to the event loop after this long, so a burst cannot stall the app. */
const JUDGE_SLICE_MS = 10;

/** See the module comment; the conversation state lives in its {@link TraceJudge}. */
export class AppThreadDrain implements TraceDrain {
  readonly sinks: JudgementSinks;
  readonly restarts = 0;
  readonly conversationsLost = 0;
  judged = 0;
  private readonly judge: TraceJudge;
  /** Judging waits for a later turn of the event loop, off the span's end. */
  private readonly later = new LaterOnce(() => this.drain(JUDGE_SLICE_MS), 'toolpath: judging failed');

  /** Throws a ScenarioError when a scenario cannot be loaded. */
  constructor(
    options: Omit<JudgeOptions, 'conversations'> & { conversations: ConversationLimits | false },
    private readonly waiting: WaitingTraces<ReadableSpan, Buffered>,
    private readonly output: SpanOutlet,
  ) {
    this.judge = new TraceJudge(options);
    this.sinks = this.judge.sinks;
  }

  get conversationsCoalesced(): number {
    return this.judge.conversations?.coalesced ?? 0;
  }

  schedule(): void {
    this.later.schedule();
  }

  drainAll(): void {
    this.drain(Number.POSITIVE_INFINITY);
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  /** Judges a trace now (its root is ending) and records the judgement; the caller applies it. */
  judgeNow(trace: Buffered, records: SpanRecord[]): Judgement {
    this.judged++;
    return this.judge.judge(trace.traceId, records, incompleteReason(trace), trace.state.flushed > 0);
  }

  sweep(now: number): void {
    this.output.writeConversations(this.judge.expireConversations(now));
  }

  async close(): Promise<void> {
    this.output.writeConversations(this.judge.closeConversations());
  }

  /** Judges waiting traces, oldest first, for up to `budgetMs`; then yields and comes back. */
  private drain(budgetMs: number): void {
    const deadline = performance.now() + budgetMs;
    for (let trace = this.waiting.takeOldest(); trace; trace = this.waiting.takeOldest()) {
      try {
        this.output.finish(trace, this.judgeNow(trace, trace.spans.map(fromReadableSpan)), false);
      } catch (error) {
        // Whatever went wrong, the trace's spans still go on, as they would without toolpath.
        diag.error(`toolpath: could not judge trace ${trace.traceId}; passing it on unjudged`, error);
        this.output.letGo(trace);
      }
      if (performance.now() >= deadline && this.waiting.queuedCount > 0) {
        this.later.schedule();
        return;
      }
    }
  }
}
