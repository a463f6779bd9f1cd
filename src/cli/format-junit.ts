/**
 * `--format junit`: one testsuite per scenario, one testcase per evaluated trace. A failed or
 * inconclusive evaluation is a `<failure>` (type says which): CI must not read "could not
 * decide" as green. Input errors become a testcase of their own so they show up too.
 */
import { scenarioLabel } from '../model/report.js';
import { formatInputError } from './read-traces.js';
import type { EvalRun, SourcedReport } from './run-eval.js';

/** The run as a JUnit XML document. */
export function formatJunit(run: EvalRun): string {
  const suites = new Map<string, SourcedReport[]>();
  for (const sourced of run.reports) {
    const key = scenarioLabel(sourced.report.scenario);
    const list = suites.get(key);
    if (list) list.push(sourced);
    else suites.set(key, [sourced]);
  }
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const nothing = run.summary.evaluated === 0 && run.summary.traces > 0 ? 1 : 0;
  const failures = run.summary.failed + run.summary.inconclusive + nothing;
  lines.push(
    `<testsuites name="toolpath" tests="${run.summary.evaluated + run.errors.length + nothing}" failures="${failures}" errors="${run.errors.length}">`,
  );
  for (const [name, reports] of suites) {
    const failed = reports.filter(({ report }) => !report.pass).length;
    lines.push(`  <testsuite name="${xml(name)}" tests="${reports.length}" failures="${failed}" errors="0">`);
    for (const sourced of reports) lines.push(...testcase(name, sourced));
    lines.push('  </testsuite>');
  }
  if (run.summary.evaluated === 0 && run.summary.traces > 0) {
    // A CI system reading only this file must not see green when nothing was judged.
    const message = 'no scenario applies to any of the traces (check appliesTo)';
    lines.push(
      '  <testsuite name="coverage" tests="1" failures="1" errors="0">',
      `    <testcase classname="coverage" name="scenarios applied">`,
      `      <failure type="nothing-evaluated" message="${xml(message)}">${xml(message)}</failure>`,
      '    </testcase>',
      '  </testsuite>',
    );
  }
  if (run.errors.length > 0) {
    lines.push(
      `  <testsuite name="inputs" tests="${run.errors.length}" failures="0" errors="${run.errors.length}">`,
    );
    for (const error of run.errors) {
      const message = formatInputError(error);
      lines.push(
        `    <testcase classname="inputs" name="${xml(error.source)}">`,
        `      <error type="input" message="${xml(message)}">${xml(message)}</error>`,
        '    </testcase>',
      );
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

function testcase(suite: string, { source, report }: SourcedReport): string[] {
  const open = `    <testcase classname="${xml(suite)}" name="${xml(`${report.traceId} (${source})`)}" time="${(report.stats.durationMs / 1000).toFixed(3)}">`;
  if (report.pass) return [open, '    </testcase>'];
  const body = report.findings.map((f) => `[${f.severity}] ${f.rule}: ${f.message}`).join('\n');
  const first = report.findings[0]?.message ?? report.verdict;
  return [
    open,
    `      <failure type="${report.verdict}" message="${xml(first)}">${xml(body)}</failure>`,
    '    </testcase>',
  ];
}

/** Escapes text for an XML attribute or element, dropping characters XML 1.0 cannot carry. */
export function xml(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters XML 1.0 forbids
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}
