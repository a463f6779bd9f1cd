/**
 * `toolpath promote --dataset FILE`: the row a promoted fixture adds to a dataset. The row holds
 * nothing of the trace but the path of the redacted fixture: `{id, traces: [fixture], assertions}`,
 * the assertions being the scenario document as written. It is checked against the dataset
 * (ids, gates) before anything is written, and appended only once the fixture reproduces.
 */
import { mkdir } from 'node:fs/promises';
import { basename, dirname, relative, resolve, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describeReadError } from '../scenario/read-error.js';
import { DatasetError, parseDataset } from './dataset.js';
import type { CliIO } from './io.js';

/** A row ready to append: the dataset's text as it was (empty when new) and the new line. */
export interface PendingRow {
  dataset: string;
  before: string;
  line: string;
  id: string;
}

/** `fixtures/refund-bad.otlp.json` → `refund-bad`: the row id when none is given. */
export function rowIdOf(out: string): string {
  return basename(out)
    .replace(/\.json$/, '')
    .replace(/\.otlp$/, '');
}

/**
 * The row for `out` judged by the scenario at `scenarioPath`, checked as the dataset would
 * read it with the row added; or why it cannot be added (an id already used, a gate that
 * differs from the other rows' of the scenario, a dataset that does not read).
 */
export async function prepareDatasetRow(
  io: CliIO,
  options: { dataset: string; out: string; scenarioPath: string; id?: string },
): Promise<PendingRow | { error: string }> {
  let before = '';
  try {
    before = await io.readFile(options.dataset);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      return {
        error: `--dataset: ${describeReadError(error, options.dataset)}`,
      };
  }
  let assertions: unknown;
  try {
    // The scenario as written (it loaded already): a row carries the document, not its compiled form.
    assertions = parseYaml(await io.readFile(options.scenarioPath));
  } catch (error) {
    return {
      error: `${options.scenarioPath}: cannot read it back for the dataset row: ${(error as Error).message}`,
    };
  }
  const id = options.id ?? rowIdOf(options.out);
  const trace = relative(dirname(resolve(options.dataset)), resolve(options.out))
    .split(sep)
    .join('/');
  const line = JSON.stringify({ id, traces: [trace], assertions });
  const after = `${before}${before === '' || before.endsWith('\n') ? '' : '\n'}${line}\n`;
  try {
    parseDataset(after, options.dataset);
  } catch (error) {
    if (!(error instanceof DatasetError)) throw error;
    return { error: `cannot add row ${JSON.stringify(id)}: ${error.problems.join('; ')}` };
  }
  return { dataset: options.dataset, before, line, id };
}

/**
 * Appends the row (the dataset file is written whole: the CLI's I/O has no append), making its
 * folder if needed; resolves to what went wrong, if anything.
 */
export async function appendDatasetRow(io: CliIO, row: PendingRow): Promise<string | undefined> {
  const separator = row.before === '' || row.before.endsWith('\n') ? '' : '\n';
  try {
    await mkdir(dirname(row.dataset), { recursive: true });
    await io.writeFile(row.dataset, `${row.before}${separator}${row.line}\n`);
    return undefined;
  } catch (error) {
    return `--dataset ${row.dataset}: cannot write: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
}
