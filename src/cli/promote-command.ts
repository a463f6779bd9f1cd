/**
 * `toolpath promote TRACE --scenario FILE --out NAME.json [--redact CONFIG] [--trace ID] [--dataset FILE]`:
 * turns a stored trace into a minimal, redacted regression fixture plus `NAME.expected.json`, the
 * verdict and findings it must reproduce, and checks that it does; with `--dataset`, appends a
 * row for the fixture to a dataset.
 */
import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import { formatInputError, readStoredTraces } from '../io/read-traces.js';
import type { SpanRecord } from '../model/span-record.js';
import { normalizeSpans } from '../normalizers/normalize.js';
import { describeReadError } from '../scenario/read-error.js';
import { loadScenarioFile, type Scenario, ScenarioError } from '../scenario/scenario.js';
import { expectedPathOf } from './expectations.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';
import { appendDatasetRow, type PendingRow, prepareDatasetRow } from './promote-dataset.js';
import {
  differences,
  type ExpectedFindings,
  encodeOtlpJson,
  expectedOf,
  minimizeSpans,
  type RedactConfig,
  Redactor,
  redactSpans,
  stripSpan,
} from './promote-fixture.js';

/** Usage text of `toolpath promote`. */
export const PROMOTE_USAGE = `usage: toolpath promote TRACE --scenario FILE --out FILE.json [--redact CONFIG] [--trace ID] [--dataset FILE [--row ID]]
       toolpath promote TRACE_ID --reports REPORTS.jsonl --scenario FILE --out FILE.json [--redact CONFIG]

  TRACE           a stored trace file (OTLP JSON or Collector file-exporter JSON lines); - reads stdin
  --reports       the reports file of \`toolpath serve\` (with reports.traceDir set): TRACE_ID is then
                  a trace id, and its spans are read from the file the report names
  --scenario, -s  the scenario the fixture must reproduce the findings of (JSON or YAML)
  --out, -o       the fixture to write; the findings go beside it in FILE.expected.json
  --redact        a JSON or YAML file {keep: [paths], hash: [paths]}; a path is dotted keys
                  (attribute key, then keys inside the value; * is any one key) matching the end
                  of a value's path: "email" hashes every email field whole
  --trace         the trace id to promote, when the file holds several
  --dataset       a dataset (JSON lines) to append a row to once the fixture reproduces:
                  {id, traces: [FILE.json], assertions: the scenario as written}; created if absent
  --row           the row's id (default: FILE's name without .json)

keeps only the spans the trajectory is read from (and their ancestors) and the attributes the
conventions read; every e-mail, UUID, prefixed id (R-1001, O-17) and run of 4+ digits in a
string is replaced by id_ + 10 hex digits of an HMAC keyed by a digest of the original trace
(not written out): the same everywhere, so grounding still holds, and the same on every run of
the same trace; the fixture is read back and must give the same verdict and findings, written to
FILE.expected.json (toolpath eval --expect checks fixtures against them)

exit status: 0 fixture written and reproduced, 1 it does not reproduce (nothing written), 2 usage or input error
`;

/** Runs `toolpath promote` with these arguments (after the word `promote`); resolves to the exit code. */
export async function promoteCommand(args: readonly string[], io: CliIO): Promise<number> {
  const options = parsePromoteArgs(args);
  const fail = (message: string) => {
    io.stderr(`toolpath promote: ${message}\n`);
    return 2;
  };

  let scenario: Scenario;
  try {
    scenario = await loadScenarioFile(options.scenario);
  } catch (error) {
    if (error instanceof ScenarioError) return fail(error.message);
    throw error;
  }
  let config: RedactConfig = {};
  if (options.redact) {
    const text = await readText(io, options.redact);
    if (typeof text !== 'string') return fail(`--redact ${options.redact}: ${text.error}`);
    const parsed = parseRedactConfig(text, options.redact);
    if (typeof parsed === 'string') return fail(parsed);
    config = parsed;
  }
  let row: PendingRow | undefined;
  if (options.dataset !== undefined) {
    const prepared = await prepareDatasetRow(io, {
      dataset: options.dataset,
      out: options.out,
      scenarioPath: options.scenario,
      ...(options.row !== undefined && { id: options.row }),
    });
    if ('error' in prepared) return fail(prepared.error);
    row = prepared;
  }
  if (options.reports !== undefined) {
    const located = await locateInReports(io, options.reports, options.input);
    if (typeof located !== 'string') return fail(located.error);
    options.trace = options.input.toLowerCase();
    options.input = located;
  }
  const text = options.input === '-' ? await io.readStdin() : await readText(io, options.input);
  if (typeof text !== 'string') return fail(`${options.input}: ${text.error}`);

  const read = readStoredTraces(text, options.input);
  if (read.errors.length > 0) return fail(read.errors.map(formatInputError).join('\ntoolpath promote: '));
  if (read.input?.format === 'typed-events')
    return fail(`${options.input}: promote reads OTLP spans; a typed-event list is already minimal`);
  const spans = selectTrace(read.input?.spans ?? [], options);
  if (typeof spans === 'string') return fail(spans);

  const trajectory = normalizeSpans(spans)[0];
  if (!trajectory)
    return fail(`${options.input}: no trajectory could be read from trace ${spans[0]?.traceId}`);
  if (!appliesTo(scenario, trajectory))
    return fail(`scenario ${scenario.id} does not apply to trace ${trajectory.traceId} (check appliesTo)`);
  const original = expectedOf(evaluate(trajectory, scenario));

  const redactor = new Redactor(redactionKey(text, spans[0]?.traceId ?? ''), config);
  const keys = Object.keys(scenario.appliesTo?.attributes ?? {});
  const minimal = redactSpans(minimizeSpans(spans, trajectory, keys), redactor);
  // A convention may read a span the trajectory does not name: then keep every span of the trace.
  let fixture = minimal;
  const wholeTrace = reproduce(minimal, scenario, original).length > 0;
  if (wholeTrace) {
    fixture = redactSpans(
      spans.map((span) => stripSpan(span, keys)),
      redactor,
    );
  }
  // Checked before anything is written: a fixture that cannot reproduce leaves no file behind.
  const unreproduced = wholeTrace ? reproduce(fixture, scenario, original) : [];
  if (unreproduced.length > 0)
    return notReproduced(io, options.out, trajectory.traceId, unreproduced, scenario, redactor);
  try {
    // `--out test/fixtures/NAME.json` in a project without that folder yet: make it.
    await mkdir(dirname(options.out), { recursive: true });
    await io.writeFile(options.out, `${JSON.stringify(encodeOtlpJson(fixture), null, 2)}\n`);
  } catch (error) {
    return fail(
      `${options.out}: cannot write: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }

  // Read back what was written, the way `eval` will read it.
  const written = await readText(io, options.out);
  const again = typeof written === 'string' ? readStoredTraces(written, options.out) : undefined;
  const reread = again?.input?.format === 'otlp-json' ? again.input.spans : [];
  const replayed = evaluateSpans(reread, scenario);
  const diff = replayed ? differences(original, replayed) : ['no trajectory could be read back'];
  if (diff.length > 0) {
    await rm(options.out, { force: true });
    return notReproduced(io, options.out, trajectory.traceId, diff, scenario, redactor);
  }
  const expectedPath = expectedPathOf(options.out);
  await io.writeFile(expectedPath, `${JSON.stringify(replayed, null, 2)}\n`);
  if (row) {
    const failed = await appendDatasetRow(io, row);
    if (failed) return fail(failed);
    io.stderr(`toolpath promote: row ${row.id} appended to ${row.dataset}\n`);
  }
  io.stderr(
    `toolpath promote: trace ${trajectory.traceId}: ${fixture.length} of ${spans.length} spans written to ${options.out} ` +
      `(${original.verdict}, ${original.findings.length} ${original.findings.length === 1 ? 'finding' : 'findings'} reproduced${wholeTrace ? '; the minimal span set did not reproduce, so every span was kept' : ''}); ` +
      `expectations in ${expectedPath}\n`,
  );
  return 0;
}

/** Exit 1: what differs, and the `--redact` keep list that fixes it when the scenario names values the redaction replaced. */
function notReproduced(
  io: CliIO,
  out: string,
  traceId: string,
  diff: readonly string[],
  scenario: Scenario,
  redactor: Redactor,
): number {
  const literals = redactedLiterals(scenario, redactor);
  const keys = [...new Set(literals.map(({ key }) => key))];
  const hint =
    literals.length === 0
      ? ''
      : `  the scenario names values the redaction replaces (${literals.map(({ key, value }) => `${key}: ${JSON.stringify(value)}`).join(', ')}); ` +
        `keep them as they are with --redact FILE, FILE holding ${JSON.stringify({ keep: keys })}\n`;
  io.stderr(
    `toolpath promote: ${out} does not reproduce trace ${traceId}, so nothing was written:\n${diff.map((d) => `  ${d}\n`).join('')}${hint}`,
  );
  return 1;
}

/**
 * The string values a scenario compares against (argument matches, tenant values) that the
 * redaction would replace, with the key they sit under (for `{path, value}`, the path's last key).
 */
function redactedLiterals(scenario: Scenario, redactor: Redactor): { key: string; value: string }[] {
  const found: { key: string; value: string }[] = [];
  const stack: unknown[] = [scenario.rules];
  // A scenario is small, but walked without recursion all the same; the cap bounds a huge one.
  for (let visited = 0; stack.length > 0 && visited < 10_000 && found.length < 10; visited++) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || node instanceof RegExp) continue;
    for (const [key, value] of Object.entries(node)) {
      if (typeof value !== 'string') {
        stack.push(value);
        continue;
      }
      if (redactor.text(value) === value) continue;
      const path = (node as { path?: unknown }).path;
      const named = key === 'value' && typeof path === 'string' ? (path.split('.').pop() ?? key) : key;
      found.push({ key: named, value });
    }
  }
  return found;
}

/**
 * The HMAC key: a digest of the whole stored trace, never written out. The same trace promoted
 * again gets the same tokens (no churn in a fixture's diff), and a token cannot be checked
 * against a guessed identifier without the original trace, which holds everything the fixture
 * dropped (timestamps, other attributes, the identifiers themselves).
 */
function redactionKey(text: string, traceId: string): Uint8Array {
  return createHash('sha256')
    .update('toolpath promote redaction key\0')
    .update(traceId)
    .update('\0')
    .update(text)
    .digest();
}

interface PromoteOptions {
  input: string;
  scenario: string;
  out: string;
  redact?: string;
  trace?: string;
  reports?: string;
  dataset?: string;
  row?: string;
}

/** The stored trace file a reports file names for `traceId`, or why there is none. */
async function locateInReports(
  io: CliIO,
  reportsPath: string,
  traceId: string,
): Promise<string | { error: string }> {
  const text = await readText(io, reportsPath);
  if (typeof text !== 'string') return { error: `--reports ${reportsPath}: ${text.error}` };
  const id = traceId.toLowerCase();
  let judged = false;
  for (const line of text.split('\n')) {
    if (!line.includes(id)) continue;
    let report: { traceId?: unknown; traceFile?: unknown };
    try {
      report = JSON.parse(line) as typeof report;
    } catch {
      continue;
    }
    if (report.traceId !== id) continue;
    judged = true;
    if (typeof report.traceFile === 'string') return resolve(dirname(reportsPath), report.traceFile);
  }
  return {
    error: judged
      ? `trace ${id} is in ${reportsPath} but its spans were not stored (set reports.traceDir in the adapter's config; by default only failed traces are kept)`
      : `no report for trace ${id} in ${reportsPath}`,
  };
}

function parsePromoteArgs(args: readonly string[]): PromoteOptions {
  const { values, positionals } = parse(args);
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0
        ? 'missing TRACE: give one trace file, or - for stdin'
        : 'give exactly one TRACE',
    );
  if (!values.scenario) throw new UsageError('missing --scenario FILE');
  if (!values.out) throw new UsageError('missing --out FILE.json');
  if (values.row !== undefined && values.dataset === undefined)
    throw new UsageError('--row names the row --dataset appends; give --dataset FILE too');
  return {
    input: positionals[0] as string,
    scenario: values.scenario,
    out: values.out,
    ...(values.redact !== undefined && { redact: values.redact }),
    ...(values.trace !== undefined && { trace: values.trace.toLowerCase() }),
    ...(values.reports !== undefined && { reports: values.reports }),
    ...(values.dataset !== undefined && { dataset: values.dataset }),
    ...(values.row !== undefined && { row: values.row }),
  };
}

function parse(args: readonly string[]) {
  return parseCommandLine({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      scenario: { type: 'string', short: 's' },
      out: { type: 'string', short: 'o' },
      redact: { type: 'string' },
      trace: { type: 'string' },
      reports: { type: 'string' },
      dataset: { type: 'string' },
      row: { type: 'string' },
    },
  });
}

/** The spans of the one trace to promote, or what is wrong. */
function selectTrace(spans: readonly SpanRecord[], options: PromoteOptions): SpanRecord[] | string {
  const ids = [...new Set(spans.map((span) => span.traceId))];
  if (options.trace !== undefined) {
    if (!ids.includes(options.trace))
      return `--trace: ${options.input} has no trace ${options.trace} (it has ${ids.join(', ')})`;
    return spans.filter((span) => span.traceId === options.trace);
  }
  if (ids.length > 1)
    return `${options.input} holds ${ids.length} traces; choose one with --trace (${ids.join(', ')})`;
  return [...spans];
}

/** `{keep, hash}` from JSON or YAML (JSON is YAML), each a list of non-empty strings. */
export function parseRedactConfig(text: string, source: string): RedactConfig | string {
  const document = parseDocument(text);
  if (document.errors.length > 0) return `${source}: not valid JSON or YAML: ${document.errors[0]?.message}`;
  const value: unknown = document.toJS();
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `${source}: expected an object {keep: [paths], hash: [paths]}`;
  const config: RedactConfig = {};
  for (const [key, list] of Object.entries(value)) {
    if (key !== 'keep' && key !== 'hash') return `${source}: unknown field "${key}"; expected keep, hash`;
    if (!Array.isArray(list) || list.some((path) => typeof path !== 'string' || path === ''))
      return `${source}: ${key}: expected a list of dotted paths (non-empty strings)`;
    config[key] = list as string[];
  }
  return config;
}

function reproduce(spans: readonly SpanRecord[], scenario: Scenario, original: ExpectedFindings): string[] {
  // Through the same bytes `eval` reads, so what is checked is what gets written.
  const text = JSON.stringify(encodeOtlpJson(spans));
  const read = readStoredTraces(text, 'fixture');
  const replayed = evaluateSpans(read.input?.format === 'otlp-json' ? read.input.spans : [], scenario);
  return replayed ? differences(original, replayed) : ['no trajectory'];
}

function evaluateSpans(spans: readonly SpanRecord[], scenario: Scenario): ExpectedFindings | undefined {
  const trajectory = normalizeSpans(spans)[0];
  return trajectory && expectedOf(evaluate(trajectory, scenario));
}

async function readText(io: CliIO, path: string): Promise<string | { error: string }> {
  try {
    return await io.readFile(path);
  } catch (error) {
    return { error: describeReadError(error, path) };
  }
}
