/**
 * `toolpath compare BASELINE CANDIDATE [--fail-on DIM[,DIM]] [--tolerance X] [--format pretty|json|markdown]`
 * Two report sets side by side per scenario, dimension by dimension (see compare-metrics.ts).
 * Exit 1 when a gated dimension regresses (or no scenario is in both sets), 0 otherwise, 2 on a
 * usage or input error.
 */
import { describeReadError } from '../scenario/read-error.js';
import {
  COMPARE_DIMENSIONS,
  type CompareDimension,
  type ComparedReport,
  type Comparison,
  compareReports,
  DIMENSION_INFO,
  type DimensionComparison,
  formatValue,
  type OneSidedScenario,
  type ScenarioComparison,
} from './compare-metrics.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';

/** Usage text of `toolpath compare`. */
export const COMPARE_USAGE = `usage: toolpath compare [--fail-on DIM[,DIM]] [--tolerance X] [--format pretty|json|markdown] BASELINE CANDIDATE

  BASELINE, CANDIDATE  report sets: the output of toolpath eval --format json, or JSON lines
                       with one report per line; - reads stdin (for one of them)
  --fail-on            the dimensions that gate (default hard-failure-rate,required-step-recall):
                       ${COMPARE_DIMENSIONS.join(', ')}
                       (pass-rate: passed over evaluated, per trace or per dataset row as
                       toolpath eval counts it)
  --tolerance          how much worse a gated dimension may get, absolute, in its own unit
                       (a rate, milliseconds, calls); default 0: any worsening regresses
  --format, -f         pretty (default), json or markdown

scenarios are matched by id (a version change is shown); one present in a single set is listed,
not compared. There is no blended score.

exit status: 0 no gated dimension regressed, 1 one did (or no scenario is in both sets),
2 usage or input error
`;

const FORMATS = ['pretty', 'json', 'markdown'] as const;
type Format = (typeof FORMATS)[number];
const DEFAULT_FAIL_ON: CompareDimension[] = ['hard-failure-rate', 'required-step-recall'];

/** An input that is not a report set: printed as `toolpath compare: SOURCE: MESSAGE`, exit 2. */
export class ReportSetError extends Error {
  override name = 'ReportSetError';
}

/** Runs `toolpath compare` with these arguments (after the word `compare`); resolves to the exit code. */
export async function compareCommand(args: readonly string[], io: CliIO): Promise<number> {
  const options = parseCompareArgs(args);
  let baseline: ComparedReport[];
  let candidate: ComparedReport[];
  try {
    baseline = parseReportSet(await readSource(options.baseline, io), options.baseline);
    candidate = parseReportSet(await readSource(options.candidate, io), options.candidate);
  } catch (error) {
    if (!(error instanceof ReportSetError)) throw error;
    io.stderr(`toolpath compare: ${error.message}\n`);
    return 2;
  }
  const comparison = compareReports(baseline, candidate, options);
  io.stdout(render(comparison, options));
  if (comparison.scenarios.length === 0) return 1;
  return comparison.regressions.length > 0 ? 1 : 0;
}

async function readSource(source: string, io: CliIO): Promise<string> {
  try {
    return source === '-' ? await io.readStdin() : await io.readFile(source);
  } catch (error) {
    throw new ReportSetError(
      source === '-' ? `stdin: ${(error as Error).message}` : describeReadError(error, source),
    );
  }
}

/**
 * The reports in `text`, recognized by content: `toolpath eval --format json` output
 * (`{"reports": [...]}`), a JSON array of reports, or JSON lines with one report per line.
 * Throws {@link ReportSetError} naming `source` (and the line or index) when it is none of these
 * or holds no report.
 */
export function parseReportSet(text: string, source: string): ComparedReport[] {
  if (text.trim() === '') throw new ReportSetError(`${source}: the file is empty; expected reports`);
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    return parseJsonLines(text, source);
  }
  let reports: ComparedReport[];
  if (Array.isArray(whole)) {
    reports = whole.map((item, index) => checkReport(item, `${source}: [${index}]`));
  } else if (isObject(whole) && Array.isArray(whole.reports)) {
    reports = whole.reports.map((item, index) => checkReport(item, `${source}: reports[${index}]`));
  } else if (isObject(whole) && 'traceId' in whole) {
    reports = [checkReport(whole, `${source}: line 1`)];
  } else {
    throw new ReportSetError(
      `${source}: not a report set: expected toolpath eval --format json output ({"reports": [...]}), or one report per line`,
    );
  }
  if (reports.length === 0) throw new ReportSetError(`${source}: holds no report; nothing to compare`);
  return reports;
}

function parseJsonLines(text: string, source: string): ComparedReport[] {
  const reports: ComparedReport[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new ReportSetError(
        `${source}: line ${index + 1}: not JSON (${(error as Error).message}); expected one report per line`,
      );
    }
    reports.push(checkReport(value, `${source}: line ${index + 1}`));
  }
  return reports;
}

/** Checks the fields `compare` reads, so a wrong file fails here with its place, not later with a TypeError. */
function checkReport(value: unknown, where: string): ComparedReport {
  const problem = reportProblem(value);
  if (problem) throw new ReportSetError(`${where}: not a toolpath report: ${problem}`);
  return value as ComparedReport;
}

function reportProblem(value: unknown): string | undefined {
  if (!isObject(value)) return `expected an object, got ${value === null ? 'null' : typeof value}`;
  const { scenario, verdict, findings, assertions, stats } = value;
  if (!isObject(scenario) || typeof scenario.id !== 'string') return 'scenario.id is missing';
  if (scenario.version !== undefined && typeof scenario.version !== 'string')
    return 'scenario.version is not a string';
  if (verdict !== 'pass' && verdict !== 'fail' && verdict !== 'inconclusive')
    return `verdict must be pass, fail or inconclusive (got ${JSON.stringify(verdict)})`;
  if (!Array.isArray(findings) || !findings.every((f) => isObject(f) && typeof f.rule === 'string'))
    return 'findings must be a list of findings with a rule';
  if (!findings.every((f) => Array.isArray(f.calls))) return 'a finding has no calls list';
  if (!Array.isArray(assertions) || !assertions.every((a) => isObject(a) && typeof a.name === 'string'))
    return 'assertions must be a list of {name, status}';
  if (!isObject(stats)) return 'stats is missing';
  const { row, trial } = value;
  if (row !== undefined && (typeof row !== 'string' || row === '')) return 'row is not a non-empty string';
  if (trial !== undefined && !(Number.isInteger(trial) && (trial as number) >= 1))
    return 'trial is not an integer >= 1';
  for (const key of ['calls', 'errors', 'durationMs'] as const) {
    if (typeof stats[key] !== 'number' || !Number.isFinite(stats[key])) return `stats.${key} is not a number`;
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface CompareArgs {
  baseline: string;
  candidate: string;
  failOn: CompareDimension[];
  tolerance: number;
  format: Format;
}

function parseCompareArgs(args: readonly string[]): CompareArgs {
  const { values, positionals } = parse(args);
  if (positionals.length !== 2)
    throw new UsageError(`expected BASELINE and CANDIDATE, got ${positionals.length} inputs`);
  if (positionals[0] === '-' && positionals[1] === '-')
    throw new UsageError('stdin (-) can be read only once');
  const format = values.format ?? 'pretty';
  if (!(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format: expected one of ${FORMATS.join(', ')}; got "${format}"`);
  const tolerance = values.tolerance === undefined ? 0 : Number(values.tolerance);
  if (values.tolerance !== undefined && (values.tolerance.trim() === '' || !(tolerance >= 0)))
    throw new UsageError(`--tolerance: expected a number >= 0; got "${values.tolerance}"`);
  return {
    baseline: positionals[0] as string,
    candidate: positionals[1] as string,
    failOn: values['fail-on'] === undefined ? DEFAULT_FAIL_ON : parseFailOn(values['fail-on']),
    tolerance,
    format: format as Format,
  };
}

function parseFailOn(values: readonly string[]): CompareDimension[] {
  const names = values.flatMap((v) => v.split(',')).map((v) => v.trim());
  for (const name of names) {
    if (!(COMPARE_DIMENSIONS as readonly string[]).includes(name))
      throw new UsageError(
        `--fail-on: unknown dimension "${name}"; expected ${COMPARE_DIMENSIONS.join(', ')}`,
      );
  }
  return names as CompareDimension[];
}

function parse(args: readonly string[]) {
  return parseCommandLine({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      'fail-on': { type: 'string', multiple: true },
      tolerance: { type: 'string' },
      format: { type: 'string', short: 'f' },
    },
  });
}

function render(comparison: Comparison, options: CompareArgs): string {
  if (options.format === 'json') return `${JSON.stringify(jsonDocument(comparison, options), null, 2)}\n`;
  return options.format === 'markdown' ? markdown(comparison, options) : pretty(comparison, options);
}

function jsonDocument(comparison: Comparison, options: CompareArgs): Record<string, unknown> {
  return { failOn: options.failOn, tolerance: options.tolerance, ...comparison };
}

/** `support.refund@2`, or `support.refund@2 -> @3` when the version changed. */
function heading(s: ScenarioComparison): string {
  const at = (versions: string[]) => (versions.length === 0 ? '' : `@${versions.join(',')}`);
  const before = at(s.baseline.versions);
  const after = at(s.candidate.versions);
  return before === after ? `${s.id}${before}` : `${s.id}${before} -> ${after || '(no version)'}`;
}

function changeText(d: DimensionComparison): string {
  if (d.change === null) return '';
  if (Math.abs(d.change) < 1e-9) return '=';
  const sign = d.change > 0 ? '+' : '-';
  return `${sign}${formatValue(d.dimension, Math.abs(d.change))}`;
}

/** A gated dimension's state in words: an improvement reads as one, never as a blocked gate. */
function mark(d: DimensionComparison): string {
  if (d.regressed) return 'REGRESSED';
  if (!d.gated) return '';
  if (d.direction === 'better') return 'gate ok (better)';
  if (d.direction === 'worse') return 'gate ok (worse, within tolerance)';
  return 'gate ok';
}

function oneSidedText(s: OneSidedScenario): string {
  const versions = s.versions.length === 0 ? '' : `@${s.versions.join(',')}`;
  return `${s.id}${versions} (${s.evaluations} ${s.evaluations === 1 ? 'evaluation' : 'evaluations'})`;
}

function verdictLine(comparison: Comparison, options: CompareArgs): string {
  if (comparison.scenarios.length === 0) return 'nothing compared: no scenario is in both sets';
  const gates = `gated: ${options.failOn.join(', ')}; tolerance ${options.tolerance}`;
  const n = comparison.regressions.length;
  return n === 0 ? `no regression (${gates})` : `${n} ${n === 1 ? 'regression' : 'regressions'} (${gates})`;
}

function pretty(comparison: Comparison, options: CompareArgs): string {
  const lines: string[] = [];
  const width = Math.max(...COMPARE_DIMENSIONS.map((d) => DIMENSION_INFO[d].label.length));
  for (const s of comparison.scenarios) {
    lines.push(
      `${heading(s)}  (baseline ${s.baseline.evaluations}, candidate ${s.candidate.evaluations} evaluations)`,
    );
    lines.push(
      `  ${'dimension'.padEnd(width)}  ${'baseline'.padStart(10)}  ${'candidate'.padStart(10)}  change`,
    );
    for (const d of s.dimensions) {
      const cells = [
        DIMENSION_INFO[d.dimension].label.padEnd(width),
        formatValue(d.dimension, d.baseline).padStart(10),
        formatValue(d.dimension, d.candidate).padStart(10),
        changeText(d).padEnd(10),
        mark(d),
      ];
      lines.push(`  ${cells.join('  ')}`.trimEnd());
    }
    lines.push('');
  }
  if (comparison.onlyInBaseline.length > 0)
    lines.push(`only in baseline (not compared): ${comparison.onlyInBaseline.map(oneSidedText).join(', ')}`);
  if (comparison.onlyInCandidate.length > 0)
    lines.push(
      `only in candidate (not compared): ${comparison.onlyInCandidate.map(oneSidedText).join(', ')}`,
    );
  for (const line of comparison.warnings) lines.push(`warning: ${line}`);
  for (const line of comparison.regressions) lines.push(`REGRESSED ${line}`);
  lines.push(verdictLine(comparison, options));
  return `${lines.join('\n')}\n`;
}

function markdown(comparison: Comparison, options: CompareArgs): string {
  const lines = ['## toolpath compare', ''];
  for (const s of comparison.scenarios) {
    lines.push(`### ${heading(s)}`, '');
    lines.push(
      `Baseline ${s.baseline.evaluations} evaluations, candidate ${s.candidate.evaluations} evaluations.`,
      '',
    );
    lines.push('| dimension | baseline | candidate | change | gate |', '| --- | ---: | ---: | ---: | --- |');
    for (const d of s.dimensions) {
      const gate = d.regressed ? '**regressed**' : mark(d);
      const cells = [
        DIMENSION_INFO[d.dimension].label,
        formatValue(d.dimension, d.baseline),
        formatValue(d.dimension, d.candidate),
        changeText(d),
        gate,
      ];
      lines.push(`| ${cells.join(' | ')} |`);
    }
    lines.push('');
  }
  const listed = (title: string, scenarios: OneSidedScenario[]) => {
    if (scenarios.length > 0) lines.push(`**${title}:** ${scenarios.map(oneSidedText).join(', ')}`, '');
  };
  listed('Only in baseline (not compared)', comparison.onlyInBaseline);
  listed('Only in candidate (not compared)', comparison.onlyInCandidate);
  for (const line of comparison.warnings) lines.push(`- **Warning:** ${line}`);
  for (const line of comparison.regressions) lines.push(`- **Regressed:** ${line}`);
  if (comparison.regressions.length + comparison.warnings.length > 0) lines.push('');
  lines.push(`${verdictLine(comparison, options)}`);
  return `${lines.join('\n')}\n`;
}
