/**
 * TraceJudge.judge of this checkout against another checkout's (the previous commit, say), in one
 * process, rounds interleaved: the machine is shared and noisy, and two separate runs of
 * bench/judge.ts differ by more than the changes one wants to see. The 11-span trace and scenario
 * of bench/judge.ts, 200 traces made once and judged by both, warm. Prints each side's median CPU
 * microseconds per trace and the median of the paired ratios (this / other).
 *
 *   git worktree add ../baseline HEAD~1 && cp -al node_modules ../baseline/
 *   npx tsx bench/judge-pair.ts ../baseline
 */
import { TraceJudge } from '../src/judging/trace-judge.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { agentRecords } from './agent-records.js';
import { type CheckoutJudge, checkoutJudge } from './checkout-judge.js';
import { PROCESSOR_SCENARIO } from './processor.js';

const ROUNDS = 31;
const PER_ROUND = 2_000;

const other = process.argv[2];
if (!other) {
  console.error('usage: npx tsx bench/judge-pair.ts OTHER_CHECKOUT');
  process.exit(2);
}

const traces = Array.from({ length: 200 }, (_, n) => agentRecords(n));

/** CPU microseconds per trace over one round. */
function round(judge: CheckoutJudge): number {
  const start = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i++) {
    const trace = traces[i % traces.length] as SpanRecord[];
    judge.judge((trace[0] as SpanRecord).traceId, trace);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PER_ROUND;
}

const here = new TraceJudge({ scenarios: [PROCESSOR_SCENARIO] });
const there = await checkoutJudge(other);
for (let i = 0; i < 3; i++) {
  round(here);
  round(there);
}
const ours: number[] = [];
const theirs: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  // Alternate which goes first, so neither always runs on the other's garbage.
  if (i % 2 === 0) {
    ours.push(round(here));
    theirs.push(round(there));
  } else {
    theirs.push(round(there));
    ours.push(round(here));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
const ratio = median(ours.map((value, i) => value / (theirs[i] as number)));
console.log(
  `TraceJudge.judge, ${ROUNDS} interleaved rounds of ${PER_ROUND}, CPU time: this ${median(ours).toFixed(1)} µs/trace, ` +
    `${other} ${median(theirs).toFixed(1)} µs/trace; median paired ratio ${ratio.toFixed(3)}x`,
);
