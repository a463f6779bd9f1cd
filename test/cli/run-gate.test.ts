/**
 * The run gate end to end: the recorded refund run (test/spans/refund-run/, ten traces of the
 * demo agent, four wrong) judged by trajectory-assertion JSON with a min_pass_rate, in every format.
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
    expect(run.stdout).toContain(`no such file: ${join(dir, 'missing.json')}`);
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

describe('pass^k over traces grouped by gate.trialsBy', () => {
  async function nativeGate(name: string, scenario: object): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, JSON.stringify(scenario));
    return path;
  }

  it('reads the task from a resource attribute: the refund run is ten trials of one task', async () => {
    const trialsBy = { attribute: 'task.id' };
    // n = 10, c = 6: pass^2 = C(6,2)/C(10,2) = 15/45, pass^3 = C(6,3)/C(10,3) = 20/120.
    const rules = {
      order: { sequence: { steps: [{ tool: 'get_refund_policy' }, { tool: 'issue_refund' }] } },
      arguments: [{ tool: 'issue_refund', match: { args: { orderId: 'O-17' } } }],
      tools: { allowed: REFUND_RUN_ASSERTIONS.allowed_tools, required: ['send_confirmation'] },
    };
    const atThird = await nativeGate('k2.json', {
      id: 'refund.k',
      ...rules,
      gate: { passK: { k: 2, min: 1 / 3 }, trialsBy },
    });
    const run = await runCli(['eval', '-s', atThird, '-f', 'json', ...traces]);
    expect(run.code).toBe(0);
    const gate = JSON.parse(run.stdout).summary.scenarios[0].gate;
    expect(gate.passK).toMatchObject({
      k: 2,
      tasks: 1,
      leftOut: 0,
      noTask: 0,
      met: true,
      trialsBy: 'task.id',
    });
    expect(gate.passK.value).toBeCloseTo(1 / 3, 15);
    const sixth = await nativeGate('k3.json', {
      id: 'refund.k',
      ...rules,
      gate: { passK: { k: 3, min: 0.17 }, trialsBy },
    });
    const missed = await runCli(['eval', '-s', sixth, ...traces]);
    expect(missed.code).toBe(1);
    expect(missed.stdout).toContain('pass^3 ≈ 0.1667 over 1 task, below the min 0.17');
  });

  it('reads it from a root-span attribute, and counts the trials that have none', async () => {
    const spans = new URL('../spans/', import.meta.url).pathname;
    const worked = [
      'refund-right-amount',
      'refund-wrong-amount',
      'support-diagnoses-first',
      'support-escalates-early',
      'handoff-in-order',
      'handoff-transfers-before-context',
      'handoff-transfers-alongside-context',
    ].map((name) => join(spans, `demo-agent-${name}.otlp.json`));
    // Grouped by agent: refund 2 of 2 pass, support 1 of 2, handoff 3 of 3; pass^2 = (1 + 0 + 1) / 3.
    const scenario = await nativeGate('by-agent.json', {
      id: 'no-escalation',
      tools: { forbidden: ['transfer_to_human'] },
      gate: { passK: { k: 2, min: 0.66 }, trialsBy: { attribute: 'gen_ai.agent.name' } },
    });
    const run = await runCli([
      'eval',
      '-s',
      scenario,
      '-f',
      'json',
      ...worked,
      join(spans, 'typed-events-refund.json'),
    ]);
    expect(run.code).toBe(0);
    const gate = JSON.parse(run.stdout).summary.scenarios[0].gate;
    expect(gate.passK).toMatchObject({ tasks: 3, leftOut: 0, noTask: 1, met: true });
    expect(gate.passK.value).toBeCloseTo(2 / 3, 15);
    expect(gate.reason).toBe(
      'pass^2 ≈ 0.6667 over 3 tasks, at least the min 0.66 (1 trial with no task left out (no single gen_ai.agent.name attribute))',
    );
  });
});
