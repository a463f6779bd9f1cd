/**
 * The main job, shared by `toolpath eval` and the demo: stored trace texts and scenarios in,
 * reports out. Pure apart from nothing: callers do the reading and the printing.
 */
import { basename } from 'node:path';
import { evaluate } from '../evaluate/evaluate.js';
import type { Report, ReportSummary } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import { normalizeSpans } from '../normalizers/normalize.js';
import { trajectoryFromTypedEvents } from '../normalizers/typed-events.js';
import type { Scenario } from '../scenario/scenario.js';
import { type InputError, readStoredTraces } from './read-traces.js';

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

/** What one evaluation run produced. */
export interface EvalRun {
  reports: SourcedReport[];
  errors: InputError[];
  summary: ReportSummary;
}

/**
 * Reads every input, normalizes each trace, evaluates it against every scenario. An input
 * with errors is reported and skipped whole (a verdict on half a trace would mislead); the
 * other inputs are still evaluated.
 */
export function runEval(inputs: readonly StoredText[], scenarios: readonly Scenario[]): EvalRun {
  const reports: SourcedReport[] = [];
  const errors: InputError[] = [];
  let traces = 0;
  for (const { source, text } of inputs) {
    const read = readStoredTraces(text, source);
    if (read.errors.length > 0 || !read.input) {
      errors.push(...read.errors);
      continue;
    }
    const trajectories = trajectoriesOf(read.input, source);
    traces += read.input.format === 'typed-events' ? 1 : new Set(read.input.spans.map((s) => s.traceId)).size;
    for (const trajectory of trajectories) {
      for (const scenario of scenarios) reports.push({ source, report: evaluate(trajectory, scenario) });
    }
  }
  return { reports, errors, summary: summarize(traces, reports) };
}

function trajectoriesOf(
  input: NonNullable<ReturnType<typeof readStoredTraces>['input']>,
  source: string,
): Trajectory[] {
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

/** Exit status of a run: 2 on any input error, else 1 when any evaluation did not pass, else 0. */
export function exitCodeOf(run: EvalRun): 0 | 1 | 2 {
  if (run.errors.length > 0) return 2;
  return run.summary.passed === run.summary.evaluated ? 0 : 1;
}
