/**
 * `--format junit`: one testsuite per scenario, one testcase per evaluated trace, and for a
 * gated scenario a `gate` testcase that fails when the gate is missed; each suite carries its
 * pass rate as the property `toolpath.pass_rate`. An evaluation that did not pass is a
 * `<failure>` (type says which), except in a scenario whose gate was met: the gate tolerated it,
 * so it is told in `<system-out>` and the property `toolpath.verdict`, and a CI reading only this
 * file agrees with the exit status. Input errors become a testcase of their own.
 */

import { formatInputError } from '../io/read-traces.js';
import { scenarioLabel } from '../model/report.js';
import type { ScenarioSummary } from '../run/run-summary.js';
import { type EvalRun, nothingEvaluatedReason, type SourcedReport } from './run-eval.js';

/** The run as a JUnit XML document. */
export function formatJunit(run: EvalRun): string {
  const suites = new Map<string, { summary?: ScenarioSummary; reports: SourcedReport[] }>();
  for (const summary of run.summary.scenarios) suites.set(summary.id, { summary, reports: [] });
  for (const sourced of run.reports) {
    const suite = suites.get(sourced.report.scenario.id);
    if (suite) suite.reports.push(sourced);
    else suites.set(sourced.report.scenario.id, { reports: [sourced] });
  }
  const body: string[] = [];
  let tests = 0;
  let failures = 0;
  for (const { summary, reports } of suites.values()) {
    if (reports.length === 0 && !summary?.gate.gated) continue;
    const tolerated = summary?.gate.gated === true && summary.gate.met;
    const name = summary ? labelOf(summary) : scenarioLabel((reports[0] as SourcedReport).report.scenario);
    const cases = reports.map((sourced) => testcase(name, sourced, tolerated));
    let failed = tolerated ? 0 : reports.filter(({ report }) => !report.pass).length;
    if (summary?.gate.gated) {
      cases.push(gateTestcase(name, summary));
      if (!summary.gate.met) failed++;
    }
    tests += cases.length;
    failures += failed;
    body.push(`  <testsuite name="${xml(name)}" tests="${cases.length}" failures="${failed}" errors="0">`);
    if (summary) body.push(...suiteProperties(summary));
    for (const lines of cases) body.push(...lines);
    body.push('  </testsuite>');
  }
  const message = nothingEvaluatedReason(run);
  if (message) {
    // A CI system reading only this file must not see green when nothing was judged.
    tests++;
    failures++;
    body.push(
      '  <testsuite name="coverage" tests="1" failures="1" errors="0">',
      `    <testcase classname="coverage" name="scenarios applied">`,
      `      <failure type="nothing-evaluated" message="${xml(message)}">${xml(message)}</failure>`,
      '    </testcase>',
      '  </testsuite>',
    );
  }
  if (run.errors.length > 0) {
    tests += run.errors.length;
    body.push(
      `  <testsuite name="inputs" tests="${run.errors.length}" failures="0" errors="${run.errors.length}">`,
    );
    for (const error of run.errors) {
      const message = formatInputError(error);
      body.push(
        `    <testcase classname="inputs" name="${xml(error.source)}">`,
        `      <error type="input" message="${xml(message)}">${xml(message)}</error>`,
        '    </testcase>',
      );
    }
    body.push('  </testsuite>');
  }
  return `${[
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="toolpath" tests="${tests}" failures="${failures}" errors="${run.errors.length}">`,
    ...body,
    '</testsuites>',
  ].join('\n')}\n`;
}

function labelOf(summary: ScenarioSummary): string {
  return scenarioLabel({
    id: summary.id,
    ...(summary.version !== undefined && { version: summary.version }),
  });
}

/** The scenario's pass rate, unit and gate as suite properties. */
function suiteProperties(summary: ScenarioSummary): string[] {
  const properties: [string, string][] = [
    ['toolpath.pass_rate', summary.passRate === null ? 'n/a' : String(summary.passRate)],
    ['toolpath.unit', summary.unit],
    ['toolpath.passed', String(summary.passed)],
    ['toolpath.evaluated', String(summary.evaluated)],
    ['toolpath.gate', summary.gate.gated ? (summary.gate.met ? 'met' : 'missed') : 'none'],
  ];
  if (summary.gate.minPassRate !== undefined)
    properties.push(['toolpath.min_pass_rate', String(summary.gate.minPassRate)]);
  const passK = summary.gate.passK;
  if (passK) {
    properties.push([`toolpath.pass_hat_${passK.k}`, passK.value === null ? 'n/a' : String(passK.value)]);
    properties.push([`toolpath.min_pass_hat_${passK.k}`, String(passK.min)]);
  }
  return [
    '    <properties>',
    ...properties.map(([name, value]) => `      <property name="${xml(name)}" value="${xml(value)}"/>`),
    '    </properties>',
  ];
}

function gateTestcase(suite: string, summary: ScenarioSummary): string[] {
  const open = `    <testcase classname="${xml(suite)}" name="gate">`;
  const reason = xml(summary.gate.reason);
  if (summary.gate.met) return [open, `      <system-out>${reason}</system-out>`, '    </testcase>'];
  return [open, `      <failure type="gate" message="${reason}">${reason}</failure>`, '    </testcase>'];
}

function testcase(suite: string, sourced: SourcedReport, tolerated: boolean): string[] {
  const { source, report } = sourced;
  const row =
    sourced.row === undefined
      ? ''
      : `row ${sourced.row}${sourced.trial === undefined ? '' : ` trial ${sourced.trial}`}, `;
  const open = `    <testcase classname="${xml(suite)}" name="${xml(`${report.conversationId === undefined ? report.traceId : `conversation ${report.conversationId}`} (${row}${source})`)}" time="${(report.stats.durationMs / 1000).toFixed(3)}">`;
  if (report.pass) return [open, '    </testcase>'];
  const body = report.findings.map((f) => `[${f.severity}] ${f.rule}: ${f.message}`).join('\n');
  if (tolerated) {
    return [
      open,
      '      <properties>',
      `        <property name="toolpath.verdict" value="${report.verdict}"/>`,
      '      </properties>',
      `      <system-out>${xml(`${report.verdict}, within the gate:\n${body}`)}</system-out>`,
      '    </testcase>',
    ];
  }
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
