/**
 * pass^k of toolpath's own verdicts on tau-bench's airline corpus (read in place: 50 tasks x 4
 * trials), each trial judged by the scenario written from its task's gold actions
 * (taubench-scenarios.ts), equals pass^k of tau-bench's own per-trial action verdicts
 * (verdicts.json) by the same formula, through `toolpath eval --dataset` and its gate.
 */
import { expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { runCli } from '../helpers/cli.js';
import { describeCorpus } from '../helpers/corpus.js';
import { comparePassHatKWithTaubench, writeTaubenchDataset } from '../helpers/taubench.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import gold from './taubench-airline-gold.json' with { type: 'json' };
import { type GoldTask, scenarioDocument } from './taubench-scenarios.js';

const tasks = gold.tasks as GoldTask[];

/** Every task's own rules under one scenario id, so one gate sees all 50 tasks; the gate on the first row. */
function assertionsOf(k: number, min: number) {
  return (task: number) => {
    const document = { ...scenarioDocument(tasks[task] as GoldTask, 'ok'), id: 'taubench.airline' };
    return task === 0 ? { ...document, gate: { passK: { k, min } } } : document;
  };
}

interface RunDocument {
  reports: (Report & { row: string; trial: number })[];
  summary: {
    scenarios: {
      evaluated: number;
      passed: number;
      gate: { met: boolean; passK: { value: number; tasks: number; leftOut: number } };
    }[];
  };
}

describeCorpus("pass^k of toolpath's verdicts on tau-bench, beside tau-bench's own", () => {
  it.each([1, 2, 3, 4])(
    'pass^%i from the gold-action scenarios equals pass^k of the benchmark verdicts',
    async (k) => {
      const dir = temporaryDir('toolpath-taubench-gold-');
      const taubench = (await comparePassHatKWithTaubench([], k)).taubench.value ?? Number.NaN;
      // A gate at exactly tau-bench's pass^k is met; the run exits 1 only for the failed trials.
      const dataset = await writeTaubenchDataset(dir, assertionsOf(k, taubench));
      const run = await runCli(['eval', '--dataset', dataset, '-f', 'json']);
      expect(run.stderr).toBe('');
      const document = JSON.parse(run.stdout) as RunDocument;
      const [summary] = document.summary.scenarios;
      expect(summary).toMatchObject({ evaluated: 200, passed: 88 });
      expect(summary?.gate.passK).toMatchObject({ tasks: 50, leftOut: 0 });
      expect(summary?.gate.met).toBe(true);

      const comparison = await comparePassHatKWithTaubench(
        document.reports.map((r) => ({ task: r.row, trial: r.trial, pass: r.verdict === 'pass' })),
        k,
      );
      expect(comparison.disagreements).toEqual([]);
      expect(comparison.toolpath.value).toBeCloseTo(taubench, 12);
      expect(summary?.gate.passK.value).toBeCloseTo(taubench, 12);
      expect(comparison.taubench.value).toBeCloseTo([0.44, 0.3, 0.245, 0.22][k - 1] as number, 12);
    },
    120_000,
  );

  it('a pass^k gate just above what the agent reached is missed, and the run exits 1', async () => {
    const dir = temporaryDir('toolpath-taubench-gold-');
    const dataset = await writeTaubenchDataset(dir, assertionsOf(2, 0.31));
    const run = await runCli(['eval', '--dataset', dataset, '-f', 'json']);
    expect(run.code).toBe(1);
    const [summary] = (JSON.parse(run.stdout) as RunDocument).summary.scenarios;
    expect(summary?.gate.met).toBe(false);
    expect(summary?.gate.passK.value).toBeCloseTo(0.3, 12);
  }, 120_000);
});
