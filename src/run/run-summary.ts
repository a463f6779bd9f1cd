/**
 * What a run of evaluations adds up to, per scenario: the pass rate in the scenario's unit, the
 * gate's decision and why, and the run's exit status. Pure functions of reports and gates:
 * reading, evaluating and printing happen elsewhere.
 */
import type { Report, ReportSummary, Verdict } from '../model/report.js';
import type { Gate } from '../scenario/native.js';
import { type PassHatK, passHatK } from './pass-k.js';

/** One evaluation as a run counts it: its report, and the dataset row and task it belongs to. */
export interface RunEvaluation {
  report: Report;
  /** The dataset row it was made for; absent: the trace is a unit of its own. */
  row?: string;
  /** Which of the row's trials (1-based), when the row lists trials. */
  trial?: number;
  /** The task its trial ran, for pass^k: the dataset row, or the `gate.trialsBy` attribute's value. */
  task?: string;
}

/** What the run needs of a scenario: who it is and its gate. */
export interface GatedScenario {
  id: string;
  version?: string;
  gate?: Gate;
}

/**
 * What one pass-rate evaluation is: a trace; a conversation (its traces joined); a dataset row (its traces judged together); one
 * trial of a dataset row that lists trials.
 */
export type RunUnit = 'trace' | 'conversation' | 'row' | 'trial';

/** A gate's decision on one scenario's evaluations. */
export interface GateDecision {
  /** False when the scenario has no gate: every evaluation must pass. */
  gated: boolean;
  met: boolean;
  /** What was measured against what, in words: `pass rate 6/8 = 0.75, below the min pass rate 0.8`. */
  reason: string;
  minPassRate?: number;
  passK?: PassKDecision;
}

/** pass^k against its minimum. */
export interface PassKDecision extends PassHatK {
  min: number;
  met: boolean;
  /** Trials no task could be told for (the trialsBy attribute absent, or ambiguous): left out. */
  noTask: number;
  /** The attribute trials were grouped by; absent: by dataset row. */
  trialsBy?: string;
}

/** One scenario over the run. */
export interface ScenarioSummary {
  id: string;
  version?: string;
  unit: RunUnit;
  /** Units evaluated (traces, rows or trials). */
  evaluated: number;
  passed: number;
  failed: number;
  inconclusive: number;
  /** passed / evaluated; inconclusive counts as not passed. `null` when nothing was evaluated. */
  passRate: number | null;
  gate: GateDecision;
}

/** The run's totals (per report) and each scenario's summary. */
export interface RunSummary extends ReportSummary {
  scenarios: ScenarioSummary[];
}

/** One unit of a scenario's pass rate: its evaluations, its verdict and the task it ran. */
export interface RunUnitOf<E> {
  /** The dataset row (and trial) it is; absent for a trace judged alone. */
  row?: string;
  trial?: number;
  /** The evaluations it is made of: one trace, or a row's (trial's) traces. */
  evaluations: E[];
  /** fail when any of them failed, else inconclusive when any was, else pass. */
  verdict: Verdict;
  /** The task it ran, for pass^k; absent when none is known, or its traces name different ones. */
  task: string | undefined;
}

type UnitVerdict = RunUnitOf<unknown>;

/**
 * Each scenario's units, in the order first seen: an evaluation without a row is a unit of its
 * own; the evaluations of one row (and trial) are one unit. Keyed by scenario id. The one place
 * the unit of a pass rate is decided, for `eval`, `compare` and the run page alike.
 */
export function runUnits<E extends Pick<RunEvaluation, 'report' | 'row' | 'trial' | 'task'>>(
  evaluations: readonly E[],
): Map<string, { unit: RunUnit; units: RunUnitOf<E>[] }> {
  const byScenario = new Map<
    string,
    { unit: RunUnit; units: RunUnitOf<E>[]; rows: Map<string, RunUnitOf<E>> }
  >();
  for (const evaluation of evaluations) {
    // A provisional verdict on a conversation that may still go on counts for nothing.
    if (evaluation.report.final === false) continue;
    const id = evaluation.report.scenario.id;
    let entry = byScenario.get(id);
    if (!entry) {
      entry = { unit: 'trace', units: [], rows: new Map() };
      byScenario.set(id, entry);
    }
    if (evaluation.row === undefined) {
      if (evaluation.report.conversationId !== undefined && entry.unit === 'trace')
        entry.unit = 'conversation';
      entry.units.push({
        evaluations: [evaluation],
        verdict: evaluation.report.verdict,
        task: evaluation.task,
      });
      continue;
    }
    if (evaluation.trial !== undefined) entry.unit = 'trial';
    else if (entry.unit === 'trace') entry.unit = 'row';
    const key = `${evaluation.row}\u0000${evaluation.trial ?? ''}`;
    const found = entry.rows.get(key);
    if (found) {
      found.evaluations.push(evaluation);
      continue;
    }
    const unit: RunUnitOf<E> = {
      row: evaluation.row,
      ...(evaluation.trial !== undefined && { trial: evaluation.trial }),
      evaluations: [evaluation],
      verdict: 'pass',
      task: undefined,
    };
    entry.rows.set(key, unit);
    entry.units.push(unit);
  }
  const out = new Map<string, { unit: RunUnit; units: RunUnitOf<E>[] }>();
  for (const [id, { unit, units }] of byScenario) {
    for (const member of units) {
      if (member.row === undefined) continue;
      member.verdict = worstVerdict(member.evaluations.map((evaluation) => evaluation.report.verdict));
      const tasks = new Set(member.evaluations.map((evaluation) => evaluation.task));
      // Traces of one trial that name different tasks belong to none.
      member.task = tasks.size === 1 ? [...tasks][0] : undefined;
    }
    out.set(id, { unit, units });
  }
  return out;
}

/** fail over inconclusive over pass. */
function worstVerdict(verdicts: readonly Verdict[]): Verdict {
  if (verdicts.includes('fail')) return 'fail';
  return verdicts.includes('inconclusive') ? 'inconclusive' : 'pass';
}

/**
 * Each scenario's summary, in the order of `scenarios` (a scenario with no evaluation is still
 * there: its gate cannot be met on nothing). `dataset` says the units are dataset rows even
 * where a scenario judged none.
 */
export function summarizeScenarios(
  evaluations: readonly RunEvaluation[],
  scenarios: readonly GatedScenario[],
  options: { dataset?: boolean } = {},
): ScenarioSummary[] {
  const verdicts = runUnits(evaluations);
  const known = new Map<string, GatedScenario>();
  for (const scenario of scenarios) {
    // Dataset rows of one scenario share its gate, which any of them may give.
    const first = known.get(scenario.id);
    if (!first || (first.gate === undefined && scenario.gate !== undefined)) known.set(scenario.id, scenario);
  }
  for (const id of verdicts.keys()) if (!known.has(id)) known.set(id, { id });
  return [...known.values()].map((scenario) => {
    const found = verdicts.get(scenario.id);
    const units = found?.units ?? [];
    const unit = found?.unit ?? (options.dataset ? 'row' : 'trace');
    const count = (verdict: Verdict) => units.filter((u) => u.verdict === verdict).length;
    const counts = {
      evaluated: units.length,
      passed: count('pass'),
      failed: count('fail'),
      inconclusive: count('inconclusive'),
    };
    return {
      id: scenario.id,
      ...(scenario.version !== undefined && { version: scenario.version }),
      unit,
      ...counts,
      passRate: counts.evaluated === 0 ? null : counts.passed / counts.evaluated,
      gate: decideGate(scenario.gate, unit, units, counts),
    };
  });
}

/** The whole run's summary: the per-report totals and each scenario's. */
export function summarizeRun(
  traces: number,
  evaluations: readonly RunEvaluation[],
  scenarios: readonly GatedScenario[],
  options: { dataset?: boolean } = {},
): RunSummary {
  const final = evaluations.filter(({ report }) => report.final !== false);
  const count = (verdict: Verdict) => final.filter(({ report }) => report.verdict === verdict).length;
  return {
    traces,
    evaluated: final.length,
    passed: count('pass'),
    failed: count('fail'),
    inconclusive: count('inconclusive'),
    scenarios: summarizeScenarios(evaluations, scenarios, options),
  };
}

/**
 * The exit status of a run: 2 when an input or scenario could not be read, whatever the gates;
 * else 1 when a scenario's gate is missed (a scenario without a gate misses when one of its
 * evaluations did not pass), or when there were traces and nothing was evaluated at all; else 0.
 */
export function runExitStatus(summary: RunSummary, inputErrors: number): 0 | 1 | 2 {
  if (inputErrors > 0) return 2;
  // Traces but no evaluation at all (no scenario applied): a run must not pass on nothing.
  if (summary.evaluated === 0 && summary.traces > 0) return 1;
  return summary.scenarios.every((scenario) => scenario.gate.met) ? 0 : 1;
}

interface Counts {
  evaluated: number;
  passed: number;
  failed: number;
  inconclusive: number;
}

function decideGate(
  gate: Gate | undefined,
  unit: RunUnit,
  units: readonly UnitVerdict[],
  counts: Counts,
): GateDecision {
  if (!gate || (gate.minPassRate === undefined && gate.passK === undefined)) {
    const notPassed = counts.failed + counts.inconclusive;
    const reason =
      counts.evaluated === 0
        ? 'no gate; it applied to none of the traces, so nothing was judged'
        : notPassed === 0
          ? `no gate: all ${plural(counts.evaluated, unit)} passed`
          : `no gate, so every ${unit} must pass: ${notPassed} of ${plural(counts.evaluated, unit)} did not`;
    return { gated: false, met: notPassed === 0, reason };
  }
  const reasons: string[] = [];
  let met = true;
  const decision: GateDecision = { gated: true, met, reason: '' };
  if (gate.minPassRate !== undefined) {
    const min = gate.minPassRate;
    decision.minPassRate = min;
    if (counts.evaluated === 0) {
      met = false;
      reasons.push(`nothing evaluated: no pass rate to hold to the min pass rate ${min}`);
    } else {
      const rate = counts.passed / counts.evaluated;
      const held = rate >= min;
      met &&= held;
      const measured = `pass rate ${counts.passed}/${counts.evaluated} ${rateText(rate)}`;
      reasons.push(
        held
          ? `${measured}, at least the min pass rate ${min}`
          : `${measured}, below the min pass rate ${min}`,
      );
    }
  }
  if (gate.passK !== undefined) {
    const { k, min } = gate.passK;
    const trials = units.flatMap((u) =>
      u.task === undefined ? [] : [{ task: u.task, pass: u.verdict === 'pass' }],
    );
    const measured = passHatK(trials, k);
    const noTask = units.length - trials.length;
    const held = measured.value !== null && measured.value >= min;
    met &&= held;
    decision.passK = {
      ...measured,
      min,
      met: held,
      noTask,
      ...(gate.trialsBy && { trialsBy: gate.trialsBy.attribute }),
    };
    const left = [
      measured.leftOut > 0 && `${plural(measured.leftOut, 'task')} with fewer than ${k} trials left out`,
      noTask > 0 &&
        `${plural(noTask, 'trial')} with no task left out (${gate.trialsBy ? `no single ${gate.trialsBy.attribute} attribute` : 'not in a dataset row; group traces with gate.trialsBy'})`,
    ].filter((text): text is string => typeof text === 'string');
    const tail = left.length > 0 ? ` (${left.join('; ')})` : '';
    if (measured.value === null) reasons.push(`pass^${k}: no task has ${k} trials${tail}`);
    else {
      const value = `pass^${k} ${rateText(measured.value)} over ${plural(measured.tasks, 'task')}`;
      reasons.push(`${value}, ${held ? 'at least' : 'below'} the min ${min}${tail}`);
    }
  }
  decision.met = met;
  decision.reason = reasons.join('; ');
  return decision;
}

/** `= 0.75` when four decimals say it exactly, else `≈ 0.5714`. */
export function rateText(rate: number): string {
  const shown = Number(rate.toFixed(4));
  return shown === rate ? `= ${shown}` : `≈ ${rate.toFixed(4)}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}
