/**
 * What bounds a conversation's provisional judgements, so one long conversation costs work
 * linear in its size and lines of bounded size (docs/conversations.md, "Long conversations"):
 * past {@link ALWAYS_JUDGED_SIZE} a conversation is judged again only once it has grown by a
 * sixteenth since it was last judged, the traces between getting a short `conversation.coalesced`
 * report instead; and a provisional report is cut to fit {@link MAX_PROVISIONAL_LINE_BYTES},
 * saying in `cut` what it left out. Final reports are never cut: durable mode reads their
 * `traceIds` back.
 */
import type { AssertionResult, Finding, Report, ReportCut } from '../model/report.js';
import { TOOLPATH_VERSION } from '../model/version.js';
import type { Scenario } from '../scenario/scenario.js';
import type { HeldConversation } from './conversation-state.js';

/** A provisional report line (its JSON, with a reports file's `traceFile`) is shorter than this. */
export const MAX_PROVISIONAL_LINE_BYTES = 16 * 1024;
/** Room left in the bound for what is added to a report after it is cut (`incomplete`, `traceFile`). */
const ROOM_AFTER = 1024;
/** A conversation up to this size (traces + calls + turns) is judged after every trace. */
export const ALWAYS_JUDGED_SIZE = 1_000;
/** Past it, judged again once it grew by 1/GROWTH of its size when last judged. */
export const GROWTH = 16;

const MAX_TRACE_IDS = 64;
/** A coalesced report's trace ids: the latest few (it judged none). */
const COALESCED_TRACE_IDS = 8;
const MAX_FINDINGS = 32;
const MAX_CALLS_PER_FINDING = 32;
const MAX_TEXT = 1_000;

/**
 * Whether the conversation is judged provisionally after its latest trace, or coalesced into a
 * later judgement. Judged: while small, after its first trace, once it grew by 1/GROWTH, and
 * when a scenario applies that did not before. The sizes judged grow geometrically, so the
 * work of all its judgements is at most (GROWTH + 1) times its size, past the small start.
 */
export function judgedNow(held: HeldConversation, newScenario: boolean): boolean {
  const { size, mark } = held;
  return (
    newScenario ||
    mark.judgedSize === 0 ||
    size <= ALWAYS_JUDGED_SIZE ||
    GROWTH * (size - mark.judgedSize) >= mark.judgedSize
  );
}

/**
 * The provisional report of a trace whose judgement was coalesced: inconclusive, saying so, with
 * the assertion names and stats of the conversation's last provisional report on `scenario`.
 */
export function coalescedReport(
  conversationId: string,
  traceId: string,
  held: HeldConversation,
  scenario: Scenario,
  index: number,
): Report {
  const { mark } = held;
  const last = mark.last.get(index);
  const reason =
    `the provisional judgement of conversation ${conversationId} after this trace was coalesced into a later one: ` +
    `it holds ${held.traces.length} traces and ${held.calls} calls, and a conversation past ${ALWAYS_JUDGED_SIZE} traces, calls and turns ` +
    `is judged again once it has grown by 1/${GROWTH} since it was last judged (after trace ${mark.judgedAfter}, whose stats this report ` +
    `repeats; ${mark.coalesced} traces coalesced since), and final when idle`;
  const finding: Finding = {
    rule: 'conversation.coalesced',
    severity: 'warning',
    message: reason,
    calls: [],
    spans: [],
    inconclusive: true,
    traceIds: [],
  };
  const traces = held.traces;
  const kept = traces.slice(Math.max(0, traces.length - COALESCED_TRACE_IDS)).map((trace) => trace.traceId);
  const report: Report = {
    traceId,
    conversationId,
    traceIds: kept,
    final: false,
    scenario:
      scenario.version === undefined ? { id: scenario.id } : { id: scenario.id, version: scenario.version },
    toolpathVersion: TOOLPATH_VERSION,
    verdict: 'inconclusive',
    pass: false,
    scores: {},
    findings: [finding],
    assertions: (last?.assertions ?? []).map((name) => ({
      name,
      status: 'inconclusive',
      reason: 'coalesced into a later provisional judgement (conversation.coalesced)',
    })),
    stats: last ? { ...last.stats } : { calls: 0, turns: 0, errors: 0, durationMs: 0 },
  };
  if (traces.length > kept.length) report.cut = { traceIds: traces.length - kept.length };
  return boundProvisional(report);
}

/**
 * Cuts a provisional report to fit its bound, in place: the latest trace ids, findings with
 * their first calls, hard ones kept first, texts cut short; what was left out is counted in `cut`.
 */
export function boundProvisional(report: Report): Report {
  const cut: ReportCut = { ...report.cut };
  const add = (key: keyof ReportCut, count: number) => {
    if (count > 0) cut[key] = (cut[key] ?? 0) + count;
  };
  const traceIds = report.traceIds;
  if (traceIds && traceIds.length > MAX_TRACE_IDS) {
    add('traceIds', traceIds.length - MAX_TRACE_IDS);
    report.traceIds = traceIds.slice(traceIds.length - MAX_TRACE_IDS);
  }
  for (const finding of report.findings) {
    if (finding.calls.length > MAX_CALLS_PER_FINDING) {
      add('calls', finding.calls.length - MAX_CALLS_PER_FINDING);
      finding.calls = finding.calls.slice(0, MAX_CALLS_PER_FINDING);
      if (finding.traceIds) finding.traceIds = finding.traceIds.slice(0, MAX_CALLS_PER_FINDING);
    }
    if (finding.spans.length > MAX_CALLS_PER_FINDING)
      finding.spans = finding.spans.slice(0, MAX_CALLS_PER_FINDING);
    finding.message = shortened(finding.message, add);
  }
  for (const assertion of report.assertions) assertion.reason = shortened(assertion.reason, add);
  // What fits: the report without findings and assertions, then findings by rank, then assertions
  // in order, each as long as its JSON and a comma (the counts in `cut` take a few bytes more).
  const budget = MAX_PROVISIONAL_LINE_BYTES - ROOM_AFTER - CUT_ROOM;
  let used = bytesOf({ ...report, findings: [], assertions: [], cut });
  const ranked = [...report.findings.entries()].sort((a, b) => rank(a[1]) - rank(b[1]) || a[0] - b[0]);
  const keptFindings = new Set<number>();
  for (const [index, finding] of ranked) {
    if (keptFindings.size >= MAX_FINDINGS) break;
    const bytes = bytesOf(finding) + 1;
    if (used + bytes > budget) break;
    used += bytes;
    keptFindings.add(index);
  }
  let keptAssertions = 0;
  for (const assertion of report.assertions) {
    const bytes = bytesOf(assertion) + 1;
    if (used + bytes > budget) break;
    used += bytes;
    keptAssertions++;
  }
  add('findings', report.findings.length - keptFindings.size);
  add('assertions', report.assertions.length - keptAssertions);
  if (keptFindings.size < report.findings.length)
    report.findings = report.findings.filter((_, index) => keptFindings.has(index));
  if (keptAssertions < report.assertions.length)
    report.assertions = report.assertions.slice(0, keptAssertions);
  if (Object.keys(cut).length > 0) report.cut = cut;
  return report;
}

/** Room for the counts `cut` may gain after the report without findings was measured. */
const CUT_ROOM = 128;

function bytesOf(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** Hard failures first, then hard undecided, pending, warnings. */
function rank(finding: Finding): number {
  if (finding.severity !== 'hard') return 3;
  if (finding.pending) return 2;
  return finding.inconclusive ? 1 : 0;
}

function shortened(text: string, add: (key: keyof ReportCut, count: number) => void): string {
  if (text.length <= MAX_TEXT) return text;
  add('characters', text.length - MAX_TEXT);
  return `${text.slice(0, MAX_TEXT)}…`;
}

/** The assertion names and stats a coalesced report keeps of the last provisional report. */
export function lastOf(report: Report): { assertions: string[]; stats: Report['stats'] } {
  return {
    assertions: report.assertions.map((assertion: AssertionResult) => assertion.name),
    stats: report.stats,
  };
}
