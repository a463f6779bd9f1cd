/**
 * What `toolpath suggest` costs beside what `toolpath eval` costs on the same runs: tau-bench's
 * airline trajectories (../shared/corpus/taubench, read in place), the 88 its own check passed
 * as the good runs, the 112 others as the bad ones. CPU time of
 *   - evaluating the suggested scenario once on every run, good and bad (the reference: what
 *     `eval` does with the scenario, measured in the same run; the machine is shared and noisy);
 *   - suggestScenarios (mining, then every rule evaluated alone on every good and bad run).
 * Medians over rounds; the ratio is the verdict. Suggesting checks each rule alone on each run,
 * so it costs about as many evaluations as there are rules.
 *
 *   npx tsx bench/suggest.ts
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { trajectoriesOf } from '../src/cli/run-eval.js';
import { evaluate } from '../src/evaluate/evaluate.js';
import { readStoredTraces } from '../src/io/read-traces.js';
import type { SuggestRun } from '../src/suggest/runs.js';
import { suggestScenarios } from '../src/suggest/suggest.js';
import { scenarioOf } from '../src/suggest/verify.js';

const DIR = resolve('../shared/corpus/taubench');
const ROUNDS = 9;

if (!existsSync(DIR)) {
  console.log(`skipped: the shared corpus is absent (no ${DIR})`);
  process.exit(0);
}

const verdicts = JSON.parse(readFileSync(join(DIR, 'verdicts.json'), 'utf8')) as Record<
  string,
  { actionsPass: boolean }
>;
const runsOf = (pass: boolean): SuggestRun[] =>
  Object.entries(verdicts)
    .filter(([, verdict]) => verdict.actionsPass === pass)
    .flatMap(([name]) => {
      const source = join(DIR, 'inputs', `${name}.json`);
      const read = readStoredTraces(readFileSync(source, 'utf8'), source);
      if (!read.input) throw new Error(`${source}: ${JSON.stringify(read.errors)}`);
      const typedEvents = read.input.format === 'typed-events';
      return trajectoriesOf(read.input, source).map((trajectory) => ({ source, trajectory, typedEvents }));
    });
const good = runsOf(true);
const bad = runsOf(false);

const suggested = suggestScenarios(good, bad);
const scenarios = suggested.agents
  .filter((agent) => agent.rules.length > 0)
  .map((agent) =>
    scenarioOf(
      agent.group,
      agent.rules.map(({ rule }) => rule),
    ),
  );
const rules = suggested.agents.reduce((sum, agent) => sum + agent.rules.length, 0);

function time(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const reference: number[] = [];
const suggesting: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  reference.push(
    time(() => {
      for (const scenario of scenarios)
        for (const run of [...good, ...bad]) evaluate(run.trajectory, scenario);
    }),
  );
  suggesting.push(time(() => suggestScenarios(good, bad)));
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const ms = (value: number) => `${value.toFixed(1)} ms`;
console.log(`${good.length} good and ${bad.length} bad runs; ${rules} rules suggested`);
console.log(`eval of the suggested scenario on every run (reference): ${ms(median(reference))}`);
console.log(`suggest (mine, then each rule evaluated alone):       ${ms(median(suggesting))}`);
console.log(`ratio: ${(median(suggesting) / median(reference)).toFixed(1)}x the reference`);
