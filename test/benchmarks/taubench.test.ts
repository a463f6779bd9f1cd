/**
 * tau-bench's 200 published gpt-4o airline trajectories (../shared/corpus/taubench/, read in
 * place), each judged against the scenario written from its task's gold actions
 * (taubench-scenarios.ts), agree with tau-bench's own action verdict on every one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { trajectoriesOf } from '../../src/cli/run-eval.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { Report } from '../../src/model/report.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { CORPUS_MISSING, describeCorpus } from '../helpers/corpus.js';
import gold from './taubench-airline-gold.json' with { type: 'json' };
import { type GoldTask, scenarioOf, WRITE_TOOLS } from './taubench-scenarios.js';

const CORPUS = new URL('../../../shared/corpus/taubench/', import.meta.url);
const tasks = gold.tasks as GoldTask[];
// Read only where the corpus is: without it the suite below is one skipped test saying why.
const verdicts = (
  CORPUS_MISSING === undefined ? JSON.parse(readFileSync(new URL('verdicts.json', CORPUS), 'utf8')) : {}
) as Record<string, { task: number; trial: number; actionsPass: boolean }>;

/** Every input's trajectory, with its task and tau-bench's verdict. */
const inputs = (CORPUS_MISSING === undefined ? readdirSync(new URL('inputs/', CORPUS)) : [])
  .sort()
  .map((file) => {
    const name = file.replace(/\.json$/, '');
    const expected = verdicts[name];
    if (!expected) throw new Error(`${file}: no verdict`);
    const read = readStoredTraces(readFileSync(new URL(`inputs/${file}`, CORPUS), 'utf8'), file);
    if (!read.input || read.errors.length > 0) throw new Error(`${file}: ${JSON.stringify(read.errors)}`);
    const [trajectory, ...others] = trajectoriesOf(read.input, file);
    if (!trajectory || others.length > 0) throw new Error(`${file}: expected one trajectory`);
    return { name, trajectory, task: tasks[expected.task] as GoldTask, actionsPass: expected.actionsPass };
  });

function judge(outcome: 'ok' | 'any') {
  return inputs.map((input) => {
    const report = evaluate(input.trajectory, scenarioOf(input.task, outcome));
    return { ...input, report, agrees: report.pass === input.actionsPass };
  });
}

function explain(rows: { name: string; actionsPass: boolean; report: Report }[]): string {
  return rows
    .map(({ name, actionsPass, report }) => {
      const findings = report.findings.map((finding) => `${finding.rule}: ${finding.message}`).join(' | ');
      return `${name}: tau-bench ${actionsPass ? 'pass' : 'fail'}, toolpath ${report.verdict}: ${findings}`;
    })
    .join('\n');
}

function failedWrites(trajectory: Trajectory) {
  return trajectory.calls.filter(
    (call) => (WRITE_TOOLS as readonly string[]).includes(call.tool) && call.outcome.status === 'error',
  );
}

describeCorpus('tau-bench airline: scenarios from the gold actions', () => {
  it('has the 50 tasks transcribed and 4 trials of each in the corpus', () => {
    expect(tasks.map((task) => task.task)).toEqual([...Array(50).keys()]);
    expect(inputs).toHaveLength(200);
    expect(new Set(inputs.map((input) => input.task.task)).size).toBe(50);
  });

  it('agree with tau-bench on all 200 trajectories, with outcome: ok on the write tools', () => {
    const rows = judge('ok');
    const disagreements = rows.filter((row) => !row.agrees);
    expect(disagreements, explain(disagreements)).toEqual([]);
    // Every write reported a result, so nothing is left undecided.
    expect(rows.filter((row) => row.report.verdict === 'inconclusive')).toEqual([]);
    expect(rows.filter((row) => row.report.pass)).toHaveLength(rows.filter((row) => row.actionsPass).length);
  });

  it('disagree on 10, each with a failed write tau-bench ignores, when every call counts', () => {
    const disagreements = judge('any').filter((row) => !row.agrees);
    expect(disagreements.length, explain(disagreements)).toBe(10);
    for (const row of disagreements) {
      expect(row.actionsPass).toBe(true);
      expect(failedWrites(row.trajectory).length, row.name).toBeGreaterThan(0);
    }
  });

  it('read the 18 runs without a tool call as trajectories with no calls', () => {
    const empty = inputs.filter((input) => input.trajectory.calls.length === 0);
    expect(empty).toHaveLength(18);
  });
});
