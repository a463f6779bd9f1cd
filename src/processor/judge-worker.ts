/**
 * Judging on a worker thread: the app's thread posts a batch of traces (their spans packed) and
 * gets their judgements back later, so normalizing and evaluating (the bulk of toolpath's cost) run beside
 * the app instead of between its requests. Only the {@link TraceEvaluator} runs there; the
 * judgements' effects (metrics, logs, `onReport`) stay with the caller.
 */

import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { diag } from '@opentelemetry/api';
import { parseProcessorOptions } from '../config/options.js';
import type { ConversationJudgement } from '../judging/conversation-judge.js';
import { type EvaluatorOptions, isLoadedScenario, type Judgement } from '../judging/trace-evaluator.js';
import type { SpanPack } from './span-pack.js';

/** A worker that dies this many times in a row without answering is not started again. */
const MAX_FAILED_STARTS = 3;

/** One trace to judge: what `TraceEvaluator.judge` is told beside its spans (which travel packed). */
export interface TraceToJudge {
  traceId: string;
  incomplete?: string;
  partlyPassedOn: boolean;
}

/**
 * What a batch asks of the conversation state the worker keeps (`scope: conversation` scenarios),
 * on the app's thread's clock: the worker's own `performance.now()` starts with each worker.
 */
export interface ConversationRequest {
  /** The app's thread's `performance.now()` when the batch was posted: the traces are judged at it. */
  now: number;
  /**
   * `idle` (the default): before the traces, the conversations idle at `now` are judged final.
   * `all` (at shutdown, in a batch of no traces): every conversation held is.
   */
  close?: 'idle' | 'all';
  /** Conversations whose state a worker that exited held: their later traces are judged without it. */
  lost?: readonly string[];
}

/** What the worker says of its conversations after a batch. */
export interface ConversationAnswer {
  /** Conversations judged final by the batch (before its traces' judgements, or, for `all`, instead). */
  closed: ConversationJudgement[];
  /** When the conversation idle longest goes idle, on the app's clock; undefined when none is held. */
  dueAt?: number;
}

/** What goes to the worker: the traces, and their spans packed in the same order. */
export interface JudgeBatch {
  id: number;
  traces: readonly TraceToJudge[];
  pack: SpanPack;
  conversations?: ConversationRequest;
}

/** What comes back: a judgement per trace of the batch, in order (without trajectories), or why there is none. */
export interface JudgedBatch {
  id: number;
  judgements?: Judgement[];
  conversations?: ConversationAnswer;
  error?: string;
}

/** What the worker says once, when its scenarios are loaded: deadlines count from then. */
export interface WorkerReady {
  ready: true;
}

/** Called once per batch: with its judgements (and its conversations' answer), or with the error that lost them. */
export type BatchDone = (
  judgements: Judgement[] | undefined,
  error?: Error,
  conversations?: ConversationAnswer,
) => void;

/**
 * A worker thread judging batches in the order they are posted. It starts at once (so a scenario
 * it cannot load shows at setup), holds the event loop open only while a batch is out, and is
 * started again on the next batch if it dies; the batches it had are answered with the error.
 * A worker that keeps a batch longer than `batchTimeoutMs` (a bug: judging is linear in the
 * trace) is stopped, and counts as dead.
 */
export class WorkerJudge {
  private worker: Worker;
  private nextId = 0;
  private readonly waiting = new Map<number, { done: BatchDone; postedAt: number }>();
  /** The worker `terminate()` stops: its exit is no loss. */
  private stopping: Worker | undefined;
  /** When the current worker said it was ready; undefined while it starts. */
  private readyAt: number | undefined;
  private deadlineTimer: ReturnType<typeof setInterval> | undefined;
  /** The worker stopped for missing a deadline, so its exit is told as that. */
  private stoppedLate: Worker | undefined;
  /** Who waits for every batch before `upTo` to be answered. */
  private settledWaiters: { upTo: number; resolve: () => void }[] = [];
  private terminated = false;
  /** Deaths in a row with no batch answered between them: past {@link MAX_FAILED_STARTS}, judging stops. */
  private failedStarts = 0;
  private broken: Error | undefined;
  /** Times the worker died and was started again. */
  restarts = 0;

  /**
   * `batchTimeoutMs`: the processor's `limits.workerTimeout`, counted from when the worker was
   * ready. `onExit` is told when a worker dies (not when `terminate` stops it), before the batches
   * it had are answered: whatever it kept between batches (conversations) is gone with it.
   */
  constructor(
    private readonly options: EvaluatorOptions,
    private readonly batchTimeoutMs: number = parseProcessorOptions({}).limits.workerTimeout,
    private readonly onExit?: (error: Error) => void,
  ) {
    this.worker = this.start();
  }

  /** Traces' batches posted and not yet answered. */
  get inFlight(): number {
    return this.waiting.size;
  }

  /**
   * Posts `traces` with their spans, packed by `pack` (`packTraces`, in the same order); `done` is
   * called with their judgements, in order. Never throws: a pack that fails is that batch's error.
   */
  judge(
    traces: readonly TraceToJudge[],
    pack: () => SpanPack,
    done: BatchDone,
    conversations?: ConversationRequest,
  ): void {
    if (this.terminated || this.broken) {
      done(undefined, this.broken ?? new Error('toolpath: the judging worker was shut down'));
      return;
    }
    const id = this.nextId++;
    this.waiting.set(id, { done, postedAt: performance.now() });
    if (this.waiting.size === 1) this.worker.ref();
    this.deadlineTimer ??= setInterval(() => this.checkDeadline(), Math.min(this.batchTimeoutMs / 2, 1_000));
    this.deadlineTimer.unref?.();
    try {
      const packed = pack();
      const batch: JudgeBatch = { id, traces, pack: packed };
      if (conversations) batch.conversations = conversations;
      this.worker.postMessage(batch, [packed.tape.buffer]);
    } catch (error) {
      // A span that cannot be packed: that batch is lost, the worker is fine.
      this.answer(id, undefined, error instanceof Error ? error : new Error(String(error)));
    }
  }

  /**
   * Resolves when every batch posted so far has been answered (not those posted later: a busy app
   * keeps posting, and a flush must end).
   */
  settled(): Promise<void> {
    const upTo = this.nextId;
    if (this.oldestWaiting() >= upTo) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push({ upTo, resolve }));
  }

  /**
   * Waits for the batches out, then stops the thread. Batches posted from now on are answered at
   * once with an error; any still out when the thread stops, with why.
   */
  async terminate(): Promise<void> {
    const settled = this.settled();
    this.terminated = true;
    await settled;
    clearInterval(this.deadlineTimer);
    this.stopping = this.worker;
    await this.worker.terminate();
    const stopped = new Error('toolpath: the judging worker was shut down');
    for (const id of [...this.waiting.keys()]) this.answer(id, undefined, stopped);
  }

  /** Its handlers run on the app's event loop: they never throw. */
  private start(): Worker {
    const worker = spawn(this.options);
    this.readyAt = undefined;
    worker.on('message', (message: JudgedBatch | WorkerReady) => {
      if ('ready' in message) {
        if (worker === this.worker) this.readyAt = performance.now();
        return;
      }
      const { id, judgements, error, conversations } = message;
      this.answer(id, judgements, error === undefined ? undefined : new Error(error), conversations);
    });
    worker.on('error', (error) => this.lost(worker, error));
    // An answer that could not be read back: the batches out are lost, as if the worker had died.
    worker.on('messageerror', (error) => this.lost(worker, error));
    worker.on('exit', (code) =>
      this.lost(
        worker,
        new Error(
          worker === this.stoppedLate
            ? `toolpath: the judging worker kept a batch over ${this.batchTimeoutMs} ms and was stopped`
            : `toolpath: the judging worker exited (${code})`,
        ),
      ),
    );
    // After the listeners: adding a 'message' listener refs the worker's port again.
    worker.unref();
    return worker;
  }

  /**
   * The worker died: its batches are answered with the error, and a new one takes the next, unless
   * it keeps dying before answering anything (it cannot start): then every later batch gets the error.
   */
  private lost(worker: Worker, error: Error): void {
    if (worker !== this.worker || this.broken) return;
    if (worker !== this.stopping) this.tellExit(error);
    // Shutting down: no new worker, but the batches out are still answered, so shutdown ends.
    if (this.terminated) this.broken = error;
    else if (++this.failedStarts >= MAX_FAILED_STARTS) this.broken = error;
    else {
      try {
        this.restarts++;
        this.worker = this.start();
      } catch (failure) {
        // Cannot even start a thread (memory): judging stops, every batch is answered with why.
        this.broken = failure instanceof Error ? failure : new Error(String(failure));
      }
    }
    for (const id of [...this.waiting.keys()]) this.answer(id, undefined, error);
  }

  /** Stops a ready worker whose oldest batch is past its deadline; its exit answers the batches. */
  private checkDeadline(): void {
    try {
      const oldest = this.waiting.values().next().value;
      if (oldest === undefined) {
        clearInterval(this.deadlineTimer);
        this.deadlineTimer = undefined;
        return;
      }
      if (this.readyAt === undefined || this.stoppedLate === this.worker) return;
      if (performance.now() - Math.max(oldest.postedAt, this.readyAt) <= this.batchTimeoutMs) return;
      this.stoppedLate = this.worker;
      void this.worker.terminate();
    } catch (error) {
      diag.error('toolpath: checking the judging worker failed', error);
    }
  }

  /** Tells `onExit`; whatever it throws goes to `diag`. */
  private tellExit(error: Error): void {
    try {
      this.onExit?.(error);
    } catch (failure) {
      diag.error('toolpath: handling the judging worker exit failed', failure);
    }
  }

  private answer(
    id: number,
    judgements: Judgement[] | undefined,
    error?: Error,
    conversations?: ConversationAnswer,
  ): void {
    if (judgements) this.failedStarts = 0;
    const done = this.waiting.get(id)?.done;
    if (!done) return;
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.worker.unref();
    try {
      done(judgements, error, conversations);
    } catch (failure) {
      diag.error('toolpath: applying judgements from the worker failed', failure);
    } finally {
      this.wakeSettled();
    }
  }

  private wakeSettled(): void {
    if (this.settledWaiters.length === 0) return;
    const oldest = this.oldestWaiting();
    const woken = this.settledWaiters.filter((waiter) => waiter.upTo <= oldest);
    if (woken.length === 0) return;
    this.settledWaiters = this.settledWaiters.filter((waiter) => waiter.upTo > oldest);
    for (const waiter of woken) waiter.resolve();
  }

  /** The id of the oldest batch not answered (ids grow, and a Map keeps them in order), or the next id. */
  private oldestWaiting(): number {
    for (const id of this.waiting.keys()) return id;
    return this.nextId;
  }
}

/**
 * The options as the worker is given them: scenarios must be files or documents (a loaded
 * Scenario holds compiled patterns, which do not cross threads), and the redaction key is made
 * here, so a worker started again hashes the same values the same way.
 */
export function workerEvaluatorOptions(options: EvaluatorOptions): EvaluatorOptions {
  const loaded = options.scenarios.findIndex(isLoadedScenario);
  if (loaded >= 0) {
    throw new TypeError(
      `toolpath: scenarios[${loaded}] is a loaded Scenario; judging on a worker takes scenario files or documents`,
    );
  }
  if ((options as { judges?: readonly unknown[] }).judges?.length)
    throw new TypeError("toolpath: judges run on the app's thread; leave out worker: true to use them");
  const { redact } = options;
  const evaluatorOptions: EvaluatorOptions = { scenarios: options.scenarios, sampling: options.sampling };
  if (options.conversations !== undefined) evaluatorOptions.conversations = options.conversations;
  evaluatorOptions.redact =
    redact === false ? false : { ...redact, hashKey: redact?.hashKey ?? randomBytes(32) };
  return evaluatorOptions;
}

/**
 * Starts the worker's thread. Built, it is the compiled `judge-worker-thread.js` beside this file.
 * Run from the TypeScript sources (tests, `tsx`), a worker does not inherit the parent's loader,
 * so the thread first loads tsx (a dev dependency) and imports the `.ts` entry through it.
 */
function spawn(options: EvaluatorOptions): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`./judge-worker-thread.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSource) return new Worker(entry, { workerData: options });
  const bootstrap = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(import.meta.url)}))`;
  return new Worker(bootstrap, { eval: true, workerData: options });
}
