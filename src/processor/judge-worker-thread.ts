/**
 * The worker thread of {@link WorkerJudge}: a {@link TraceEvaluator} made from `workerData`,
 * unpacking each batch of traces posted to it, judging them and answering with their judgements,
 * in order. It keeps the conversation state of `scope: conversation` scenarios between batches,
 * on the clock the app's thread sends with each batch.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ConversationJudgement } from '../judging/conversation-judge.js';
import { type EvaluatorOptions, type Judgement, TraceEvaluator } from '../judging/trace-evaluator.js';
import type {
  ConversationAnswer,
  ConversationRequest,
  JudgeBatch,
  JudgedBatch,
  WorkerReady,
} from './judge-worker.js';
import { unpackTraces } from './span-pack.js';

const evaluator = new TraceEvaluator(workerData as EvaluatorOptions);
parentPort?.postMessage({ ready: true } satisfies WorkerReady);

parentPort?.on('message', ({ id, traces, pack, conversations }: JudgeBatch) => {
  let answer: JudgedBatch;
  try {
    // First what can throw (a damaged pack): the conversation state is touched only once it cannot.
    const records = unpackTraces(pack);
    const now = conversations?.now ?? performance.now();
    const closed = conversations ? beforeTraces(conversations) : [];
    const judgements = traces.map(({ traceId, incomplete, partlyPassedOn }, k) =>
      sendable(evaluator.judge(traceId, records[k] ?? [], incomplete, partlyPassedOn, now)),
    );
    answer = { id, judgements };
    if (conversations) answer.conversations = afterTraces(conversations, closed);
  } catch (error) {
    // A damaged pack (the evaluator itself never throws): the batch goes on unjudged, the worker stays.
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(answer);
});

/** Marks what an earlier worker lost, and judges the conversations idle at `now` final. */
function beforeTraces({ now, close, lost }: ConversationRequest): ConversationJudgement[] {
  if (lost) evaluator.markConversationsLost(lost);
  return close === 'all' ? [] : evaluator.expireConversations(now);
}

function afterTraces({ close }: ConversationRequest, closed: ConversationJudgement[]): ConversationAnswer {
  if (close === 'all') closed.push(...evaluator.closeConversations());
  const answer: ConversationAnswer = { closed: closed.map(sendableConversation) };
  const dueAt = evaluator.conversationsDueAt();
  if (dueAt !== undefined) answer.dueAt = dueAt;
  return answer;
}

/** Without the trajectory (a class, and the app's thread has no use for it) and with failures that clone. */
function sendable(judgement: Judgement): Judgement {
  const { trajectory: _stays, ...plain } = judgement;
  if (plain.failures.length > 0) plain.failures = plain.failures.map(cloneable);
  if (plain.conversations) plain.conversations = plain.conversations.map(sendableConversation);
  return plain;
}

function sendableConversation(judgement: ConversationJudgement): ConversationJudgement {
  if (judgement.failures.length === 0) return judgement;
  return { ...judgement, failures: judgement.failures.map(cloneable) };
}

function cloneable<T extends { error: unknown }>(failure: T): T {
  return { ...failure, error: asError(failure.error) };
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
