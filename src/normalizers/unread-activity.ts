/**
 * The guard against a silent pass: evidence that the agent used tools toolpath did not read.
 * Three kinds: a span no convention claims that looks like a tool span by its name or keys; a
 * tool request in a turn's output its convention could not read; a turn whose finish reason
 * says it stopped to call tools, with no call read from it. Found, it becomes one
 * `unread_tool_activity` issue naming the spans, and the evaluator lets no rule that depends on
 * the calls pass (evaluate/unread-activity.ts).
 *
 * This module reads raw span names and keys, as a convention does: it is about what no
 * convention read. It looks only at unclaimed spans and at turns that issued no call, so a
 * trace read in full costs a pass over nothing.
 */
import type { AttributeValue, SpanRecord } from '../model/span-record.js';
import { Trajectory, type TrajectoryIssue, UNREAD_TOOL_ACTIVITY } from '../model/trajectory.js';
import { AGENT_MARK, type Assembly, CALL_MARK, type TurnNode } from './assembly-nodes.js';
import type { SpanTree } from './span-tree.js';

/**
 * Span name prefixes of tool spans, whoever writes them: logfire's OpenAI Agents spans (a handoff
 * is a call too), OTel GenAI, MCP, and plain `tool x`.
 */
const TOOL_NAME_PREFIXES = ['Function: ', 'Handoff: ', 'execute_tool ', 'tools/call ', 'tool '] as const;
/** Keys that only a tool span carries. */
const TOOL_KEYS = new Set([
  'gen_ai.tool.name',
  'gen_ai.tool.call.id',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
  'tool.name',
  'tool_call.id',
  'tool.call.id',
  'tool_call_id',
  'ai.toolCall.name',
  'ai.toolCall.id',
]);
/** Keys naming the tool, when the span name does not. */
const TOOL_NAME_KEYS = ['gen_ai.tool.name', 'tool.name', 'ai.toolCall.name'] as const;
/** Finish reasons that mean "stopped to call tools", once lowercased with `-` as `_`. */
const TOOL_FINISH_REASONS = new Set([
  'tool_calls',
  'tool_call',
  'tool_use',
  'function_call',
  'function_calls',
]);
const FINISH_REASONS = 'gen_ai.response.finish_reasons';
const FIRST_COMPLETION_FINISH = 'gen_ai.completion.0.finish_reason';
const VERCEL_FINISH = 'ai.response.finishReason';
const CHOICE_EVENT = 'gen_ai.choice';
/** Spans named in the message at most; the issue's span list has them all, up to its own cap. */
const NAMED_IN_MESSAGE = 8;
/** Pieces of evidence kept per trace, and so span ids in the issue at most; the rest are counted. */
const MAX_EVIDENCE = 100;

/** One piece of evidence: the span, and why it is evidence. */
interface Evidence {
  span: SpanRecord;
  why: string;
}

/** The list (a new one for none) with this evidence added. */
function withEvidence(list: EvidenceList | undefined, span: SpanRecord, why: string): EvidenceList {
  const evidence = list ?? new EvidenceList();
  evidence.add(span, why);
  return evidence;
}

/** Evidence kept up to a cap (a trace of thousands of unread spans), the rest counted. */
class EvidenceList {
  readonly kept: Evidence[] = [];
  /** All evidence found, kept or not. */
  count = 0;

  add(span: SpanRecord, why: string): void {
    this.count++;
    if (this.kept.length < MAX_EVIDENCE) this.kept.push({ span, why });
  }
}

/**
 * The issue for what the assembled trace shows of tool use it did not read, or undefined.
 * `unclaimed` are the positions of the spans no convention claimed (not even as structure).
 */
export function unreadToolActivity(
  assembly: Assembly,
  unclaimed: readonly number[],
): TrajectoryIssue | undefined {
  // Made at the first piece of evidence: a trace read in full allocates nothing here.
  let evidence: EvidenceList | undefined;
  for (const index of unclaimed) {
    const span = assembly.tree.spans[index] as SpanRecord;
    const seen = toolSpan(span);
    if (seen === undefined || isPartOfCall(assembly, index, seen.tool)) continue;
    evidence = withEvidence(evidence, span, seen.why);
  }
  for (const turn of assembly.turns) {
    const unread = turn.draft.unreadRequests;
    if (unread && !answeredByRun(turn))
      for (const why of unread) evidence = withEvidence(evidence, turn.span, why);
    if (issuedNone(turn)) {
      const reason = toolFinishReason(turn);
      if (reason !== undefined)
        evidence = withEvidence(evidence, turn.span, `finish reason ${reason}, but no tool call was read`);
    }
  }
  return evidence && issueOf(evidence);
}

/**
 * A trajectory for a trace no convention claims any span of, but with spans that look like tool
 * spans: no calls, and the issue, so the trace is judged inconclusive instead of not at all.
 * Undefined when nothing looks like tool use (an ordinary HTTP or database trace).
 */
export function unreadOnlyTrajectory(
  traceId: string,
  tree: SpanTree,
  unclaimed: readonly number[],
): Trajectory | undefined {
  const evidence = new EvidenceList();
  for (const index of unclaimed) {
    const span = tree.spans[index] as SpanRecord;
    const seen = toolSpan(span);
    if (seen !== undefined) evidence.add(span, seen.why);
  }
  if (evidence.count === 0) return undefined;
  const root = tree.root();
  return new Trajectory({
    traceId,
    calls: [],
    timing: new Map(),
    issues: [...tree.issues, issueOf(evidence)],
    spanCount: tree.spans.length,
    ...(root && {
      root: {
        name: root.name,
        attributes: root.attributes,
        spanId: root.spanId,
        startTimeUnixNano: root.startTimeUnixNano,
        ...(root.endTimeUnixNano !== undefined && { endTimeUnixNano: root.endTimeUnixNano }),
      },
    }),
  });
}

/** Finish reasons that mean anything but a tool call, as the providers write them. */
const OTHER_FINISH_REASONS = new Set([
  'stop',
  'length',
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'content_filter',
  'STOP',
  'MAX_TOKENS',
]);

/** Whether a finish reason means the model stopped to call tools (`tool_calls`, `tool_use`, `tool-calls`, ...). */
export function isToolCallFinish(reason: string): boolean {
  // As written first: most producers write one of these exactly, and then no string is made.
  return (
    TOOL_FINISH_REASONS.has(reason) ||
    (!OTHER_FINISH_REASONS.has(reason) &&
      TOOL_FINISH_REASONS.has(reason.trim().toLowerCase().replaceAll('-', '_')))
  );
}

/** What makes the span look like a tool span, and the tool it names; undefined when nothing does. */
function toolSpan(span: SpanRecord): { why: string; tool: string | undefined } | undefined {
  const name = span.name;
  for (const prefix of TOOL_NAME_PREFIXES) {
    if (!name.startsWith(prefix)) continue;
    const tool = name.slice(prefix.length).trim();
    return {
      why: `a span named "${prefix.trim()} …" that no convention reads`,
      tool: tool || toolNamed(span),
    };
  }
  for (const key in span.attributes) {
    if (TOOL_KEYS.has(key))
      return { why: `a span with ${key} that no convention reads`, tool: toolNamed(span) };
  }
  return undefined;
}

function toolNamed(span: SpanRecord): string | undefined {
  for (const key of TOOL_NAME_KEYS) {
    const value = span.attributes[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/**
 * A tool-looking span inside a call read from another span is that call seen once more (an MCP
 * server span under its client span) when it names the same tool or none; a tool of another
 * name in there is a call of its own that nothing read.
 */
function isPartOfCall(assembly: Assembly, index: number, tool: string | undefined): boolean {
  const above = assembly.tree.nearestAncestor(index, assembly.marks, CALL_MARK | AGENT_MARK);
  const call = above === -1 ? undefined : assembly.nodeOfSpan[above];
  return call !== undefined && (tool === undefined || tool === call.draft.tool);
}

function issuedNone(turn: TurnNode): boolean {
  for (const node of turn.issued) if (node !== undefined) return false;
  return true;
}

/**
 * A Vercel AI SDK step stored with no attributes (all its convention could say is that it is
 * unread), known all the same when it is its run's last step: the run span repeats the last
 * step's finish reason, and one that is not a tool finish says the step asked for nothing.
 */
function answeredByRun(turn: TurnNode): boolean {
  const run = turn.run;
  if (turn.draft.convention !== 'vercel-ai' || Object.keys(turn.span.attributes).length > 0) return false;
  if (run.span === undefined || run.turns[run.turns.length - 1] !== turn) return false;
  const reason = run.span.attributes[VERCEL_FINISH];
  return typeof reason === 'string' && reason.trim() !== '' && toolReasonIn(reason) === undefined;
}

/** The turn's finish reason that says it stopped for tools, from its own span or a nested one of the same generation. */
function toolFinishReason(turn: TurnNode): string | undefined {
  const found = finishReasonOf(turn.span);
  if (found !== undefined || !turn.innerSpans) return found;
  for (const span of turn.innerSpans) {
    const inner = finishReasonOf(span);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/**
 * The places conventions put a generation's finish reason without JSON around it: the GenAI
 * list, OpenLLMetry's indexed completion, the Vercel AI SDK's key, and the `gen_ai.choice`
 * event. A reason inside output messages is the convention's to report (`unreadRequests`).
 */
function finishReasonOf(span: SpanRecord): string | undefined {
  const attributes = span.attributes;
  const listed = toolReasonIn(attributes[FINISH_REASONS]);
  if (listed !== undefined) return listed;
  const single = toolReasonIn(attributes[FIRST_COMPLETION_FINISH]) ?? toolReasonIn(attributes[VERCEL_FINISH]);
  if (single !== undefined) return single;
  for (const event of span.events) {
    if (event.name !== CHOICE_EVENT) continue;
    const reason = toolReasonIn(event.attributes.finish_reason);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/** A tool-call finish reason in a value: a string, a list of them, or a JSON list in a string. */
function toolReasonIn(value: AttributeValue | undefined): string | undefined {
  if (typeof value === 'string') {
    if (value.startsWith('[')) return toolReasonIn(parsedList(value));
    return isToolCallFinish(value) ? value : undefined;
  }
  if (!Array.isArray(value)) return undefined;
  for (const item of value) if (typeof item === 'string' && isToolCallFinish(item)) return item;
  return undefined;
}

function parsedList(text: string): AttributeValue | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? (value as AttributeValue[]) : undefined;
  } catch {
    return undefined;
  }
}

function issueOf(evidence: EvidenceList): TrajectoryIssue {
  const spanIds: string[] = [];
  for (const { span } of evidence.kept) if (!spanIds.includes(span.spanId)) spanIds.push(span.spanId);
  const named = evidence.kept
    .slice(0, NAMED_IN_MESSAGE)
    .map(({ span, why }) => `span ${span.spanId} "${span.name}": ${why}`);
  const more = evidence.count > NAMED_IN_MESSAGE ? `; and ${evidence.count - NAMED_IN_MESSAGE} more` : '';
  return {
    kind: UNREAD_TOOL_ACTIVITY,
    message:
      `the agent used tools toolpath could not read (${named.join('; ')}${more}), so the calls it reads ` +
      'may not be all the agent made: no rule that depends on them can pass. Run `toolpath inspect` on the ' +
      'trace to see what each span was read as',
    spanIds,
  };
}
