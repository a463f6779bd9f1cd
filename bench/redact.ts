/**
 * What redaction costs alone: Redactor.redact of this checkout against another checkout's (the
 * baseline), in one process, rounds interleaved (the machine is shared and noisy). The inputs are
 * bench/judge.ts's workload: 200 of bench/processor.ts's agent traces, judged by TraceJudge with
 * PROCESSOR_SCENARIO and redaction off, keeping the reports that have a finding or a reason (the
 * only ones redaction works on) with their trajectories. Each round redacts every kept report
 * once per side, with `release()` after each trajectory as TraceEvaluator does. Prints each
 * side's median CPU microseconds per redaction, the median of the paired ratios (this / other),
 * and the bytes each allocates per redaction (V8's sampling heap profiler). Checks first that
 * both sides give the same reports (same hash key).
 *
 *   npx tsx bench/redact.ts ../baseline
 */
import { Session } from 'node:inspector';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Redactor } from '../src/judging/redact.js';
import { TraceJudge } from '../src/judging/trace-judge.js';
import type { Report } from '../src/model/report.js';
import type { Trajectory } from '../src/model/trajectory.js';
import { agentRecords } from './agent-records.js';
import { PROCESSOR_SCENARIO } from './processor.js';

const TRACES = 200;
const ROUNDS = 31;
const REPEAT = 20;

interface Redacting {
  redact(report: Report, trajectory: Trajectory): Report;
  release(): void;
}

const other = process.argv[2];
if (!other) {
  console.error('usage: npx tsx bench/redact.ts OTHER_CHECKOUT');
  process.exit(2);
}
const OPTIONS = { hashKey: 'bench' };
const { Redactor: OtherRedactor } = (await import(
  pathToFileURL(resolve(other, 'src/judging/redact.ts')).href
)) as { Redactor: new (options: typeof OPTIONS) => Redacting };

const inputs: { report: Report; trajectory: Trajectory }[] = [];
const judge = new TraceJudge({
  scenarios: [PROCESSOR_SCENARIO],
  redact: false,
  onReport: (report, trajectory) => {
    const reasons = report.assertions.some((assertion) => assertion.reason !== '');
    if (trajectory && (report.findings.length > 0 || reasons)) inputs.push({ report, trajectory });
  },
});
for (let n = 0; n < TRACES; n++) {
  const records = agentRecords(n);
  judge.judge(records[0]?.traceId as string, records);
}

const here = new Redactor(OPTIONS);
const there = new OtherRedactor(OPTIONS);
for (const { report, trajectory } of inputs) {
  const ours = here.redact(report, trajectory);
  const theirs = there.redact(report, trajectory);
  here.release();
  there.release();
  if (!isDeepStrictEqual(ours, theirs)) throw new Error(`the two redactors differ on ${trajectory.traceId}`);
}

function each(redactor: Redacting): void {
  for (const { report, trajectory } of inputs) {
    redactor.redact(report, trajectory);
    redactor.release();
  }
}

/** CPU microseconds per redaction over one round. */
function round(redactor: Redacting): number {
  const start = process.cpuUsage();
  for (let i = 0; i < REPEAT; i++) each(redactor);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (REPEAT * inputs.length);
}

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

/** Bytes allocated per redaction (sampled every 256 bytes; what GC already took counted too). */
async function bytesPerRedaction(redactor: Redacting): Promise<number> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((done, fail) =>
      session.post(method, params, (error, result) => (error ? fail(error) : done(result))),
    );
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let i = 0; i < REPEAT; i++) each(redactor);
  const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: { head: SampledNode } };
  session.disconnect();
  const total = (node: SampledNode): number =>
    node.children.reduce((sum, child) => sum + total(child), node.selfSize);
  return total(profile.head) / (REPEAT * inputs.length);
}

interface SampledNode {
  selfSize: number;
  children: SampledNode[];
}

const ourBytes = await bytesPerRedaction(here);
const theirBytes = await bytesPerRedaction(there);
console.log(
  `Redactor.redact on ${inputs.length} reports with findings of ${TRACES} traces (reports equal), ${ROUNDS} interleaved rounds, CPU time: ` +
    `this ${median(ours).toFixed(2)} µs/report, ${other} ${median(theirs).toFixed(2)} µs/report; median paired ratio ${ratio.toFixed(3)}x`,
);
console.log(
  `allocated per redaction: this ${(ourBytes / 1024).toFixed(2)} KiB, ${other} ${(theirBytes / 1024).toFixed(2)} KiB (${(ourBytes / theirBytes).toFixed(2)}x)`,
);
