import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../helpers/cli.js';
import { REFUND_RUN_ASSERTIONS, refundRunFiles } from '../helpers/refund-run.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
let scenario: string;
let files: string[];
let redact: string;

beforeAll(async () => {
  dir = temporaryDir('toolpath-promote-dataset-');
  scenario = join(dir, 'refund.yaml');
  await writeFile(scenario, stringify({ ...REFUND_RUN_ASSERTIONS, min_pass_rate: 0 }));
  // The assertions name order O-17: keep it, or the redacted fixture could not reproduce them.
  redact = join(dir, 'redact.yaml');
  await writeFile(redact, 'keep: [orderId]\n');
  files = await refundRunFiles();
});

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('toolpath promote --dataset', () => {
  it('appends a row for the redacted fixture that eval --dataset reproduces', async () => {
    const dataset = join(dir, 'data', 'regressions.jsonl');
    const first = await runCli([
      'promote',
      files[1] as string,
      '-s',
      scenario,
      '--redact',
      redact,
      '--out',
      join(dir, 'fixtures', 'before-policy.json'),
      '--dataset',
      dataset,
    ]);
    expect(first.stderr).toContain(`row before-policy appended to ${dataset}`);
    expect(first.code).toBe(0);
    const second = await runCli([
      'promote',
      files[9] as string,
      '-s',
      scenario,
      '--redact',
      redact,
      '--out',
      join(dir, 'fixtures', 'escalates.json'),
      '--dataset',
      dataset,
      '--row',
      'escalates-to-human',
    ]);
    expect(second.code).toBe(0);

    const text = await readFile(dataset, 'utf8');
    const rows = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows).toEqual([
      {
        id: 'before-policy',
        traces: ['../fixtures/before-policy.json'],
        assertions: { ...REFUND_RUN_ASSERTIONS, min_pass_rate: 0 },
      },
      {
        id: 'escalates-to-human',
        traces: ['../fixtures/escalates.json'],
        assertions: { ...REFUND_RUN_ASSERTIONS, min_pass_rate: 0 },
      },
    ]);
    // Nothing of the trace itself is in the row: not its id, not the customer's e-mail.
    const original = JSON.parse(await readFile(files[1] as string, 'utf8'));
    const traceId = original.resourceSpans[0].scopeSpans[0].spans[0].traceId as string;
    expect(text).not.toContain(traceId);
    expect(text).not.toContain('sam@example.test');

    const run = await runCli(['eval', '--dataset', dataset, '-f', 'json']);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout).summary.scenarios[0];
    expect(summary).toMatchObject({ id: 'refund.run', unit: 'row', evaluated: 2, passed: 0, passRate: 0 });
  });

  it('refuses a row id already in the dataset before writing anything', async () => {
    const dataset = join(dir, 'taken.jsonl');
    const out = join(dir, 'fixtures', 'taken.json');
    await writeFile(
      dataset,
      `${JSON.stringify({ id: 'taken', traces: ['x.json'], assertions: REFUND_RUN_ASSERTIONS })}`,
    );
    const run = await runCli([
      'promote',
      files[1] as string,
      '-s',
      scenario,
      '--redact',
      redact,
      '--out',
      out,
      '--dataset',
      dataset,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('cannot add row "taken":');
    expect(run.stderr).toContain('row id "taken" is already used on line 1');
    expect(await exists(out)).toBe(false);
  });

  it("refuses a gate that differs from the other rows' of the scenario", async () => {
    const dataset = join(dir, 'gated.jsonl');
    await writeFile(
      dataset,
      `${JSON.stringify({ id: 'r1', traces: ['x.json'], assertions: { ...REFUND_RUN_ASSERTIONS, min_pass_rate: 0.9 } })}\n`,
    );
    const run = await runCli([
      'promote',
      files[1] as string,
      '-s',
      scenario,
      '--redact',
      redact,
      '--out',
      join(dir, 'fixtures', 'gated.json'),
      '--dataset',
      dataset,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('its gate {"minPassRate":0} differs from line 1\'s {"minPassRate":0.9}');
    expect(await readFile(dataset, 'utf8')).not.toContain('"gated"');
  });

  it('adds the line break a dataset without a final newline lacks', async () => {
    const dataset = join(dir, 'no-newline.jsonl');
    await writeFile(
      dataset,
      JSON.stringify({ id: 'r1', traces: ['x.json'], assertions: REFUND_RUN_ASSERTIONS }),
    );
    const run = await runCli([
      'promote',
      files[0] as string,
      '-s',
      scenario,
      '--redact',
      redact,
      '--out',
      join(dir, 'fixtures', 'good.json'),
      '--dataset',
      dataset,
    ]);
    expect(run.code).toBe(0);
    expect((await readFile(dataset, 'utf8')).split('\n').map((line) => line.slice(0, 14))).toEqual([
      '{"id":"r1","tr',
      '{"id":"good","',
      '',
    ]);
  });

  it('--row needs --dataset', async () => {
    const run = await runCli([
      'promote',
      files[0] as string,
      '-s',
      scenario,
      '--redact',
      redact,
      '--out',
      join(dir, 'x.json'),
      '--row',
      'r',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--row names the row --dataset appends; give --dataset FILE too');
  });
});
