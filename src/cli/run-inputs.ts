/**
 * What `toolpath eval` and `toolpath view` read before a run: scenario files, stored trace
 * files, or a dataset's rows as inputs. Problems are written to stderr as `toolpath COMMAND: ...`.
 */

import type { InputError } from '../io/read-traces.js';
import { describeReadError } from '../scenario/read-error.js';
import { loadScenarioFile, type Scenario, ScenarioError } from '../scenario/scenario.js';
import { DatasetError, parseDataset, resolveDatasetFiles } from './dataset.js';
import type { CliIO } from './io.js';
import type { StoredText } from './run-eval.js';

/** Loads every scenario file; on any problem, says so on stderr and resolves to undefined. */
export async function loadScenarios(
  paths: readonly string[],
  io: CliIO,
  command: string,
): Promise<Scenario[] | undefined> {
  const scenarios: Scenario[] = [];
  let failed = false;
  for (const path of paths) {
    try {
      scenarios.push(await loadScenarioFile(path));
    } catch (error) {
      if (!(error instanceof ScenarioError)) throw error;
      io.stderr(`toolpath ${command}: ${error.message}\n`);
      failed = true;
    }
  }
  return failed ? undefined : scenarios;
}

/** Reads each input; one that cannot be read is an error of its own, the others still read. */
export async function readInputs(
  sources: readonly string[],
  io: CliIO,
  extra: Omit<StoredText, 'source' | 'text'> = {},
  // A dataset may name one file in several rows: read it once.
  texts = new Map<string, Promise<string>>(),
): Promise<{ inputs: StoredText[]; readErrors: InputError[] }> {
  const inputs: StoredText[] = [];
  const readErrors: InputError[] = [];
  for (const source of sources) {
    try {
      let text = texts.get(source);
      if (!text) {
        text = source === '-' ? io.readStdin() : io.readFile(source);
        texts.set(source, text);
      }
      inputs.push({ source, text: await text, ...extra });
    } catch (error) {
      readErrors.push({
        source,
        message:
          source === '-'
            ? `cannot read stdin: ${(error as Error).message}`
            : describeReadError(error, source),
      });
    }
  }
  return { inputs, readErrors };
}

/**
 * A dataset's rows as inputs: every file of every trial of every row, each carrying its row,
 * its trial (when the row lists trials) and the row's scenario. Problems with the dataset
 * itself go to stderr; the run then does not start (undefined).
 */
export async function loadDataset(
  path: string,
  io: CliIO,
  command: string,
): Promise<{ scenarios: Scenario[]; inputs: StoredText[]; readErrors: InputError[] } | undefined> {
  let text: string;
  try {
    text = await io.readFile(path);
  } catch (error) {
    io.stderr(`toolpath ${command}: dataset: ${describeReadError(error, path)}\n`);
    return undefined;
  }
  try {
    const rows = parseDataset(text, path);
    const files = resolveDatasetFiles(rows, path);
    const inputs: StoredText[] = [];
    const readErrors: InputError[] = [];
    const texts = new Map<string, Promise<string>>();
    for (const [index, row] of rows.entries()) {
      for (const [trial, sources] of (files[index] ?? []).entries()) {
        const unit = { row: row.id, ...(row.listsTrials && { trial: trial + 1 }), scenarios: [row.scenario] };
        const read = await readInputs(sources, io, unit, texts);
        inputs.push(...read.inputs);
        readErrors.push(
          ...read.readErrors.map((error) => ({ ...error, message: `row ${row.id}: ${error.message}` })),
        );
      }
    }
    return { scenarios: [], inputs, readErrors };
  } catch (error) {
    if (!(error instanceof DatasetError)) throw error;
    for (const problem of error.problems) io.stderr(`toolpath ${command}: ${problem}\n`);
    return undefined;
  }
}

/** What a run reads: its scenarios and inputs, and the inputs that could not be read. */
export interface RunInputs {
  scenarios: Scenario[];
  inputs: StoredText[];
  readErrors: InputError[];
}

/**
 * A run's inputs, from a dataset when one is given, else from scenario and trace files.
 * Undefined when the run cannot start (said on stderr).
 */
export async function loadRunInputs(
  options: { dataset?: string; scenarios: readonly string[]; inputs: readonly string[] },
  io: CliIO,
  command: string,
): Promise<RunInputs | undefined> {
  if (options.dataset !== undefined) return loadDataset(options.dataset, io, command);
  const scenarios = await loadScenarios(options.scenarios, io, command);
  if (!scenarios) return undefined;
  return { scenarios, ...(await readInputs(options.inputs, io)) };
}
