/**
 * The page `toolpath view` writes for a run (two or more inputs, or a dataset): one
 * self-contained HTML file with each scenario's pass rate and gate, a table of its units (traces,
 * or dataset rows and trials) with their verdicts, filters, and each unit opening the causal
 * DAG of its traces. Pure: a run and its trajectories in, a string out.
 */
import { basename } from 'node:path';
import { formatInputError } from '../io/read-traces.js';
import type { Report } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import { type RunUnitOf, runUnits, type ScenarioSummary } from '../run/run-summary.js';
import type { EvalRun, SourcedReport } from './run-eval.js';
import {
  type CallDetails,
  DAG_SCRIPT,
  escapeHtml,
  renderTrajectory,
  scriptJson,
  VIEW_STYLE,
  verdictBadges,
} from './view-html.js';
import { RUN_PAGE_SCRIPT, RUN_PAGE_STYLE } from './view-run-assets.js';

/** A trajectory the run read, with the input it came from. */
export interface RunPageTrace {
  source: string;
  trajectory: Trajectory;
}

/** What the page says about the run. */
export interface RunPageOptions {
  /** What was read: the inputs, or the dataset. */
  title: string;
}

/** What the page's script knows of each drawn trajectory. */
interface TraceData {
  label: string;
  calls: Record<string, CallDetails>;
}

/** One line of the table: a unit of a scenario, or a trace no scenario judged. */
interface TableRow {
  scenario: string;
  label: string;
  labelTitle: string;
  source: string;
  sourceTitle: string;
  verdict: Report['verdict'] | 'unjudged';
  calls: number;
  findings: number;
  firstFinding: string;
  traces: number[];
  search: string;
}

const traceKey = (source: string, traceId: string) => `${source}\u0000${traceId}`;

/** The run page. `traces` are every trajectory read, judged or not, in the order read. */
export function renderRunPage(
  run: EvalRun,
  traces: readonly RunPageTrace[],
  options: RunPageOptions,
): string {
  const index = new Map<string, number>();
  const drawn: { trace: RunPageTrace; reports: Report[] }[] = [];
  for (const trace of traces) {
    const key = traceKey(trace.source, trace.trajectory.traceId);
    if (index.has(key)) continue;
    index.set(key, drawn.length);
    // A conversation's report names its traces by id alone (its source lists several files).
    const byId = traceKey('', trace.trajectory.traceId);
    if (!index.has(byId)) index.set(byId, drawn.length);
    drawn.push({ trace, reports: [] });
  }
  for (const { source, report } of run.reports) {
    for (const at of drawnTraces(index, source, report)) {
      const entry = drawn[at];
      if (entry && !entry.reports.includes(report)) entry.reports.push(report);
    }
  }
  const toolsOf = (n: number) => [
    ...new Set(drawn[n]?.trace.trajectory.calls.map((call) => call.tool) ?? []),
  ];

  const rows: TableRow[] = [];
  const units = runUnits(run.reports);
  for (const summary of run.summary.scenarios) {
    for (const unit of units.get(summary.id)?.units ?? []) rows.push(unitRow(summary, unit, index, toolsOf));
  }
  for (const { source, traceId } of run.unmatched ?? []) {
    const at = index.get(traceKey(source, traceId));
    if (at === undefined) continue;
    rows.push({
      scenario: '',
      label: shortId(traceId),
      labelTitle: traceId,
      source: basename(source),
      sourceTitle: source,
      verdict: 'unjudged',
      calls: drawn[at]?.trace.trajectory.calls.length ?? 0,
      findings: 0,
      firstFinding: 'no scenario applies to this trace',
      traces: [at],
      search: [traceId, source, ...toolsOf(at)].join(' ').toLowerCase(),
    });
  }

  const rendered = drawn.map(({ trace, reports }) => renderTrajectory(trace.trajectory, reports));
  const templates = drawn.map(({ trace, reports }, n) =>
    dagTemplate(n, trace, reports, rendered[n]?.html ?? ''),
  );
  const data: TraceData[] = drawn.map(({ trace }, n) => ({
    label: `${shortId(trace.trajectory.traceId)} · ${basename(trace.source)}`,
    calls: rendered[n]?.calls ?? {},
  }));

  const scenarios = run.summary.scenarios;
  const judged = rows.filter((row) => row.verdict !== 'unjudged').length;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>${escapeHtml(`toolpath · ${runTitle(rows.length, drawn.length)}`)}</title>
<style>${VIEW_STYLE}${RUN_PAGE_STYLE}</style>
</head>
<body>
<header>
<h1>toolpath · ${escapeHtml(runTitle(rows.length, drawn.length))}</h1>
<p class="meta">${escapeHtml(options.title)} · ${judged} ${judged === 1 ? 'evaluation unit' : 'evaluation units'} in ${scenarios.length} ${scenarios.length === 1 ? 'scenario' : 'scenarios'}${run.errors.length > 0 ? ` · <strong class="bad">${run.errors.length} input ${run.errors.length === 1 ? 'error' : 'errors'}</strong>` : ''}</p>
</header>
<div class="run-page">
${gateCards(scenarios)}
${errorList(run)}
${filterBar(scenarios, rows.length)}
${unitTable(scenarios, rows)}
</div>
<dialog id="dag" aria-label="trajectory">
<div class="dag-bar"><nav class="dag-nav" aria-label="traces of this unit"></nav><button type="button" class="dag-close" aria-label="close">✕ close</button></div>
<div class="dag-body"></div>
</dialog>
${templates.join('\n')}
<script type="application/json" id="toolpath-run">${scriptJson({ traces: data })}</script>
<script>${DAG_SCRIPT}${RUN_PAGE_SCRIPT}</script>
</body>
</html>
`;
}

function unitRow(
  summary: ScenarioSummary,
  unit: RunUnitOf<SourcedReport>,
  index: ReadonlyMap<string, number>,
  toolsOf: (n: number) => string[],
): TableRow {
  const members = unit.evaluations;
  const traces = members.flatMap(({ source, report }) => drawnTraces(index, source, report));
  const findings = members.flatMap(({ report }) => report.findings);
  const first =
    findings.find((finding) => !finding.inconclusive && finding.severity === 'hard') ?? findings[0];
  const only = members.length === 1 ? members[0] : undefined;
  const label =
    unit.row === undefined
      ? only?.report.conversationId !== undefined
        ? `conversation ${shortId(only.report.conversationId)}`
        : shortId(only?.report.traceId ?? '')
      : `row ${unit.row}${unit.trial === undefined ? '' : ` · trial ${unit.trial}`}`;
  const ids = members.flatMap(({ report }) => report.traceIds ?? [report.traceId]);
  const sources = [...new Set(members.map(({ source }) => source))];
  return {
    scenario: summary.id,
    label,
    labelTitle: ids.join(', '),
    source: sources.length === 1 ? basename(sources[0] as string) : `${sources.length} files`,
    sourceTitle: sources.join('\n'),
    verdict: unit.verdict,
    calls: members.reduce((sum, { report }) => sum + report.stats.calls, 0),
    findings: findings.length,
    // Named as eval prints it: the assertion (tool_sequence, order.before[0]), else the rule.
    firstFinding: first ? `${first.assertion ?? first.rule}: ${first.message}` : '',
    traces,
    search: [
      label,
      ...ids,
      ...sources,
      ...traces.flatMap(toolsOf),
      ...findings.flatMap((finding) => [finding.rule, finding.assertion ?? '']),
    ]
      .join(' ')
      .toLowerCase(),
  };
}

/** `run of 5 units over 3 traces`: the table's rows, and the traces drawn. */
function runTitle(units: number, traces: number): string {
  const traceWord = `${traces} ${traces === 1 ? 'trace' : 'traces'}`;
  if (units === traces) return `run of ${traceWord}`;
  return `run of ${units} ${units === 1 ? 'unit' : 'units'} over ${traceWord}`;
}

/** The drawn traces a report judged: its own, or each of its conversation's. */
function drawnTraces(index: ReadonlyMap<string, number>, source: string, report: Report): number[] {
  const out: number[] = [];
  for (const traceId of report.traceIds ?? [report.traceId]) {
    const at = index.get(traceKey(source, traceId)) ?? index.get(traceKey('', traceId));
    if (at !== undefined && !out.includes(at)) out.push(at);
  }
  return out;
}

function shortId(traceId: string): string {
  return traceId.length > 16 ? `${traceId.slice(0, 16)}…` : traceId;
}

const DECISION: Record<string, string> = {
  met: 'GATE MET',
  missed: 'GATE MISSED',
  all: 'ALL PASSED',
  not: 'NOT ALL PASSED',
  none: 'NOTHING EVALUATED',
};

function gateCards(scenarios: readonly ScenarioSummary[]): string {
  if (scenarios.length === 0)
    return '<section class="gates"><p class="muted">No scenario given: the traces are listed, not judged.</p></section>';
  const cards = scenarios.map((s) => {
    const decision = s.gate.gated
      ? s.gate.met
        ? 'met'
        : 'missed'
      : s.evaluated === 0
        ? 'none'
        : s.gate.met
          ? 'all'
          : 'not';
    const rate = s.passRate === null ? 'n/a' : String(Number(s.passRate.toFixed(4)));
    const name = s.version === undefined ? s.id : `${s.id}@${s.version}`;
    return `<article class="gate ${s.gate.met ? 'held' : 'broken'}" data-scenario="${escapeHtml(s.id)}">
<h2>${escapeHtml(name)}</h2>
<p class="rate"><span class="rate-value">${rate}</span> pass rate</p>
<p class="counts">${s.passed} of ${s.evaluated} ${s.unit}${s.evaluated === 1 ? '' : 's'} passed · ${s.failed} failed · ${s.inconclusive} inconclusive</p>
<p class="decision"><span class="badge ${decision}">${DECISION[decision]}</span></p>
<p class="reason">${escapeHtml(s.gate.reason)}</p>
</article>`;
  });
  return `<section class="gates" aria-label="scenarios">${cards.join('\n')}</section>`;
}

function errorList(run: EvalRun): string {
  if (run.errors.length === 0) return '';
  const items = run.errors.map((error) => `<li>${escapeHtml(formatInputError(error))}</li>`);
  return `<section class="errors"><h2>Input errors</h2><ul>${items.join('')}</ul></section>`;
}

function filterBar(scenarios: readonly ScenarioSummary[], total: number): string {
  const options = scenarios.map((s) => `<option value="${escapeHtml(s.id)}">${escapeHtml(s.id)}</option>`);
  const verdicts = ['pass', 'fail', 'inconclusive', 'unjudged'].map(
    (verdict) =>
      `<label class="check ${verdict}"><input type="checkbox" name="verdict" value="${verdict}" checked> ${verdict === 'unjudged' ? 'not judged' : verdict}</label>`,
  );
  return `<form class="filters" role="search" onsubmit="return false">
<label>Scenario <select id="filter-scenario"><option value="">all</option>${options.join('')}</select></label>
<span class="verdicts">${verdicts.join(' ')}</span>
<label>Search <input id="filter-text" type="search" placeholder="trace id, file, tool, rule" size="28"></label>
<span id="shown" aria-live="polite">${total} of ${total} shown</span>
</form>`;
}

function unitTable(scenarios: readonly ScenarioSummary[], rows: readonly TableRow[]): string {
  const groups = [...scenarios.map((s) => s.id), ''];
  const bodies = groups.flatMap((scenario) => {
    const mine = rows.filter((row) => row.scenario === scenario);
    if (mine.length === 0) return [];
    const title = scenario === '' ? 'no scenario applies' : scenario;
    const lines = mine.map((row) => {
      const finding =
        row.firstFinding === ''
          ? ''
          : `<span class="first" title="${escapeHtml(cut(row.firstFinding, 1000))}">${escapeHtml(cut(row.firstFinding, 300))}</span>`;
      return `<tr class="unit" data-scenario="${escapeHtml(row.scenario)}" data-verdict="${row.verdict}" data-traces="${row.traces.join(' ')}" data-search="${escapeHtml(row.search)}">
<td><button type="button" class="open" title="${escapeHtml(row.labelTitle)}">${escapeHtml(row.label)}</button></td>
<td class="src" title="${escapeHtml(row.sourceTitle)}">${escapeHtml(row.source)}</td>
<td><span class="verdict ${row.verdict}">${row.verdict === 'unjudged' ? 'NOT JUDGED' : row.verdict.toUpperCase()}</span></td>
<td class="num">${row.calls}</td>
<td class="num">${row.findings}</td>
<td class="finding-cell">${finding}</td>
</tr>`;
    });
    return [
      `<tbody data-group="${escapeHtml(scenario)}"><tr class="group"><th colspan="6" scope="rowgroup">${escapeHtml(title)} <span class="muted">(${mine.length})</span></th></tr>`,
      ...lines,
      '</tbody>',
    ];
  });
  return `<table class="units">
<thead><tr><th scope="col">Trace / row</th><th scope="col">Source</th><th scope="col">Verdict</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Findings</th><th scope="col">First finding</th></tr></thead>
${bodies.join('\n')}
</table>
<p id="none-shown" class="muted" hidden>No unit matches the filters.</p>`;
}

function dagTemplate(n: number, trace: RunPageTrace, reports: readonly Report[], html: string): string {
  const { trajectory } = trace;
  return `<template id="dag-${n}">
<header class="dag-head">
<h2>${escapeHtml(trajectory.root?.name ?? trajectory.traceId)}</h2>
<p class="meta">trace <code>${escapeHtml(trajectory.traceId)}</code> · ${escapeHtml(trace.source)} · ${trajectory.calls.length} calls · ${trajectory.turns.length} turns ${verdictBadges(reports)}</p>
</header>
<main>
${html}
</main>
</template>`;
}

function cut(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}
