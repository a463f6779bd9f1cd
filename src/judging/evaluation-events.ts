/**
 * A Report as OpenTelemetry event attributes: one `gen_ai.evaluation.result` event per
 * evaluated scenario (the GenAI semantic conventions' evaluation event) and one
 * `toolpath.finding` event per finding. The same attributes go on span events, on the
 * evaluation span and on log records, so every backend sees the same names.
 *
 * Who judged: `gen_ai.evaluation.evaluator.id` (the scenario's id), `.version` (its version) and
 * `.type` (`toolpath`), the names semantic-conventions-genai PR #359 proposes (not yet merged),
 * beside the `toolpath.scenario.*` attributes; `toolpath.version` is the evaluator's own version.
 */
import type { Attributes as OtelAttributes } from '@opentelemetry/api';
import { type Finding, type Report, scenarioLabel } from '../model/report.js';

/** Event (and log record) name of a scenario's result. */
export const EVALUATION_RESULT_EVENT = 'gen_ai.evaluation.result';
/** Event name of one finding. */
export const FINDING_EVENT = 'toolpath.finding';
/** Name of the span toolpath adds under the evaluated span when it cannot write onto it. */
export const EVALUATION_SPAN_NAME = 'toolpath.evaluate';

/** Finding events per report at most; the rest are counted in `toolpath.findings.omitted`. */
export const MAX_FINDING_EVENTS = 32;
/** `gen_ai.evaluation.evaluator.type` of every result toolpath emits. */
export const EVALUATOR_TYPE = 'toolpath';

/** `gen_ai.evaluation.explanation` is cut to this many characters. */
const MAX_EXPLANATION = 1_024;

/** An event to add: its name and attributes. */
export interface EvaluationEvent {
  name: string;
  attributes: OtelAttributes;
}

/**
 * The overall score of a report: the mean of its dimension scores (1 when it scored none). The
 * verdict, not this number, says pass or fail: a hard finding fails whatever the mean.
 */
export function overallScore(report: Report): number {
  let sum = 0;
  let count = 0;
  for (const dimension in report.scores) {
    if (!Object.hasOwn(report.scores, dimension)) continue;
    sum += report.scores[dimension as keyof Report['scores']] as number;
    count++;
  }
  return count === 0 ? 1 : sum / count;
}

/** The `gen_ai.evaluation.result` attributes of one report. */
export function resultAttributes(report: Report): OtelAttributes {
  let hard = 0;
  for (const finding of report.findings) if (finding.severity === 'hard' && !finding.inconclusive) hard++;
  const attributes: OtelAttributes = {
    'gen_ai.evaluation.name': scenarioLabel(report.scenario),
    'gen_ai.evaluation.score.value': overallScore(report),
    'gen_ai.evaluation.score.label': report.verdict,
    'gen_ai.evaluation.evaluator.id': report.scenario.id,
    'gen_ai.evaluation.evaluator.type': EVALUATOR_TYPE,
    'toolpath.scenario.id': report.scenario.id,
    'toolpath.version': report.toolpathVersion,
    'toolpath.verdict': report.verdict,
    'toolpath.findings.count': report.findings.length,
    'toolpath.findings.hard': hard,
    'toolpath.trajectory.tool_calls': report.stats.calls,
  };
  if (report.scenario.version !== undefined) {
    attributes['gen_ai.evaluation.evaluator.version'] = report.scenario.version;
    attributes['toolpath.scenario.version'] = report.scenario.version;
  }
  const { scores } = report;
  for (const dimension in scores) {
    if (Object.hasOwn(scores, dimension))
      attributes[scoreKey(dimension)] = scores[dimension as keyof Report['scores']] as number;
  }
  const explanation = explain(report);
  if (explanation !== '') attributes['gen_ai.evaluation.explanation'] = explanation;
  if (report.incomplete !== undefined) attributes['toolpath.trace.incomplete'] = report.incomplete;
  if (report.conversationId !== undefined) {
    attributes['gen_ai.conversation.id'] = report.conversationId;
    attributes['toolpath.conversation.traces'] = report.traceIds ?? [report.traceId];
    attributes['toolpath.conversation.final'] = report.final === true;
  }
  return attributes;
}

/** `toolpath.score.<dimension>` attribute names, made once per dimension rather than once per report. */
const scoreKeys = new Map<string, string>();

function scoreKey(dimension: string): string {
  let key = scoreKeys.get(dimension);
  if (key === undefined) {
    key = `toolpath.score.${dimension}`;
    // Dimensions are a closed set; the check only keeps a misuse from growing the map.
    if (scoreKeys.size < 64) scoreKeys.set(dimension, key);
  }
  return key;
}

/**
 * The result event and the finding events of one report, in that order, added to `events` (a
 * judge collects every report's events in one list).
 */
export function reportEvents(report: Report, events: EvaluationEvent[] = []): EvaluationEvent[] {
  const result: EvaluationEvent = { name: EVALUATION_RESULT_EVENT, attributes: resultAttributes(report) };
  events.push(result);
  const { findings } = report;
  const shown = Math.min(findings.length, MAX_FINDING_EVENTS);
  for (let index = 0; index < shown; index++) {
    const finding = findings[index] as Finding;
    const attributes: OtelAttributes = {
      'toolpath.scenario.id': report.scenario.id,
      'toolpath.finding.rule': finding.rule,
      'toolpath.finding.severity': finding.severity,
      'toolpath.finding.message': finding.message,
      'toolpath.finding.calls': finding.calls,
      'toolpath.finding.spans': finding.spans,
    };
    if (finding.inconclusive) attributes['toolpath.finding.inconclusive'] = true;
    if (finding.pending) attributes['toolpath.finding.pending'] = true;
    if (finding.traceIds) attributes['toolpath.finding.traces'] = finding.traceIds;
    if (finding.agent !== undefined) attributes['toolpath.finding.agent'] = finding.agent;
    events.push({ name: FINDING_EVENT, attributes });
  }
  const omitted = findings.length - shown;
  if (omitted > 0) result.attributes['toolpath.findings.omitted'] = omitted;
  return events;
}

/**
 * Pass: empty. Otherwise the findings' messages, hard first (else in their order), cut to a
 * readable length. Written in two passes over the findings rather than a sorted copy of them.
 */
function explain(report: Report): string {
  const { findings } = report;
  if (findings.length === 0) return '';
  let text = '';
  for (const finding of findings) if (finding.severity === 'hard') text = described(text, finding);
  for (const finding of findings) if (finding.severity !== 'hard') text = described(text, finding);
  return text.length > MAX_EXPLANATION ? `${text.slice(0, MAX_EXPLANATION - 1)}…` : text;
}

/** `text` with one more finding, `; `-separated. */
function described(text: string, finding: Finding): string {
  const entry = `${finding.rule}: ${finding.message}`;
  return text === '' ? entry : `${text}; ${entry}`;
}
