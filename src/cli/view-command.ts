/**
 * `toolpath view TRACE [--trace ID] [--scenario FILE ...] [--out FILE]`: writes one
 * self-contained HTML page drawing the trace's trajectory as its causal DAG, with the findings
 * of the scenarios that apply to it highlighted on the calls they name.
 * Exit 0 when the page is written (whatever the verdicts: this is a picture, not a gate), 2 on
 * a usage or input error.
 */
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import type { Trajectory } from '../model/trajectory.js';
import { loadScenarioFile, type Scenario, ScenarioError } from '../scenario/scenario.js';
import { type CliIO, parsingUsage, UsageError } from './io.js';
import { formatInputError, readStoredTraces } from './read-traces.js';
import { trajectoriesOf } from './run-eval.js';
import { renderViewPage } from './view-html.js';

/** Usage text of `toolpath view`. */
export const VIEW_USAGE = `usage: toolpath view TRACE [--trace ID] [--scenario FILE ...] [--out FILE]

  TRACE           a stored trace file (any input toolpath eval reads)
  --trace, -t     the trace id to draw when the file holds several (default: the first)
  --scenario, -s  a scenario file (JSON or YAML); its findings are listed and the calls they
                  name highlighted; repeat for several (outcome hooks are not run)
  --out, -o       where to write the page (default: TRACE's name with .html, beside it)

writes one self-contained HTML file (no network): the turns in causal order, parallel calls
side by side, sub-agent runs under the call that started them; hover or click a call for its
arguments, result and outcome

exit status: 0 the page was written, 2 usage or input error
`;

/** Runs `toolpath view` with these arguments (after the word `view`); resolves to the exit code. */
export async function viewCommand(args: readonly string[], io: CliIO): Promise<number> {
  const options = parseViewArgs(args);
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
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return fail(`${options.input}: cannot read: ${reason}`);
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

interface ViewOptions {
  input: string;
  trace?: string;
  scenarios: string[];
  out?: string;
}

function parseViewArgs(args: readonly string[]): ViewOptions {
  const { values, positionals } = parsingUsage(() => parse(args));
  if (positionals.length === 0) throw new UsageError('missing TRACE: give one stored trace file');
  if (positionals.length > 1)
    throw new UsageError(`one TRACE at a time; got ${positionals.length}: ${positionals.join(' ')}`);
  const input = positionals[0] as string;
  if (input === '-') throw new UsageError('TRACE must be a file (the page is written beside it)');
  return {
    input,
    scenarios: values.scenario ?? [],
    ...(values.trace !== undefined && { trace: values.trace }),
    ...(values.out !== undefined && { out: values.out }),
  };
}

function parse(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      trace: { type: 'string', short: 't' },
      scenario: { type: 'string', short: 's', multiple: true },
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
