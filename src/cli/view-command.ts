/**
 * `toolpath view TRACE [--trace ID] [--scenario FILE ...] [--out FILE]`: writes one
 * self-contained HTML page drawing the trace's trajectory as its causal DAG, with the findings
 * of the scenarios that apply to it highlighted on the calls they name. With two or more inputs
 * (or `--dataset`), one page for the run: pass rates, gates, a table of its traces or rows with
 * filters, each opening its DAG.
 * Exit 0 when the page is written (whatever the verdicts: this is a picture, not a gate), 2 on
 * a usage or input error (a run page is still written, listing what could not be read).
 */
import { basename, dirname, join } from 'node:path';
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import { formatInputError, readStoredTraces } from '../io/read-traces.js';
import type { Trajectory } from '../model/trajectory.js';
import { describeReadError } from '../scenario/read-error.js';
import { loadScenarioFile, type Scenario, ScenarioError } from '../scenario/scenario.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';
import { runEval, trajectoriesOf } from './run-eval.js';
import { loadRunInputs } from './run-inputs.js';
import { renderViewPage } from './view-html.js';
import { type RunPageTrace, renderRunPage } from './view-run-html.js';

/** Usage text of `toolpath view`. */
export const VIEW_USAGE = `usage: toolpath view TRACE [--trace ID] [--scenario FILE ...] [--out FILE]
       toolpath view INPUT INPUT... [--scenario FILE ...] [--out FILE]
       toolpath view --dataset FILE [--out FILE]

  TRACE, INPUT    a stored trace file (any input toolpath eval reads)
  --trace, -t     the trace id to draw when the file holds several (default: the first)
  --scenario, -s  a scenario file (JSON or YAML); its findings are listed and the calls they
                  name highlighted; repeat for several (outcome hooks are not run)
  --dataset, -d   a dataset, as toolpath eval --dataset reads it: one page for its rows
  --out, -o       where to write the page (default: TRACE's name with .html beside it; for a
                  run, toolpath-run.html beside the first input or the dataset)

one TRACE: one self-contained HTML file (no network): the turns in causal order, parallel calls
side by side, sub-agent runs under the call that started them; hover or click a call for its
arguments, result and outcome

two or more INPUTs, or --dataset: one self-contained page for the run: each scenario's pass rate
and gate, a table of the traces (or dataset rows) by scenario with their verdicts, filters by
scenario, verdict and text; a row opens the DAG of its traces

exit status: 0 the page was written, 2 usage or input error
`;

/** Runs `toolpath view` with these arguments (after the word `view`); resolves to the exit code. */
export async function viewCommand(args: readonly string[], io: CliIO): Promise<number> {
  const options = parseViewArgs(args);
  if (options.dataset !== undefined || options.inputs.length > 1) return viewRun(options, io);
  const fail = (message: string) => {
    io.stderr(`toolpath view: ${message}\n`);
    return 2;
  };

  const scenarios: Scenario[] = [];
  for (const path of options.scenarios) {
    try {
      scenarios.push(await loadScenarioFile(path));
    } catch (error) {
      if (!(error instanceof ScenarioError)) throw error;
      return fail(error.message);
    }
  }

  let text: string;
  try {
    text = await io.readFile(options.input);
  } catch (error) {
    return fail(describeReadError(error, options.input));
  }
  const read = readStoredTraces(text, options.input);
  if (read.errors.length > 0 || !read.input) {
    for (const error of read.errors) io.stderr(`toolpath view: ${formatInputError(error)}\n`);
    return 2;
  }
  const trajectories = trajectoriesOf(read.input, options.input);
  const trajectory = pickTrace(trajectories, options.trace);
  if (typeof trajectory === 'string') return fail(`${options.input}: ${trajectory}`);

  const reports = scenarios
    .filter((scenario) => appliesTo(scenario, trajectory))
    .map((scenario) => evaluate(trajectory, scenario));
  const out = options.out ?? defaultOut(options.input);
  try {
    await io.writeFile(out, renderViewPage(trajectory, reports, { source: options.input }));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return fail(`${out}: cannot write: ${reason}`);
  }
  const findings = reports.reduce((sum, report) => sum + report.findings.length, 0);
  const judged =
    scenarios.length === 0
      ? ''
      : reports.length === 0
        ? '; no scenario applies to this trace'
        : `; ${reports.length} evaluation${reports.length > 1 ? 's' : ''}, ${findings} finding${findings === 1 ? '' : 's'}`;
  io.stdout(
    `toolpath view: trace ${trajectory.traceId} (${trajectory.calls.length} calls${judged}) written to ${out}\n`,
  );
  return 0;
}

/** The run page: every input (or the dataset's rows) judged as `toolpath eval` would, on one page. */
async function viewRun(options: ViewOptions, io: CliIO): Promise<number> {
  const loaded = await loadRunInputs(options, io, 'view');
  if (!loaded) return 2;
  const { scenarios, inputs, readErrors } = loaded;
  const traces: RunPageTrace[] = [];
  const result = runEval(inputs, scenarios, {
    onTrajectory: (source, trajectory) => traces.push({ source, trajectory }),
  });
  const run = { ...result, errors: [...readErrors, ...result.errors] };
  const first = options.dataset ?? (options.inputs[0] as string);
  const out = options.out ?? join(dirname(first), 'toolpath-run.html');
  const title =
    options.dataset !== undefined ? `dataset ${options.dataset}` : `${options.inputs.length} inputs`;
  try {
    await io.writeFile(out, renderRunPage(run, traces, { title }));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    io.stderr(`toolpath view: ${out}: cannot write: ${reason}\n`);
    return 2;
  }
  for (const error of run.errors) io.stderr(`toolpath view: ${formatInputError(error)}\n`);
  const s = run.summary;
  io.stdout(
    `toolpath view: run of ${traces.length} traces (${s.evaluated} evaluations in ${s.scenarios.length} scenarios) written to ${out}\n`,
  );
  return run.errors.length > 0 ? 2 : 0;
}

interface ViewOptions {
  inputs: string[];
  input: string;
  trace?: string;
  scenarios: string[];
  dataset?: string;
  out?: string;
}

function parseViewArgs(args: readonly string[]): ViewOptions {
  const { values, positionals } = parse(args);
  if (values.dataset !== undefined) {
    if (positionals.length > 0 || values.scenario !== undefined)
      throw new UsageError(
        '--dataset: its rows name their traces and assertions; give no --scenario or INPUT with it',
      );
  } else if (positionals.length === 0) throw new UsageError('missing TRACE: give one stored trace file');
  if (positionals.length + (values.dataset === undefined ? 0 : 1) > 1 && values.trace !== undefined)
    throw new UsageError('--trace picks a trace of one TRACE; the page for a run shows every trace');
  if (positionals.includes('-')) throw new UsageError('TRACE must be a file (the page is written beside it)');
  return {
    inputs: positionals,
    input: positionals[0] ?? '',
    scenarios: values.scenario ?? [],
    ...(values.trace !== undefined && { trace: values.trace }),
    ...(values.out !== undefined && { out: values.out }),
    ...(values.dataset !== undefined && { dataset: values.dataset }),
  };
}

function parse(args: readonly string[]) {
  return parseCommandLine({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      trace: { type: 'string', short: 't' },
      scenario: { type: 'string', short: 's', multiple: true },
      dataset: { type: 'string', short: 'd' },
      out: { type: 'string', short: 'o' },
    },
  });
}

/** The trajectory to draw, or what is wrong (no trace, unknown id). */
function pickTrace(trajectories: readonly Trajectory[], traceId: string | undefined): Trajectory | string {
  if (trajectories.length === 0) return 'no trace with tool calls or agent spans found';
  if (traceId === undefined) return trajectories[0] as Trajectory;
  const found = trajectories.find((trajectory) => trajectory.traceId === traceId);
  if (found) return found;
  const ids = trajectories.map((trajectory) => trajectory.traceId);
  return `no trace "${traceId}"; the file holds ${ids.join(', ')}`;
}

/** `traces/run.otlp.json` → `traces/run.otlp.html`: the last extension replaced. */
function defaultOut(input: string): string {
  const name = basename(input);
  const dot = name.lastIndexOf('.');
  return join(dirname(input), `${dot > 0 ? name.slice(0, dot) : name}.html`);
}
