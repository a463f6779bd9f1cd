/** `--format pretty`: what a person reads in a terminal. One block per evaluation, failures first named. */

import { formatInputError } from '../io/read-traces.js';
import { type Report, scenarioLabel } from '../model/report.js';
import type { ScenarioSummary } from '../run/run-summary.js';
import { type EvalRun, nothingEvaluatedReason } from './run-eval.js';

/** Colours for a TTY; plain text elsewhere. */
export interface PrettyOptions {
  color: boolean;
}

const LABEL: Record<Report['verdict'], string> = { pass: 'PASS', fail: 'FAIL', inconclusive: 'INCONCLUSIVE' };

/** What a report judged: `trace <id>`, or `conversation <id> (traces a, b)`. */
function judgedUnit(report: Report): string {
  if (report.conversationId === undefined) return `trace ${report.traceId}`;
  const traces = report.traceIds ?? [report.traceId];
  return `conversation ${report.conversationId} (${traces.length === 1 ? 'trace' : 'traces'} ${traces.join(', ')})`;
}

/** The run as readable text. */
export function formatPretty(run: EvalRun, options: PrettyOptions = { color: false }): string {
  const paint = painter(options.color);
  const out: string[] = [];
  for (const sourced of run.reports) {
    const { source, report } = sourced;
    const colour = report.verdict === 'pass' ? 'green' : report.verdict === 'fail' ? 'red' : 'yellow';
    const agent = report.stats.calls === 1 ? '1 call' : `${report.stats.calls} calls`;
    const row =
      sourced.row === undefined
        ? ''
        : `row ${sourced.row}${sourced.trial === undefined ? '' : ` trial ${sourced.trial}`}, `;
    out.push(
      `${paint(colour, LABEL[report.verdict])}  ${scenarioLabel(report.scenario)}  ${judgedUnit(report)}  ${paint('dim', `(${row}${source}, ${agent}, ${formatMs(report.stats.durationMs)})`)}`,
    );
    const scores = Object.entries(report.scores).map(
      ([dimension, score]) => `${dimension} ${score.toFixed(2)}`,
    );
    if (scores.length > 0) out.push(`    ${paint('dim', scores.join('  '))}`);
    for (const finding of report.findings) {
      const mark = finding.inconclusive ? '?' : finding.severity === 'hard' ? 'x' : '!';
      out.push(`    ${paint(colour, mark)} ${finding.assertion ?? finding.rule}: ${finding.message}`);
      const where = [
        finding.calls.length > 0 && `calls ${finding.calls.join(', ')}`,
        finding.spans.length > 0 && `spans ${finding.spans.join(', ')}`,
      ].filter(Boolean);
      if (where.length > 0) out.push(`      ${paint('dim', where.join('; '))}`);
    }
  }
  for (const error of run.errors) out.push(`${paint('red', 'ERROR')}  ${formatInputError(error)}`);
  const nothing = nothingEvaluatedReason(run);
  if (nothing) out.push(`${paint('yellow', 'NOTHING EVALUATED')}  ${nothing}`);
  const s = run.summary;
  if (s.scenarios.length > 0) out.push('');
  for (const scenario of s.scenarios) out.push(...scenarioLines(scenario, paint));
  out.push(
    '',
    `${s.traces} ${s.traces === 1 ? 'trace' : 'traces'}, ${s.evaluated} ${s.evaluated === 1 ? 'evaluation' : 'evaluations'}: ` +
      `${s.passed} passed, ${s.failed} failed, ${s.inconclusive} inconclusive` +
      (run.errors.length > 0
        ? `; ${run.errors.length} input ${run.errors.length === 1 ? 'error' : 'errors'}`
        : ''),
  );
  return `${out.join('\n')}\n`;
}

/**
 * A scenario over the run: whether its gate held (without one: whether every evaluation
 * passed), its pass rate in its unit, and the gate's reason.
 */
function scenarioLines(scenario: ScenarioSummary, paint: ReturnType<typeof painter>): string[] {
  const { gate } = scenario;
  const label = gate.gated
    ? gate.met
      ? 'GATE MET'
      : 'GATE MISSED'
    : scenario.evaluated === 0
      ? 'NOTHING EVALUATED'
      : gate.met
        ? 'ALL PASSED'
        : 'NOT ALL PASSED';
  const rate = scenario.passRate === null ? 'n/a' : String(Number(scenario.passRate.toFixed(4)));
  const units = `${scenario.passed} of ${scenario.evaluated} ${scenario.unit}${scenario.evaluated === 1 ? '' : 's'} passed`;
  const name = scenario.version === undefined ? scenario.id : `${scenario.id}@${scenario.version}`;
  return [
    `${paint(scenario.evaluated === 0 ? 'yellow' : gate.met ? 'green' : 'red', label)}  ${name}  pass rate ${rate} (${units})`,
    `    ${gate.reason}`,
  ];
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;
}

const CODES = { green: 32, red: 31, yellow: 33, dim: 2 } as const;

function painter(color: boolean): (code: keyof typeof CODES, text: string) => string {
  return color ? (code, text) => `\u001b[${CODES[code]}m${text}\u001b[0m` : (_code, text) => text;
}
