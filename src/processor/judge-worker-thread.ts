/**
 * The worker thread of {@link WorkerJudge}: a {@link TraceEvaluator} made from `workerData`,
 * unpacking each batch of traces posted to it, judging them and answering with their judgements,
 * in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type EvaluatorOptions, type Judgement, TraceEvaluator } from '../judging/trace-evaluator.js';
import type { JudgeBatch, JudgedBatch, WorkerReady } from './judge-worker.js';
import { unpackTraces } from './span-pack.js';

const evaluator = new TraceEvaluator(workerData as EvaluatorOptions);
parentPort?.postMessage({ ready: true } satisfies WorkerReady);

parentPort?.on('message', ({ id, traces, pack }: JudgeBatch) => {
  let answer: JudgedBatch;
  try {
    const records = unpackTraces(pack);
    const judgements = traces.map(({ traceId, incomplete, partlyPassedOn }, k) =>
      sendable(evaluator.judge(traceId, records[k] ?? [], incomplete, partlyPassedOn)),
    );
    answer = { id, judgements };
  } catch (error) {
    // A damaged pack (the evaluator itself never throws): the batch goes on unjudged, the worker stays.
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(answer);
});

/** Without the trajectory (a class, and the app's thread has no use for it) and with failures that clone. */
function sendable(judgement: Judgement): Judgement {
  const { trajectory: _stays, ...plain } = judgement;
  if (plain.failures.length > 0)
    plain.failures = plain.failures.map((failure) => ({ ...failure, error: asError(failure.error) }));
  return plain;
}

function asError(error: unknown): Error {
  if (error instanceof Error) {
    const copy = new Error(error.message);
    copy.name = error.name;
    copy.stack = error.stack;
    return copy;
  }
  return new Error(String(error));
}
