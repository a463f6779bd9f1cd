/**
 * `--format markdown`: a GitHub-flavoured summary, what `$GITHUB_STEP_SUMMARY` renders. A heading
 * with the totals, a table of the scenarios (pass rate, gate, decision and its reason), one table
 * per scenario (a row per evaluated trace), then the findings of every evaluation that did not
 * pass, and the input errors. Markers are words, not emoji.
 */

import { formatInputError } from '../io/read-traces.js';
import { DIMENSIONS, type Report, scenarioLabel } from '../model/report.js';
import type { ScenarioSummary } from '../run/run-summary.js';
import { type EvalRun, nothingEvaluatedReason, type SourcedReport } from './run-eval.js';

const LABEL: Record<Report['verdict'], string> = { pass: 'PASS', fail: 'FAIL', inconclusive: 'INCONCLUSIVE' };

/** The run as a markdown document. */
export function formatMarkdown(run: EvalRun): string {
  const s = run.summary;
  const errors =
    run.errors.length > 0
      ? `, ${run.errors.length} input ${run.errors.length === 1 ? 'error' : 'errors'}`
      : '';
  const out: string[] = [
    `## toolpath: ${s.passed} passed, ${s.failed} failed, ${s.inconclusive} inconclusive`,
    '',
    `${plural(s.evaluated, 'evaluation')} of ${plural(s.traces, 'trace')}${errors}.`,
  ];
  const nothing = nothingEvaluatedReason(run);
  if (nothing)
    out.push('', `**NOTHING EVALUATED**: ${nothing.replace(/toolpath inspect \S+|appliesTo/g, '`$&`')}.`);
  if (s.scenarios.length > 0) out.push('', ...scenarioTable(s.scenarios));

  const byScenario = new Map<string, SourcedReport[]>();
  for (const sourced of run.reports) {
    const key = scenarioLabel(sourced.report.scenario);
    const list = byScenario.get(key);
    if (list) list.push(sourced);
    else byScenario.set(key, [sourced]);
  }
  for (const [label, reports] of byScenario) {
    const dimensions = DIMENSIONS.filter((d) => reports.some(({ report }) => report.scores[d] !== undefined));
    const rows = reports.some((sourced) => sourced.row !== undefined);
    out.push('', `### ${escapeMarkdown(label)}`, '');
    out.push(row([...(rows ? ['Row'] : []), 'Trace', 'Source', 'Verdict', 'Calls', ...dimensions]));
    out.push(row([...(rows ? ['---'] : []), '---', '---', '---', '---:', ...dimensions.map(() => '---:')]));
    for (const sourced of reports) {
      const { source, report } = sourced;
      const rowCell = `${sourced.row ?? ''}${sourced.trial === undefined ? '' : ` trial ${sourced.trial}`}`;
      out.push(
        row([
          ...(rows ? [escapeMarkdown(rowCell)] : []),
          escapeMarkdown(report.traceId),
          escapeMarkdown(source),
          `**${LABEL[report.verdict]}**`,
          String(report.stats.calls),
          ...dimensions.map((d) => report.scores[d]?.toFixed(2) ?? '-'),
        ]),
      );
    }
  }

  const failing = run.reports.filter(({ report }) => report.verdict !== 'pass' && report.findings.length > 0);
  if (failing.length > 0) {
    out.push('', '### Findings', '');
    for (const { source, report } of failing) {
      for (const finding of report.findings) {
        const mark = finding.inconclusive ? 'UNDECIDED' : finding.severity === 'hard' ? 'HARD' : 'WARNING';
        const calls =
          finding.calls.length > 0 ? ` (calls ${finding.calls.map(escapeMarkdown).join(', ')})` : '';
        out.push(
          `- **${mark}** ${escapeMarkdown(finding.rule)} in ${escapeMarkdown(scenarioLabel(report.scenario))}, ` +
            `trace ${escapeMarkdown(report.traceId)} (${escapeMarkdown(source)}): ${escapeMarkdown(finding.message)}${calls}`,
        );
      }
    }
  }

  if (run.errors.length > 0) {
    out.push('', '### Input errors', '');
    for (const error of run.errors) out.push(`- ${escapeMarkdown(formatInputError(error))}`);
  }
  return `${out.join('\n')}\n`;
}

/**
 * Text made safe for a table cell or a list item: `|` would end the cell and a newline the row,
 * `<` and `>` would be read as HTML, a backquote would open a code span. Line breaks become
 * `<br>`, which both render.
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/`/g, '\\`')
    .replace(/\r\n|\r|\n/g, '<br>');
}

/** One line per scenario: its pass rate in its unit, its gate, the decision and why. */
function scenarioTable(scenarios: readonly ScenarioSummary[]): string[] {
  const lines = [
    row(['Scenario', 'Unit', 'Passed', 'Pass rate', 'Gate', 'Decision']),
    row(['---', '---', '---:', '---:', '---', '---']),
  ];
  for (const scenario of scenarios) {
    const { gate } = scenario;
    const gates = [
      gate.minPassRate !== undefined && `min pass rate ${gate.minPassRate}`,
      gate.passK && `pass^${gate.passK.k} >= ${gate.passK.min}`,
    ].filter((text): text is string => typeof text === 'string');
    const decision = gate.gated
      ? gate.met
        ? 'MET'
        : 'MISSED'
      : scenario.evaluated === 0
        ? 'NOTHING EVALUATED'
        : gate.met
          ? 'ALL PASSED'
          : 'NOT ALL PASSED';
    lines.push(
      row([
        escapeMarkdown(scenario.version === undefined ? scenario.id : `${scenario.id}@${scenario.version}`),
        scenario.unit,
        `${scenario.passed} of ${scenario.evaluated}`,
        scenario.passRate === null ? 'n/a' : String(Number(scenario.passRate.toFixed(4))),
        gates.length > 0 ? escapeMarkdown(gates.join(', ')) : 'none',
        `**${decision}**: ${escapeMarkdown(gate.reason)}`,
      ]),
    );
  }
  return lines;
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function plural(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}
