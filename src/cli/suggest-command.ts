/**
 * `toolpath suggest [--bad FILE ...] [--format yaml|json] [--min-support N] [--margin PCT] INPUT...`
 * or `toolpath suggest --dataset FILE`: a first scenario per agent, mined from traces of good
 * runs. Exit 2 on a usage error or an input it cannot read (nothing is suggested from part of
 * the runs: a rule could fail the others); else 0.
 */
import type { InputError } from '../io/read-traces.js';
import type { SuggestRun } from '../suggest/runs.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';
import type { StoredText } from './run-eval.js';

/** Usage text of `toolpath suggest`. */
export const SUGGEST_USAGE = `usage: toolpath suggest [--bad FILE ...] [--format yaml|json] [--out DIR] [--min-support N] [--margin PCT] INPUT...
       toolpath suggest --dataset FILE [options]

  INPUT            traces of runs known to be good, in any format toolpath eval reads; - reads stdin
  --dataset, -d    a dataset (JSON lines); its rows' traces are the good runs
  --bad FILE       a trace of a run known to be bad; repeat for several. Each rule says which bad
                   runs it fails, and the bad runs no rule fails are listed
  --format, -f     yaml (default: one scenario per agent, each rule commented with its support)
                   or json
  --out DIR        write each agent's scenario to DIR/AGENT.scenario.yaml (or .json), a file
                   toolpath eval -s loads, and print the files written
  --min-support N  suggest only rules that had something to check in at least N runs (default 1)
  --margin PCT     call limits at the most seen plus PCT percent, rounded up (default 0)

prints one native scenario per root agent with appliesTo, holding only rules that passed on
every good run when evaluated: tools allowed and required, causal order (before pairs, terminal
tools), grounding of arguments in earlier results, constant arguments, call limits
`;

const FORMATS = ['yaml', 'json'] as const;
type Format = (typeof FORMATS)[number];

interface SuggestOptions {
  inputs: string[];
  dataset?: string;
  bad: string[];
  format: Format;
  out?: string;
  minSupport: number;
  marginPercent: number;
}

/** Runs `toolpath suggest` with these arguments (after the word `suggest`); resolves to the exit code. */
export async function suggestCommand(args: readonly string[], io: CliIO): Promise<number> {
  const options = parseSuggestArgs(args);
  const [{ loadRunInputs, readInputs }, { readStoredTraces, formatInputError }, { trajectoriesOf }] =
    await Promise.all([import('./run-inputs.js'), import('../io/read-traces.js'), import('./run-eval.js')]);
  const loaded = await loadRunInputs({ ...options, scenarios: [] }, io, 'suggest');
  if (!loaded) return 2;
  const badInputs = await readInputs(options.bad, io);
  const errors: InputError[] = [...loaded.readErrors, ...badInputs.readErrors];
  const toRuns = (inputs: readonly StoredText[]): SuggestRun[] =>
    inputs.flatMap(({ source, text }) => {
      const read = readStoredTraces(text, source);
      if (read.errors.length > 0 || !read.input) {
        errors.push(...read.errors);
        return [];
      }
      try {
        const trajectories = trajectoriesOf(read.input, source);
        if (trajectories.length === 0)
          errors.push({
            source,
            message: `no agent or tool spans recognized; run toolpath inspect ${source} to see what was read from each span`,
          });
        const typedEvents = read.input.format === 'typed-events';
        return trajectories.map((trajectory) => ({
          source,
          trajectory,
          ...(typedEvents && { typedEvents }),
        }));
      } catch (error) {
        errors.push({ source, message: `could not read its trajectory: ${(error as Error).message}` });
        return [];
      }
    });
  const good = toRuns(loaded.inputs);
  const bad = toRuns(badInputs.inputs);
  if (errors.length > 0) {
    for (const error of errors) io.stderr(`toolpath suggest: ${formatInputError(error)}\n`);
    // A rule mined from part of the good runs could fail the others; an unread bad run could go uncaught unseen.
    io.stderr('toolpath suggest: nothing suggested until every input reads\n');
    return 2;
  }
  if (good.length === 0) {
    io.stderr('toolpath suggest: the inputs hold no trace to learn from\n');
    return 2;
  }
  const [{ suggestScenarios }, { renderJson, renderYaml, runNamer, scenarioFiles }] = await Promise.all([
    import('../suggest/suggest.js'),
    import('../suggest/render.js'),
  ]);
  const suggestions = suggestScenarios(good, bad, options);
  const name = runNamer([...good, ...bad]);
  if (options.out === undefined)
    io.stdout(options.format === 'json' ? renderJson(suggestions, name) : renderYaml(suggestions, name));
  else if (!(await writeScenarioFiles(options.out, scenarioFiles(suggestions, name, options.format), io)))
    return 2;
  if (suggestions.truncatedValues > 0)
    io.stderr(
      `toolpath suggest: ${suggestions.truncatedValues} arguments or results had more fields than are mined; their other fields were not\n`,
    );
  for (const run of suggestions.unmatchedBad)
    io.stderr(
      `toolpath suggest: bad run ${name(run)}: no good run of its root agent, so no scenario applies to it\n`,
    );
  for (const agent of suggestions.agents)
    for (const run of agent.uncaught)
      io.stderr(
        `toolpath suggest: bad run ${name(run)}: no suggested rule fails it; write that rule by hand\n`,
      );
  return 0;
}

function parseSuggestArgs(args: readonly string[]): SuggestOptions {
  const { values, positionals } = parseCommandLine({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      dataset: { type: 'string', short: 'd' },
      bad: { type: 'string', multiple: true },
      format: { type: 'string', short: 'f' },
      'min-support': { type: 'string' },
      margin: { type: 'string' },
      out: { type: 'string', short: 'o' },
    },
  });
  if (values.dataset !== undefined && positionals.length > 0)
    throw new UsageError('--dataset: its rows name their traces; give no INPUT with it');
  if (values.dataset === undefined && positionals.length === 0)
    throw new UsageError('missing INPUT: give one or more trace files of good runs, or - for stdin');
  const bad = values.bad ?? [];
  if ([...positionals, ...bad].filter((p) => p === '-').length > 1)
    throw new UsageError('stdin (-) can be read only once');
  const format = values.format ?? 'yaml';
  if (!(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format: expected one of ${FORMATS.join(', ')}; got "${format}"`);
  return {
    inputs: positionals,
    ...(values.dataset !== undefined && { dataset: values.dataset }),
    bad,
    format: format as Format,
    ...(values.out !== undefined && { out: values.out }),
    minSupport: count(values['min-support'], '--min-support', 1, 1),
    marginPercent: count(values.margin, '--margin', 0, 0),
  };
}

/**
 * Writes the scenario files into `dir` (made when missing) and names each on stdout; false, having
 * said why, when one cannot be written. An existing file is not overwritten: it may be one edited by hand.
 */
async function writeScenarioFiles(
  dir: string,
  files: readonly { file: string; text: string }[],
  io: CliIO,
): Promise<boolean> {
  const { access, mkdir, writeFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  try {
    // Every name checked before any is written: nothing is written when one cannot be.
    for (const { file } of files) {
      const path = join(dir, file);
      const exists = await access(path).then(
        () => true,
        () => false,
      );
      if (exists) throw Object.assign(new Error('exists'), { code: 'EEXIST', path });
    }
    await mkdir(dir, { recursive: true });
    for (const { file, text } of files) {
      const path = join(dir, file);
      await writeFile(path, text, { flag: 'wx' });
      io.stdout(`${path}\n`);
    }
  } catch (error) {
    const { code, path } = error as NodeJS.ErrnoException;
    const why =
      code === 'EEXIST'
        ? 'exists already (not overwritten; move it or pick another --out)'
        : (error as Error).message;
    io.stderr(`toolpath suggest: --out ${dir}: ${path ?? dir} ${why}\n`);
    return false;
  }
  if (files.length === 0) io.stderr('toolpath suggest: no agent had a rule to write\n');
  return true;
}

/** A whole number option of at least `least`. */
function count(text: string | undefined, option: string, fallback: number, least: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < least)
    throw new UsageError(`${option}: expected a whole number of at least ${least}; got "${text}"`);
  return Number(text);
}
