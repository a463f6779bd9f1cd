/**
 * Linking tool spans to the turn that asked for them by call id goes through every request in a
 * small trace and through an index by id in a large one. A property holds the two to the same
 * links: a trace of reused, missing and unanswered ids, and the same trace beside an agent run of
 * enough other requests (ids of their own) to take the index.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SpanRecord } from '../../src/model/span-record.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { spanRecord, TRACE_ID, toolSpan } from '../helpers/spans.js';

const IDS = ['call_0', 'call_1', 'c-2'];
const TOOLS = ['get_order', 'issue_refund'];

interface GenTurn {
  start: number;
  requests: { id: number | undefined; tool: number }[];
}
interface GenCall {
  id: number | undefined;
  tool: number;
  start: number;
}

const turnArb = fc.record({
  start: fc.integer({ min: 0, max: 40 }),
  requests: fc.array(
    fc.record({
      id: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
      tool: fc.integer({ min: 0, max: 1 }),
    }),
    { maxLength: 3 },
  ),
});
const callArb = fc.record({
  id: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  tool: fc.integer({ min: 0, max: 1 }),
  start: fc.integer({ min: 0, max: 45 }),
});

function chat(parentSpanId: string, start: number, parts: unknown[]): SpanRecord {
  return spanRecord({
    name: 'chat m',
    parentSpanId,
    start,
    end: start + 1,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts }]),
    },
  });
}

/** The generated agent run, and with `padding`, a second run under the same root asking for that many calls. */
function trace(
  turns: GenTurn[],
  calls: GenCall[],
  padding: number,
): { spans: SpanRecord[]; tools: string[] } {
  const root = spanRecord({
    name: 'invoke_agent a',
    attributes: { 'gen_ai.operation.name': 'invoke_agent' },
    end: 100,
  });
  const spans: SpanRecord[] = [root];
  for (const turn of turns)
    spans.push(
      chat(
        root.spanId,
        turn.start,
        turn.requests.map((request) => ({
          type: 'tool_call',
          ...(request.id !== undefined && { id: IDS[request.id] }),
          name: TOOLS[request.tool],
          arguments: {},
        })),
      ),
    );
  const tools: string[] = [];
  for (const call of calls) {
    const span = toolSpan(TOOLS[call.tool] as string, {
      parentSpanId: root.spanId,
      start: call.start,
      end: call.start + 1,
      ...(call.id !== undefined && { callId: IDS[call.id] }),
    });
    tools.push(span.spanId);
    spans.push(span);
  }
  if (padding > 0) {
    const pad = spanRecord({
      name: 'invoke_agent pad',
      parentSpanId: root.spanId,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'pad' },
      start: 50,
      end: 99,
    });
    spans.push(pad);
    const parts = Array.from({ length: padding }, (_, k) => ({
      type: 'tool_call',
      id: `pad-${k}`,
      name: 'lookup',
      arguments: {},
    }));
    spans.push(chat(pad.spanId, 60, parts));
  }
  return { spans, tools };
}

/** For each generated tool span, the spans of the turn it was linked to (none: ''), by its position. */
function links(turns: GenTurn[], calls: GenCall[], padding: number): string[] {
  const { spans, tools } = trace(turns, calls, padding);
  const trajectory = normalizeTrace(TRACE_ID, spans);
  if (!trajectory) throw new Error('no trajectory');
  return tools.map((spanId) => {
    const call = trajectory.calls.find((c) => c.spanId === spanId);
    if (!call) throw new Error(`no call for span ${spanId}`);
    // Turn ids name their span, which differs between the two traces: name the turn by position.
    const turn = trajectory.turns.findIndex((t) => t.id === call.turnId);
    return turn === -1 ? '' : String(turn);
  });
}

describe('linking by call id', () => {
  it('links the same whether a trace is small enough to go through its requests or takes the index', () => {
    let sawLinked = false;
    let sawReused = false;
    fc.assert(
      fc.property(
        fc.array(turnArb, { maxLength: 6 }),
        fc.array(callArb, { maxLength: 8 }),
        (turns, calls) => {
          const small = links(turns, calls, 0);
          expect(links(turns, calls, 70)).toEqual(small);
          if (small.some((turn) => turn !== '')) sawLinked = true;
          const ids = turns
            .flatMap((turn) => turn.requests.map((request) => request.id))
            .filter((id) => id !== undefined);
          if (new Set(ids).size < ids.length) sawReused = true;
        },
      ),
      {
        numRuns: 200,
        examples: [
          [
            [
              { start: 0, requests: [{ id: 0, tool: 0 }] },
              { start: 10, requests: [{ id: 0, tool: 1 }] },
            ],
            [
              { id: 0, tool: 0, start: 2 },
              { id: 0, tool: 1, start: 12 },
            ],
          ],
        ],
      },
    );
    expect(sawLinked).toBe(true);
    expect(sawReused).toBe(true);
  });
});
