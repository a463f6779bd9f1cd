/**
 * The page `toolpath view` writes: one self-contained HTML file (inline CSS and JS, nothing
 * fetched) drawing a trajectory as its causal DAG, one row per turn, with the findings of the
 * reports highlighted on the calls they name. Pure: a trajectory and reports in, a string out.
 */
import type { Finding, Report } from '../model/report.js';
import { DIMENSIONS, scenarioLabel } from '../model/report.js';
import type { AgentRun, Captured, ToolCall, Trajectory, Turn } from '../model/trajectory.js';

/** What the page says about where the trace came from. */
export interface ViewPageOptions {
  /** The input file, shown in the header. */
  source: string;
}

/** `&`, `<`, `>`, `"` and `'` as entities: safe in text and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/**
 * JSON that can sit inside a `<script>` element: `<`, `>` and `&` as `\u` escapes, so no value
 * can close the element; U+2028/U+2029 too, which older parsers take for line ends.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}

/**
 * One trajectory's drawing, as both pages show it: the graph and, beside it, the findings and
 * the call details panel (`#details`); and the details of each call for {@link DAG_SCRIPT}.
 */
export function renderTrajectory(
  trajectory: Trajectory,
  reports: readonly Report[],
): { html: string; calls: Record<string, CallDetails> } {
  const findings = reports.flatMap((report) => report.findings.map((finding) => ({ report, finding })));
  const flagged = new Map<string, Finding[]>();
  for (const { finding } of findings) {
    for (const id of finding.calls) flagged.set(id, [...(flagged.get(id) ?? []), finding]);
  }
  const graph = new GraphWriter(trajectory, flagged).write();
  const turnLabels = turnLabelsOf(trajectory);
  const calls = Object.fromEntries(
    trajectory.calls.map((call) => [call.id, callDetails(call, flagged, turnLabels)]),
  );
  const html = `<section class="graph" aria-label="trajectory">
${graph}
</section>
<aside>
${findingsSection(reports, findings, turnLabels)}
<section class="details-panel"><h2>Call</h2><div id="details"><p class="muted">Hover or click a call.</p></div></section>
</aside>`;
  return { html, calls };
}

/** The verdict badges of the reports on one trajectory. */
export function verdictBadges(reports: readonly Report[]): string {
  return reports
    .map(
      (report) =>
        `<span class="verdict ${report.verdict}">${escapeHtml(report.verdict.toUpperCase())} ${escapeHtml(scenarioLabel(report.scenario))}</span>`,
    )
    .join(' ');
}

/** The whole page for one trajectory and the reports made on it (none without `--scenario`). */
export function renderViewPage(
  trajectory: Trajectory,
  reports: readonly Report[],
  options: ViewPageOptions,
): string {
  const drawn = renderTrajectory(trajectory, reports);
  const verdicts = verdictBadges(reports);
  const title = `toolpath · ${trajectory.root?.name ?? trajectory.traceId}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>${VIEW_STYLE}</style>
</head>
<body>
<header>
<h1>${escapeHtml(title)}</h1>
<p class="meta">trace <code>${escapeHtml(trajectory.traceId)}</code> · ${escapeHtml(options.source)} · ${trajectory.calls.length} calls · ${trajectory.turns.length} turns ${verdicts}</p>
<p class="legend"><span class="swatch ok">ok</span> <span class="swatch error">error</span> <span class="swatch no_result">no result</span>${trajectory.calls.some((call) => call.outcome.status === 'not_executed') ? ' <span class="swatch not_executed">not executed</span>' : ''}${reports.length > 0 ? ' <span class="swatch flagged">named by a finding <span class="marker">⚑</span></span>' : ''} · hover or click a call for its arguments and result</p>
</header>
${finalAnswer(trajectory)}<main>
${drawn.html}
</main>
<script type="application/json" id="toolpath-data">${scriptJson({ calls: drawn.calls })}</script>
<script>${DAG_SCRIPT}
toolpathDag(document, JSON.parse(document.getElementById('toolpath-data').textContent).calls, document.getElementById('details'));
</script>
</body>
</html>
`;
}

/**
 * The agent's final answer, when its convention records the text: the last answer of the
 * outermost run's turns (in causal order), else of any turn. Escaped; '' when there is none.
 */
function finalAnswer(trajectory: Trajectory): string {
  const outermost = trajectory.agents[0]?.id;
  let last: string | undefined;
  let lastOfOutermost: string | undefined;
  for (const turn of trajectory.turns) {
    if (turn.answer === undefined) continue;
    last = turn.answer;
    if (turn.runId === outermost) lastOfOutermost = turn.answer;
  }
  const answer = lastOfOutermost ?? last;
  if (answer === undefined) return '';
  return `<section class="answer"><h2>Final answer</h2><p>${escapeHtml(answer)}</p></section>\n`;
}

/** What the details panel shows for one call (built by the script with textContent, never as HTML). */
export interface CallDetails {
  id: string;
  tool: string;
  outcome: string;
  fields: [string, string][];
  args: string;
  result: string;
}

/**
 * `turn 2` (or `turn 2 of billing-agent` when there are several runs), as the graph numbers
 * them: the details panel names a turn the way the drawing does, not by its internal id.
 */
function turnLabelsOf(trajectory: Trajectory): Map<string, string> {
  const labels = new Map<string, string>();
  const several = trajectory.agents.length > 1;
  for (const run of trajectory.agents)
    run.turns.forEach((id, index) => {
      labels.set(id, `turn ${index + 1}${several && run.name ? ` of ${run.name}` : ''}`);
    });
  return labels;
}

function callDetails(
  call: ToolCall,
  flagged: Map<string, Finding[]>,
  turnLabels: Map<string, string>,
): CallDetails {
  const fields: [string, string][] = [['node id', call.id]];
  if (call.callId && call.callId !== call.id) fields.push(['call id', call.callId]);
  if (call.spanId) fields.push(['span', call.spanId]);
  if (call.agentName) fields.push(['agent', call.agentName]);
  if (call.turnId) fields.push(['turn', turnLabels.get(call.turnId) ?? 'a turn of no drawn run']);
  fields.push(['convention', call.convention]);
  for (const finding of flagged.get(call.id) ?? [])
    fields.push([
      `finding ${finding.assertion ?? finding.rule}`,
      withTurnLabels(finding.message, turnLabels),
    ]);
  return {
    id: call.id,
    tool: call.tool,
    outcome: outcomeText(call),
    fields,
    args: capturedText(call.args),
    result: capturedText(call.result),
  };
}

function outcomeText(call: ToolCall): string {
  const outcome = call.outcome;
  if (outcome.status === 'ok') return 'ok';
  if (outcome.status === 'not_executed') return 'not executed';
  if (outcome.status === 'no_result') return 'no result';
  return ['error', outcome.errorType, outcome.message].filter(Boolean).join(': ');
}

function capturedText(value: Captured<unknown>): string {
  if (!value.captured) return '(not captured)';
  return typeof value.value === 'string' ? value.value : JSON.stringify(value.value, null, 2);
}

/** The hover text of a call node: short, since browsers cut long titles anyway. */
function titleOf(call: ToolCall): string {
  const cut = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text);
  return [
    `${call.tool} (${call.id}): ${outcomeText(call)}`,
    `args: ${cut(capturedText(call.args))}`,
    `result: ${cut(capturedText(call.result))}`,
  ].join('\n');
}

/** Runs drawn inside one another at most this deep; deeper ones start again at the top. */
const MAX_NESTING = 32;

function listIn<K, V>(map: Map<K, V[]>, key: K): V[] {
  let list = map.get(key);
  if (!list) {
    list = [];
    map.set(key, list);
  }
  return list;
}

/**
 * Writes the runs as nested blocks: each run's turns top to bottom in causal order, the calls
 * a turn issued side by side (they are parallel), a sub-agent run right under the row of the
 * call that started it, and calls without a turn in a lane of their own.
 */
class GraphWriter {
  readonly #rendered = new Set<string>();
  readonly #runsDone = new Set<string>();
  readonly #turns: Map<string, Turn>;
  /** Calls some turn issued: drawn in that turn's row, never in a run's no-turn lane. */
  readonly #issued: Set<string>;
  /** Runs by the run they were started from (undefined: the top-level runs). */
  readonly #childRuns = new Map<string | undefined, AgentRun[]>();
  /** Runs by the call that started them. */
  readonly #startedBy = new Map<string, AgentRun[]>();
  /** Runs the trace does not say how control reached (`Trajectory.unstartedRuns`). */
  readonly #unstarted: Set<string>;

  constructor(
    private readonly trajectory: Trajectory,
    private readonly flagged: Map<string, Finding[]>,
  ) {
    this.#turns = new Map(trajectory.turns.map((turn) => [turn.id, turn]));
    this.#issued = new Set(trajectory.turns.flatMap((turn) => turn.issued));
    this.#unstarted = new Set(trajectory.unstartedRuns().map((run) => run.id));
    for (const run of trajectory.agents) {
      listIn(this.#childRuns, run.parentRunId).push(run);
      if (run.parentCallId) listIn(this.#startedBy, run.parentCallId).push(run);
    }
  }

  write(): string {
    const parts = (this.#childRuns.get(undefined) ?? []).map((run) => this.run(run, 0));
    // Runs whose parent is unknown or nested too deep to draw inside it, then calls that belong
    // to no run at all. Outermost first, so a deep chain is drawn in blocks of MAX_NESTING.
    for (const run of this.trajectory.agents)
      if (!this.#runsDone.has(run.id)) parts.push(this.run(run, 0, run.parentRunId !== undefined));
    const rest = this.trajectory.calls.filter((call) => !this.#rendered.has(call.id));
    if (rest.length > 0) parts.push(this.lane('calls outside any turn', rest));
    return parts.join('\n');
  }

  /**
   * One run and, up to {@link MAX_NESTING} levels, the runs under it: deeper ones are left to
   * {@link write}, which draws them at the top (`detached`), so no trace can nest the page, or
   * this writer's calls, without bound.
   */
  private run(run: AgentRun, nesting: number, detached = false): string {
    this.#runsDone.add(run.id);
    const rows: string[] = [];
    const turns = run.turns.flatMap((id) => this.#turns.get(id) ?? []);
    turns.forEach((turn, index) => {
      if (index > 0) rows.push('<div class="edge" aria-hidden="true">▼</div>');
      const calls = turn.issued.flatMap((id) => this.callOf(id));
      rows.push(this.row(`turn ${index + 1}`, turn, calls));
      rows.push(...this.subRuns(calls, nesting));
    });
    const loose = run.calls.filter((id) => !this.#issued.has(id)).flatMap((id) => this.callOf(id));
    if (loose.length > 0) {
      rows.push(this.lane('no turn', loose));
      rows.push(...this.subRuns(loose, nesting));
    }
    if (nesting < MAX_NESTING)
      for (const child of this.#childRuns.get(run.id) ?? [])
        if (!this.#runsDone.has(child.id)) rows.push(this.run(child, nesting + 1));
    const started = run.parentCallId
      ? ` · started by call ${run.parentCallId}`
      : run.handoffCallId
        ? ` · handed off to by call ${run.handoffCallId}`
        : this.#unstarted.has(run.id)
          ? ' · no recorded handoff or call started it'
          : '';
    const under = detached ? ` · under run ${run.parentRunId}, nested too deep to draw inside it` : '';
    const kind = run.parentRunId ? 'sub-agent' : 'agent';
    return `<div class="run${run.parentRunId ? ' sub' : ''}" data-run-id="${escapeHtml(run.id)}">
<div class="run-head">${kind} <strong>${escapeHtml(run.name ?? '(unnamed)')}</strong><span class="muted">${escapeHtml(started + under)}</span></div>
${rows.join('\n')}
</div>`;
  }

  /** The call with this id, once: a call already drawn (or unknown) gives nothing. */
  private callOf(id: string): ToolCall[] {
    const call = this.trajectory.call(id);
    if (!call || this.#rendered.has(id)) return [];
    this.#rendered.add(id);
    return [call];
  }

  private subRuns(calls: readonly ToolCall[], nesting: number): string[] {
    if (nesting >= MAX_NESTING) return [];
    const started = calls.flatMap((call) => this.#startedBy.get(call.id) ?? []);
    // In the trajectory's order of runs, whichever call started each.
    if (started.length > 1)
      started.sort((a, b) => this.trajectory.agents.indexOf(a) - this.trajectory.agents.indexOf(b));
    return started.filter((run) => !this.#runsDone.has(run.id)).map((run) => this.run(run, nesting + 1));
  }

  private row(label: string, turn: Turn, calls: readonly ToolCall[]): string {
    const body =
      calls.length > 0
        ? calls.map((call) => this.node(call)).join('')
        : '<span class="muted">no tool calls (answer)</span>';
    const seen =
      turn.consumed.length > 0
        ? `saw ${turn.consumed.length} result${turn.consumed.length > 1 ? 's' : ''}`
        : '';
    const title = [turn.id, turn.model].filter(Boolean).join(' · ');
    return `<div class="turn" data-turn-id="${escapeHtml(turn.id)}"><div class="turn-label" title="${escapeHtml(title)}">${escapeHtml(label)}<small>${escapeHtml(seen)}</small></div><div class="calls">${body}</div></div>`;
  }

  private lane(label: string, calls: readonly ToolCall[]): string {
    for (const call of calls) this.#rendered.add(call.id);
    return `<div class="turn lane"><div class="turn-label">${escapeHtml(label)}<small>causal order</small></div><div class="calls">${calls.map((call) => this.node(call)).join('')}</div></div>`;
  }

  private node(call: ToolCall): string {
    const findings = this.flagged.get(call.id) ?? [];
    const classes = ['call', call.outcome.status, ...(findings.length > 0 ? ['flagged'] : [])];
    const marker =
      findings.length > 0
        ? `<span class="marker" title="${escapeHtml(findings.map((f) => f.rule).join(', '))}">⚑</span>`
        : '';
    return `<button type="button" class="${classes.join(' ')}" data-call-id="${escapeHtml(call.id)}" title="${escapeHtml(titleOf(call))}"><span class="tool">${escapeHtml(call.tool)}</span><span class="cid">${escapeHtml(call.id)}</span>${marker}</button>`;
  }
}

function findingsSection(
  reports: readonly Report[],
  findings: readonly { report: Report; finding: Finding }[],
  turnLabels: ReadonlyMap<string, string>,
): string {
  if (reports.length === 0) return '';
  const items = findings.map(({ report, finding }) => {
    const calls = finding.calls.map((id) => `<code>${escapeHtml(id)}</code>`).join(' ');
    const name = finding.assertion ?? finding.rule;
    return `<li><button type="button" class="finding ${finding.severity}" data-calls="${escapeHtml(finding.calls.join(' '))}"><span class="rule">${escapeHtml(name)}</span> <span class="severity">${escapeHtml(finding.severity)}</span> <span class="muted">${escapeHtml(scenarioLabel(report.scenario))}</span><br>${escapeHtml(withTurnLabels(finding.message, turnLabels))}<br>${calls}</button></li>`;
  });
  const body =
    items.length > 0 ? `<ol class="findings">${items.join('\n')}</ol>` : '<p class="muted">No findings.</p>';
  const scores = reports.map((report) => {
    const dimensions = DIMENSIONS.filter((dimension) => report.scores[dimension] !== undefined).map(
      (dimension) => `${dimension} ${Number((report.scores[dimension] as number).toFixed(2))}`,
    );
    return `<p class="scores"><span class="muted">${escapeHtml(scenarioLabel(report.scenario))}</span> ${escapeHtml(dimensions.join(' · ') || 'no dimension scored')}</p>`;
  });
  return `<section class="findings-panel"><h2>Scores</h2>${scores.join('')}<h2>Findings</h2>${body}</section>`;
}

/** A finding's message with each turn id the trajectory has named as the graph names it (`turn 3`). */
function withTurnLabels(message: string, turnLabels: ReadonlyMap<string, string>): string {
  let text = message;
  // Longest ids first, so no id is replaced inside a longer one.
  const ids = [...turnLabels.keys()].filter((id) => text.includes(id)).sort((a, b) => b.length - a.length);
  for (const id of ids) {
    const label = turnLabels.get(id) as string;
    text = text.replaceAll(`turn ${id}`, label).replaceAll(id, label);
  }
  return text;
}

/** The CSS of a drawn trajectory (and of the single-trace page around it). */
export const VIEW_STYLE = `
.answer{margin:0 0 12px;padding:8px 12px;border:1px solid #d0d7de;border-radius:6px;background:#f6f8fa;max-width:100%}.answer h2{font-size:0.95em;margin:0 0 4px;color:#57606a}.answer p{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;background:#f6f8fa}
header{padding:12px 20px;background:#fff;border-bottom:1px solid #d0d7de}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:0 0 8px}
.meta,.legend{margin:2px 0;color:#57606a}
.swatch{display:inline-flex;align-items:center;gap:4px;padding:0 6px;border:2px solid;border-radius:4px;color:#1f2328}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.muted{color:#6e7781}
main{display:flex;gap:16px;padding:16px 20px;align-items:flex-start}
.graph{flex:1 1 auto;min-width:0}
aside{flex:0 0 380px;display:flex;flex-direction:column;gap:16px;position:sticky;top:8px}
aside section{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:10px 12px}
.run{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;margin-bottom:12px}
.run.sub{margin:6px 0 6px 48px;background:#f3f0ff;border-color:#c5b8f5}
.run-head{margin-bottom:6px}.run-head .muted{margin-left:6px}
.turn{display:flex;align-items:center;gap:12px;padding:4px 0;min-width:0}
.turn.lane{border-top:1px dashed #d0d7de;margin-top:6px;padding-top:8px}
.turn-label{flex:0 0 92px;font-weight:600;color:#57606a}.turn-label small{display:block;font-weight:400}
.calls{display:flex;flex-wrap:wrap;gap:10px;flex:1 1 auto;min-width:0}
.edge{margin-left:140px;color:#8c959f;line-height:1;font-size:12px}
.call{position:relative;display:inline-flex;flex-direction:column;align-items:flex-start;min-width:min(130px,100%);max-width:100%;padding:6px 10px;border:2px solid;border-radius:6px;font:inherit;text-align:left;cursor:pointer;background:#fff;overflow-wrap:anywhere}
.call .tool{font-weight:600}.call .cid{font:11px ui-monospace,Menlo,monospace;color:#57606a}
.ok{border-color:#1a7f37;background:#dafbe1}
.error{border-color:#cf222e;background:#ffebe9}
.no_result{border-color:#8c959f;background:#eaeef2;border-style:dashed}
.not_executed{border-color:#8c959f;background:#fff;border-style:dotted;color:#57606a}
.flagged{box-shadow:0 0 0 3px #bf8700}
.marker{position:absolute;top:-9px;right:-9px;background:#bf8700;color:#fff;border-radius:50%;width:18px;height:18px;font-size:11px;display:flex;align-items:center;justify-content:center}
.swatch .marker{position:static}
.call.selected{outline:3px solid #0969da;outline-offset:2px}
.call.focus{box-shadow:0 0 0 4px #cf222e}
ol.findings{margin:0;padding-left:20px}ol.findings li{margin-bottom:6px}
.finding{font:inherit;text-align:left;width:100%;background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 8px;cursor:pointer}
.finding.warning{background:#f6f8fa;border-color:#d0d7de}
.finding.active{outline:2px solid #cf222e}
.finding .rule{font-weight:600}.finding .severity{font-size:11px;text-transform:uppercase;color:#9a6700}
.verdict{font-weight:600;padding:0 6px;border-radius:4px;margin-left:6px}
.verdict.pass{background:#dafbe1;color:#1a7f37}.verdict.fail{background:#ffebe9;color:#cf222e}.verdict.inconclusive{background:#eaeef2}
#details dl{display:grid;grid-template-columns:auto 1fr;gap:2px 8px;margin:0 0 8px}
#details dt{color:#57606a}#details dd{margin:0;min-width:0;overflow-wrap:anywhere}
#details pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:6px;max-height:260px;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0 8px}
.finding,.run-head{overflow-wrap:anywhere}
@media (max-width:960px){main{flex-direction:column;align-items:stretch}aside{flex:1 1 auto;width:100%;position:static}}
`;

/**
 * Defines `toolpathDag(root, calls, details)`: hovering or clicking a call under `root` shows
 * its details in `details`, a finding highlights its calls. Everything is inserted with
 * textContent: the data can never become markup.
 */
export const DAG_SCRIPT = `
function toolpathDag(root, data, details) {
  var pinned = null;
  function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  function show(id) {
    var call = data[id];
    if (!call) return;
    details.replaceChildren();
    details.appendChild(el('h3', call.tool + ' · ' + call.outcome));
    var dl = el('dl');
    call.fields.forEach(function (f) { dl.appendChild(el('dt', f[0])); dl.appendChild(el('dd', f[1])); });
    details.appendChild(dl);
    details.appendChild(el('strong', 'arguments'));
    details.appendChild(el('pre', call.args, 'args'));
    details.appendChild(el('strong', 'result'));
    details.appendChild(el('pre', call.result, 'result'));
  }
  var nodes = root.querySelectorAll('.graph .call');
  nodes.forEach(function (node) {
    var id = node.getAttribute('data-call-id');
    node.addEventListener('mouseenter', function () { show(id); });
    node.addEventListener('focus', function () { show(id); });
    node.addEventListener('mouseleave', function () { if (pinned) show(pinned); });
    node.addEventListener('click', function () {
      pinned = id;
      nodes.forEach(function (n) { n.classList.toggle('selected', n === node); });
      show(id);
      // On a narrow page the panel sits below the graph: bring it into view, not off the fold.
      var box = details.getBoundingClientRect();
      if (box.top > window.innerHeight || box.bottom < 0) details.scrollIntoView({ block: 'nearest' });
    });
  });
  var findings = root.querySelectorAll('.finding');
  findings.forEach(function (finding) {
    finding.addEventListener('click', function () {
      var ids = (finding.getAttribute('data-calls') || '').split(' ').filter(Boolean);
      findings.forEach(function (f) { f.classList.toggle('active', f === finding); });
      nodes.forEach(function (n) { n.classList.toggle('focus', ids.indexOf(n.getAttribute('data-call-id')) >= 0); });
      if (ids.length > 0) { pinned = ids[0]; show(ids[0]); }
    });
  });
}
`;
