/**
 * `toolpath eval --scenario FILE [--scenario FILE ...] [--format pretty|json|junit] [--out FILE] INPUT...`
 * or `toolpath eval --dataset FILE`. Exit 2 on a usage, input or scenario error, whatever the
 * gates; else 1 when a scenario's gate is missed (without a gate: when one of its evaluations
 * did not pass); else 0. Input errors never stop the other inputs from being evaluated.
 */
import { type Judge, loadJudges } from '../judging/judges.js';
import type { Scenario } from '../scenario/scenario.js';
import { checkExpectations, type ExpectationCheck, isExpectationsFile } from './expectations.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';
import type { EvalRun } from './run-eval.js';

/** Usage text of `toolpath eval`. */
export const EVAL_USAGE = `usage: toolpath eval --scenario FILE [--scenario FILE ...] [--format pretty|json|junit|markdown] [--out FILE] [--expect] [--judges MODULE] INPUT...
       toolpath eval --dataset FILE [--format ...] [--out FILE]

  INPUT           stored traces: OTLP JSON (a request or an array of them), Collector file-exporter
                  JSON lines, or a list of typed call/result events; - reads stdin
  --scenario, -s  a scenario file (JSON or YAML); repeat for several
  --dataset, -d   a dataset (JSON lines, one row per line: {id, traces, trials?, assertions}); each
                  row's traces (files or globs, from the dataset's folder) judged by its assertions
  --format, -f    pretty (default), json, junit or markdown (a GitHub step summary)
  --out, -o       write the report there instead of stdout
  --judges        a module (.js, .mjs) whose default export lists judges: functions run after the
                  rules on the scenarios they name; their results are in the JSON report
  --expect        check each INPUT against the FILE.expected.json toolpath promote wrote beside
                  it (same verdict and findings) instead of pass or fail; inputs named
                  *.expected.json are those files and are not read as traces

each scenario gets a pass rate (passed / evaluated traces, or dataset rows' trials; inconclusive
is not passed) and is gated by its min_pass_rate (native: gate.minPassRate, gate.passK); without
a gate every evaluation must pass

a scenario's outcome hook commands run for every trace it evaluates, in the scenario file's
directory, with the report (JSON) on stdin: exit 0 passes, 1 fails, anything else is inconclusive

exit status: 2 usage, input or scenario error (whatever the gates); else 1 a gate was missed or
a scenario without a gate had an evaluation that did not pass (with --expect: an input did not
give what its expectations say); else 0
`;

const FORMATS = ['pretty', 'json', 'junit', 'markdown'] as const;
type Format = (typeof FORMATS)[number];

/** Runs `toolpath eval` with these arguments (after the word `eval`); resolves to the exit code. */
export async function evalCommand(args: readonly string[], io: CliIO): Promise<number> {
  const options = parseEvalArgs(args);
  // Imported here, not at the top: `toolpath eval --help` reads the usage without loading them.
  const [{ loadRunInputs }, { agentsSeen, exitCodeOf, runEvalWithOutcomes }, { formatInputError }] =
    await Promise.all([import('./run-inputs.js'), import('./run-eval.js'), import('../io/read-traces.js')]);
  const loaded = await loadRunInputs(options, io, 'eval');
  if (!loaded) return 2;
  const { scenarios, inputs, readErrors } = loaded;
  // Hook notes go to stderr as they happen: a hung check is seen before the report.
  const progress = progressLine(io, inputs.length);
  let judges: Judge[] | undefined;
  try {
    judges = options.judges === undefined ? undefined : await loadJudges(options.judges);
  } catch (error) {
    io.stderr(`toolpath eval: --judges: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  let judgeFailures = 0;
  const result = await runEvalWithOutcomes(
    inputs,
    scenarios,
    {
      ...(judges && { judges }),
      onJudgeFailure: (record) => {
        judgeFailures++;
        io.stderr(`toolpath eval: judge ${record.name} (scenario ${record.scenario}): ${record.error}\n`);
      },
      onProblem: ({ hook, scenarioId, traceId, message }) =>
        io.stderr(
          `toolpath eval: outcome hook ${hook} (scenario ${scenarioId}, trace ${traceId}): ${message}\n`,
        ),
    },
    progress.update,
  );
  progress.clear();
  if (judgeFailures > 0)
    io.stderr(
      `toolpath eval: ${judgeFailures} judge ${judgeFailures === 1 ? 'failure' : 'failures'}; the verdicts stand\n`,
    );
  const run: EvalRun = { ...result, errors: [...readErrors, ...result.errors] };
  const checks = options.expect ? await checkExpectations(options.inputs, run.reports, io) : [];
  // A scenario that judged nothing while others did is most often a typo in its appliesTo.
  if (run.summary.evaluated > 0) {
    const used = new Set(run.reports.map(({ report }) => report.scenario.id));
    const named = new Map<string, Scenario>();
    for (const scenario of [...scenarios, ...inputs.flatMap((input) => input.scenarios ?? [])])
      if (!named.has(scenario.id)) named.set(scenario.id, scenario);
    for (const scenario of named.values()) {
      if (!used.has(scenario.id)) {
        io.stderr(
          `toolpath eval: warning: scenario ${scenario.id} (${scenario.source}) applied to none of the traces; check its appliesTo${agentsSeen(run)}\n`,
        );
      }
    }
  }
  const text = await render(run, options.format, io.isTTY && !options.out);
  if (options.out) {
    await io.writeFile(options.out, text);
    const s = run.summary;
    const gated = s.scenarios.filter((scenario) => scenario.gate.gated);
    const missed = gated.filter((scenario) => !scenario.gate.met).length;
    const gates = gated.length === 0 ? '' : `; gates: ${gated.length - missed} met, ${missed} missed`;
    io.stderr(
      `toolpath eval: ${s.evaluated} evaluations (${s.passed} passed, ${s.failed} failed, ${s.inconclusive} inconclusive)${gates}; report written to ${options.out}\n`,
    );
  } else {
    io.stdout(text);
  }
  // Input errors go to stderr too, so they are seen even when stdout is a JSON or JUnit file.
  if (options.format !== 'pretty' || options.out) {
    for (const error of run.errors) io.stderr(`toolpath eval: ${formatInputError(error)}\n`);
  }
  if (!options.expect) return exitCodeOf(run);
  return expectationsOutcome(checks, run, io);
}

/** With --expect, the verdicts stand for themselves: the exit says whether each matched its expectations. */
function expectationsOutcome(checks: readonly ExpectationCheck[], run: EvalRun, io: CliIO): number {
  const missed = checks.filter((check) => check.problems.length > 0);
  for (const check of missed)
    io.stderr(
      `toolpath eval: ${check.source} does not give what ${check.expected} says:\n${check.problems.map((p) => `  ${p}\n`).join('')}`,
    );
  io.stderr(
    `toolpath eval: expectations: ${checks.length - missed.length} of ${checks.length} ${checks.length === 1 ? 'input' : 'inputs'} reproduced\n`,
  );
  if (run.errors.length > 0) return 2;
  return missed.length > 0 ? 1 : 0;
}

interface EvalOptions {
  expect: boolean;
  scenarios: string[];
  dataset?: string;
  format: Format;
  out?: string;
  /** A module exporting judges (its default or `judges` export). */
  judges?: string;
  inputs: string[];
}

function parseEvalArgs(args: readonly string[]): EvalOptions {
  const { values, positionals } = parse(args);
  const scenarios = values.scenario ?? [];
  if (values.dataset !== undefined) {
    if (scenarios.length > 0 || positionals.length > 0)
      throw new UsageError(
        '--dataset: its rows name their traces and assertions; give no --scenario or INPUT with it',
      );
  } else {
    if (scenarios.length === 0) throw new UsageError('missing --scenario FILE (or --dataset FILE)');
    if (positionals.length === 0)
      throw new UsageError('missing INPUT: give one or more trace files, or - for stdin');
  }
  const format = values.format ?? 'pretty';
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format: expected one of ${FORMATS.join(', ')}; got "${format}"`);
  }
  if (positionals.filter((p) => p === '-').length > 1)
    throw new UsageError('stdin (-) can be read only once');
  if (values.expect && values.dataset !== undefined)
    throw new UsageError('--expect checks fixture files; a dataset row states its own assertions');
  if (values.expect && positionals.includes('-'))
    throw new UsageError('--expect reads FILE.expected.json beside each input; stdin (-) has none');
  const inputs = values.expect ? positionals.filter((p) => !isExpectationsFile(p)) : positionals;
  if (values.expect && inputs.length === 0)
    throw new UsageError('--expect: every INPUT is an expectations file; give the fixtures too');
  return {
    expect: values.expect ?? false,
    scenarios,
    format: format as Format,
    inputs,
    ...(values.out && { out: values.out }),
    ...(values.judges !== undefined && { judges: values.judges }),
    ...(values.dataset !== undefined && { dataset: values.dataset }),
  };
}

function parse(args: readonly string[]) {
  return parseCommandLine({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      scenario: { type: 'string', short: 's', multiple: true },
      dataset: { type: 'string', short: 'd' },
      format: { type: 'string', short: 'f' },
      out: { type: 'string', short: 'o' },
      expect: { type: 'boolean' },
      judges: { type: 'string' },
    },
  });
}

async function render(run: EvalRun, format: Format, color: boolean): Promise<string> {
  if (format === 'json') return (await import('./format-json.js')).formatJson(run);
  if (format === 'junit') return (await import('./format-junit.js')).formatJunit(run);
  if (format === 'markdown') return (await import('./format-markdown.js')).formatMarkdown(run);
  return (await import('./format-pretty.js')).formatPretty(run, { color });
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
