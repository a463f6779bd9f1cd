/**
 * The worker thread of {@link WorkerJudge}: a {@link TraceEvaluator} made from `workerData`,
 * judging each batch of traces posted to it and answering with their judgements, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { JudgeBatch, JudgedBatch } from './judge-worker.js';
import { type EvaluatorOptions, type Judgement, TraceEvaluator } from './trace-evaluator.js';

const evaluator = new TraceEvaluator(workerData as EvaluatorOptions);

parentPort?.on('message', (batch: JudgeBatch) => {
  const judgements = batch.traces.map(({ traceId, records, incomplete, partlyPassedOn }) =>
    sendable(evaluator.judge(traceId, records, incomplete, partlyPassedOn)),
  );
  const answer: JudgedBatch = { id: batch.id, judgements };
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
