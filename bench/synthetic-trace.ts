/**
 * Synthetic agent traces for benchmarks: GenAI spans of agent loops in the shapes agents make.
 * A turn issues its calls in parallel and the next turn is shown their results.
 */
import type { SpanRecord } from '../src/model/span-record.js';

const TRACE = '5b8efff798038103d269b633813fc60c';
let nextSpan = 1;
const id = () => (nextSpan++).toString(16).padStart(16, '0');

/** How the calls of a synthetic trace are arranged. */
export interface TraceShape {
  /** Calls per turn (issued together). */
  width: number;
  /**
   * Sub-agents nested in calls: each turn's first call is an agent used as a tool, whose span
   * holds a sub-agent run of `nested.turns` turns of `width` calls, `nested.depth` levels deep.
   */
  nested?: { turns: number; depth: number };
  /**
   * Agent runs one after another, of this many calls each, under one agent that hands off to
   * each in turn: ordered by the clock alone, as a conversation's traces are.
   */
  runOf?: number;
}

/** The bench's usual shape: a long chain of turns of two parallel calls. */
export const CHAIN: TraceShape = { width: 2 };

const base = {
  traceId: TRACE,
  kind: 'internal' as const,
  status: { code: 'unset' as const },
  events: [],
  links: [],
  resource: {},
  scope: { name: 'bench' },
};

/** `calls` tool calls in the given shape (two per turn, each turn shown the previous results, by default). */
export function syntheticAgentSpans(
  calls: number,
  tools: readonly string[],
  shape: TraceShape = CHAIN,
): SpanRecord[] {
  const spans: SpanRecord[] = [];
  const made = { calls: 0 };
  const start = 1_000_000_000n;
  if (shape.runOf === undefined) {
    const end = agentRun(spans, made, calls, tools, shape, undefined, start, shape.nested?.depth ?? 0);
    (spans[spans.length - 1] as SpanRecord).endTimeUnixNano = end;
    return spans;
  }
  const rootId = id();
  let t = start;
  while (made.calls < calls) {
    t = agentRun(
      spans,
      made,
      Math.min(shape.runOf, calls - made.calls),
      tools,
      shape,
      rootId,
      t,
      shape.nested?.depth ?? 0,
    );
    t += 1_000_000n;
  }
  spans.push({
    ...base,
    spanId: rootId,
    name: 'invoke_agent supervisor',
    startTimeUnixNano: start,
    endTimeUnixNano: t,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'supervisor' },
  });
  return spans;
}

/**
 * One `invoke_agent` span and its turns and tool spans, `budget` calls (some of them inside
 * nested sub-agents); the agent span comes last. Returns when it ended.
 */
function agentRun(
  spans: SpanRecord[],
  made: { calls: number },
  budget: number,
  tools: readonly string[],
  shape: TraceShape,
  parentSpanId: string | undefined,
  start: bigint,
  depth: number,
): bigint {
  const agentId = id();
  const until = made.calls + budget;
  let t = start;
  let shown: number[] = [];
  while (made.calls < until) {
    const batch: number[] = [];
    while (batch.length < shape.width && made.calls < until) batch.push(made.calls++);
    const parts = batch.map((n) => ({
      type: 'tool_call',
      id: `c${n}`,
      name: tools[n % tools.length],
      arguments: { n: n % 7 },
    }));
    const results = shown.map((n) => ({ type: 'tool_call_response', id: `c${n}`, response: { ok: true } }));
    spans.push({
      ...base,
      spanId: id(),
      parentSpanId: agentId,
      name: 'chat model',
      startTimeUnixNano: t,
      endTimeUnixNano: t + 500_000n,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [] },
          ...(results.length === 0 ? [] : [{ role: 'tool', parts: results }]),
        ]),
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts }]),
      },
    });
    let end = t + 900_000n;
    batch.forEach((n, index) => {
      const spanId = id();
      let callEnd = t + 900_000n;
      const nested = shape.nested;
      if (nested && depth > 0 && index === 0 && made.calls < until) {
        // The sub-agent's calls count toward this run's budget: they are calls of the trace.
        const inner = Math.min(nested.turns * shape.width, until - made.calls);
        callEnd = agentRun(spans, made, inner, tools, shape, spanId, t + 600_000n, depth - 1) + 100_000n;
      }
      if (callEnd > end) end = callEnd;
      spans.push({
        ...base,
        spanId,
        parentSpanId: agentId,
        name: `execute_tool ${tools[n % tools.length]}`,
        startTimeUnixNano: t + 600_000n,
        endTimeUnixNano: callEnd,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tools[n % tools.length] as string,
          'gen_ai.tool.call.id': `c${n}`,
          'gen_ai.tool.call.arguments': JSON.stringify({ n: n % 7 }),
          'gen_ai.tool.call.result': JSON.stringify({ ok: true, n: (n + 1) % 7 }),
        },
      });
    });
    shown = batch;
    t = end + 100_000n;
  }
  spans.push({
    ...base,
    spanId: agentId,
    ...(parentSpanId !== undefined && { parentSpanId }),
    name: 'invoke_agent bench',
    startTimeUnixNano: start,
    endTimeUnixNano: t,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'bench' },
  });
  return t;
}

/** The spans as an OTLP JSON ExportTraceServiceRequest text (what an exporter sends). */
export function otlpJsonOf(spans: readonly SpanRecord[]): string {
  const value = (v: unknown) =>
    typeof v === 'string' ? { stringValue: v } : typeof v === 'number' ? { intValue: v } : { boolValue: v };
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
        scopeSpans: [
          {
            scope: { name: 'bench' },
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId && { parentSpanId: s.parentSpanId }),
              name: s.name,
              kind: 1,
              startTimeUnixNano: String(s.startTimeUnixNano),
              endTimeUnixNano: String(s.endTimeUnixNano),
              attributes: Object.entries(s.attributes).map(([key, v]) => ({ key, value: value(v) })),
              status: {},
            })),
          },
        ],
      },
    ],
  });
}
