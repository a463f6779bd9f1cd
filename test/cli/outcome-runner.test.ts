import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { captureDemoTraces } from '../../src/demo/capture.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import * as toolpath from '../../src/index.js';
import type { Report } from '../../src/model/report.js';
import {
  evaluateWithOutcomes,
  MAX_HOOK_OUTPUT_BYTES,
  type OutcomeProblem,
  runHookCommand,
  runOutcomeHooks,
} from '../../src/run/outcome-runner.js';
import { parseScenario, type Scenario } from '../../src/scenario/scenario.js';
import { eventually } from '../collector/next-hop.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { buildTrajectory } from '../helpers/trajectory.js';

let dir: string;
/**
 * How long a hook that hangs is given: long enough for a loaded machine to start the processes
 * it spawns (each writes its pid once running), so the test can check that all of them are stopped.
 */
const HANG_MS = 2_000;

beforeAll(async () => {
  dir = temporaryDir('toolpath-outcome-');
  // Reads the report from stdin; passes when the ledger next to the scenario lists its trace.
  await writeFile(
    join(dir, 'check-ledger.mjs'),
    `import { readFileSync } from 'node:fs';
const report = JSON.parse(readFileSync(0, 'utf8'));
const ledger = JSON.parse(readFileSync('ledger.json', 'utf8'));
if (ledger.includes(report.traceId)) process.exit(0);
console.log('no refund for trace ' + report.traceId + ' in ledger.json');
process.exit(1);
`,
  );
  // Records its pid, then hangs: a check that never answers.
  await writeFile(
    join(dir, 'hang.cjs'),
    `require('node:fs').appendFileSync(process.argv[2], process.pid + '\\n');
setInterval(() => {}, 1000);
`,
  );
});

const trajectory = () => buildTrajectory(['get_order', 'issue_refund'], { traceId: 'trace-ledger-7' });

/** A scenario read from `<dir>/scenario.json`, so hook commands run in `dir`. */
const scenarioWith = (outcome: unknown[]): Scenario =>
  parseScenario({ id: 'refund', tools: { required: ['issue_refund'] }, outcome }, join(dir, 'scenario.json'));

/** Runs the scenario's hooks against the trajectory's report (without outcome results). */
async function run(outcome: unknown[], options: Parameters<typeof runOutcomeHooks>[3] = {}) {
  const scenario = scenarioWith(outcome);
  const { outcome: _hooks, ...rules } = scenario.rules;
  const report = evaluate(trajectory(), { ...scenario, rules });
  return runOutcomeHooks(scenario, report, trajectory(), options);
}

/** Whether a process is still running (a zombie awaiting its reaper is not). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

describe('runOutcomeHooks: commands', () => {
  it('exit 0 passes', async () => {
    expect(await run([{ name: 'ok', command: 'node -e "process.exit(0)"' }])).toEqual({
      ok: { status: 'pass' },
    });
  });

  it('exit 1 fails, with the first line it printed as the message', async () => {
    const results = await run([
      {
        name: 'stdout',
        command: `node -e "console.log('\\n  refund R-1 missing  \\nsecond line'); process.exit(1)"`,
      },
      { name: 'stderr', command: `node -e "console.error('outbox empty'); process.exit(1)"` },
      { name: 'silent', command: 'node -e "process.exit(1)"' },
    ]);
    expect(results).toEqual({
      stdout: { status: 'fail', message: 'refund R-1 missing' },
      stderr: { status: 'fail', message: 'outbox empty' },
      silent: { status: 'fail', message: 'exited 1 with no output' },
    });
  });

  it("reads the report on stdin, runs in the scenario's directory, and sees the ids in its environment", async () => {
    await writeFile(join(dir, 'ledger.json'), JSON.stringify(['trace-ledger-7']));
    const env = `node -e "const e = process.env; process.exit(e.TOOLPATH_TRACE_ID === 'trace-ledger-7' && e.TOOLPATH_SCENARIO_ID === 'refund' && e.TOOLPATH_OUTCOME === 'env' ? 0 : 1)"`;
    const seen = `node -e "const r = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log(JSON.stringify(r.assertions.map((a) => a.name))); process.exit(1)"`;
    const results = await run([
      { name: 'ledger', command: 'node check-ledger.mjs' },
      { name: 'env', command: env },
      { name: 'seen', command: seen },
    ]);
    expect(results.ledger).toEqual({ status: 'pass' });
    expect(results.env).toEqual({ status: 'pass' });
    // The report it was given has the trajectory's results and none of the outcome hooks'.
    expect(results.seen).toEqual({ status: 'fail', message: '["expected_tool_calls:issue_refund"]' });
  });

  it('a command that hangs is stopped at timeoutMs, inconclusive, and leaves no process behind', async () => {
    const pids = join(dir, 'pids-hang.txt');
    await writeFile(pids, '');
    const problems: OutcomeProblem[] = [];
    const started = Date.now();
    const results = await run(
      [
        { name: 'hang', command: 'node -e "setInterval(()=>{},1000)"', timeoutMs: HANG_MS },
        // The shell and two processes it started, one in the background: the whole group goes.
        { name: 'group', command: `node hang.cjs ${pids} & node hang.cjs ${pids}; wait`, timeoutMs: HANG_MS },
      ],
      { onProblem: (problem) => problems.push(problem) },
    );
    expect(Date.now() - started).toBeLessThan(4 * HANG_MS + 5_000);
    expect(results).toEqual({
      hang: { status: 'inconclusive', message: `timed out after ${HANG_MS} ms` },
      group: { status: 'inconclusive', message: `timed out after ${HANG_MS} ms` },
    });
    expect(problems).toEqual([
      {
        hook: 'hang',
        scenarioId: 'refund',
        traceId: 'trace-ledger-7',
        message: `timed out after ${HANG_MS} ms`,
      },
      {
        hook: 'group',
        scenarioId: 'refund',
        traceId: 'trace-ledger-7',
        message: `timed out after ${HANG_MS} ms`,
      },
    ]);
    const started2 = (await readFile(pids, 'utf8')).trim().split('\n').map(Number);
    expect(started2).toHaveLength(2);
    // SIGKILL is delivered asynchronously: a loaded machine may take a moment to end the group.
    await eventually(
      () => started2.every((pid) => !running(pid)),
      `no process of the group left (${started2})`,
      5_000,
    );
  });

  it('keeps at most 64 KiB of each stream and counts the rest', async () => {
    const big = await runHookCommand(
      `node -e "process.stdout.write('x'.repeat(1 << 20)); process.stderr.write('y'.repeat(1 << 20))"`,
      { cwd: dir, input: '', timeoutMs: 10_000 },
    );
    expect(big).toMatchObject({ ended: 'exit', code: 0, stdoutBytes: 1 << 20, stderrBytes: 1 << 20 });
    expect(big.stdout).toBe('x'.repeat(MAX_HOOK_OUTPUT_BYTES));
    expect(big.stderr).toBe('y'.repeat(MAX_HOOK_OUTPUT_BYTES));

    const results = await run([
      { name: 'loud', command: `node -e "process.stdout.write('z'.repeat(1 << 20)); process.exit(1)"` },
    ]);
    expect(results.loud).toEqual({ status: 'fail', message: `${'z'.repeat(499)}…` });
  });

  it('a command that does not read its (large) input still gets its verdict', async () => {
    const result = await runHookCommand('node -e "process.exit(0)"', {
      cwd: dir,
      input: 'r'.repeat(4 << 20),
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({ ended: 'exit', code: 0 });
  });

  it('a missing command, or one that cannot start, is inconclusive with why, and noted', async () => {
    const problems: string[] = [];
    const results = await run([{ name: 'missing', command: 'toolpath-no-such-command-7f3a' }], {
      onProblem: ({ hook, message }) => problems.push(`${hook}: ${message}`),
    });
    expect(results.missing?.status).toBe('inconclusive');
    expect(results.missing?.message).toMatch(
      /^could not start: exit 127 \(command not found\): .*toolpath-no-such-command-7f3a.*not found/,
    );
    expect(problems).toEqual([`missing: ${results.missing?.message}`]);

    const nowhere = parseScenario(
      { outcome: [{ name: 'nowhere', command: 'true' }] },
      join(dir, 'no-such-dir', 'scenario.json'),
    );
    const report = evaluate(trajectory(), { ...nowhere, rules: {} });
    const started = await runOutcomeHooks(nowhere, report, trajectory());
    expect(started.nowhere?.status).toBe('inconclusive');
    expect(started.nowhere?.message).toMatch(/^could not start: .*ENOENT \(in .*no-such-dir\)$/);
  });

  it('any other exit is inconclusive, with what the command said', async () => {
    const results = await run([
      { name: 'two', command: `node -e "console.error('ledger unreachable'); process.exit(2)"` },
      // The shell reports a signalled command as 128 + the signal's number.
      { name: 'signalled', command: `node -e "process.kill(process.pid, 'SIGTERM')"` },
      { name: 'killed', command: `kill -TERM $$` },
    ]);
    expect(results).toEqual({
      two: { status: 'inconclusive', message: 'exited 2 (0 passes, 1 fails): ledger unreachable' },
      signalled: {
        status: 'inconclusive',
        message: expect.stringMatching(/^exited 143 \(killed by SIGTERM\)/),
      },
      killed: { status: 'inconclusive', message: 'killed by SIGTERM' },
    });
  });
});

describe('runOutcomeHooks: checks in code', () => {
  it('a function gets the hook, the report and the trajectory, and its result is used', async () => {
    const seen: string[] = [];
    const results = await run([{ name: 'ledger' }], {
      functions: {
        ledger: ({ hook, report, trajectory: t, scenario }) => {
          seen.push(hook.name, report.traceId, t.calls.map((call) => call.tool).join(','), scenario.id);
          return { status: 'fail', message: 'refund missing' };
        },
      },
    });
    expect(results).toEqual({ ledger: { status: 'fail', message: 'refund missing' } });
    expect(seen).toEqual(['ledger', 'trace-ledger-7', 'get_order,issue_refund', 'refund']);
  });

  it('a function takes precedence over the command; one for an unknown hook is ignored', async () => {
    const results = await run([{ name: 'ledger', command: 'node -e "process.exit(1)"' }], {
      functions: { ledger: async () => ({ status: 'pass' }), other: () => ({ status: 'fail' }) },
    });
    expect(results).toEqual({ ledger: { status: 'pass' } });
  });

  it('a function that throws or rejects is inconclusive with the error, never thrown to the caller', async () => {
    const results = await run([{ name: 'throws' }, { name: 'rejects' }, { name: 'string' }], {
      functions: {
        throws: () => {
          throw new TypeError('ledger client not configured');
        },
        rejects: async () => {
          throw new Error('connection refused');
        },
        string: () => Promise.reject('nope'),
      },
    });
    expect(results).toEqual({
      throws: { status: 'inconclusive', message: 'threw TypeError: ledger client not configured' },
      rejects: { status: 'inconclusive', message: 'threw Error: connection refused' },
      string: { status: 'inconclusive', message: 'threw nope' },
    });
  });

  it('a function that never answers times out, is noted, and its signal is aborted', async () => {
    let signal: AbortSignal | undefined;
    const problems: string[] = [];
    const results = await run([{ name: 'slow', timeoutMs: 50 }], {
      functions: {
        slow: (context) => {
          signal = context.signal;
          return new Promise(() => {});
        },
      },
      onProblem: ({ hook, message }) => problems.push(`${hook}: ${message}`),
    });
    expect(results).toEqual({ slow: { status: 'inconclusive', message: 'timed out after 50 ms' } });
    expect(signal?.aborted).toBe(true);
    expect(problems).toEqual(['slow: timed out after 50 ms']);
  });

  it('a hook with neither a function nor a command gets no result (the evaluator says so)', async () => {
    expect(await run([{ name: 'ledger' }])).toEqual({});
  });
});

describe('evaluateWithOutcomes', () => {
  it('is evaluate with the hook results: deterministic given them', async () => {
    const scenario = scenarioWith([{ name: 'ledger', command: 'node check-ledger.mjs' }, { name: 'outbox' }]);
    await writeFile(join(dir, 'ledger.json'), JSON.stringify([]));
    const report = await evaluateWithOutcomes(trajectory(), scenario, {
      functions: { outbox: () => ({ status: 'pass' }) },
    });
    expect(report).toEqual(
      evaluate(trajectory(), scenario, {
        outcomes: {
          ledger: { status: 'fail', message: 'no refund for trace trace-ledger-7 in ledger.json' },
          outbox: { status: 'pass' },
        },
      }),
    );
    expect(report.verdict).toBe('fail');
    expect(report.scores).toEqual({ structure: 1, outcome: 0.5 });
  });

  it('a code hook that throws gives an inconclusive report, not a rejection', async () => {
    const report = await evaluateWithOutcomes(trajectory(), scenarioWith([{ name: 'ledger' }]), {
      functions: {
        ledger: () => {
          throw new Error('boom');
        },
      },
    });
    expect(report.verdict).toBe('inconclusive');
    expect(report.findings.map((finding) => finding.message)).toEqual([
      'outcome hook ledger could not decide: threw Error: boom',
    ]);
  });

  it('is exported from the package root, with runOutcomeHooks', () => {
    expect(toolpath.evaluateWithOutcomes).toBe(evaluateWithOutcomes);
    expect(toolpath.runOutcomeHooks).toBe(runOutcomeHooks);
  });

  it('without an outcome section it is evaluate', async () => {
    const scenario = parseScenario({ tools: { required: ['issue_refund'] } }, 'plain.json');
    expect(await evaluateWithOutcomes(trajectory(), scenario)).toEqual(evaluate(trajectory(), scenario));
  });
});

describe('toolpath eval with outcome hooks', () => {
  it("runs each scenario's hook commands for every trace, next to the scenario file", async () => {
    const [good] = await captureDemoTraces();
    if (good === undefined) throw new Error('no demo trace');
    const trace = join(dir, 'good.otlp.json');
    await writeFile(trace, good.otlpJson);
    const scenario = join(dir, 'hooked.json');
    await writeFile(
      scenario,
      JSON.stringify({
        ...DEMO_SCENARIO,
        outcome: [
          { name: 'ledger', command: 'node check-ledger.mjs' },
          { name: 'slow', command: `node hang.cjs ${join(dir, 'pids-cli.txt')}`, timeoutMs: HANG_MS },
        ],
        severity: { 'outcome.check': 'hard' },
      }),
    );

    await writeFile(join(dir, 'ledger.json'), JSON.stringify([good.traceId]));
    const passing = await runCli(['eval', '--scenario', scenario, '--format', 'json', trace]);
    const [report] = JSON.parse(passing.stdout).reports as Report[];
    expect(report?.assertions.filter((a) => a.name.startsWith('outcome:'))).toEqual([
      { name: 'outcome:ledger', status: 'pass', reason: '' },
      {
        name: 'outcome:slow',
        status: 'inconclusive',
        reason: `outcome hook slow could not decide: timed out after ${HANG_MS} ms`,
      },
    ]);
    expect(report?.verdict).toBe('inconclusive');
    expect(passing.code).toBe(1);
    expect(passing.stderr).toBe(
      `toolpath eval: outcome hook slow (scenario demo.support.refund, trace ${good.traceId}): timed out after ${HANG_MS} ms\n`,
    );

    await writeFile(join(dir, 'ledger.json'), JSON.stringify([]));
    const failing = await runCli(['eval', '--scenario', scenario, trace]);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/^FAIL {2}demo\.support\.refund@2/m);
    expect(failing.stdout).toContain(
      `x outcome:ledger: outcome hook ledger failed: no refund for trace ${good.traceId} in ledger.json`,
    );
    expect(failing.stdout).toMatch(/outcome 0\.00/);
    // Both runs' hung hooks were stopped with everything they started.
    const pids = (await readFile(join(dir, 'pids-cli.txt'), 'utf8')).trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(running(pid), `pid ${pid}`).toBe(false);
  });
});
