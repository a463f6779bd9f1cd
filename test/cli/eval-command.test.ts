import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { captureDemoTraces } from '../../src/demo/capture.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const packageVersion = JSON.parse(
  await readFile(new URL('../../package.json', import.meta.url), 'utf8'),
).version;

let dir: string;
let scenario: string;
let good: string;
let bad: string;
let allThree: string[];

// Traces from a real SDK provider, serialized by the real OTLP JSON serializer.
beforeAll(async () => {
  dir = temporaryDir('toolpath-eval-test-');
  scenario = join(dir, 'scenario.json');
  await writeFile(scenario, JSON.stringify(DEMO_SCENARIO));
  allThree = [];
  for (const trace of await captureDemoTraces()) {
    const path = join(dir, `${trace.conversation.name}.otlp.json`);
    await writeFile(path, trace.otlpJson);
    allThree.push(path);
  }
  good = join(dir, 'good-refund.otlp.json');
  bad = join(dir, 'refund-before-policy.otlp.json');
});

describe('toolpath eval', () => {
  it('exits 0 when every evaluation passes, and says so', async () => {
    const run = await runCli(['eval', '--scenario', scenario, good]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PASS {2}demo\.support\.refund@2 {2}trace [0-9a-f]{32}/m);
    expect(run.stdout).toContain('1 trace, 1 evaluation: 1 passed, 0 failed, 0 inconclusive');
  });

  it('exits 1 when one fails, and the failure says how far the trace got', async () => {
    const run = await runCli(['eval', '-s', scenario, good, bad]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL .*refund-before-policy/m);
    expect(run.stdout).toMatch(
      /order\.before\[0\]: issue_refund \(call \w+\) came before any get_refund_policy/,
    );
  });

  it('--format json prints reports and a summary in the report shape', async () => {
    const run = await runCli(['eval', '--scenario', scenario, '--format', 'json', ...allThree]);
    expect(run.code).toBe(1);
    const document = JSON.parse(run.stdout);
    expect(document.summary).toEqual({
      traces: 3,
      evaluated: 3,
      passed: 1,
      failed: 2,
      inconclusive: 0,
      scenarios: [
        {
          id: 'demo.support.refund',
          version: '2',
          unit: 'trace',
          evaluated: 3,
          passed: 1,
          failed: 2,
          inconclusive: 0,
          passRate: 1 / 3,
          gate: {
            gated: false,
            met: false,
            reason: 'no gate, so every trace must pass: 2 of 3 traces did not',
          },
        },
      ],
    });
    expect(document.errors).toBeUndefined();
    for (const report of document.reports) {
      expect(Object.keys(report).sort()).toEqual(
        [
          'assertions',
          'findings',
          'pass',
          'scenario',
          'scores',
          'stats',
          'toolpathVersion',
          'traceId',
          'verdict',
        ].sort(),
      );
      expect(report.scenario).toEqual({ id: 'demo.support.refund', version: '2' });
      expect(report.toolpathVersion).toBe(packageVersion);
      expect(report.stats.calls).toBe(4);
    }
    const failed = document.reports.filter((r: { pass: boolean }) => !r.pass);
    for (const report of failed) {
      expect(report.findings.length).toBeGreaterThan(0);
      for (const finding of report.findings) {
        expect(finding.calls.length + finding.spans.length).toBeGreaterThan(0);
        expect(finding.severity).toBe('hard');
      }
    }
  });

  it('--format junit writes one testcase per evaluation with failures marked', async () => {
    const run = await runCli(['eval', '--scenario', scenario, '--format', 'junit', ...allThree]);
    expect(run.stdout.startsWith('<?xml')).toBe(true);
    expect(run.stdout.match(/<testcase /g)).toHaveLength(3);
    expect(run.stdout.match(/<failure type="fail"/g)).toHaveLength(2);
    expect(run.stdout).toContain('<testsuite name="demo.support.refund@2" tests="3" failures="2"');
    expect(run.stdout.match(/<testcase [^>]*>/g)?.every((tag) => !tag.includes('<', 1))).toBe(true);
  });

  it('--out writes the report to a file and prints a one-line summary on stderr', async () => {
    const out = join(dir, 'report.json');
    const run = await runCli(['eval', '--scenario', scenario, '--format', 'json', '--out', out, good]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`report written to ${out}`);
    expect(JSON.parse(await readFile(out, 'utf8')).summary.passed).toBe(1);
  });

  it('judges an empty list of typed events as a run with no tool call', async () => {
    const none = join(dir, 'no-calls.json');
    await writeFile(none, '[]');
    const forbidden = join(dir, 'forbidden.json');
    await writeFile(forbidden, JSON.stringify({ id: 'no-reset', tools: { forbidden: ['admin_reset'] } }));
    const passing = await runCli(['eval', '--scenario', forbidden, none]);
    expect(passing.code).toBe(0);
    expect(passing.stdout).toContain('1 trace, 1 evaluation: 1 passed, 0 failed, 0 inconclusive');
    // A rule that needs a call fails on it, saying no call was made.
    const run = await runCli(['eval', '--scenario', scenario, '--format', 'json', none]);
    expect(run.code).toBe(1);
    const [report] = JSON.parse(run.stdout).reports;
    expect(report).toMatchObject({ verdict: 'fail', stats: { calls: 0 } });
  });

  it('- reads the trace from stdin', async () => {
    const run = await runCli(['eval', '--scenario', scenario, '-'], await readFile(good, 'utf8'));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('(-, 4 calls');
  });

  it('a broken input is an error naming the file, exit 2, and the other inputs are still evaluated', async () => {
    const truncated = join(dir, 'truncated.json');
    await writeFile(truncated, (await readFile(good, 'utf8')).slice(0, 200));
    const empty = join(dir, 'empty.json');
    await writeFile(empty, '');
    const run = await runCli([
      'eval',
      '--scenario',
      scenario,
      '--format',
      'json',
      truncated,
      good,
      empty,
      join(dir, 'missing.json'),
    ]);
    expect(run.code).toBe(2);
    const document = JSON.parse(run.stdout);
    expect(document.summary.evaluated).toBe(1);
    expect(document.reports[0].pass).toBe(true);
    expect(document.errors.map((e: { source: string }) => e.source)).toEqual([
      join(dir, 'missing.json'),
      truncated,
      empty,
    ]);
    expect(run.stderr).toContain(`${truncated}:`);
    expect(run.stderr).toContain(`no such file: ${join(dir, 'missing.json')} (check the path`);
    expect(run.stderr).not.toContain('ENOENT');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 1 when no scenario applies to any trace: a gate never passes on nothing', async () => {
    const elsewhere = join(dir, 'elsewhere.json');
    await writeFile(
      elsewhere,
      JSON.stringify({
        $schema: 'urn:toolpath:scenario',
        appliesTo: { agent: 'billing-agent' },
        tools: { allowed: ['x'] },
      }),
    );
    const run = await runCli(['eval', '--scenario', elsewhere, good]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('NOTHING EVALUATED');
    expect(run.stdout).toContain('1 trace, 0 evaluations');
    const junit = await runCli(['eval', '--scenario', elsewhere, '--format', 'junit', good]);
    expect(junit.code).toBe(1);
    expect(junit.stdout).toContain('<testsuites name="toolpath" tests="1" failures="1" errors="0">');
    expect(junit.stdout).toContain('<failure type="nothing-evaluated"');
  });

  it('shows progress on a terminal for long runs, and nothing when stderr is not a terminal', async () => {
    const many = Array.from({ length: 25 }, () => good);
    const onTerminal = await runCli(['eval', '--scenario', scenario, '--format', 'json', ...many], '', true);
    expect(onTerminal.code).toBe(0);
    expect(onTerminal.stderr).toContain(`toolpath eval: 25/25 ${good}`);
    expect(onTerminal.stderr.endsWith('\r\u001b[2K')).toBe(true);
    expect(JSON.parse(onTerminal.stdout).summary.evaluated).toBe(25);
    const inCi = await runCli(['eval', '--scenario', scenario, '--format', 'json', ...many]);
    expect(inCi.stderr).toBe('');
  });

  it('a trace whose arguments nest 20,000 deep is judged: what needs them cannot decide, the rest does', async () => {
    const deep = join(dir, 'deep.json');
    const nested = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    await writeFile(
      deep,
      `[{"kind":"call","id":"c1","tool":"issue_refund","args":{"x":${nested}}},{"kind":"call","id":"c2","tool":"issue_refund","args":{"x":${nested}}},{"kind":"call","id":"c3","tool":"admin","args":{}}]`,
    );
    const repeats = join(dir, 'repeats.json');
    await writeFile(
      repeats,
      JSON.stringify({
        efficiency: { repeats: { max: 0 } },
        tools: { forbidden: ['admin'] },
        arguments: [{ tool: 'issue_refund', match: { mode: 'regex', pattern: '1' } }],
      }),
    );
    const run = await runCli(['eval', '--scenario', repeats, '--format', 'json', good, deep]);
    expect(run.code).toBe(1);
    const document = JSON.parse(run.stdout);
    expect(document.errors).toBeUndefined();
    expect(document.summary.evaluated).toBe(2);
    const report = document.reports.find((r: { traceId: string }) => r.traceId === 'typed-events:deep.json');
    // The forbidden call still fails the trace; the checks of the deep arguments say they cannot decide.
    expect(report.verdict).toBe('fail');
    const byRule = (rule: string) => report.findings.filter((f: { rule: string }) => f.rule === rule);
    expect(byRule('tools.forbidden')).toHaveLength(1);
    expect(byRule('trajectory.arguments.too_deep').map((f: { message: string }) => f.message)).toEqual([
      'the arguments of issue_refund (call c1) nest deeper than 64 levels: too deep to read, so the rules that need them cannot decide',
      'the arguments of issue_refund (call c2) nest deeper than 64 levels: too deep to read, so the rules that need them cannot decide',
    ]);
    expect(byRule('efficiency.repeat')[0]).toMatchObject({ inconclusive: true });
    expect(byRule('efficiency.repeat')[0].message).toContain('nest too deep to read');
    expect(
      report.assertions.find((a: { name: string }) => a.name.startsWith('tool_call_args')),
    ).toMatchObject({
      status: 'inconclusive',
    });
  });

  it('warns about a scenario that applied to none of the traces while others did', async () => {
    const typo = join(dir, 'typo.json');
    await writeFile(
      typo,
      JSON.stringify({ id: 'typo', appliesTo: { agent: 'suport-agent' }, tools: { allowed: ['x'] } }),
    );
    const run = await runCli(['eval', '--scenario', scenario, '--scenario', typo, good]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `warning: scenario typo (${typo}) applied to none of the traces; check its appliesTo; the traces' root agents: support-agent\n`,
    );
  });

  it('a bad scenario stops before evaluating, naming the file and what is wrong', async () => {
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'allowed_tool: [a]\n');
    const run = await runCli(['eval', '--scenario', broken, good]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('broken.yaml');
    expect(run.stderr).toContain('allowed_tools');
    expect(run.stdout).toBe('');
  });

  it.each([
    [['eval', 'trace.json'], 'missing --scenario'],
    [['eval', '--scenario', 'x.json'], 'missing INPUT'],
    [
      ['eval', '--scenario', 'x.json', '--format', 'xml', 'a.json'],
      '--format: expected one of pretty, json, junit, markdown; got "xml"',
    ],
    [
      ['eval', '--bogus'],
      'unknown option --bogus; its options: --scenario, --dataset, --format, --out, --expect',
    ],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['evl'], 'unknown command "evl" (did you mean eval?)'],
    [['evla'], 'unknown command "evla" (did you mean eval?)'],
    [['veiw'], 'unknown command "veiw" (did you mean view?)'],
    [['vwie'], 'unknown command "vwie"\n'],
  ])('usage error %j exits 2 with %s', async (args, message) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it('the real executable exits 2 without a stack trace on bad input', async () => {
    const garbage = join(dir, 'garbage.json');
    await writeFile(garbage, '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}');
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/bin.ts', 'eval', '-s', scenario, garbage],
      {
        encoding: 'utf8',
      },
    );
    expect(result.status).toBe(2);
    expect(result.stdout + result.stderr).toContain('garbage.json');
    expect(result.stdout + result.stderr).toContain('traceId');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
