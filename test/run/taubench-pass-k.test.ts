/**
 * pass^k through the whole run on tau-bench's airline corpus (read in place): a dataset of 50
 * tasks x 4 trials, judged by a stand-in scenario (the benchmark scenarios are written apart),
 * and the gate's pass^k checked against the formula applied to the run's own per-trial verdicts.
 */
import { expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { runCli } from '../helpers/cli.js';
import { describeCorpus } from '../helpers/corpus.js';
import { comparePassHatKWithTaubench, writeTaubenchDataset } from '../helpers/taubench.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** C(n, k) exactly. */
function binomial(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let result = 1n;
  for (let i = 0; i < k; i++) result = (result * BigInt(n - i)) / BigInt(i + 1);
  return result;
}

// A stand-in: the agent must not hand the customer to a human, and must look the user up first.
const STAND_IN = {
  id: 'airline.stand-in',
  tools: { forbidden: ['transfer_to_human_agents'] },
  order: { before: [{ before: 'get_user_details', after: ['book_reservation', 'cancel_reservation'] }] },
};

describeCorpus('pass^k of a dataset run on the tau-bench corpus', () => {
  it.each([1, 2, 3, 4])(
    "pass^%i in the gate equals the formula on the run's per-trial verdicts",
    async (k) => {
      const dir = temporaryDir('toolpath-taubench-');
      const dataset = await writeTaubenchDataset(dir, { ...STAND_IN, gate: { passK: { k, min: 0 } } });
      const run = await runCli(['eval', '--dataset', dataset, '-f', 'json']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const document = JSON.parse(run.stdout) as {
        reports: (Report & { row: string; trial: number })[];
        summary: {
          scenarios: {
            unit: string;
            evaluated: number;
            gate: { passK: { value: number; tasks: number; leftOut: number } };
          }[];
        };
      };
      const [summary] = document.summary.scenarios;
      expect(summary?.unit).toBe('trial');
      expect(summary?.evaluated).toBe(200);
      // Independently: per task, c of the 4 trials passed; mean of C(c, k) / C(4, k), exact.
      const passed = new Map<string, number>();
      for (const report of document.reports)
        passed.set(report.row, (passed.get(report.row) ?? 0) + (report.verdict === 'pass' ? 1 : 0));
      expect(passed.size).toBe(50);
      const numerator = [...passed.values()].reduce((sum, c) => sum + binomial(c, k), 0n);
      const expected = Number((numerator * 10n ** 18n) / (binomial(4, k) * 50n)) / 1e18;
      expect(summary?.gate.passK).toMatchObject({ tasks: 50, leftOut: 0 });
      expect(summary?.gate.passK.value).toBeCloseTo(expected, 12);

      // Beside tau-bench's own verdicts, by the same formula (the comparison the benchmark scenarios will make).
      const comparison = await comparePassHatKWithTaubench(
        document.reports.map((r) => ({ task: r.row, trial: r.trial, pass: r.verdict === 'pass' })),
        k,
      );
      expect(comparison.toolpath.value).toBeCloseTo(expected, 12);
      expect(comparison.taubench.value).toBeCloseTo([0.44, 0.3, 0.245, 0.22][k - 1] as number, 12);
      expect(comparison.disagreements.length).toBeGreaterThan(0);
    },
    60_000,
  );
});
