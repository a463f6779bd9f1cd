import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseReportSet } from '../../src/cli/compare-command.js';
import { computeMetrics } from '../../src/cli/compare-metrics.js';
import { runCli } from '../helpers/cli.js';
import { REFUND_RUN_ASSERTIONS, refundRunFiles } from '../helpers/refund-run.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
let scenario: string;
let files: string[];

/** `toolpath eval --format json` of these traces, written to a file. */
async function reportSet(name: string, traces: string[]): Promise<string> {
  const run = await runCli(['eval', '-s', scenario, '-f', 'json', ...traces]);
  expect(run.code).toBeLessThan(2);
  const path = join(dir, name);
  await writeFile(path, run.stdout);
  return path;
}

beforeAll(async () => {
  dir = temporaryDir('toolpath-compare-pass-rate-');
  scenario = join(dir, 'refund.json');
  await writeFile(scenario, JSON.stringify(REFUND_RUN_ASSERTIONS));
  files = await refundRunFiles();
});

describe('toolpath compare: the pass-rate dimension', () => {
  it('is measured as eval counts it and gates with --fail-on pass-rate', async () => {
    // Baseline: the whole run, 6 of 10 pass. Candidate: five traces, 4 pass (the 2nd one fails).
    const baseline = await reportSet('baseline.json', files);
    const candidate = await reportSet('candidate.json', [
      files[0],
      files[1],
      files[2],
      files[3],
      files[5],
    ] as string[]);
    const better = await runCli(['compare', '--fail-on', 'pass-rate', baseline, candidate]);
    expect(better.code).toBe(0);
    expect(better.stdout).toMatch(/^ {2}pass rate +0\.60 +0\.80 +\+0\.20 +gate ok \(better\)$/m);
    expect(better.stdout).toContain(
      'warning: refund.run: the candidate has 5 evaluations, so one trace moves a rate by 0.20; compare at least 10 a side before trusting a change',
    );
    expect(better.stdout).not.toMatch(/^warning: refund.run: the baseline/m);
    const worse = await runCli(['compare', '--fail-on', 'pass-rate', candidate, baseline]);
    expect(worse.code).toBe(1);
    expect(worse.stdout).toContain('REGRESSED refund.run: pass rate 0.80 -> 0.60 (worse by 0.20)');
    const tolerated = await runCli([
      'compare',
      '--fail-on',
      'pass-rate',
      '--tolerance',
      '0.2',
      candidate,
      baseline,
    ]);
    expect(tolerated.code).toBe(0);
    // Not gated by default: the default gates are the hard-failure rate and required steps.
    const json = await runCli(['compare', '-f', 'json', candidate, baseline]);
    const dimension = JSON.parse(json.stdout).scenarios[0].dimensions.find(
      (d: { dimension: string }) => d.dimension === 'pass-rate',
    );
    expect(dimension).toMatchObject({ baseline: 0.8, candidate: 0.6, gated: false, regressed: false });
  });

  it('counts dataset rows, not traces, when the reports carry their row', async () => {
    const dataset = join(dir, 'rows.jsonl');
    // REFUND_RUN_ASSERTIONS in the native format, judged per trace (its default scope): a row
    // then has a report per trace. (Seed-001 assertions judge a row as one conversation.)
    const assertions = {
      id: 'refund.run',
      order: { sequence: { steps: [{ tool: 'get_refund_policy' }, { tool: 'issue_refund' }] } },
      arguments: [{ tool: 'issue_refund', match: { mode: 'superset', args: { orderId: 'O-17' } } }],
      tools: { allowed: REFUND_RUN_ASSERTIONS.allowed_tools, required: ['send_confirmation'] },
    };
    const rows = [
      { id: 'two-good', traces: [files[0], files[2]], assertions },
      { id: 'one-bad', traces: [files[0], files[9]], assertions },
    ];
    await writeFile(dataset, rows.map((row) => JSON.stringify(row)).join('\n'));
    const run = await runCli(['eval', '--dataset', dataset, '-f', 'json']);
    const reports = parseReportSet(run.stdout, 'rows.json');
    expect(reports.map((r) => r.row)).toEqual(['two-good', 'two-good', 'one-bad', 'one-bad']);
    // 3 of 4 traces passed, but 1 of 2 rows.
    expect(computeMetrics(reports)['pass-rate']).toBe(0.5);
    expect(computeMetrics(reports.map(({ row: _row, ...report }) => report))['pass-rate']).toBe(0.75);
  });

  it('refuses a report whose row or trial is not one', () => {
    const report = JSON.parse(
      JSON.stringify({
        traceId: 't',
        scenario: { id: 's' },
        verdict: 'pass',
        findings: [],
        assertions: [],
        stats: { calls: 1, errors: 0, durationMs: 1 },
      }),
    );
    expect(() => parseReportSet(JSON.stringify([{ ...report, row: 3 }]), 'r.json')).toThrow(
      'r.json: [0]: not a toolpath report: row is not a non-empty string',
    );
    expect(() => parseReportSet(JSON.stringify([{ ...report, row: 'a', trial: 0 }]), 'r.json')).toThrow(
      'r.json: [0]: not a toolpath report: trial is not an integer >= 1',
    );
  });
});
