/**
 * One process of bench/instructions.ts, run under callgrind: makes `count` fresh agent traces
 * (bench/judge.ts's) with a real TracerProvider and does one thing with each: nothing more
 * (`make`, the baseline), takes out its JSON attributes (`texts`, the baseline of `parse`),
 * `JSON.parse` of those (`parse`), or TraceJudge.judge against the processor benchmark's
 * scenario (`judge`, this checkout's or, given a root, another checkout's). Prints what it did,
 * so a run that judged nothing is seen.
 *
 *   npx tsx bench/instructions-run.ts make|texts|parse|judge COUNT [CHECKOUT]
 */
import type { SpanRecord } from '../src/model/span-record.js';
import { agentRecords, jsonAttributes } from './agent-records.js';
import { checkoutJudge } from './checkout-judge.js';

const [mode, countText, root = '.'] = process.argv.slice(2);
const count = Number(countText);
if (
  !(mode === 'make' || mode === 'texts' || mode === 'parse' || mode === 'judge') ||
  !Number.isInteger(count) ||
  count < 1
) {
  console.error('usage: npx tsx bench/instructions-run.ts make|texts|parse|judge COUNT [CHECKOUT]');
  process.exit(2);
}

const judge = mode === 'judge' ? await checkoutJudge(root) : undefined;
let values = 0;
const verdicts: Record<string, number> = {};
for (let n = 0; n < count; n++) {
  const trace = agentRecords(n);
  if (mode === 'texts') {
    values += jsonAttributes(trace).length;
  } else if (mode === 'parse') {
    for (const text of jsonAttributes(trace)) if (JSON.parse(text) !== undefined) values++;
  } else if (judge) {
    for (const report of judge.judge((trace[0] as SpanRecord).traceId, trace).reports)
      verdicts[report.verdict] = (verdicts[report.verdict] ?? 0) + 1;
  }
}
console.log(
  `${mode} ${count}: ${mode === 'judge' ? JSON.stringify(verdicts) : `${values} ${mode === 'parse' ? 'values parsed' : 'texts'}`}`,
);
