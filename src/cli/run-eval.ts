/**
 * The main job, shared by `toolpath eval` and the demo: stored trace texts and scenarios in,
 * reports out. Callers do the reading and the printing; the only effect here is running the
 * outcome hooks' commands, in {@link runEvalWithOutcomes}.
 */
import { basename } from 'node:path';
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import type { Report, ReportSummary } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import { normalizeSpans } from '../normalizers/normalize.js';
import { trajectoryFromTypedEvents } from '../normalizers/typed-events.js';
import type { Scenario } from '../scenario/scenario.js';
import { evaluateWithOutcomes, type OutcomeHookOptions } from './outcome-runner.js';
import { type InputError, readStoredTraces, type StoredInput } from './read-traces.js';

/** One stored input: where it came from (a path, or `-` for stdin) and its text. */
export interface StoredText {
  source: string;
  text: string;
}

/** A report with the input it was made from, for printing. */
export interface SourcedReport {
  source: string;
  report: Report;
}

/** A trace no scenario applied to (by `appliesTo`): counted in `summary.traces`, not evaluated. */
export interface UnmatchedTrace {
  source: string;
  traceId: string;
}

/** What one evaluation run produced. */
export interface EvalRun {
  reports: SourcedReport[];
  errors: InputError[];
  summary: ReportSummary;
  /** Traces no scenario applied to, so that "nothing was evaluated" is never silent. */
  unmatched?: UnmatchedTrace[];
}

/**
 * Reads every input, normalizes each trace, evaluates it against every scenario that applies
 * to it (`appliesTo`). An input with errors is reported and skipped whole (a verdict on half a
 * trace would mislead); the other inputs are still evaluated. A trace no scenario applies to is
 * counted in `summary.traces` and listed in `unmatched`, with no report. Outcome hooks are not
 * run here (they are inconclusive): {@link runEvalWithOutcomes} runs them.
 */
export function runEval(inputs: readonly StoredText[], scenarios: readonly Scenario[]): EvalRun {
  const tally = newTally();
  const reports: SourcedReport[] = [];
  for (const { source, trajectory, scenario } of evaluations(inputs, scenarios, tally)) {
    try {
      reports.push({ source, report: evaluate(trajectory, scenario) });
    } catch (error) {
      tally.errors.push(evaluationError(source, trajectory, scenario, error));
    }
  }
  return {
    reports,
    errors: tally.errors,
    summary: summarize(tally.traces, reports),
    unmatched: tally.unmatched,
  };
}

/**
 * {@link runEval}, running each scenario's outcome hooks for every trace it evaluates, one
 * evaluation after another (a hook checks shared state: a ledger, an outbox).
 */
export async function runEvalWithOutcomes(
  inputs: readonly StoredText[],
  scenarios: readonly Scenario[],
  hooks: OutcomeHookOptions = {},
  onInput?: (done: number, total: number, source: string) => void,
): Promise<EvalRun> {
  const tally = newTally();
  const reports: SourcedReport[] = [];
  for (const { source, trajectory, scenario } of evaluations(inputs, scenarios, tally, onInput)) {
    try {
      reports.push({ source, report: await evaluateWithOutcomes(trajectory, scenario, hooks) });
    } catch (error) {
      tally.errors.push(evaluationError(source, trajectory, scenario, error));
    }
  }
  return {
    reports,
    errors: tally.errors,
    summary: summarize(tally.traces, reports),
    unmatched: tally.unmatched,
  };
}

/**
 * An evaluation that threw (a pathological input, e.g. arguments nested thousands deep) is an
 * error of that input alone: the other traces and inputs are still evaluated, and the run exits 2.
 */
function evaluationError(
  source: string,
  trajectory: Trajectory,
  scenario: Scenario,
  error: unknown,
): InputError {
  const why = error instanceof Error ? error.message : String(error);
  return {
    source,
    message: `could not evaluate trace ${trajectory.traceId} against scenario ${scenario.id}: ${why}`,
  };
}

/** What reading the inputs found besides the evaluations to make. */
interface Tally {
  errors: InputError[];
  unmatched: UnmatchedTrace[];
  traces: number;
}

function newTally(): Tally {
  return { errors: [], unmatched: [], traces: 0 };
}

/** Each (trace, applicable scenario) pair, input by input; errors and unmatched traces go to `tally`. */
function* evaluations(
  inputs: readonly StoredText[],
  scenarios: readonly Scenario[],
  tally: Tally,
  onInput?: (done: number, total: number, source: string) => void,
): Generator<{ source: string; trajectory: Trajectory; scenario: Scenario }> {
  for (const [index, { source, text }] of inputs.entries()) {
    onInput?.(index, inputs.length, source);
    const read = readStoredTraces(text, source);
    if (read.errors.length > 0 || !read.input) {
      tally.errors.push(...read.errors);
      continue;
    }
    let trajectories: Trajectory[];
    try {
      trajectories = trajectoriesOf(read.input, source);
    } catch (error) {
      tally.errors.push({ source, message: `could not read its trajectory: ${(error as Error).message}` });
      continue;
    }
    tally.traces +=
      read.input.format === 'typed-events' ? 1 : new Set(read.input.spans.map((s) => s.traceId)).size;
    for (const trajectory of trajectories) {
      const applicable = scenarios.filter((scenario) => appliesTo(scenario, trajectory));
      if (applicable.length === 0) tally.unmatched.push({ source, traceId: trajectory.traceId });
      for (const scenario of applicable) yield { source, trajectory, scenario };
    }
  }
}

/** The trajectories of what a stored file held: its traces, or one for a typed-event list (named after the file). */
export function trajectoriesOf(input: StoredInput, source: string): Trajectory[] {
  if (input.format === 'typed-events') {
    const name = source === '-' ? 'stdin' : basename(source);
    return [trajectoryFromTypedEvents(`typed-events:${name}`, input.events, name)];
  }
  return normalizeSpans(input.spans);
}

function summarize(traces: number, reports: readonly SourcedReport[]): ReportSummary {
  const count = (verdict: Report['verdict']) =>
    reports.filter(({ report }) => report.verdict === verdict).length;
  return {
    traces,
    evaluated: reports.length,
    passed: count('pass'),
    failed: count('fail'),
    inconclusive: count('inconclusive'),
  };
}

/** Exit status of a run: 2 on any input error, else 1 when any evaluation did not pass or nothing was evaluated, else 0. */
export function exitCodeOf(run: EvalRun): 0 | 1 | 2 {
  if (run.errors.length > 0) return 2;
  // Traces but no evaluation at all (no scenario applied): a gate must not pass on nothing.
  if (run.summary.evaluated === 0 && run.summary.traces > 0) return 1;
  return run.summary.passed === run.summary.evaluated ? 0 : 1;
}
