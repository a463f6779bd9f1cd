/** A synthetic agent trace for benchmarks: GenAI spans of an agent loop with parallel pairs of calls. */
import type { SpanRecord } from '../src/model/span-record.js';

const TRACE = '5b8efff798038103d269b633813fc60c';
let nextSpan = 1;
const id = () => (nextSpan++).toString(16).padStart(16, '0');

/** `calls` tool calls, two per turn, each turn shown every earlier result. */
export function syntheticAgentSpans(calls: number, tools: readonly string[]): SpanRecord[] {
  const base = {
    traceId: TRACE,
    kind: 'internal' as const,
    status: { code: 'unset' as const },
    events: [],
    links: [],
    resource: {},
    scope: { name: 'bench' },
  };
  const agentId = id();
  const spans: SpanRecord[] = [];
  let t = 1_000_000_000n;
  for (let i = 0; i < calls; i += 2) {
    const batch = [i, i + 1].filter((n) => n < calls);
    const parts = batch.map((n) => ({
      type: 'tool_call',
      id: `c${n}`,
      name: tools[n % tools.length],
      arguments: { n: n % 7 },
    }));
    const shown =
      i === 0
        ? []
        : [
            {
              role: 'tool',
              parts: [i - 2, i - 1].map((n) => ({
                type: 'tool_call_response',
                id: `c${n}`,
                response: { ok: true },
              })),
            },
          ];
    spans.push({
      ...base,
      spanId: id(),
      parentSpanId: agentId,
      name: 'chat model',
      startTimeUnixNano: t,
      endTimeUnixNano: t + 500_000n,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [] }, ...shown]),
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts }]),
      },
    });
    for (const n of batch) {
      spans.push({
        ...base,
        spanId: id(),
        parentSpanId: agentId,
        name: `execute_tool ${tools[n % tools.length]}`,
        startTimeUnixNano: t + 600_000n,
        endTimeUnixNano: t + 900_000n,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tools[n % tools.length] as string,
          'gen_ai.tool.call.id': `c${n}`,
          'gen_ai.tool.call.arguments': JSON.stringify({ n: n % 7 }),
          'gen_ai.tool.call.result': JSON.stringify({ ok: true, n: (n + 1) % 7 }),
        },
      });
    }
    t += 1_000_000n;
  }
  spans.push({
    ...base,
    spanId: agentId,
    name: 'invoke_agent bench',
    startTimeUnixNano: 1_000_000_000n,
    endTimeUnixNano: t,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'bench' },
  });
  return spans;
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
