/**
 * The run gate end to end: the recorded refund run (test/spans/refund-run/, ten traces of the
 * demo agent, four wrong) judged by seed-001 assertions with a min_pass_rate, in every format.
 */
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runEval } from '../../src/cli/run-eval.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { runCli } from '../helpers/cli.js';
import {
  captureRefundRun,
  REFUND_RUN_ASSERTIONS,
  REFUND_RUN_VERDICTS,
  refundRunFiles,
  refundRunInputs,
} from '../helpers/refund-run.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
let traces: string[];

/** A seed-001 assertion file with this min_pass_rate (none when undefined). */
async function assertionFile(minPassRate: number | undefined): Promise<string> {
  const path = join(dir, `refund-${minPassRate ?? 'ungated'}.json`);
  const document =
    minPassRate === undefined
      ? REFUND_RUN_ASSERTIONS
      : { ...REFUND_RUN_ASSERTIONS, min_pass_rate: minPassRate };
  await writeFile(path, JSON.stringify(document));
  return path;
}

beforeAll(async () => {
  dir = temporaryDir('toolpath-run-gate-');
  traces = await refundRunFiles();
});

describe('the recorded refund run', () => {
  it('has ten traces, and each gets the verdict the run is built around (6 of 10 pass)', async () => {
    expect(traces.map((path) => basename(path))).toHaveLength(10);
    const run = runEval(await refundRunInputs(), [parseScenario(REFUND_RUN_ASSERTIONS, 'refund.json')]);
    const verdicts = Object.fromEntries(
      run.reports.map(({ source, report }) => [
        basename(source).replace(/^\d\d-|\.otlp\.json$/g, ''),
        report.verdict,
      ]),
    );
    expect(verdicts).toEqual(REFUND_RUN_VERDICTS);
    expect(run.summary.scenarios[0]).toMatchObject({
      id: 'refund.run',
      evaluated: 10,
      passed: 6,
      passRate: 0.6,
    });
  });

  it('a fresh capture gives the same verdicts', async () => {
    const fresh = await captureRefundRun();
    const run = runEval(
      fresh.map(({ file, otlpJson }) => ({ source: file, text: otlpJson })),
      [parseScenario(REFUND_RUN_ASSERTIONS, 'refund.json')],
    );
    expect(run.reports.map(({ report }) => report.verdict)).toEqual(Object.values(REFUND_RUN_VERDICTS));
  });
});

describe('min_pass_rate at the run pass rate (0.6) and just above it', () => {
  it('pretty: exits 0 at 0.6 and 1 just above, the rate and the reason printed', async () => {
    const at = await runCli(['eval', '-s', await assertionFile(0.6), ...traces]);
    expect(at.code).toBe(0);
    expect(at.stdout).toContain(
      'GATE MET  refund.run  pass rate 0.6 (6 of 10 traces passed)\n    pass rate 6/10 = 0.6, at least the min pass rate 0.6\n',
    );
    // The failures are still shown: the gate tolerates them, it does not hide them.
    expect(at.stdout.match(/^FAIL /gm)).toHaveLength(4);
    for (const above of [0.6000000000000001, 0.61]) {
      const run = await runCli(['eval', '-s', await assertionFile(above), ...traces]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(
        `GATE MISSED  refund.run  pass rate 0.6 (6 of 10 traces passed)\n    pass rate 6/10 = 0.6, below the min pass rate ${above}\n`,
      );
    }
  });

  it('json: summary.scenarios[] holds the rate, the gate and its reason', async () => {
    const at = await runCli(['eval', '-s', await assertionFile(0.6), '-f', 'json', ...traces]);
    expect(at.code).toBe(0);
    expect(JSON.parse(at.stdout).summary.scenarios).toEqual([
      {
        id: 'refund.run',
        unit: 'trace',
        evaluated: 10,
        passed: 6,
        failed: 4,
        inconclusive: 0,
        passRate: 0.6,
        gate: {
          gated: true,
          met: true,
          minPassRate: 0.6,
          reason: 'pass rate 6/10 = 0.6, at least the min pass rate 0.6',
        },
      },
    ]);
    const above = await runCli([
      'eval',
      '-s',
      await assertionFile(0.6000000000000001),
      '-f',
      'json',
      ...traces,
    ]);
    expect(above.code).toBe(1);
    expect(JSON.parse(above.stdout).summary.scenarios[0]).toMatchObject({
      passRate: 0.6,
      gate: {
        gated: true,
        met: false,
        reason: 'pass rate 6/10 = 0.6, below the min pass rate 0.6000000000000001',
      },
    });
  });

  it('junit: the pass rate as a property, a gate testcase that fails only when missed', async () => {
    const at = await runCli(['eval', '-s', await assertionFile(0.6), '-f', 'junit', ...traces]);
    expect(at.code).toBe(0);
    expect(at.stdout).toContain('<property name="toolpath.pass_rate" value="0.6"/>');
    expect(at.stdout).toContain('<property name="toolpath.min_pass_rate" value="0.6"/>');
    expect(at.stdout).toContain('<property name="toolpath.gate" value="met"/>');
    // Met: nothing fails in the file, so a CI reading only it agrees with the exit status.
    expect(at.stdout).toContain('<testsuites name="toolpath" tests="11" failures="0" errors="0">');
    expect(at.stdout).not.toContain('<failure');
    expect(at.stdout).toContain(
      '<testcase classname="refund.run" name="gate">\n      <system-out>pass rate 6/10 = 0.6, at least the min pass rate 0.6</system-out>',
    );
    // The four tolerated failures are still told, with their verdict.
    expect(at.stdout.match(/<property name="toolpath.verdict" value="fail"\/>/g)).toHaveLength(4);
    const above = await runCli([
      'eval',
      '-s',
      await assertionFile(0.6000000000000001),
      '-f',
      'junit',
      ...traces,
    ]);
    expect(above.code).toBe(1);
    expect(above.stdout).toContain('<property name="toolpath.pass_rate" value="0.6"/>');
    expect(above.stdout).toContain(
      '<failure type="gate" message="pass rate 6/10 = 0.6, below the min pass rate 0.6000000000000001">',
    );
    expect(above.stdout).toContain('<testsuites name="toolpath" tests="11" failures="5" errors="0">');
  });

  it('markdown: a scenario table with the rate, the gate, the decision and why', async () => {
    const at = await runCli(['eval', '-s', await assertionFile(0.6), '-f', 'markdown', ...traces]);
    expect(at.code).toBe(0);
    expect(at.stdout).toContain(
      '| refund.run | trace | 6 of 10 | 0.6 | min pass rate 0.6 | **MET**: pass rate 6/10 = 0.6, at least the min pass rate 0.6 |',
    );
    const above = await runCli(['eval', '-s', await assertionFile(0.61), '-f', 'markdown', ...traces]);
    expect(above.code).toBe(1);
    expect(above.stdout).toContain(
      '| refund.run | trace | 6 of 10 | 0.6 | min pass rate 0.61 | **MISSED**: pass rate 6/10 = 0.6, below the min pass rate 0.61 |',
    );
  });

  it('without min_pass_rate every trace must pass: the same run exits 1', async () => {
    const run = await runCli(['eval', '-s', await assertionFile(undefined), '-f', 'json', ...traces]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).summary.scenarios[0].gate).toEqual({
      gated: false,
      met: false,
      reason: 'no gate, so every trace must pass: 4 of 10 traces did not',
    });
  });

  it('an unreadable input exits 2 whatever the gate', async () => {
    const run = await runCli(['eval', '-s', await assertionFile(0), ...traces, join(dir, 'missing.json')]);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain('GATE MET  refund.run');
    expect(run.stdout).toContain('ENOENT');
  });

  it('a gate of 90 stops before evaluating: exit 2, did you mean 0.9?', async () => {
    const run = await runCli(['eval', '-s', await assertionFile(90), ...traces]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'min_pass_rate: expected a rate between 0 and 1; got 90 (did you mean 0.9?)',
    );
    expect(run.stdout).toBe('');
  });
});
