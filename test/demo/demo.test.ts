import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

describe('toolpath demo', () => {
  it('runs the instrumented agent, evaluates its three traces and gets the expected verdicts', async () => {
    const dir = temporaryDir('toolpath-demo-test-');
    const run = await runCli(['demo', '--keep', dir]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PASS .*good-refund\.otlp\.json/m);
    expect(run.stdout).toMatch(/^FAIL .*refund-before-policy\.otlp\.json/m);
    expect(run.stdout).toMatch(/^FAIL .*made-up-confirmation\.otlp\.json/m);
    expect(run.stdout).toContain('R-7731');
    expect(run.stdout).toContain('3 traces, 3 evaluations: 1 passed, 2 failed, 0 inconclusive');
    expect((await readdir(dir)).sort()).toEqual([
      'good-refund.otlp.json',
      'made-up-confirmation.otlp.json',
      'refund-before-policy.otlp.json',
      'refund-scenario.json',
    ]);

    // The files it leaves are what `toolpath eval` reads, with the same verdicts.
    const again = await runCli([
      'eval',
      '--scenario',
      join(dir, 'refund-scenario.json'),
      '--format',
      'json',
      join(dir, 'good-refund.otlp.json'),
      join(dir, 'made-up-confirmation.otlp.json'),
    ]);
    expect(JSON.parse(again.stdout).summary).toMatchObject({ passed: 1, failed: 1 });

    // A list in `before` means all of its tools: the refund came after the order lookup but before
    // the policy check, so the README's `before: [get_order, get_refund_policy]` fails it.
    const both = join(dir, 'both-before.json');
    writeFileSync(
      both,
      JSON.stringify({
        id: 'both-before',
        order: { before: [{ before: ['get_order', 'get_refund_policy'], after: 'issue_refund' }] },
      }),
    );
    const judged = await runCli([
      'eval',
      '-s',
      both,
      '--format',
      'json',
      join(dir, 'refund-before-policy.otlp.json'),
    ]);
    const [report] = JSON.parse(judged.stdout).reports;
    expect(report.findings.map((finding: { rule: string }) => finding.rule)).toEqual(['order.before']);
    expect(report.findings[0].message).toMatch(
      /issue_refund \(call \S+\) came before any get_refund_policy:/,
    );
    const either = join(dir, 'either-before.json');
    writeFileSync(
      either,
      JSON.stringify({
        id: 'either-before',
        order: { before: [{ beforeAny: ['get_order', 'get_refund_policy'], after: 'issue_refund' }] },
      }),
    );
    const anyOf = await runCli([
      'eval',
      '-s',
      either,
      '--format',
      'json',
      join(dir, 'refund-before-policy.otlp.json'),
    ]);
    expect(JSON.parse(anyOf.stdout).reports[0].verdict).toBe('pass');
  });
});

describe('npm run demo', () => {
  it('runs from the sources without a build, and the command it prints evaluates the traces again', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;
    expect(scripts.demo).not.toMatch(/\bbuild\b|\btsc\b/);
    const demo = spawnSync('npm', ['run', '--silent', 'demo'], { cwd: root, encoding: 'utf8' });
    expect(demo.stderr).toBe('');
    expect(demo.status).toBe(0);
    const [, dir] =
      /^The traces and the scenario are in (\/\S+)\. Evaluate them yourself:$/m.exec(demo.stdout) ?? [];
    expect(dir).toBeDefined();
    const command = /^ {2}(npm run --silent toolpath -- eval .*)$/m.exec(demo.stdout)?.[1];
    expect(command).toBe(
      `npm run --silent toolpath -- eval --scenario ${dir}/refund-scenario.json ${dir}/*.otlp.json`,
    );
    const again = spawnSync('sh', ['-c', command as string], { cwd: root, encoding: 'utf8' });
    expect(again.status).toBe(1);
    expect(again.stdout).toContain('3 traces, 3 evaluations: 1 passed, 2 failed, 0 inconclusive');
  }, 120_000);
});
