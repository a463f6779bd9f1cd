/**
 * Emits an agent run as OTel GenAI spans (invoke_agent, chat with input/output messages,
 * execute_tool), the way an instrumented agent loop does: each turn's input holds the whole
 * history so far, tool calls asked for in one turn run in parallel. Sub-agents run inside a tool.
 */
import type { SpanRecord } from '../../src/model/span-record.js';
import { spanId, spanRecord, TRACE_ID } from './spans.js';

/** One generated tool call. */
export interface GenCall {
  id: string;
  tool: string;
  fails: boolean;
  /** A sub-agent run inside this call (agent used as a tool). */
  subRun?: GenRun;
  /** Offsets (ms) from the turn's end; random so start order says nothing. */
  startOffset: number;
  duration: number;
}

/** One generated run: its turns, each a list of parallel calls (the last turn answers in text). */
export interface GenRun {
  agent: string;
  turns: GenCall[][];
}

/** Emits the run; returns spans (unshuffled) and the time the run ended. */
export function emitRun(
  run: GenRun,
  parentSpanId: string | undefined,
  start: number,
): { spans: SpanRecord[]; end: number } {
  const agentId = spanId();
  const spans: SpanRecord[] = [];
  const history: unknown[] = [{ role: 'user', parts: [{ type: 'text', content: 'help' }] }];
  let clock = start + 1;
  for (const calls of [...run.turns, []]) {
    const chatStart = clock;
    const chatEnd = chatStart + 2;
    const output = [
      calls.length === 0
        ? { role: 'assistant', parts: [{ type: 'text', content: 'done' }], finish_reason: 'stop' }
        : {
            role: 'assistant',
            parts: calls.map((c) => ({ type: 'tool_call', id: c.id, name: c.tool, arguments: { n: c.id } })),
            finish_reason: 'tool_call',
          },
    ];
    spans.push(
      spanRecord({
        name: 'chat model',
        kind: 'client',
        parentSpanId: agentId,
        start: chatStart,
        end: chatEnd,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': JSON.stringify(history),
          'gen_ai.output.messages': JSON.stringify(output),
        },
      }),
    );
    history.push(...output);
    let turnEnd = chatEnd;
    const responses: unknown[] = [];
    for (const call of calls) {
      const toolId = spanId();
      const callStart = chatEnd + call.startOffset;
      let callEnd = callStart + call.duration;
      if (call.subRun) {
        const sub = emitRun(call.subRun, toolId, callStart);
        spans.push(...sub.spans);
        callEnd = Math.max(callEnd, sub.end + 1);
      }
      spans.push(
        spanRecord({
          spanId: toolId,
          name: `execute_tool ${call.tool}`,
          parentSpanId: agentId,
          start: callStart,
          end: callEnd,
          status: call.fails ? { code: 'error', message: 'boom' } : { code: 'unset' },
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': call.tool,
            'gen_ai.tool.call.id': call.id,
            'gen_ai.tool.call.arguments': JSON.stringify({ n: call.id }),
            ...(!call.fails && { 'gen_ai.tool.call.result': JSON.stringify({ ok: call.id }) }),
          },
        }),
      );
      responses.push({
        type: 'tool_call_response',
        id: call.id,
        response: call.fails ? 'Error: boom' : { ok: call.id },
      });
      turnEnd = Math.max(turnEnd, callEnd);
    }
    if (responses.length > 0) history.push({ role: 'tool', parts: responses });
    clock = turnEnd + 1;
  }
  spans.push(
    spanRecord({
      spanId: agentId,
      name: `invoke_agent ${run.agent}`,
      ...(parentSpanId && { parentSpanId }),
      start,
      end: clock,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': run.agent },
    }),
  );
  return { spans, end: clock };
}

/** Where each generated call sits: its run, its turn index, and the chain of enclosing calls. */
export interface CallPlace {
  call: GenCall;
  run: GenRun;
  turn: number;
  /** Enclosing calls, outermost first, with their own run and turn. */
  outer: { call: GenCall; run: GenRun; turn: number }[];
}

/** Every call of a run and its sub-runs, with its place. */
export function placesOf(run: GenRun, outer: CallPlace['outer'] = []): CallPlace[] {
  return run.turns.flatMap((calls, turn) =>
    calls.flatMap((call) => [
      { call, run, turn, outer },
      ...(call.subRun ? placesOf(call.subRun, [...outer, { call, run, turn }]) : []),
    ]),
  );
}

/**
 * The happens-before a person would draw: walk both calls up to the run they share; there,
 * a's side must come from an earlier turn than b's side (each turn was shown every earlier
 * result). Calls under the same outer call of one turn inherit that turn's order.
 */
export function expectedBefore(a: CallPlace, b: CallPlace): boolean {
  const chainA = [...a.outer, { call: a.call, run: a.run, turn: a.turn }];
  const chainB = [...b.outer, { call: b.call, run: b.run, turn: b.turn }];
  let i = 0;
  while (i < chainA.length && i < chainB.length && chainA[i]?.call === chainB[i]?.call) i++;
  const x = chainA[i];
  const y = chainB[i];
  // One call encloses the other: the nested one runs while the outer one is open, so neither is before.
  if (!x || !y) return false;
  return x.run === y.run && x.turn < y.turn;
}

export { TRACE_ID };
