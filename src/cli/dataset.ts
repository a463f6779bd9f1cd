/**
 * Datasets: JSON Lines, one row per line, `{id, traces, trials?, assertions}`. A row's `traces`
 * (files or globs, relative to the dataset file) are one conversation; `trials` (a list of such
 * lists) are repeated runs of the same task; `assertions` are trajectory-assertion JSON keys or a native scenario
 * for that row. Reading is pure ({@link parseDataset}); finding the files a glob names is
 * {@link resolveDatasetFiles}.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { describeValue } from '../scenario/assertions.js';
import { parseScenario, type Scenario, ScenarioError } from '../scenario/scenario.js';

/** One row, read: its trials as lists of file patterns (a row with `traces` has one trial). */
export interface DatasetRow {
  id: string;
  /** 1-based line of the row in the dataset file, for messages. */
  line: number;
  /** Each trial's files or globs, as written. */
  trials: string[][];
  /** Whether the row lists `trials` (its trials are then counted one by one). */
  listsTrials: boolean;
  /** The row's assertions as a scenario; its id is the assertions' `id`, else the dataset's name. */
  scenario: Scenario;
  /** The assertions as written, for writing the row back. */
  assertions: Record<string, unknown>;
}

/** A dataset that cannot be used: one line per problem, each naming the file and line. */
export class DatasetError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'DatasetError';
    this.problems = problems;
  }
}

/** More problems than this are summarized: the first ones are what a user fixes first. */
const MAX_PROBLEMS = 20;

/**
 * Reads a dataset's text. `source` names it in messages and, without an `id` in a row's
 * assertions, names the scenario (its base name). Throws {@link DatasetError} listing every
 * problem: a line that is not a JSON object, a field missing or of the wrong type, an id given
 * twice, assertions that do not load, two rows of one scenario with different gates.
 */
export function parseDataset(text: string, source: string): DatasetRow[] {
  const problems: string[] = [];
  const rows: DatasetRow[] = [];
  const seen = new Map<string, number>();
  text.split('\n').forEach((raw, index) => {
    if (raw.trim() === '') return;
    const line = index + 1;
    const at = `dataset ${source}:${line}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      problems.push(`${at}: not valid JSON (${(error as Error).message}); expected one row per line`);
      return;
    }
    const row = readRow(value, source, at, line, problems);
    if (!row) return;
    const first = seen.get(row.id);
    if (first !== undefined) {
      problems.push(
        `${at}: row id ${JSON.stringify(row.id)} is already used on line ${first}; give each row its own id`,
      );
      return;
    }
    seen.set(row.id, line);
    rows.push(row);
  });
  if (problems.length === 0 && rows.length === 0)
    problems.push(`dataset ${source}: no rows; expected one {"id", "traces", "assertions"} object per line`);
  if (problems.length === 0) problems.push(...gateConflicts(rows, source));
  if (problems.length > 0) {
    const shown =
      problems.length > MAX_PROBLEMS
        ? [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more problems`]
        : problems;
    throw new DatasetError(shown);
  }
  return rows;
}

const ROW_KEYS = ['id', 'traces', 'trials', 'assertions'];

function readRow(
  value: unknown,
  source: string,
  at: string,
  line: number,
  problems: string[],
): DatasetRow | undefined {
  if (!isObject(value)) {
    problems.push(`${at}: expected a row object {"id", "traces", "assertions"}; got ${describeValue(value)}`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(value))
    if (!ROW_KEYS.includes(key))
      problems.push(`${at}: unknown key ${JSON.stringify(key)}; a row has ${ROW_KEYS.join(', ')}`);
  const { id, traces, trials, assertions } = value;
  if (typeof id !== 'string' || id === '') {
    problems.push(
      `${at}: id: expected a non-empty string; ${id === undefined ? 'the key is missing' : `got ${describeValue(id)}`}`,
    );
    return undefined;
  }
  const where = `${at}: row ${JSON.stringify(id)}`;
  let list: string[][] = [];
  if ((traces === undefined) === (trials === undefined)) {
    problems.push(
      traces === undefined
        ? `${where}: give traces (the files or globs of one run) or trials (a list of such lists)`
        : `${where}: give traces (one run) or trials (several runs of the task), not both`,
    );
  } else if (traces !== undefined) {
    const files = fileList(traces, `${where}: traces`, problems);
    if (files) list = [files];
  } else if (!Array.isArray(trials) || trials.length === 0) {
    problems.push(
      `${where}: trials: expected a non-empty list of runs, each a list of files or globs; got ${describeValue(trials)}`,
    );
  } else {
    trials.forEach((trial, index) => {
      const files = fileList(trial, `${where}: trials[${index}]`, problems);
      if (files) list.push(files);
    });
  }
  if (!isObject(assertions)) {
    problems.push(
      `${where}: assertions: expected an object of trajectory-assertion JSON or a native scenario; ${assertions === undefined ? 'the key is missing' : `got ${describeValue(assertions)}`}`,
    );
    return undefined;
  }
  let scenario: Scenario;
  try {
    // The dataset file as the source: a scenario without an id is named after the dataset.
    scenario = parseScenario(assertions, source);
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error;
    for (const problem of error.problems) problems.push(`${where}: assertions: ${problem}`);
    return undefined;
  }
  if (problems.length > before) return undefined;
  return { id, line, trials: list, listsTrials: trials !== undefined, scenario, assertions };
}

function fileList(value: unknown, where: string, problems: string[]): string[] | undefined {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((item) => typeof item === 'string' && item !== '')
  ) {
    problems.push(
      `${where}: expected a non-empty list of files or globs (strings); got ${describeValue(value)}`,
    );
    return undefined;
  }
  return value as string[];
}

/** Rows of one scenario id share one gate: two rows that give different ones are a mistake. */
function gateConflicts(rows: readonly DatasetRow[], source: string): string[] {
  const gates = new Map<string, { gate: string; line: number }>();
  const problems: string[] = [];
  for (const row of rows) {
    if (row.scenario.gate === undefined) continue;
    const gate = JSON.stringify(row.scenario.gate);
    const first = gates.get(row.scenario.id);
    if (!first) gates.set(row.scenario.id, { gate, line: row.line });
    else if (first.gate !== gate)
      problems.push(
        `dataset ${source}:${row.line}: row ${JSON.stringify(row.id)}: its gate ${gate} differs from line ${first.line}'s ${first.gate}; rows of scenario ${row.scenario.id} share one gate (give the same, or give it on one row)`,
      );
  }
  return problems;
}

/**
 * Each row's trials as the files they name, relative paths taken from the dataset's directory,
 * globs expanded (sorted). A glob that matches nothing is an error; a plain path is kept as is
 * (a file that cannot be read is then an input error of the run, named).
 */
export function resolveDatasetFiles(rows: readonly DatasetRow[], source: string): string[][][] {
  // Loaded here, not at the top: `toolpath eval` without a dataset never needs it.
  const { globSync, isDynamicPattern } = createRequire(import.meta.url)(
    'tinyglobby',
  ) as typeof import('tinyglobby');
  const base = dirname(resolve(source));
  const problems: string[] = [];
  const resolved = rows.map((row) =>
    row.trials.map((patterns, trialIndex) => {
      const files: string[] = [];
      patterns.forEach((pattern, index) => {
        const path = isAbsolute(pattern) ? pattern : resolve(base, pattern);
        if (!isDynamicPattern(pattern) || existsSync(path)) {
          files.push(path);
          return;
        }
        const matched = globSync(pattern, { cwd: base, absolute: true }).sort();
        if (matched.length === 0) {
          const field = row.listsTrials ? `trials[${trialIndex}][${index}]` : `traces[${index}]`;
          problems.push(
            `dataset ${source}:${row.line}: row ${JSON.stringify(row.id)}: ${field}: ${JSON.stringify(pattern)} matches no file (from ${base})`,
          );
        }
        files.push(...matched);
      });
      return [...new Set(files)];
    }),
  );
  if (problems.length > 0) throw new DatasetError(problems);
  return resolved;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
