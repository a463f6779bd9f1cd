import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMPARE_USAGE, compareCommand, parseReportSet } from '../../src/cli/compare-command.js';
import {
  compareReports,
  computeMetrics,
  errorRecovery,
  hardFailureRate,
  mean,
  outcomePassRate,
  p95,
  redundantCallRate,
  requiredStepRecall,
} from '../../src/cli/compare-metrics.js';
import { formatJson } from '../../src/cli/format-json.js';
import { UsageError } from '../../src/cli/io.js';
import { runEval } from '../../src/cli/run-eval.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import type { Finding, Report } from '../../src/model/report.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { captureIO } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** The demo scenario plus the checks the compare dimensions read: a sequence, repeats, an end milestone. */
function scenario(version = '2') {
  return parseScenario(
    {
      ...DEMO_SCENARIO,
      version,
      order: {
        ...DEMO_SCENARIO.order,
        sequence: {
          steps: [{ tool: 'get_refund_policy' }, { tool: 'issue_refund' }, { tool: 'send_confirmation' }],
        },
      },
      efficiency: { repeats: { max: 0 } },
      milestones: { define: { confirmed: { tool: 'send_confirmation' } }, end: ['confirmed'] },
    },
    'compare-test',
  );
}

/** Reports from real captured demo-agent spans (test/spans/demo-agent-NAME.otlp.json). */
function reportsOf(names: string[], version = '2'): Report[] {
  const inputs = names.map((name) => ({
    source: name,
    text: readFileSync(new URL(`../spans/demo-agent-${name}.otlp.json`, import.meta.url), 'utf8'),
  }));
  const run = runEval(inputs, [scenario(version)]);
  expect(run.errors).toEqual([]);
  return run.reports.map(({ report }) => report);
}

const GOOD = ['good-refund', 'repeated-lookup', 'wrong-email'];
const REGRESSED = ['good-refund', 'repeated-lookup', 'refund-before-policy'];

interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

async function compare(args: string[], stdin = ''): Promise<Captured> {
  const { io, output } = captureIO(stdin);
  const code = await compareCommand(args, io);
  return { code, ...output };
}

let dir: string;
let baseline: string;
let candidate: string;
let baselineAgain: string;

// Baseline as `toolpath eval --format json` output, candidate as one report per line: both shapes.
beforeAll(async () => {
  dir = temporaryDir('toolpath-compare-test-');
  baseline = join(dir, 'baseline.json');
  baselineAgain = join(dir, 'baseline-again.json');
  candidate = join(dir, 'candidate.jsonl');
  const goodRun = runEval(
    GOOD.map((name) => ({
      source: name,
      text: readFileSync(new URL(`../spans/demo-agent-${name}.otlp.json`, import.meta.url), 'utf8'),
    })),
    [scenario()],
  );
  await writeFile(baseline, formatJson(goodRun));
  await writeFile(baselineAgain, formatJson(goodRun));
  await writeFile(
    candidate,
    `${reportsOf(REGRESSED)
      .map((r) => JSON.stringify(r))
      .join('\n')}\n`,
  );
});

describe('compare metrics on real reports', () => {
  it('measures the good set and the set with a refund before the policy check exactly', () => {
    const good = computeMetrics(reportsOf(GOOD));
    expect(good['hard-failure-rate']).toBe(0);
    // 3 reports x (2 required tools + tool_sequence + milestones.end:confirmed), all passed.
    expect(good['required-step-recall']).toBe(1);
    // repeated-lookup's two identical get_order calls, over 4 + 5 + 4 calls.
    expect(good['redundant-call-rate']).toBe(2 / 13);
    expect(good['error-recovery']).toBeNull();
    expect(good['outcome-pass-rate']).toBeNull();
    expect(good['calls-per-trace']).toBe(13 / 3);

    const bad = computeMetrics(reportsOf(REGRESSED));
    expect(bad['hard-failure-rate']).toBe(1 / 3);
    // refund-before-policy fails tool_sequence: 11 of 12 required steps.
    expect(bad['required-step-recall']).toBe(11 / 12);
    expect(bad['redundant-call-rate']).toBe(2 / 13);
  });
});

function report(partial: Partial<Report> & { findings?: Finding[] } = {}): Report {
  return {
    traceId: 't',
    scenario: { id: 's', version: '1' },
    toolpathVersion: '0.1.0',
    verdict: 'pass',
    pass: true,
    scores: {},
    findings: [],
    assertions: [],
    stats: { calls: 4, turns: 2, errors: 0, durationMs: 100 },
    ...partial,
  };
}

function finding(rule: string, extra: Partial<Finding> = {}): Finding {
  return { rule, severity: 'hard', message: '', calls: [], spans: [], ...extra };
}

describe('compare metric functions', () => {
  it('hard-failure rate counts decided hard findings only', () => {
    const reports = [
      report({ findings: [finding('order.before')] }),
      report({ findings: [finding('arguments.match', { inconclusive: true })] }),
      report({ findings: [finding('efficiency.repeat', { severity: 'warning' })] }),
      report(),
    ];
    expect(hardFailureRate(reports)).toBe(0.25);
    expect(hardFailureRate([])).toBeNull();
  });

  it('required-step recall counts required tools, the sequence, end milestones and the reference', () => {
    const assertions: Report['assertions'] = [
      { name: 'expected_tool_calls:issue_refund', status: 'pass', reason: '' },
      { name: 'tool_sequence', status: 'fail', reason: 'x' },
      { name: 'milestones.end:confirmed', status: 'inconclusive', reason: 'x' },
      { name: 'reference', status: 'pass', reason: '' },
      { name: 'order.before[0]', status: 'fail', reason: 'x' },
      { name: 'milestones.requires:confirmed', status: 'fail', reason: 'x' },
    ];
    expect(requiredStepRecall([report({ assertions })])).toBe(0.5);
    expect(requiredStepRecall([report()])).toBeNull();
  });

  it('redundant-call rate is the calls named by repeat findings over the calls of reports that checked repeats', () => {
    const checked = { name: 'efficiency.repeat', status: 'fail' as const, reason: 'x' };
    const reports = [
      report({
        assertions: [checked],
        findings: [finding('efficiency.repeat', { severity: 'warning', calls: ['c1', 'c2', 'c3'] })],
        stats: { calls: 6, turns: 1, errors: 0, durationMs: 1 },
      }),
      report({ assertions: [{ ...checked, status: 'pass' }] }),
      // Did not check repeats: its calls are not in the denominator.
      report({ stats: { calls: 50, turns: 1, errors: 0, durationMs: 1 } }),
    ];
    expect(redundantCallRate(reports)).toBe(0.3);
    expect(redundantCallRate([report()])).toBeNull();
  });

  it('tool error recovery is the pass share of evaluations that saw a tool error', () => {
    const errored = { calls: 3, turns: 1, errors: 1, durationMs: 1 };
    const reports = [
      report({ stats: errored }),
      report({ stats: errored, verdict: 'fail', pass: false }),
      report({ stats: errored, verdict: 'inconclusive', pass: false }),
      report({ verdict: 'fail', pass: false }),
    ];
    expect(errorRecovery(reports)).toBe(1 / 3);
    expect(errorRecovery([report()])).toBeNull();
  });

  it('outcome pass rate reads the outcome:<hook> assertions', () => {
    const assertions: Report['assertions'] = [
      { name: 'outcome:ledger', status: 'pass', reason: '' },
      { name: 'outcome:outbox', status: 'fail', reason: 'x' },
      { name: 'tool_sequence', status: 'pass', reason: '' },
    ];
    expect(outcomePassRate([report({ assertions }), report({ assertions: assertions.slice(0, 1) })])).toBe(
      2 / 3,
    );
  });

  it('latency p95 is by nearest rank; the mean is the mean', () => {
    const values = Array.from({ length: 20 }, (_, i) => 20 - i);
    expect(p95(values)).toBe(19);
    expect(p95([7])).toBe(7);
    expect(p95([1, 2, 3, 100])).toBe(100);
    expect(p95([])).toBeNull();
    expect(mean([1, 2, 6])).toBe(3);
  });

  it('a worsening equal to the tolerance is not a regression, a larger one is', () => {
    const failing = (n: number) =>
      Array.from({ length: 20 }, (_, i) =>
        report(i < n ? { findings: [finding('order.before')], verdict: 'fail', pass: false } : {}),
      );
    const gate = { failOn: ['hard-failure-rate' as const], tolerance: 0.15 };
    // 0.10 -> 0.25: 0.25 - 0.1 is 0.15000000000000002 in floating point.
    expect(compareReports(failing(2), failing(5), gate).regressions).toEqual([]);
    expect(compareReports(failing(2), failing(6), gate).regressions).toEqual([
      's: hard-failure rate 0.10 -> 0.30 (worse by 0.20)',
    ]);
    // Improvements never regress.
    expect(compareReports(failing(6), failing(0), { ...gate, tolerance: 0 }).regressions).toEqual([]);
  });

  it('matches scenarios by id, shows versions, and lists one-sided scenarios without comparing them', () => {
    const other = report({ scenario: { id: 'other' } });
    const comparison = compareReports([report(), other], [report({ scenario: { id: 's', version: '2' } })], {
      failOn: [],
      tolerance: 0,
    });
    expect(comparison.scenarios.map((s) => [s.id, s.baseline.versions, s.candidate.versions])).toEqual([
      ['s', ['1'], ['2']],
    ]);
    expect(comparison.onlyInBaseline).toEqual([{ id: 'other', versions: [], evaluations: 1 }]);
    expect(comparison.onlyInCandidate).toEqual([]);
  });
});

describe('toolpath compare', () => {
  it('exits 1 and names each gated dimension that regressed', async () => {
    const run = await compare([baseline, candidate]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('demo.support.refund: hard-failure rate 0.00 -> 0.33 (worse by 0.33)');
    expect(run.stdout).toContain('demo.support.refund: required-step recall 1.00 -> 0.92 (worse by 0.08)');
    expect(run.stdout).toMatch(/^ {2}hard-failure rate +0\.00 +0\.33 +\+0\.33 +REGRESSED$/m);
    expect(run.stdout).toMatch(/^ {2}redundant-call rate +0\.15 +0\.15 += *$/m);
    expect(run.stdout).toContain(
      '2 regressions (gated: hard-failure-rate, required-step-recall; tolerance 0)',
    );
  });

  it('exits 0 on identical sets', async () => {
    const run = await compare([baseline, baselineAgain]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('REGRESSED');
    expect(run.stdout).toContain('no regression');
  });

  it('--tolerance lets a worsening up to it pass', async () => {
    const within = await compare(['--tolerance', '0.34', baseline, candidate]);
    expect(within.code).toBe(0);
    expect(within.stdout).toMatch(
      /^ {2}hard-failure rate +0\.00 +0\.33 +\+0\.33 +gate ok \(worse, within tolerance\)$/m,
    );
    // Three evaluations a side: said, since one trace moves a rate by a third.
    expect(within.stdout).toContain(
      'warning: demo.support.refund: the baseline has 3 evaluations, so one trace moves a rate by 0.33',
    );
    expect(within.stdout).toContain('warning: demo.support.refund: the candidate has 3 evaluations');
    const run = await compare(['--tolerance', '0.1', baseline, candidate]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('hard-failure rate 0.00 -> 0.33');
    expect(run.stdout).not.toContain('REGRESSED demo.support.refund: required-step recall');
  });

  it('--fail-on chooses the gates: an ungated dimension never fails the run', async () => {
    const run = await compare(['--fail-on', 'redundant-call-rate,calls-per-trace', baseline, candidate]);
    expect(run.code).toBe(0);
    const reversed = await compare(['--fail-on', 'calls-per-trace', candidate, baseline]);
    expect(reversed.code).toBe(0);
    // The refund-before-policy trace is the slowest (12.669 ms against 10.782 ms at most before).
    const latency = await compare([
      '--fail-on',
      'latency-p95',
      '--fail-on',
      'error-recovery',
      baseline,
      candidate,
    ]);
    expect(latency.code).toBe(1);
    expect(latency.stdout).toContain('demo.support.refund: latency p95 10.8 ms -> 12.7 ms (worse by 1.9 ms)');
    expect(latency.stdout).not.toContain('REGRESSED demo.support.refund: hard-failure');
  });

  it('--format markdown writes a table per scenario and the regressions', async () => {
    const run = await compare(['--format', 'markdown', baseline, candidate]);
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('## toolpath compare');
    expect(lines).toContain('### demo.support.refund@2');
    expect(lines).toContain('| dimension | baseline | candidate | change | gate |');
    expect(lines).toContain('| hard-failure rate | 0.00 | 0.33 | +0.33 | **regressed** |');
    expect(lines).toContain('| redundant-call rate | 0.15 | 0.15 | = |  |');
    expect(lines).toContain('| tool error recovery | n/a | n/a |  |  |');
    expect(lines).toContain(
      '- **Regressed:** demo.support.refund: hard-failure rate 0.00 -> 0.33 (worse by 0.33)',
    );
  });

  it('--format json carries every dimension, both sides and the regressions', async () => {
    const run = await compare(['-f', 'json', baseline, candidate]);
    const document = JSON.parse(run.stdout);
    expect(document.failOn).toEqual(['hard-failure-rate', 'required-step-recall']);
    const [refund] = document.scenarios;
    expect(refund.id).toBe('demo.support.refund');
    expect(refund.dimensions).toHaveLength(9);
    const hard = refund.dimensions.find((d: { dimension: string }) => d.dimension === 'hard-failure-rate');
    expect(hard).toMatchObject({ baseline: 0, candidate: 1 / 3, gated: true, regressed: true });
    expect(document.regressions).toHaveLength(2);
  });

  it('shows a version change and still compares by id; one-sided scenarios are listed', async () => {
    const v3 = join(dir, 'v3.jsonl');
    const renamed = reportsOf(['good-refund']).map((r) => ({ ...r, scenario: { id: 'demo.other' } }));
    await writeFile(v3, [...reportsOf(GOOD, '3'), ...renamed].map((r) => JSON.stringify(r)).join('\n'));
    const run = await compare([baseline, v3]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^demo\.support\.refund@2 -> @3 {2}\(baseline 3, candidate 3 evaluations\)$/m);
    expect(run.stdout).toContain('only in candidate (not compared): demo.other (1 evaluation)');
  });

  it('exits 1 when no scenario is in both sets: a gate must not pass on nothing', async () => {
    const other = join(dir, 'other.jsonl');
    await writeFile(other, JSON.stringify({ ...reportsOf(['good-refund'])[0], scenario: { id: 'x' } }));
    const run = await compare([baseline, other]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('nothing compared: no scenario is in both sets');
  });

  it('reads one set from stdin', async () => {
    const run = await compare([baseline, '-'], await readFile(candidate, 'utf8'));
    expect(run.code).toBe(1);
  });
});

describe('toolpath compare on bad input', () => {
  const cases: [string, string, RegExp][] = [
    ['empty', '', /empty\.json: the file is empty/],
    ['not-json', 'PASS demo\n', /not-json\.json: line 1: not JSON/],
    ['not-a-set', '{"summary": {}}', /not-a-set\.json: not a report set/],
    ['no-reports', '{"reports": [], "summary": {}}', /no-reports\.json: holds no report/],
    [
      'no-stats',
      '{"traceId":"t","scenario":{"id":"s"},"verdict":"pass","findings":[],"assertions":[]}\n{}',
      /no-stats\.json: line 1: not a toolpath report: stats is missing/,
    ],
    [
      'bad-verdict',
      '{"reports": [{"scenario":{"id":"s"},"verdict":"ok"}]}',
      /bad-verdict\.json: reports\[0\]: not a toolpath report: verdict must be/,
    ],
  ];
  for (const [name, text, message] of cases) {
    it(`${name}: exit 2 with the file and the problem`, async () => {
      const path = join(dir, `${name}.json`);
      await writeFile(path, text);
      const run = await compare([baseline, path]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stdout).toBe('');
    });
  }

  it('a missing file: exit 2 naming it', async () => {
    const run = await compare([join(dir, 'nope.json'), baseline]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no such file: \/\S*nope\.json \(check the path/);
    expect(run.stderr).not.toContain('ENOENT');
  });

  it('usage mistakes throw a UsageError that says what is wrong', async () => {
    await expect(compare([baseline])).rejects.toThrow('expected BASELINE and CANDIDATE, got 1 inputs');
    await expect(compare(['--fail-on', 'latency', baseline, candidate])).rejects.toThrow(
      '--fail-on: unknown dimension "latency"',
    );
    await expect(compare(['--tolerance=-1', baseline, candidate])).rejects.toThrow(
      '--tolerance: expected a number >= 0',
    );
    await expect(compare(['--format', 'html', baseline, candidate])).rejects.toThrow(
      '--format: expected one of',
    );
    await expect(compare(['-', '-'])).rejects.toThrow('stdin (-) can be read only once');
    await expect(compare(['--tolerance', 'a bit', baseline, candidate])).rejects.toThrow(
      '--tolerance: expected a number >= 0; got "a bit"',
    );
    await expect(compare([baseline])).rejects.toBeInstanceOf(UsageError);
    expect(COMPARE_USAGE).toContain('--fail-on');
  });

  it('parseReportSet reads a single report object as a set of one', () => {
    const [one] = reportsOf(['good-refund']);
    expect(parseReportSet(JSON.stringify(one, null, 2), 'one.json')).toHaveLength(1);
  });
});
