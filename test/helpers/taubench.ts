/**
 * tau-bench's airline trajectories (../shared/corpus/taubench/, read in place: 50 tasks x 4
 * trials) as a toolpath dataset, and pass^k of toolpath's per-trial verdicts beside pass^k of
 * tau-bench's own (verdicts.json), both by {@link passHatK}.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type PassHatK, passHatK, type Trial } from '../../src/run/pass-k.js';

/** The corpus folder, from the repository root (where the tests run). */
export const TAUBENCH_DIR = resolve('../shared/corpus/taubench');

/** One trajectory's verdict in verdicts.json. */
export interface TaubenchVerdict {
  task: number;
  trial: number;
  actionsPass: boolean;
  reward: number;
  verdictFrom: string;
}

/** verdicts.json, keyed `task-NN-trial-T` like the input files. */
export async function taubenchVerdicts(): Promise<Record<string, TaubenchVerdict>> {
  return JSON.parse(await readFile(join(TAUBENCH_DIR, 'verdicts.json'), 'utf8')) as Record<
    string,
    TaubenchVerdict
  >;
}

/** The row id of a task, as {@link writeTaubenchDataset} names it. */
export function taubenchRowId(task: number): string {
  return `task-${String(task).padStart(2, '0')}`;
}

/**
 * Writes a dataset into `dir` with one row per task (`task-NN`) whose four trials are the
 * corpus's `task-NN-trial-T.json` (absolute paths: the corpus is never copied), judged by
 * `assertions` (one scenario for every row, or a row's own from its task number). Resolves to
 * the dataset's path.
 */
export async function writeTaubenchDataset(
  dir: string,
  assertions: object | ((task: number) => object),
  name = 'taubench.jsonl',
): Promise<string> {
  const rows: string[] = [];
  for (let task = 0; task < 50; task++) {
    const trials = [0, 1, 2, 3].map((trial) => [
      join(TAUBENCH_DIR, 'inputs', `${taubenchRowId(task)}-trial-${trial}.json`),
    ]);
    const own = typeof assertions === 'function' ? assertions(task) : assertions;
    rows.push(JSON.stringify({ id: taubenchRowId(task), trials, assertions: own }));
  }
  const path = join(dir, name);
  await writeFile(path, `${rows.join('\n')}\n`);
  return path;
}

/** tau-bench's own per-trial verdicts (its action check: the final database equals the gold one). */
export async function taubenchTrials(): Promise<Trial[]> {
  return Object.values(await taubenchVerdicts()).map((v) => ({
    task: taubenchRowId(v.task),
    pass: v.actionsPass,
  }));
}

/** pass^k of toolpath's per-trial verdicts and of tau-bench's, side by side. */
export interface PassHatKComparison {
  k: number;
  toolpath: PassHatK;
  taubench: PassHatK;
  /** Trials (`task-NN trial T`) where the two verdicts differ. */
  disagreements: string[];
}

/**
 * pass^k of `toolpathTrials` (task = `task-NN`, as the dataset rows are named; `trial` 1-based,
 * as toolpath reports it) against pass^k of tau-bench's own verdicts, by the same formula, and
 * the trials where the verdicts differ. For the comparison of toolpath's verdicts (with the
 * scenarios of "the scenario language against the benchmarks") with tau-bench's.
 */
export async function comparePassHatKWithTaubench(
  toolpathTrials: readonly (Trial & { trial: number })[],
  k: number,
): Promise<PassHatKComparison> {
  const verdicts = await taubenchVerdicts();
  const disagreements: string[] = [];
  for (const trial of toolpathTrials) {
    const theirs = verdicts[`${trial.task}-trial-${trial.trial - 1}`];
    if (theirs && theirs.actionsPass !== trial.pass)
      disagreements.push(`${trial.task} trial ${trial.trial - 1}`);
  }
  return {
    k,
    toolpath: passHatK(toolpathTrials, k),
    taubench: passHatK(await taubenchTrials(), k),
    disagreements,
  };
}
