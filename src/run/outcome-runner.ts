/**
 * Outcome hooks, the effectful half: runs each hook of a scenario's `outcome` section (a
 * function supplied in code, or a shell command) and hands the results to the pure evaluator.
 * Nothing here throws to the caller: a check that cannot run, throws, hangs or answers nonsense
 * is an inconclusive result that says why.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { evaluate } from '../evaluate/evaluate.js';
import { capMessage, type OutcomeResult } from '../evaluate/outcome-hooks.js';
import type { Report } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import type { OutcomeHook } from '../scenario/native.js';
import type { Scenario } from '../scenario/scenario.js';

/** What a check in code is given. */
export interface OutcomeContext {
  hook: OutcomeHook;
  scenario: Scenario;
  /** The trajectory's report, without outcome results. */
  report: Report;
  trajectory: Trajectory;
  /** Aborted when the hook's `timeoutMs` has passed: its result is no longer waited for. */
  signal: AbortSignal;
}

/** A check in code of one outcome hook. */
export type OutcomeCheck = (context: OutcomeContext) => Promise<OutcomeResult> | OutcomeResult;

/** A hook that could not be run as asked (timed out, could not start), for a CLI's stderr. */
export interface OutcomeProblem {
  hook: string;
  scenarioId: string;
  traceId: string;
  message: string;
}

/** How to run a scenario's outcome hooks. */
export interface OutcomeHookOptions {
  /** Checks in code, by hook name. A function takes precedence over the hook's command. */
  functions?: Readonly<Record<string, OutcomeCheck>>;
  /** Told about each hook that timed out or could not start (its result says so too). */
  onProblem?: (problem: OutcomeProblem) => void;
}

/** At most this much of each of a command's stdout and stderr is kept; the rest is only counted. */
export const MAX_HOOK_OUTPUT_BYTES = 64 * 1024;

/** After a timed-out command's process group is killed, how long its output may take to close. */
const CLOSE_GRACE_MS = 1_000;

/**
 * Runs every outcome hook of `scenario`, one after another, against `report` (the trajectory's
 * report without outcome results: see {@link evaluateWithOutcomes}). A hook with a function in
 * `options.functions` runs it; else one with a `command` runs that in a shell, in the scenario
 * file's directory, with the report's JSON on stdin; else it has no result (the evaluator then
 * reports it inconclusive). Never throws.
 */
export async function runOutcomeHooks(
  scenario: Scenario,
  report: Report,
  trajectory: Trajectory,
  options: OutcomeHookOptions = {},
): Promise<Record<string, OutcomeResult>> {
  const results: Record<string, OutcomeResult> = {};
  const problem = (hook: OutcomeHook, message: string) =>
    options.onProblem?.({ hook: hook.name, scenarioId: scenario.id, traceId: report.traceId, message });
  for (const hook of scenario.rules.outcome ?? []) {
    const check =
      options.functions !== undefined && Object.hasOwn(options.functions, hook.name)
        ? options.functions[hook.name]
        : undefined;
    if (check !== undefined) {
      const { result, timedOut } = await runCheck(
        check,
        { hook, scenario, report, trajectory },
        hook.timeoutMs,
      );
      if (timedOut) problem(hook, result.message ?? '');
      results[hook.name] = result;
    } else if (hook.command !== undefined) {
      const run = await runHookCommand(hook.command, {
        cwd: scenario.source === undefined ? process.cwd() : resolve(dirname(scenario.source)),
        input: JSON.stringify(report),
        timeoutMs: hook.timeoutMs,
        env: {
          TOOLPATH_TRACE_ID: report.traceId,
          TOOLPATH_SCENARIO_ID: scenario.id,
          TOOLPATH_OUTCOME: hook.name,
        },
      });
      const result = commandResult(run, hook.timeoutMs);
      if (run.ended !== 'exit' || run.code === 126 || run.code === 127) problem(hook, result.message ?? '');
      results[hook.name] = result;
    }
  }
  return results;
}

/**
 * Evaluates `trajectory` against `scenario` with its outcome hooks: the trajectory's report
 * first (without the outcome section), then the hooks run against it, then the evaluation again
 * with their results. Given the same hook results, the same report.
 */
export async function evaluateWithOutcomes(
  trajectory: Trajectory,
  scenario: Scenario,
  hooks: OutcomeHookOptions = {},
): Promise<Report> {
  const { outcome, ...trajectoryRules } = scenario.rules;
  if (outcome === undefined || outcome.length === 0) return evaluate(trajectory, scenario);
  const report = evaluate(trajectory, { ...scenario, rules: trajectoryRules });
  const outcomes = await runOutcomeHooks(scenario, report, trajectory, hooks);
  return evaluate(trajectory, scenario, { outcomes });
}

/** A check in code, bounded by the hook's timeout, its throws and rejections caught. */
async function runCheck(
  check: OutcomeCheck,
  context: Omit<OutcomeContext, 'signal'>,
  timeoutMs: number,
): Promise<{ result: OutcomeResult; timedOut: boolean }> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((done) => {
    timer = setTimeout(() => {
      controller.abort();
      done(undefined);
    }, timeoutMs);
  });
  try {
    // Through a promise, so a synchronous throw is caught like a rejection.
    const checked = Promise.resolve().then(() => check({ ...context, signal: controller.signal }));
    const result = await Promise.race([checked, timeout]);
    if (result !== undefined) return { result, timedOut: false };
    return { result: { status: 'inconclusive', message: `timed out after ${timeoutMs} ms` }, timedOut: true };
  } catch (error) {
    return { result: { status: 'inconclusive', message: `threw ${describeError(error)}` }, timedOut: false };
  } finally {
    clearTimeout(timer);
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : String(error);
}

/** How a command ended, with what it printed (bounded) and how much it printed. */
export interface CommandRun {
  /** `exit`: it ended by itself (with `code` or `signal`); `timeout`: it was killed; `spawn-error`: it never ran. */
  ended: 'exit' | 'timeout' | 'spawn-error';
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why it could not start (spawn-error). */
  error?: string;
  /** The first {@link MAX_HOOK_OUTPUT_BYTES} of each stream. */
  stdout: string;
  stderr: string;
  /** How many bytes each stream carried in all. */
  stdoutBytes: number;
  stderrBytes: number;
}

/** Where and how to run a hook command. */
export interface CommandOptions {
  cwd: string;
  /** Written to the command's stdin, which is then closed. */
  input: string;
  timeoutMs: number;
  /** Added to this process's environment. */
  env?: Readonly<Record<string, string>>;
}

/**
 * Runs `command` in a shell, in its own process group, so that a timeout kills the whole group
 * (the shell and anything it started), leaving nothing behind. Never rejects.
 */
export function runHookCommand(command: string, options: CommandOptions): Promise<CommandRun> {
  return new Promise((done) => {
    let child: ChildProcess;
    try {
      child = spawn(command, {
        shell: true,
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        // Its own process group (POSIX), so the group can be killed on timeout.
        detached: process.platform !== 'win32',
      });
    } catch (error) {
      done(notStarted(describeError(error)));
      return;
    }
    const stdout = capture(child.stdout);
    const stderr = capture(child.stderr);
    let settled = false;
    let grace: NodeJS.Timeout | undefined;
    const finish = (run: Omit<CommandRun, 'stdout' | 'stderr' | 'stdoutBytes' | 'stderrBytes'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      done({
        ...run,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutBytes: stdout.bytes(),
        stderrBytes: stderr.bytes(),
      });
    };
    const timer = setTimeout(() => {
      killGroup(child);
      // A process that left the group may hold the pipes open: stop waiting for them.
      grace = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish({ ended: 'timeout', code: null, signal: 'SIGKILL' });
      }, CLOSE_GRACE_MS);
    }, options.timeoutMs);
    child.on('error', (error) => {
      // After a successful spawn, 'error' is about signalling it; 'close' still reports the end.
      if (child.pid === undefined)
        finish({
          ended: 'spawn-error',
          code: null,
          signal: null,
          error: `${error.message} (in ${options.cwd})`,
        });
    });
    child.on('close', (code, signal) => {
      finish(grace !== undefined ? { ended: 'timeout', code, signal } : { ended: 'exit', code, signal });
    });
    // A command that never reads its input closes the pipe early (EPIPE): not an error of ours.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.input);
  });
}

function notStarted(error: string): CommandRun {
  return {
    ended: 'spawn-error',
    code: null,
    signal: null,
    error,
    stdout: '',
    stderr: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  };
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // No process group (Windows) or already gone: the child alone.
    child.kill('SIGKILL');
  }
}

/** Keeps the first {@link MAX_HOOK_OUTPUT_BYTES} of a stream and counts the rest. */
function capture(stream: Readable | null): { text: () => string; bytes: () => number } {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  stream?.on('data', (chunk: Buffer) => {
    total += chunk.length;
    if (keptBytes >= MAX_HOOK_OUTPUT_BYTES) return;
    // A copy: a slice would keep the whole chunk alive.
    const part = Buffer.from(chunk.subarray(0, MAX_HOOK_OUTPUT_BYTES - keptBytes));
    kept.push(part);
    keptBytes += part.length;
  });
  return { text: () => Buffer.concat(kept).toString('utf8'), bytes: () => total };
}

/** A command's end as an outcome: exit 0 pass, exit 1 fail, anything else inconclusive with why. */
export function commandResult(run: CommandRun, timeoutMs: number): OutcomeResult {
  if (run.ended === 'spawn-error')
    return { status: 'inconclusive', message: `could not start: ${run.error}` };
  if (run.ended === 'timeout') return { status: 'inconclusive', message: `timed out after ${timeoutMs} ms` };
  if (run.code === 0) return { status: 'pass' };
  if (run.code === 1) {
    const said = firstLine(run.stdout) ?? firstLine(run.stderr);
    return { status: 'fail', message: said ?? 'exited 1 with no output' };
  }
  const said = firstLine(run.stderr) ?? firstLine(run.stdout);
  const how =
    run.code === null
      ? `killed by ${run.signal ?? 'a signal'}`
      : run.code === 127
        ? 'could not start: exit 127 (command not found)'
        : run.code === 126
          ? 'could not start: exit 126 (not executable)'
          : `exited ${run.code} (${signalOf(run.code) ?? '0 passes, 1 fails'})`;
  return { status: 'inconclusive', message: said === undefined ? how : `${how}: ${said}` };
}

/** `killed by SIGTERM` for a shell's 128+N exit status, where N is a signal's number. */
function signalOf(code: number): string | undefined {
  if (code <= 128) return undefined;
  const name = Object.entries(constants.signals).find(([, number]) => number === code - 128)?.[0];
  return name === undefined ? undefined : `killed by ${name}`;
}

/** The first line with something on it, trimmed and bounded. */
function firstLine(text: string): string | undefined {
  const line = text.split(/\r?\n/).find((candidate) => candidate.trim() !== '');
  return line === undefined ? undefined : capMessage(line.trim());
}
