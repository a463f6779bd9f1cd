/**
 * One process of bench/instructions.ts, run under callgrind: makes `count` fresh agent traces
 * (bench/judge.ts's) with a real TracerProvider and does one thing with each: nothing more
 * (`make`, the baseline), takes out its JSON attributes (`texts`, the baseline of `parse`),
 * `JSON.parse` of those (`parse`), or TraceJudge.judge
 * against the processor benchmark's scenario (`judge`, this checkout's or, given a root, another
 * checkout's). Prints what it did, so a run that judged nothing is seen.
 *
 *   npx tsx bench/instructions-run.ts make|texts|parse|judge COUNT [CHECKOUT]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SpanRecord } from '../src/model/span-record.js';
import { agentRecords, jsonAttributes } from './agent-records.js';
import { PROCESSOR_SCENARIO } from './processor.js';

interface Judge {
  judge(traceId: string, spans: SpanRecord[]): { reports: readonly { verdict: string }[] };
}

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

/** A checkout's TraceJudge: src/judging/ today, src/processor/ before the core moved. */
async function judgeOf(checkout: string): Promise<Judge> {
  for (const path of ['src/judging/trace-judge.ts', 'src/processor/trace-judge.ts']) {
    try {
      const module = (await import(pathToFileURL(resolve(checkout, path)).href)) as {
        TraceJudge: new (options: { scenarios: unknown[] }) => Judge;
      };
      return new module.TraceJudge({ scenarios: [PROCESSOR_SCENARIO] });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    }
  }
  throw new Error(`${checkout}: no src/judging/trace-judge.ts or src/processor/trace-judge.ts`);
}

const judge = mode === 'judge' ? await judgeOf(root) : undefined;
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
