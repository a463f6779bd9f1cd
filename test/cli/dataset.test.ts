import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DatasetError, parseDataset, resolveDatasetFiles } from '../../src/cli/dataset.js';
import { runCli } from '../helpers/cli.js';
import { REFUND_RUN_ASSERTIONS, refundRunFiles } from '../helpers/refund-run.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** The refund run's trajectory-assertion JSON in the native format (same verdicts), gated by pass^k. */
const NATIVE_REFUND = {
  id: 'refund.run',
  order: { sequence: { steps: [{ tool: 'get_refund_policy' }, { tool: 'issue_refund' }] } },
  arguments: [{ tool: 'issue_refund', match: { args: { orderId: 'O-17' } } }],
  tools: {
    allowed: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
    required: ['send_confirmation'],
  },
};

function problemsOf(text: string, source = 'runs.jsonl'): readonly string[] {
  try {
    parseDataset(text, source);
  } catch (error) {
    expect(error).toBeInstanceOf(DatasetError);
    return (error as DatasetError).problems;
  }
  throw new Error('expected a DatasetError');
}
const line = (row: unknown) => JSON.stringify(row);
const ROW = { id: 'r1', traces: ['a.json'], assertions: { allowed_tools: ['get_order'] } };

describe('parseDataset', () => {
  it('reads rows with traces or trials, naming a scenario without an id after the dataset', () => {
    const rows = parseDataset(
      [
        line(ROW),
        '',
        line({ id: 'r2', trials: [['b.json'], ['c.json', 'd.json']], assertions: NATIVE_REFUND }),
      ].join('\n'),
      'data/runs.jsonl',
    );
    expect(rows.map(({ id, line, trials, listsTrials }) => ({ id, line, trials, listsTrials }))).toEqual([
      { id: 'r1', line: 1, trials: [['a.json']], listsTrials: false },
      { id: 'r2', line: 3, trials: [['b.json'], ['c.json', 'd.json']], listsTrials: true },
    ]);
    expect(rows.map((row) => row.scenario.id)).toEqual(['runs', 'refund.run']);
  });

  it('names the line, the row and the field of every problem', () => {
    const text = [
      'not json',
      line([1]),
      line({ traces: ['a.json'], assertions: {} }),
      line({ ...ROW, id: 'r2', trials: [['b.json']] }),
      line({ id: 'r3', assertions: ROW.assertions }),
      line({ id: 'r4', traces: 'a.json', assertions: ROW.assertions }),
      line({ id: 'r5', trials: [[]], assertions: ROW.assertions }),
      line({ id: 'r6', traces: ['a.json'] }),
      line({ ...ROW, id: 'r7', extra: 1 }),
      line(ROW),
      line(ROW),
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      expect.stringMatching(/^dataset runs\.jsonl:1: not valid JSON \(.*\); expected one row per line$/),
      'dataset runs.jsonl:2: expected a row object {"id", "traces", "assertions"}; got a list',
      'dataset runs.jsonl:3: id: expected a non-empty string; the key is missing',
      'dataset runs.jsonl:4: row "r2": give traces (one run) or trials (several runs of the task), not both',
      'dataset runs.jsonl:5: row "r3": give traces (the files or globs of one run) or trials (a list of such lists)',
      'dataset runs.jsonl:6: row "r4": traces: expected a non-empty list of files or globs (strings); got "a.json"',
      'dataset runs.jsonl:7: row "r5": trials[0]: expected a non-empty list of files or globs (strings); got an empty list',
      'dataset runs.jsonl:8: row "r6": assertions: expected an object of trajectory-assertion JSON or a native scenario; the key is missing',
      'dataset runs.jsonl:9: unknown key "extra"; a row has id, traces, trials, assertions',
      'dataset runs.jsonl:11: row id "r1" is already used on line 10; give each row its own id',
    ]);
  });

  it("reports a row's assertions the way a scenario file's are reported", () => {
    const bad = { id: 'r1', traces: ['a.json'], assertions: { allowed_tools: ['a'], min_pass_rate: 90 } };
    expect(problemsOf(line(bad))).toEqual([
      'dataset runs.jsonl:1: row "r1": assertions: min_pass_rate: expected a rate between 0 and 1; got 90 (did you mean 0.9?)',
    ]);
    const typo = { id: 'r1', traces: ['a.json'], assertions: { allowed_tool: ['a'] } };
    expect(problemsOf(line(typo))[0]).toContain(
      'row "r1": assertions: unknown key "allowed_tool" (did you mean allowed_tools?)',
    );
  });

  it('refuses two rows of one scenario with different gates, and an empty dataset', () => {
    const a = { ...ROW, assertions: { ...ROW.assertions, min_pass_rate: 0.8 } };
    const b = { ...ROW, id: 'r2', assertions: { ...ROW.assertions, min_pass_rate: 0.9 } };
    const c = { ...ROW, id: 'r3' };
    expect(problemsOf([line(a), line(b), line(c)].join('\n'))).toEqual([
      'dataset runs.jsonl:2: row "r2": its gate {"minPassRate":0.9} differs from line 1\'s {"minPassRate":0.8}; rows of scenario runs share one gate (give the same, or give it on one row)',
    ]);
    expect(problemsOf('\n\n')).toEqual([
      'dataset runs.jsonl: no rows; expected one {"id", "traces", "assertions"} object per line',
    ]);
  });

  it('resolves files from the dataset folder and expands globs; a glob that matches nothing is an error', async () => {
    const dir = temporaryDir('toolpath-dataset-files-');
    await mkdir(join(dir, 'runs'));
    for (const name of ['b.json', 'a.json']) await writeFile(join(dir, 'runs', name), '[]');
    const dataset = join(dir, 'd.jsonl');
    const rows = parseDataset(
      line({ ...ROW, traces: ['runs/*.json', 'runs/a.json', 'elsewhere.json'] }),
      dataset,
    );
    expect(resolveDatasetFiles(rows, dataset)).toEqual([
      [[join(dir, 'runs/a.json'), join(dir, 'runs/b.json'), join(dir, 'elsewhere.json')]],
    ]);
    const none = parseDataset(
      line({ ...ROW, trials: [['runs/*.json'], ['nothing/*.json']], traces: undefined }),
      dataset,
    );
    expect(() => resolveDatasetFiles(none, dataset)).toThrow(
      `dataset ${dataset}:1: row "r1": trials[1][0]: "nothing/*.json" matches no file (from ${dir})`,
    );
  });
});

describe('toolpath eval --dataset', () => {
  let dir: string;
  let files: string[];
  beforeAll(async () => {
    dir = temporaryDir('toolpath-dataset-eval-');
    files = await refundRunFiles();
    // A copy of the recorded run beside the dataset, so rows name files relatively.
    await mkdir(join(dir, 'run'));
    for (const file of files) await copyFile(file, join(dir, 'run', basename(file)));
  });
  const trace = (n: number) => `run/${basename(files[n - 1] as string)}`;

  /** The refund run as four tasks: A 3 of 4 trials pass, B 2 of 3, C 1 of 2, D one run that fails. */
  async function taskDataset(assertions: object): Promise<string> {
    const rows = [
      { id: 'A', trials: [[trace(1)], [trace(2)], [trace(3)], [trace(4)]], assertions },
      { id: 'B', trials: [[trace(5)], [trace(6)], [trace(7)]], assertions },
      { id: 'C', trials: [[trace(8)], [trace(9)]], assertions },
      { id: 'D', traces: [trace(10)], assertions },
    ];
    const path = join(dir, `tasks-${Math.random().toString(36).slice(2)}.jsonl`);
    await writeFile(path, `${rows.map(line).join('\n')}\n`);
    return path;
  }

  it('judges each trial of each row by its assertions: pass rate over trials, pass^k over rows', async () => {
    // pass^2 by hand: A C(3,2)/C(4,2) = 1/2, B C(2,2)/C(3,2) = 1/3, C C(1,2)/C(2,2) = 0; D left out: 5/18.
    const dataset = await taskDataset({
      ...NATIVE_REFUND,
      gate: { minPassRate: 0.6, passK: { k: 2, min: 0.27 } },
    });
    const run = await runCli(['eval', '--dataset', dataset, '-f', 'json']);
    expect(run.code).toBe(0);
    const document = JSON.parse(run.stdout);
    const [summary] = document.summary.scenarios;
    expect(summary).toMatchObject({
      id: 'refund.run',
      unit: 'trial',
      evaluated: 10,
      passed: 6,
      passRate: 0.6,
    });
    expect(summary.gate.passK).toMatchObject({ k: 2, tasks: 3, leftOut: 1, noTask: 0, met: true });
    expect(summary.gate.passK.value).toBeCloseTo(5 / 18, 15);
    expect(summary.gate.reason).toBe(
      'pass rate 6/10 = 0.6, at least the min pass rate 0.6; pass^2 ≈ 0.2778 over 3 tasks, at least the min 0.27 (1 task with fewer than 2 trials left out)',
    );
    // Each report says which row and trial it was made for.
    expect(document.reports.map((r: { row: string; trial?: number }) => `${r.row}${r.trial ?? ''}`)).toEqual([
      'A1',
      'A2',
      'A3',
      'A4',
      'B1',
      'B2',
      'B3',
      'C1',
      'C2',
      'D',
    ]);
    const stricter = await taskDataset({ ...NATIVE_REFUND, gate: { passK: { k: 3, min: 0.13 } } });
    const missed = await runCli(['eval', '--dataset', stricter]);
    expect(missed.code).toBe(1);
    // pass^3: A C(3,3)/C(4,3) = 1/4, B 0; C and D left out.
    expect(missed.stdout).toContain(
      'GATE MISSED  refund.run  pass rate 0.6 (6 of 10 trials passed)\n    pass^3 = 0.125 over 2 tasks, below the min 0.13 (2 tasks with fewer than 3 trials left out)\n',
    );
    expect(missed.stdout).toMatch(
      /^FAIL {2}refund\.run {2}trace \w+ {2}\(row A trial 2, .*02-refund-before-policy/m,
    );
  });

  it("judges a row's traces as one conversation: one report per row, over all its traces", async () => {
    const path = join(dir, 'conversations.jsonl');
    const rows = [
      { id: 'two-good', traces: [trace(1), trace(3)], assertions: REFUND_RUN_ASSERTIONS },
      { id: 'one-bad', traces: [trace(1), trace(10)], assertions: REFUND_RUN_ASSERTIONS },
    ];
    await writeFile(path, rows.map(line).join('\n'));
    const run = await runCli(['eval', '--dataset', path, '-f', 'json']);
    expect(run.code).toBe(1);
    const document = JSON.parse(run.stdout);
    expect(document.summary).toMatchObject({ traces: 4, evaluated: 2, passed: 1, failed: 1 });
    expect(
      document.reports.map((report: { conversationId: string; traceIds: string[]; row: string }) => [
        report.row,
        report.conversationId,
        report.traceIds.length,
      ]),
    ).toEqual([
      ['two-good', 'row two-good', 2],
      ['one-bad', 'row one-bad', 2],
    ]);
    expect(document.summary.scenarios[0]).toMatchObject({
      unit: 'row',
      evaluated: 2,
      passed: 1,
      failed: 1,
      passRate: 0.5,
    });
  });

  it("groups rows by their assertions' id, one summary per scenario", async () => {
    const path = join(dir, 'two-scenarios.jsonl');
    const rows = [
      {
        id: 'r1',
        traces: [trace(1)],
        assertions: { ...REFUND_RUN_ASSERTIONS, id: 'first', min_pass_rate: 1 },
      },
      {
        id: 'r2',
        traces: [trace(2)],
        assertions: { ...REFUND_RUN_ASSERTIONS, id: 'second', min_pass_rate: 0 },
      },
      { id: 'r3', traces: [trace(3)], assertions: { ...REFUND_RUN_ASSERTIONS, id: 'first' } },
    ];
    await writeFile(path, rows.map(line).join('\n'));
    const run = await runCli(['eval', '--dataset', path, '-f', 'json']);
    expect(run.code).toBe(0);
    const scenarios = JSON.parse(run.stdout).summary.scenarios;
    expect(
      scenarios.map((s: { id: string; evaluated: number; passRate: number }) => [
        s.id,
        s.evaluated,
        s.passRate,
      ]),
    ).toEqual([
      ['first', 2, 1],
      ['second', 1, 0],
    ]);
  });

  it('a gate given on one row gates every row of the scenario', async () => {
    const path = join(dir, 'one-gated-row.jsonl');
    const rows = [
      { id: 'r1', traces: [trace(2)], assertions: REFUND_RUN_ASSERTIONS },
      { id: 'r2', traces: [trace(1)], assertions: { ...REFUND_RUN_ASSERTIONS, min_pass_rate: 0.5 } },
    ];
    await writeFile(path, rows.map(line).join('\n'));
    const run = await runCli(['eval', '--dataset', path, '-f', 'json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).summary.scenarios[0]).toMatchObject({
      passRate: 0.5,
      gate: { gated: true, met: true, minPassRate: 0.5 },
    });
  });

  it('a file a row names that cannot be read is an input error naming the row: exit 2', async () => {
    const path = join(dir, 'missing.jsonl');
    await writeFile(
      path,
      line({
        id: 'r1',
        traces: [trace(1), 'run/nope.json'],
        assertions: { ...REFUND_RUN_ASSERTIONS, min_pass_rate: 0 },
      }),
    );
    const run = await runCli(['eval', '--dataset', path]);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain(
      `${join(dir, 'run/nope.json')}: row r1: no such file: ${join(dir, 'run/nope.json')}`,
    );
    expect(run.stdout).not.toContain('ENOENT');
  });

  it('a broken dataset stops before evaluating: exit 2 with every problem on stderr', async () => {
    const path = join(dir, 'broken.jsonl');
    await writeFile(
      path,
      `${line({ id: 'r1', traces: ['run/*.nothing'], assertions: REFUND_RUN_ASSERTIONS })}\n{`,
    );
    const run = await runCli(['eval', '--dataset', path]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^toolpath eval: dataset .*broken\.jsonl:2: not valid JSON/);
    const missing = await runCli(['eval', '--dataset', join(dir, 'none.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/dataset: no such file: \/\S*none\.jsonl/);
    expect(missing.stderr).not.toContain('ENOENT');
  });

  it('takes no --scenario or INPUT with --dataset', async () => {
    const run = await runCli(['eval', '--dataset', 'd.jsonl', 'trace.json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      '--dataset: its rows name their traces and assertions; give no --scenario or INPUT with it',
    );
  });
});
