/**
 * `--format markdown`: a GitHub-flavoured summary, what `$GITHUB_STEP_SUMMARY` renders. A heading
 * with the totals, one table per scenario (a row per evaluated trace), then the findings of every
 * evaluation that did not pass, and the input errors. Markers are words, not emoji.
 */
import { DIMENSIONS, type Report, scenarioLabel } from '../model/report.js';
import { formatInputError } from './read-traces.js';
import type { EvalRun, SourcedReport } from './run-eval.js';

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
  if (s.evaluated === 0 && s.traces > 0) {
    out.push('', '**NOTHING EVALUATED**: no scenario applies to any of the traces (check `appliesTo`).');
  }

  const byScenario = new Map<string, SourcedReport[]>();
  for (const sourced of run.reports) {
    const key = scenarioLabel(sourced.report.scenario);
    const list = byScenario.get(key);
    if (list) list.push(sourced);
    else byScenario.set(key, [sourced]);
  }
  for (const [label, reports] of byScenario) {
    const dimensions = DIMENSIONS.filter((d) => reports.some(({ report }) => report.scores[d] !== undefined));
    out.push('', `### ${escapeMarkdown(label)}`, '');
    out.push(row(['Trace', 'Source', 'Verdict', 'Calls', ...dimensions]));
    out.push(row(['---', '---', '---', '---:', ...dimensions.map(() => '---:')]));
    for (const { source, report } of reports) {
      out.push(
        row([
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

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function plural(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}
