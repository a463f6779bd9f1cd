/**
 * What `toolpath inspect` shows of one trace: its span tree, and per span the convention that
 * claimed it (or none) and what assembly made of it: a call, a turn, an agent run, the same call
 * or generation as another span, or structure. Built from the same reading `toolpath eval`
 * judges, so what it shows is what a verdict stands on.
 */
import type { JsonValue } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type {
  Captured,
  McpServer,
  ToolCall,
  Trajectory,
  TrajectoryIssue,
  Turn,
} from '../model/trajectory.js';
import { readTrace } from '../normalizers/assemble.js';
import type { Assembly } from '../normalizers/assembly-nodes.js';
import type { SpanReading } from '../normalizers/convention.js';
import { CONVENTIONS, readSpan } from '../normalizers/conventions.js';

/** A recorded value as inspect shows it: the value, or that it was not recorded. */
export type ShownValue = { captured: true; value: JsonValue; parseError?: string } | { captured: false };

/** What one span was read as; null in {@link InspectedSpan.read} for a span no convention claimed. */
export type SpanRead =
  | {
      kind: 'call';
      /** The call's node id in the trajectory. */
      call: string;
      tool: string;
      callId?: string;
      args: ShownValue;
      /**
       * The arguments the span itself recorded, where they disagree with the request the model
       * made: `args` are the request's (a tracer's repr or wrapper of them, or a rewrite).
       */
      recordedArgs?: ShownValue;
      outcome: ToolCall['outcome'];
      result: ShownValue;
      agent?: string;
      /** The turn that asked for it. */
      turn?: string;
      /** The MCP server it went to, as far as the trace says (see ToolCall.mcpServer). */
      mcpServer?: McpServer;
    }
  /** A span of a call another (outer) span records: the same call seen again (MCP server, tool body). */
  | { kind: 'same-call'; call: string; tool: string; outerSpanId: string }
  | {
      kind: 'turn';
      turn: string;
      model?: string;
      /** The calls it asked for, by node id. */
      issued: string[];
      /** The calls whose results it was shown, by node id. */
      consumed: string[];
      run?: string;
    }
  /** A span of a generation another (outer) span records: one turn, several conventions. */
  | { kind: 'same-generation'; turn: string; outerSpanId: string }
  | { kind: 'agent'; run: string; name?: string }
  /** Claimed and read as neither call, turn nor agent (a convention's bookkeeping span). */
  | { kind: 'structure' };

/** One span of the tree. */
export interface InspectedSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** The convention that claimed it, or null. */
  convention: string | null;
  read: SpanRead | null;
}

/** One trace as inspect shows it. */
export interface InspectedTrace {
  traceId: string;
  /** Depth first (a span right after its parent's earlier children), siblings by start time. */
  spans: InspectedSpan[];
  /** The ids of the spans no convention claimed. */
  unclaimed: string[];
  /** What the reading could not read or link (the trajectory's issues). */
  warnings: TrajectoryIssue[];
}

/** Inspects one trace's spans, read through `conventions` (default: the registered precedence). */
export function inspectTrace(
  traceId: string,
  spans: readonly SpanRecord[],
  conventions = CONVENTIONS,
): InspectedTrace {
  const { trajectory, tree, assembly } = readTrace(traceId, spans, conventions);
  const inspected: InspectedSpan[] = [];
  const unclaimed: string[] = [];
  for (const index of depthFirst(tree.spans, (i) => tree.parent(i))) {
    const span = tree.spans[index] as SpanRecord;
    const reading = readSpan(span, conventions);
    if (!reading) unclaimed.push(span.spanId);
    inspected.push({
      spanId: span.spanId,
      parentSpanId: span.parentSpanId ?? null,
      name: span.name,
      convention: reading ? conventionOf(reading) : null,
      read: reading ? readOf(reading, index, span, assembly, trajectory) : null,
    });
  }
  return { traceId, spans: inspected, unclaimed, warnings: [...(trajectory?.issues ?? tree.issues)] };
}

function conventionOf(reading: SpanReading): string {
  if (reading.kind === 'tool') return reading.call.convention;
  if (reading.kind === 'turn') return reading.turn.convention;
  return reading.convention;
}

function readOf(
  reading: SpanReading,
  index: number,
  span: SpanRecord,
  assembly: Assembly | undefined,
  trajectory: Trajectory | undefined,
): SpanRead {
  if (reading.kind === 'structure' || !assembly || !trajectory) return { kind: 'structure' };
  if (reading.kind === 'agent') {
    const run = assembly.runs.find(
      (candidate) => candidate.spanIndex === index || candidate.innerSpans?.includes(span) === true,
    );
    return { kind: 'agent', run: run?.id ?? `run:${span.spanId}`, ...(run?.name && { name: run.name }) };
  }
  if (reading.kind === 'turn') {
    const node = assembly.turnOfSpan[index];
    if (!node) return { kind: 'structure' };
    if (node.span !== span) return { kind: 'same-generation', turn: node.id, outerSpanId: node.span.spanId };
    const turn = trajectory.turns.find((candidate) => candidate.id === node.id) as Turn;
    return {
      kind: 'turn',
      turn: turn.id,
      ...(turn.model && { model: turn.model }),
      issued: turn.issued,
      consumed: turn.consumed,
      ...(turn.runId && { run: turn.runId }),
    };
  }
  const node = assembly.nodeOfSpan[index];
  const call = node && trajectory.call(node.id);
  if (!node || !call) return { kind: 'structure' };
  if (node.span !== span)
    return { kind: 'same-call', call: call.id, tool: call.tool, outerSpanId: node.span?.spanId ?? '' };
  return {
    kind: 'call',
    call: call.id,
    tool: call.tool,
    ...(call.callId !== undefined && { callId: call.callId }),
    args: shown(call.args),
    ...(node.recordedArgs && { recordedArgs: shown(node.recordedArgs) }),
    outcome: call.outcome,
    result: shown(call.result),
    ...(call.agentName !== undefined && { agent: call.agentName }),
    ...(call.turnId !== undefined && { turn: call.turnId }),
    ...(call.mcpServer !== undefined && { mcpServer: call.mcpServer }),
  };
}

function shown(value: Captured<JsonValue>): ShownValue {
  if (!value.captured) return { captured: false };
  return value.parseError === undefined
    ? { captured: true, value: value.value }
    : { captured: true, value: value.value, parseError: value.parseError };
}

/**
 * Span positions depth first, roots and siblings by start time (then arrival). A stack, not
 * recursion (traces can nest deep); a loop of parent ids is cut where it comes round (each span
 * is visited once).
 */
function depthFirst(spans: readonly SpanRecord[], parentOf: (index: number) => number): number[] {
  const children: number[][] = spans.map(() => []);
  const roots: number[] = [];
  for (let i = 0; i < spans.length; i++) {
    const parent = parentOf(i);
    if (parent === -1 || parent === i) roots.push(i);
    else (children[parent] as number[]).push(i);
  }
  const byStart = (a: number, b: number) => {
    const x = (spans[a] as SpanRecord).startTimeUnixNano;
    const y = (spans[b] as SpanRecord).startTimeUnixNano;
    return x < y ? -1 : x > y ? 1 : a - b;
  };
  const out: number[] = [];
  const visited: boolean[] = new Array(spans.length).fill(false);
  const visit = (starts: number[]) => {
    const stack = starts.sort(byStart).reverse();
    while (stack.length > 0) {
      const index = stack.pop() as number;
      if (visited[index]) continue;
      visited[index] = true;
      out.push(index);
      const below = [...(children[index] as number[])].sort(byStart);
      for (let k = below.length - 1; k >= 0; k--) stack.push(below[k] as number);
    }
  };
  visit(roots);
  // Spans in a loop of parent ids have no root: each loop starts at its earliest span.
  const left = spans.map((_, i) => i).filter((i) => !visited[i]);
  while (left.length > 0) {
    visit([left.shift() as number]);
    for (let k = left.length - 1; k >= 0; k--) if (visited[left[k] as number]) left.splice(k, 1);
  }
  return out;
}
