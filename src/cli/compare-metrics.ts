/**
 * The pure core of `toolpath compare`: per-scenario metrics over a set of reports, and the
 * comparison of a baseline set with a candidate set, dimension by dimension. No blended score:
 * each dimension is compared on its own, and only the gated ones can regress the comparison.
 */
import type { Report } from '../model/report.js';
import { runUnits } from '../run/run-summary.js';

/**
 * A report as `compare` reads it: a report made for a dataset row carries the row (and trial),
 * which makes the row (or trial), not the trace, the unit of the pass rate.
 */
export type ComparedReport = Report & { row?: string; trial?: number };

/** The dimensions `compare` measures, by the names `--fail-on` takes. */
export const COMPARE_DIMENSIONS = [
  'pass-rate',
  'hard-failure-rate',
  'required-step-recall',
  'redundant-call-rate',
  'error-recovery',
  'outcome-pass-rate',
  'latency-mean',
  'latency-p95',
  'calls-per-trace',
] as const;

/** One dimension `compare` measures. */
export type CompareDimension = (typeof COMPARE_DIMENSIONS)[number];

/** How each dimension reads: its label, which way is worse, and its unit. */
export const DIMENSION_INFO: Record<
  CompareDimension,
  { label: string; higherIsWorse: boolean; unit: 'rate' | 'ms' | 'count' }
> = {
  'pass-rate': { label: 'pass rate', higherIsWorse: false, unit: 'rate' },
  'hard-failure-rate': { label: 'hard-failure rate', higherIsWorse: true, unit: 'rate' },
  'required-step-recall': { label: 'required-step recall', higherIsWorse: false, unit: 'rate' },
  'redundant-call-rate': { label: 'redundant-call rate', higherIsWorse: true, unit: 'rate' },
  'error-recovery': { label: 'tool error recovery', higherIsWorse: false, unit: 'rate' },
  'outcome-pass-rate': { label: 'outcome pass rate', higherIsWorse: false, unit: 'rate' },
  'latency-mean': { label: 'latency mean', higherIsWorse: true, unit: 'ms' },
  'latency-p95': { label: 'latency p95', higherIsWorse: true, unit: 'ms' },
  'calls-per-trace': { label: 'calls per trace', higherIsWorse: true, unit: 'count' },
};

/** Each dimension's value over a set of reports; `null` when the reports hold nothing to measure it by. */
export type Metrics = Record<CompareDimension, number | null>;

/**
 * Assertion names of the required-step checks: `expected_tool_calls:<tool>` (rule
 * `tools.required`), `tool_sequence` (`order.sequence`), `milestones.end:<milestone>`
 * (`milestones.end`) and `reference` (`reference.<mode>`).
 */
export function isRequiredStepAssertion(name: string): boolean {
  return (
    name.startsWith('expected_tool_calls:') ||
    name === 'tool_sequence' ||
    name.startsWith('milestones.end:') ||
    name === 'reference'
  );
}

/** Assertion names of the outcome hooks (rule `outcome.check`): `outcome:<hook>`. */
export function isOutcomeAssertion(name: string): boolean {
  return name.startsWith('outcome:');
}

/**
 * The pass rate in the scenario's unit, as `toolpath eval` counts it: passed units over units,
 * inconclusive not passed; a unit is a trace, or a dataset row (its trial) when reports carry one.
 */
export function passRate(reports: readonly ComparedReport[]): number | null {
  const units = [
    ...runUnits(
      reports.map((report) => ({
        report,
        ...(report.row !== undefined && { row: report.row }),
        ...(report.trial !== undefined && { trial: report.trial }),
      })),
    ).values(),
  ].flatMap((scenario) => scenario.units);
  return share(units, (unit) => unit.verdict === 'pass');
}

/** Share of reports with a hard finding that was decided (not inconclusive): failed evaluations. */
export function hardFailureRate(reports: readonly Report[]): number | null {
  return share(reports, (report) => report.findings.some((f) => f.severity === 'hard' && !f.inconclusive));
}

/**
 * Of every required-step assertion ({@link isRequiredStepAssertion}) in the reports, the share
 * that passed; an inconclusive one did not pass (the step was not shown to be reached).
 */
export function requiredStepRecall(reports: readonly Report[]): number | null {
  return assertionPassRate(reports, isRequiredStepAssertion);
}

/**
 * Calls named by decided `efficiency.repeat` findings (every call of an identical group over the
 * limit, its first call included), over all the calls of the reports that ran that check (an
 * `efficiency.repeat` assertion). `null` when no report ran it: without it a repeat is invisible.
 */
export function redundantCallRate(reports: readonly Report[]): number | null {
  const checked = reports.filter((r) => r.assertions.some((a) => a.name === 'efficiency.repeat'));
  const calls = sum(checked.map((r) => r.stats.calls));
  if (calls === 0) return null;
  const repeated = sum(
    checked.map(
      (r) =>
        new Set(
          r.findings.filter((f) => f.rule === 'efficiency.repeat' && !f.inconclusive).flatMap((f) => f.calls),
        ).size,
    ),
  );
  return repeated / calls;
}

/** Of the reports whose trajectory had a failed tool call (`stats.errors > 0`), the share that passed. */
export function errorRecovery(reports: readonly Report[]): number | null {
  return share(
    reports.filter((r) => r.stats.errors > 0),
    (r) => r.verdict === 'pass',
  );
}

/** Of every outcome hook assertion ({@link isOutcomeAssertion}), the share that passed. */
export function outcomePassRate(reports: readonly Report[]): number | null {
  return assertionPassRate(reports, isOutcomeAssertion);
}

/** Mean of the values; `null` for none. */
export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : sum(values) / values.length;
}

/** The 95th percentile by nearest rank (the smallest value at least 95% of the values are at or below); `null` for none. */
export function p95(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.95 * sorted.length) - 1] as number;
}

/** Every dimension over one set of reports (typically one scenario's). */
export function computeMetrics(reports: readonly ComparedReport[]): Metrics {
  const durations = reports.map((r) => r.stats.durationMs);
  return {
    'pass-rate': passRate(reports),
    'hard-failure-rate': hardFailureRate(reports),
    'required-step-recall': requiredStepRecall(reports),
    'redundant-call-rate': redundantCallRate(reports),
    'error-recovery': errorRecovery(reports),
    'outcome-pass-rate': outcomePassRate(reports),
    'latency-mean': mean(durations),
    'latency-p95': p95(durations),
    'calls-per-trace': mean(reports.map((r) => r.stats.calls)),
  };
}

/** One side of a scenario's comparison. */
export interface SideSummary {
  /** Scenario versions seen on this side, sorted (empty when the reports carry none). */
  versions: string[];
  evaluations: number;
  metrics: Metrics;
}

/** One dimension of one scenario, side by side. */
export interface DimensionComparison {
  dimension: CompareDimension;
  baseline: number | null;
  candidate: number | null;
  /** candidate - baseline; `null` when either side has no value. */
  change: number | null;
  gated: boolean;
  /** Gated, and worse by more than the tolerance. */
  regressed: boolean;
  /** Which way the candidate moved: `better`, `worse` or `same` (`null` when a side has no value). */
  direction: 'better' | 'worse' | 'same' | null;
}

/** One scenario (by id) present in both sets. */
export interface ScenarioComparison {
  id: string;
  baseline: SideSummary;
  candidate: SideSummary;
  dimensions: DimensionComparison[];
}

/** A scenario present in one set only: listed, not compared. */
export interface OneSidedScenario {
  id: string;
  versions: string[];
  evaluations: number;
}

/** The whole comparison. */
export interface Comparison {
  scenarios: ScenarioComparison[];
  onlyInBaseline: OneSidedScenario[];
  onlyInCandidate: OneSidedScenario[];
  /** One line per regressed gated dimension: `support.refund: hard-failure rate 0.10 -> 0.25 (worse by 0.15)`. */
  regressions: string[];
  /** A side with fewer than {@link FEW_EVALUATIONS} evaluations of a scenario: its rates move in large steps. */
  warnings: string[];
}

/** Below this many evaluations on a side, one trace moves a rate by more than 0.1: the comparison says so. */
export const FEW_EVALUATIONS = 10;

/** What gates a comparison. */
export interface CompareOptions {
  /** Dimensions whose worsening regresses the comparison. */
  failOn: readonly CompareDimension[];
  /** Absolute worsening allowed before a gated dimension regresses (0: any worsening). */
  tolerance: number;
}

// Keeps float noise (0.25 - 0.1 = 0.15000000000000002) from turning an equal step into a regression.
const EPSILON = 1e-9;

/** Compares two report sets scenario by scenario (by scenario id; a version change is shown, not a new scenario). */
export function compareReports(
  baseline: readonly ComparedReport[],
  candidate: readonly ComparedReport[],
  options: CompareOptions,
): Comparison {
  const before = groupByScenario(baseline);
  const after = groupByScenario(candidate);
  const scenarios: ScenarioComparison[] = [];
  const regressions: string[] = [];
  const warnings: string[] = [];
  for (const [id, baseReports] of before) {
    const candReports = after.get(id);
    if (!candReports) continue;
    const base = summarize(baseReports);
    const cand = summarize(candReports);
    const dimensions = COMPARE_DIMENSIONS.map((dimension) =>
      compareDimension(dimension, base.metrics[dimension], cand.metrics[dimension], options),
    );
    for (const d of dimensions) if (d.regressed) regressions.push(regressionLine(id, d));
    for (const [side, summary] of [
      ['baseline', base],
      ['candidate', cand],
    ] as const) {
      if (summary.evaluations < FEW_EVALUATIONS)
        warnings.push(
          `${id}: the ${side} has ${summary.evaluations} ${summary.evaluations === 1 ? 'evaluation' : 'evaluations'}, so one trace moves a rate by ${(1 / summary.evaluations).toFixed(2)}; compare at least ${FEW_EVALUATIONS} a side before trusting a change`,
        );
    }
    scenarios.push({ id, baseline: base, candidate: cand, dimensions });
  }
  const oneSided = (mine: Map<string, ComparedReport[]>, other: Map<string, ComparedReport[]>) =>
    [...mine]
      .filter(([id]) => !other.has(id))
      .map(([id, reports]) => {
        const { versions, evaluations } = summarize(reports);
        return { id, versions, evaluations };
      });
  return {
    scenarios,
    onlyInBaseline: oneSided(before, after),
    onlyInCandidate: oneSided(after, before),
    regressions,
    warnings,
  };
}

function compareDimension(
  dimension: CompareDimension,
  baseline: number | null,
  candidate: number | null,
  options: CompareOptions,
): DimensionComparison {
  const gated = options.failOn.includes(dimension);
  const change = baseline === null || candidate === null ? null : candidate - baseline;
  const worse = change === null ? 0 : DIMENSION_INFO[dimension].higherIsWorse ? change : -change;
  return {
    dimension,
    baseline,
    candidate,
    change,
    gated,
    regressed: gated && worse > options.tolerance + EPSILON,
    direction: change === null ? null : worse > EPSILON ? 'worse' : worse < -EPSILON ? 'better' : 'same',
  };
}

/** A metric value as printed: rates and counts with two decimals, durations in milliseconds to one decimal. */
export function formatValue(dimension: CompareDimension, value: number | null): string {
  if (value === null) return 'n/a';
  return DIMENSION_INFO[dimension].unit === 'ms' ? `${value.toFixed(1)} ms` : value.toFixed(2);
}

function regressionLine(id: string, d: DimensionComparison): string {
  const { label } = DIMENSION_INFO[d.dimension];
  const by = formatValue(d.dimension, Math.abs(d.change ?? 0));
  return `${id}: ${label} ${formatValue(d.dimension, d.baseline)} -> ${formatValue(d.dimension, d.candidate)} (worse by ${by})`;
}

function summarize(reports: readonly ComparedReport[]): SideSummary {
  const versions = [
    ...new Set(reports.flatMap((r) => (r.scenario.version === undefined ? [] : [r.scenario.version]))),
  ].sort();
  return { versions, evaluations: reports.length, metrics: computeMetrics(reports) };
}

function groupByScenario(reports: readonly ComparedReport[]): Map<string, ComparedReport[]> {
  const groups = new Map<string, ComparedReport[]>();
  for (const report of reports) {
    const group = groups.get(report.scenario.id);
    if (group) group.push(report);
    else groups.set(report.scenario.id, [report]);
  }
  return new Map([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function assertionPassRate(reports: readonly Report[], counts: (name: string) => boolean): number | null {
  const statuses = reports.flatMap((r) => r.assertions.filter((a) => counts(a.name)).map((a) => a.status));
  return share(statuses, (status) => status === 'pass');
}

function share<T>(items: readonly T[], holds: (item: T) => boolean): number | null {
  return items.length === 0 ? null : items.filter(holds).length / items.length;
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
