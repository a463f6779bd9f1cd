/**
 * `--format json`: `{reports, summary}` (plus `errors` when an input could not be read).
 * `summary.scenarios[]` holds each scenario's pass rate and gate decision; a report made for a
 * dataset row carries `row` (and `trial`), so `toolpath compare` can count rows as units.
 */
import { formatInputError, type InputError } from '../io/read-traces.js';
import type { EvalRun } from './run-eval.js';

/** The run as one JSON document, with the report shape of DESIGN.md. */
export function formatJson(run: EvalRun): string {
  const document: Record<string, unknown> = {
    reports: run.reports.map(({ report, row, trial }) => ({
      ...report,
      ...(row !== undefined && { row }),
      ...(trial !== undefined && { trial }),
    })),
    summary: run.summary,
  };
  if (run.errors.length > 0) document.errors = run.errors.map(errorJson);
  return `${JSON.stringify(document, null, 2)}\n`;
}

function errorJson(error: InputError): Record<string, string> {
  return {
    source: error.source,
    ...(error.location && { location: error.location }),
    message: formatInputError(error),
  };
}
