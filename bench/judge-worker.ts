/**
 * The worker thread of bench/processor.ts's configuration (d): judges the span records posted to
 * it against the processor benchmark's scenario, as the processor would, and answers each with
 * the count of traces judged and failed so far.
 */
import { parentPort } from 'node:worker_threads';
import type { SpanRecord } from '../src/model/span-record.js';
import { TraceJudge } from '../src/processor/trace-judge.js';
import { PROCESSOR_SCENARIO } from './processor.js';

/** What the main thread posts: one completed trace. */
export interface JudgeRequest {
  traceId: string;
  records: readonly SpanRecord[];
}

/** What the worker answers after each trace. */
export interface JudgeProgress {
  judged: number;
  failed: number;
}

const judge = new TraceJudge({ scenarios: [PROCESSOR_SCENARIO] });
const progress: JudgeProgress = { judged: 0, failed: 0 };

parentPort?.on('message', ({ traceId, records }: JudgeRequest) => {
  const judgement = judge.judge(traceId, records);
  progress.judged++;
  if (judgement.reports.some((report) => report.verdict !== 'pass')) progress.failed++;
  parentPort?.postMessage(progress);
});
