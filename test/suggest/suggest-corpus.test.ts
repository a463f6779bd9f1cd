/**
 * On recorded runs nobody on toolpath wrote: tau-bench's airline trajectories, the ones its own
 * check passed as the good runs, the others as the bad ones.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { trajectoriesOf } from '../../src/cli/run-eval.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { SuggestRun } from '../../src/suggest/runs.js';
import { suggestScenarios } from '../../src/suggest/suggest.js';
import { scenarioOf } from '../../src/suggest/verify.js';
import { CORPUS_NOTE, itCorpus } from '../helpers/corpus.js';
import { TAUBENCH_DIR, taubenchVerdicts } from '../helpers/taubench.js';

async function runsOf(names: readonly string[]): Promise<SuggestRun[]> {
  const runs: SuggestRun[] = [];
  for (const name of names) {
    const source = join(TAUBENCH_DIR, 'inputs', `${name}.json`);
    const read = readStoredTraces(await readFile(source, 'utf8'), source);
    if (!read.input) throw new Error(`${source}: ${JSON.stringify(read.errors)}`);
    const typedEvents = read.input.format === 'typed-events';
    for (const trajectory of trajectoriesOf(read.input, source))
      runs.push({ source, trajectory, typedEvents });
  }
  return runs;
}

itCorpus(
  `tau-bench airline: the suggested scenario passes every good run, and --bad agrees with eval${CORPUS_NOTE}`,
  async () => {
    const verdicts = Object.entries(await taubenchVerdicts());
    const good = await runsOf(verdicts.filter(([, v]) => v.actionsPass).map(([name]) => name));
    const bad = await runsOf(verdicts.filter(([, v]) => !v.actionsPass).map(([name]) => name));
    const suggestions = suggestScenarios(good, bad);
    expect(suggestions.agents.length).toBeGreaterThan(0);
    for (const agent of suggestions.agents) {
      if (agent.rules.length === 0) continue;
      const scenario = scenarioOf(
        agent.group,
        agent.rules.map(({ rule }) => rule),
      );
      for (const run of agent.group.runs) {
        const failing = evaluate(run.trajectory, scenario).assertions.filter((a) => a.status !== 'pass');
        expect(failing, run.source).toEqual([]);
      }
      // A bad run is caught exactly when the whole scenario fails it.
      for (const run of agent.bad) {
        const caught = !agent.uncaught.includes(run);
        expect(evaluate(run.trajectory, scenario).verdict === 'fail', run.source).toBe(caught);
      }
    }
  },
);
