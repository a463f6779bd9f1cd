/**
 * `toolpath eval --scenario FILE [--scenario FILE ...] [--format pretty|json|junit] [--out FILE] INPUT...`
 * Exit 0 when every evaluation passes, 1 when any fails (or cannot be decided), 2 on a usage
 * or input error. Input errors never stop the other inputs from being evaluated.
 */
import { parseArgs } from 'node:util';
import { loadScenarioFile, type Scenario, ScenarioError } from '../scenario/scenario.js';
import { formatJson } from './format-json.js';
import { formatJunit } from './format-junit.js';
import { formatMarkdown } from './format-markdown.js';
import { formatPretty } from './format-pretty.js';
import { type CliIO, parsingUsage, UsageError } from './io.js';
import { formatInputError, type InputError } from './read-traces.js';
import { type EvalRun, exitCodeOf, runEvalWithOutcomes, type StoredText } from './run-eval.js';

/** Usage text of `toolpath eval`. */
export const EVAL_USAGE = `usage: toolpath eval --scenario FILE [--scenario FILE ...] [--format pretty|json|junit|markdown] [--out FILE] INPUT...

  INPUT           stored traces: OTLP JSON (a request or an array of them), Collector file-exporter
                  JSON lines, or a list of typed call/result events; - reads stdin
  --scenario, -s  a scenario file (JSON or YAML); repeat for several
  --format, -f    pretty (default), json, junit or markdown (a GitHub step summary)
  --out, -o       write the report there instead of stdout

a scenario's outcome hook commands run for every trace it evaluates, in the scenario file's
directory, with the report (JSON) on stdin: exit 0 passes, 1 fails, anything else is inconclusive

exit status: 0 every evaluation passed, 1 one failed or was inconclusive, 2 usage or input error
`;

const FORMATS = ['pretty', 'json', 'junit', 'markdown'] as const;
type Format = (typeof FORMATS)[number];

/** Runs `toolpath eval` with these arguments (after the word `eval`); resolves to the exit code. */
export async function evalCommand(args: readonly string[], io: CliIO): Promise<number> {
  const options = parseEvalArgs(args);
  const scenarios = await loadScenarios(options.scenarios, io);
  if (!scenarios) return 2;

  const inputs: StoredText[] = [];
  const readErrors: InputError[] = [];
  for (const source of options.inputs) {
    try {
      inputs.push({ source, text: source === '-' ? await io.readStdin() : await io.readFile(source) });
    } catch (error) {
      readErrors.push({
        source,
        message: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      });
    }
  }
  // Hook notes go to stderr as they happen: a hung check is seen before the report.
  const progress = progressLine(io, inputs.length);
  const result = await runEvalWithOutcomes(
    inputs,
    scenarios,
    {
      onProblem: ({ hook, scenarioId, traceId, message }) =>
        io.stderr(
          `toolpath eval: outcome hook ${hook} (scenario ${scenarioId}, trace ${traceId}): ${message}\n`,
        ),
    },
    progress.update,
  );
  progress.clear();
  const run: EvalRun = { ...result, errors: [...readErrors, ...result.errors] };
  // A scenario that judged nothing while others did is most often a typo in its appliesTo.
  if (run.summary.evaluated > 0) {
    const used = new Set(run.reports.map(({ report }) => report.scenario.id));
    for (const scenario of scenarios) {
      if (!used.has(scenario.id)) {
        io.stderr(
          `toolpath eval: warning: scenario ${scenario.id} (${scenario.source}) applied to none of the traces; check its appliesTo\n`,
        );
      }
    }
  }
  const text = render(run, options.format, io.isTTY && !options.out);
  if (options.out) {
    await io.writeFile(options.out, text);
    const s = run.summary;
    io.stderr(
      `toolpath eval: ${s.evaluated} evaluations (${s.passed} passed, ${s.failed} failed, ${s.inconclusive} inconclusive); report written to ${options.out}\n`,
    );
  } else {
    io.stdout(text);
  }
  // Input errors go to stderr too, so they are seen even when stdout is a JSON or JUnit file.
  if (options.format !== 'pretty' || options.out) {
    for (const error of run.errors) io.stderr(`toolpath eval: ${formatInputError(error)}\n`);
  }
  return exitCodeOf(run);
}

interface EvalOptions {
  scenarios: string[];
  format: Format;
  out?: string;
  inputs: string[];
}

function parseEvalArgs(args: readonly string[]): EvalOptions {
  const { values, positionals } = parsingUsage(() => parse(args));
  const scenarios = values.scenario ?? [];
  if (scenarios.length === 0) throw new UsageError('missing --scenario FILE');
  if (positionals.length === 0)
    throw new UsageError('missing INPUT: give one or more trace files, or - for stdin');
  const format = values.format ?? 'pretty';
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format: expected one of ${FORMATS.join(', ')}; got "${format}"`);
  }
  if (positionals.filter((p) => p === '-').length > 1)
    throw new UsageError('stdin (-) can be read only once');
  return { scenarios, format: format as Format, inputs: positionals, ...(values.out && { out: values.out }) };
}

function parse(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      scenario: { type: 'string', short: 's', multiple: true },
      format: { type: 'string', short: 'f' },
      out: { type: 'string', short: 'o' },
    },
  });
}

async function loadScenarios(paths: readonly string[], io: CliIO): Promise<Scenario[] | undefined> {
  const scenarios: Scenario[] = [];
  let failed = false;
  for (const path of paths) {
    try {
      scenarios.push(await loadScenarioFile(path));
    } catch (error) {
      if (!(error instanceof ScenarioError)) throw error;
      io.stderr(`toolpath eval: ${error.message}\n`);
      failed = true;
    }
  }
  return failed ? undefined : scenarios;
}

function render(run: EvalRun, format: Format, color: boolean): string {
  if (format === 'json') return formatJson(run);
  if (format === 'junit') return formatJunit(run);
  if (format === 'markdown') return formatMarkdown(run);
  return formatPretty(run, { color });
}

/** Inputs from which a run shows progress: below this a run is over before a line would help. */
const PROGRESS_FROM = 20;

/**
 * Progress on stderr for long runs, rewritten in place, only on a terminal: CI logs and piped
 * output stay quiet, and the line is cleared before the report is printed.
 */
function progressLine(
  io: CliIO,
  total: number,
): { update?: (done: number, total: number, source: string) => void; clear: () => void } {
  if (!io.stderrIsTTY || total < PROGRESS_FROM) return { clear: () => {} };
  let shown = false;
  return {
    update: (done, all, source) => {
      io.stderr(`\r\u001b[2Ktoolpath eval: ${done + 1}/${all} ${source}`);
      shown = true;
    },
    clear: () => {
      if (shown) io.stderr('\r\u001b[2K');
    },
  };
}
