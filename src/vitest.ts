/**
 * `toolpath/vitest`: matchers that judge a trace against a scenario inside a test, and a helper
 * that captures the spans of the code under test.
 *
 * ```ts
 * import { captureSpans, installToolpathMatchers } from 'toolpath/vitest';
 * installToolpathMatchers();
 * const { trajectories } = await captureSpans((tracer) => runMyAgent(tracer));
 * expect(trajectories[0]).toPassScenario('scenarios/refund.yaml');
 * // a run that refunded before reading the policy:
 * expect(hasty.trajectories[0]).toHaveFinding('order.before', { scenario: 'scenarios/refund.yaml', message: /policy/ });
 * ```
 *
 * A failing matcher prints the trajectory (one line per call) and the findings, so the test
 * output says what the agent did and what was wrong with it.
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import { expect, type MatcherState } from 'vitest';
import { decodeExportTraceRequest } from './collector/otlp-json.js';
import { evaluate } from './evaluate/evaluate.js';
import { formatInputError, readStoredTraces } from './io/read-traces.js';
import { type Judge, runJudges } from './judging/judges.js';
import type { Finding, Report, Severity } from './model/report.js';
import { scenarioLabel } from './model/report.js';
import type { SpanRecord } from './model/span-record.js';
import { type ToolCall, Trajectory } from './model/trajectory.js';
import { normalizeSpans } from './normalizers/normalize.js';
import { trajectoryFromTypedEvents } from './normalizers/typed-events.js';
import { describeReadError } from './scenario/read-error.js';
import {
  parseScenario,
  parseScenarioText,
  type Scenario,
  ScenarioError,
  type ScenarioInput,
} from './scenario/scenario.js';

export { type CapturedSpans, type CaptureOptions, captureSpans } from './vitest-capture.js';

/**
 * What the matchers accept as a trace: a {@link Trajectory}, a {@link Report} (already judged),
 * `SpanRecord[]`, or OTLP JSON (the text an exporter sends, or that text parsed; typed call/result
 * events as text too). It must hold exactly one trace.
 */
export type TraceSubject = Trajectory | Report | readonly SpanRecord[] | string | object;

export type { ScenarioInput } from './scenario/scenario.js';

/** Which finding {@link ToolpathMatchers.toHaveFinding} looks for, beyond its rule id. Every field given must hold. */
export interface FindingExpectation {
  /** The scenario to judge the trace against; not needed when the subject is a Report. */
  scenario?: ScenarioInput;
  /** A substring of the finding's message, or a pattern it matches. */
  message?: string | RegExp;
  /** The finding's call ids, compared with vitest's equality (asymmetric matchers such as `expect.arrayContaining` work). */
  calls?: readonly string[];
  severity?: Severity;
  /** The name of the assertion the finding came from. */
  assertion?: string;
}

/** The toolpath matchers, as vitest's `expect` sees them once installed. */
export interface ToolpathMatchers<R = unknown> {
  /** The trace's verdict against the scenario is `pass`. The scenario may be omitted when the subject is a Report. */
  toPassScenario(scenario?: ScenarioInput): R;
  /** The trace's verdict against the scenario is `fail` (not `inconclusive`). */
  toFailScenario(scenario?: ScenarioInput): R;
  /** The trace's report against the scenario has a finding of this rule id matching `expected`. */
  toHaveFinding(rule: string, expected?: FindingExpectation): R;
  /**
   * Judged against the scenario, then by `expected.judges`, the judge named `name` returned a
   * result (with this label, and at least this score, when given). Asynchronous: `await` it.
   */
  toHaveJudgement(name: string, expected: JudgementExpectation): Promise<R>;
}

/** What {@link ToolpathMatchers.toHaveJudgement} judges with and looks for. */
export interface JudgementExpectation {
  scenario: ScenarioInput;
  judges: readonly Judge[];
  label?: string;
  minScore?: number;
}

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: must repeat vitest's own declaration to merge with it.
  interface Assertion<T = any> extends ToolpathMatchers<void> {}
  // biome-ignore lint/suspicious/noExplicitAny: asymmetric matchers are typed `any` throughout vitest.
  interface AsymmetricMatchersContaining extends ToolpathMatchers<any> {}
}

interface MatchResult {
  pass: boolean;
  message: () => string;
}

/** The matchers, for `expect.extend(toolpathMatchers)` (what {@link installToolpathMatchers} does). */
export const toolpathMatchers = {
  toPassScenario(this: MatcherState, received: unknown, scenario?: ScenarioInput): MatchResult {
    return verdictMatcher(this, 'toPassScenario', 'pass', received, scenario);
  },
  toFailScenario(this: MatcherState, received: unknown, scenario?: ScenarioInput): MatchResult {
    return verdictMatcher(this, 'toFailScenario', 'fail', received, scenario);
  },
  toHaveJudgement: judgementMatcher,
  toHaveFinding(
    this: MatcherState,
    received: unknown,
    rule: string,
    expected: FindingExpectation = {},
  ): MatchResult {
    if (typeof rule !== 'string' || rule === '') {
      throw new TypeError(
        `toHaveFinding: the rule id must be a non-empty string, e.g. 'order.before'; got ${describeValue(rule)}`,
      );
    }
    const judged = judge('toHaveFinding', received, expected.scenario);
    const wanted = describeExpectation(this, rule, expected);
    const matching = judged.report.findings.filter((finding) =>
      findingMatches(this, finding, rule, expected),
    );
    const pass = matching.length > 0;
    const first = matching[0];
    return {
      pass,
      message: () =>
        pass && first
          ? `expected ${subjectLabel(judged)} not to have a finding ${wanted}, but it has:\n  ${findingLine(first)}\n\n${details(judged)}`
          : `expected ${subjectLabel(judged)} to have a finding ${wanted}, but none matched\n\n${details(judged)}`,
    };
  },
};

async function judgementMatcher(
  this: MatcherState,
  received: unknown,
  name: string,
  expected: JudgementExpectation,
): Promise<MatchResult> {
  const judged = judge('toHaveJudgement', received, expected.scenario);
  if (!judged.trajectory) throw new TypeError('toHaveJudgement: judges need a trace, not a Report');
  const records = await runJudges(expected.judges, judged.trajectory, judged.report);
  const record = records.find((candidate) => candidate.name === name);
  const result = record?.result;
  const pass =
    result !== undefined &&
    (expected.label === undefined || result.label === expected.label) &&
    (expected.minScore === undefined || result.score >= expected.minScore);
  const wanted = `${name}${expected.label === undefined ? '' : ` labelled ${expected.label}`}${expected.minScore === undefined ? '' : ` scoring at least ${expected.minScore}`}`;
  const got =
    record === undefined
      ? `${name} did not run (judges that ran: ${records.map((r) => r.name).join(', ') || 'none'})`
      : record.error !== undefined
        ? `${name} failed: ${record.error}`
        : `${name} returned ${JSON.stringify(record.result)}`;
  return {
    pass,
    message: () =>
      `expected ${subjectLabel(judged)} ${this.isNot ? 'not ' : ''}to get a judgement from ${wanted}; ${got}\n\n${details(judged)}`,
  };
}

/** Registers {@link toolpathMatchers} with vitest's `expect`: call it once, in a setup file or at the top of a test file. */
export function installToolpathMatchers(): void {
  expect.extend(toolpathMatchers);
}

/** A report, with the trajectory it judged when the subject was a trace. */
interface Judged {
  report: Report;
  trajectory?: Trajectory;
}

function verdictMatcher(
  state: MatcherState,
  matcher: string,
  verdict: 'pass' | 'fail',
  received: unknown,
  scenario: ScenarioInput | undefined,
): MatchResult {
  const judged = judge(matcher, received, scenario);
  const pass = judged.report.verdict === verdict;
  const goal = verdict === 'pass' ? 'pass' : 'fail';
  return {
    pass,
    message: () =>
      state.isNot
        ? `expected ${subjectLabel(judged)} not to ${goal}, but its verdict is ${judged.report.verdict}\n\n${details(judged)}`
        : `expected ${subjectLabel(judged)} to ${goal}, but its verdict is ${judged.report.verdict}\n\n${details(judged)}`,
  };
}

/** The report of the subject against the scenario: evaluated here, or the subject itself when it is a Report. */
function judge(matcher: string, received: unknown, scenarioInput: ScenarioInput | undefined): Judged {
  const scenario = scenarioInput === undefined ? undefined : toScenario(scenarioInput);
  if (isReport(received)) {
    if (scenario && scenario.id !== received.scenario.id) {
      throw new Error(
        `${matcher}: the report is of scenario ${scenarioLabel(received.scenario)}, not of the scenario given (${scenario.id})`,
      );
    }
    return { report: received };
  }
  const trajectory = toTrajectory(matcher, received);
  if (!scenario) {
    throw new TypeError(
      `${matcher}: give a scenario (a Scenario, a scenario document or a file path) to judge a trace against; only a Report subject needs none`,
    );
  }
  return { report: evaluate(trajectory, scenario), trajectory };
}

function toScenario(input: ScenarioInput): Scenario {
  if (typeof input === 'string') return loadScenarioFileSync(input);
  if (isScenario(input)) return input;
  return parseScenario(input, 'inline scenario');
}

/** Synchronous, so the matchers stay synchronous (no `await expect(...)`). */
function loadScenarioFileSync(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ScenarioError(path, [describeReadError(error, path)]);
  }
  return parseScenarioText(text, path);
}

/** The one trajectory of a trace subject; throws, saying what was received, for anything else. */
function toTrajectory(matcher: string, received: unknown): Trajectory {
  if (received instanceof Trajectory) return received;
  if (typeof received === 'string') return fromText(matcher, received);
  if (Array.isArray(received) && received.length > 0 && received.every(isSpanRecord)) {
    return onlyOne(matcher, normalizeSpans(received), `${received.length} spans`);
  }
  if (Array.isArray(received) && received.length > 0 && received.every(isOtlpRequest)) {
    return onlyOne(
      matcher,
      normalizeSpans(received.flatMap((request) => decoded(matcher, request))),
      'the OTLP requests',
    );
  }
  if (isOtlpRequest(received))
    return onlyOne(matcher, normalizeSpans(decoded(matcher, received)), 'the OTLP request');
  throw new TypeError(
    `${matcher}: expected a Trajectory, a Report, SpanRecord[] or OTLP JSON (text or object); got ${describeValue(received)}`,
  );
}

function fromText(matcher: string, text: string): Trajectory {
  const read = readStoredTraces(text, 'the trace text');
  if (read.errors.length > 0 || !read.input) {
    throw new Error(`${matcher}: ${read.errors.slice(0, 5).map(formatInputError).join('; ')}`);
  }
  if (read.input.format === 'typed-events')
    return trajectoryFromTypedEvents('typed-events', read.input.events);
  return onlyOne(matcher, normalizeSpans(read.input.spans), 'the trace text');
}

function decoded(matcher: string, request: unknown): SpanRecord[] {
  const { spans, errors } = decodeExportTraceRequest(request);
  if (errors.length > 0) {
    const listed = errors
      .slice(0, 5)
      .map((error) => (error.path ? `${error.path}: ${error.message}` : error.message));
    throw new Error(`${matcher}: the OTLP request does not decode: ${listed.join('; ')}`);
  }
  return spans;
}

function onlyOne(matcher: string, trajectories: Trajectory[], what: string): Trajectory {
  const [first] = trajectories;
  if (trajectories.length === 1 && first) return first;
  if (!first) {
    throw new Error(
      `${matcher}: expected one trace in ${what}, found no agent trace (no span an agent convention reads)`,
    );
  }
  const ids = trajectories.map(({ traceId }) => traceId).join(', ');
  throw new Error(
    `${matcher}: expected one trace in ${what}, found ${trajectories.length} (${ids}); give one: a Trajectory of normalizeSpans(...), or the spans of one trace`,
  );
}

function findingMatches(
  state: MatcherState,
  finding: Finding,
  rule: string,
  expected: FindingExpectation,
): boolean {
  if (finding.rule !== rule) return false;
  if (expected.severity !== undefined && finding.severity !== expected.severity) return false;
  if (expected.assertion !== undefined && finding.assertion !== expected.assertion) return false;
  if (expected.calls !== undefined && !state.equals(finding.calls, expected.calls)) return false;
  const { message } = expected;
  if (typeof message === 'string' && !finding.message.includes(message)) return false;
  if (
    message instanceof RegExp &&
    !new RegExp(message.source, message.flags.replace(/[gy]/g, '')).test(finding.message)
  ) {
    return false;
  }
  return true;
}

function describeExpectation(state: MatcherState, rule: string, expected: FindingExpectation): string {
  const parts: string[] = [];
  if (expected.severity !== undefined) parts.push(`severity ${expected.severity}`);
  if (typeof expected.message === 'string')
    parts.push(`message containing ${JSON.stringify(expected.message)}`);
  if (expected.message instanceof RegExp) parts.push(`message matching ${String(expected.message)}`);
  if (expected.calls !== undefined) {
    const { calls } = expected;
    const plain = Array.isArray(calls) && calls.every((id) => typeof id === 'string');
    parts.push(`calls ${plain ? JSON.stringify(calls) : state.utils.stringify(calls)}`);
  }
  if (expected.assertion !== undefined) parts.push(`assertion ${JSON.stringify(expected.assertion)}`);
  return parts.length > 0 ? `${rule} with ${parts.join(', ')}` : rule;
}

function subjectLabel({ report }: Judged): string {
  return `trace ${report.traceId} against scenario ${scenarioLabel(report.scenario)}`;
}

/** The verdict, the trajectory (when there is one) and the findings: what a failing test should show. */
function details(judged: Judged): string {
  const { report, trajectory } = judged;
  const lines = [`verdict: ${report.verdict}`];
  if (trajectory) {
    lines.push('', `trajectory (${trajectory.calls.length} calls, ${trajectory.turns.length} turns):`);
    lines.push(...trajectoryLines(trajectory));
    if (trajectory.calls.length === 0) lines.push('  (no tool calls)');
  } else {
    lines.push('', `trajectory: not in a Report (${report.stats.calls} calls, ${report.stats.turns} turns)`);
  }
  lines.push('', report.findings.length > 0 ? `findings (${report.findings.length}):` : 'findings: none');
  lines.push(...report.findings.map((finding) => `  ${findingLine(finding)}`));
  return lines.join('\n');
}

const MAX_ARGS_CHARS = 80;

/** One line per call, columns aligned: id, tool, outcome, turn (its number in the trace), compact arguments. */
function trajectoryLines(trajectory: Trajectory): string[] {
  const turnNumbers = new Map(trajectory.turns.map((turn, index) => [turn.id, index + 1]));
  const rows = trajectory.calls.map((call) => [
    call.id,
    call.tool,
    outcomeText(call),
    `turn ${turnNumbers.get(call.turnId ?? '') ?? '-'}`,
    argsText(call),
  ]);
  const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return rows.map((row) =>
    `  ${row.map((cell, column) => (column < 4 ? cell.padEnd(widths[column] ?? 0) : cell)).join('  ')}`.trimEnd(),
  );
}

function outcomeText({ outcome }: ToolCall): string {
  if (outcome.status === 'error') return outcome.errorType ? `error ${outcome.errorType}` : 'error';
  if (outcome.status === 'not_executed') return 'not executed';
  return outcome.status === 'no_result' ? 'no result' : 'ok';
}

function argsText({ args }: ToolCall): string {
  if (!args.captured) return '(args not captured)';
  const text = JSON.stringify(args.value) ?? String(args.value);
  return text.length > MAX_ARGS_CHARS ? `${text.slice(0, MAX_ARGS_CHARS - 1)}…` : text;
}

function findingLine(finding: Finding): string {
  const assertion = finding.assertion ? ` (${finding.assertion})` : '';
  return `${finding.rule} [${finding.severity}]${assertion}: ${finding.message}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isReport(value: unknown): value is Report {
  return (
    isObject(value) &&
    typeof value.verdict === 'string' &&
    Array.isArray(value.findings) &&
    isObject(value.scenario)
  );
}

function isScenario(value: unknown): value is Scenario {
  return isObject(value) && typeof value.id === 'string' && isObject(value.rules) && isObject(value.severity);
}

function isSpanRecord(value: unknown): value is SpanRecord {
  return isObject(value) && typeof value.traceId === 'string' && typeof value.spanId === 'string';
}

function isOtlpRequest(value: unknown): value is Record<string, unknown> {
  return isObject(value) && 'resourceSpans' in value;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value))
    return value.length === 0 ? 'an empty array' : `an array of ${describeValue(value[0])}`;
  if (isObject(value)) {
    const keys = Object.keys(value)
      .slice(0, 5)
      .map((key) => JSON.stringify(key));
    return keys.length > 0 ? `an object with keys ${keys.join(', ')}` : 'an empty object';
  }
  return typeof value;
}
