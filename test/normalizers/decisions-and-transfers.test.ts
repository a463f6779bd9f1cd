/**
 * The GenAI conventions' newest parts: the transfer refinement of `execute_tool`
 * (`gen_ai.transfer.mode`, `.target.name`, `.target.type`) read as a handoff, and the
 * `gen_ai.tool.call.decision` event read onto the call it names. Built from the conventions'
 * documented shape (semantic-conventions-genai: the transfer span refinement report, PR #535):
 * no framework here records them.
 */
import { describe, expect, it } from 'vitest';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { trajectoryFromTypedEvents } from '../../src/normalizers/typed-events.js';
import { orderedPairs } from '../helpers/fixtures.js';
import { spanRecord, TRACE_ID, toolSpan } from '../helpers/spans.js';

const agentSpan = (name: string, fields: Parameters<typeof spanRecord>[0] = {}) =>
  spanRecord({
    name: `invoke_agent ${name}`,
    ...fields,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': name },
  });

/** A chat span whose output asks for these calls. */
function chatSpan(
  calls: { id: string; name: string; arguments?: unknown }[],
  fields: Parameters<typeof spanRecord>[0],
) {
  return spanRecord({
    name: 'chat',
    ...fields,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'text', content: 'refund A-1' }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: calls.map((call) => ({ type: 'tool_call', arguments: {}, ...call })) },
      ]),
    },
  });
}

const decision = (time: number, attributes: Attributes) => ({
  name: 'gen_ai.tool.call.decision',
  timeUnixNano: BigInt(time) * 1_000_000n,
  attributes,
});

function read(spans: SpanRecord[]): Trajectory {
  const trajectory = normalizeTrace(TRACE_ID, spans);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

describe('the GenAI transfer refinement', () => {
  it('pass_control: a call, and the target agent run after it, however close their times', () => {
    const triage = agentSpan('triage', { start: 0, end: 3 });
    const transfer = toolSpan('transfer_to_billing', {
      name: 'execute_tool transfer_to_billing billing',
      parentSpanId: triage.spanId,
      callId: 'call_t',
      start: 1,
      end: 2,
      extra: {
        'gen_ai.transfer.mode': 'pass_control',
        'gen_ai.transfer.target.name': 'billing',
        'gen_ai.transfer.target.type': 'agent',
      },
    });
    // billing's run starts in the millisecond the transfer started: time alone orders nothing.
    const billing = agentSpan('billing', { start: 1, end: 5 });
    const refund = toolSpan('issue_refund', {
      parentSpanId: billing.spanId,
      callId: 'call_r',
      start: 1,
      end: 2,
    });
    const trajectory = read([triage, transfer, billing, refund]);
    const call = trajectory.call('call_t');
    const billingRun = trajectory.agents.find((run) => run.name === 'billing');
    expect(call?.handoff).toEqual({
      targetName: 'billing',
      targetType: 'agent',
      mode: 'pass_control',
      targetRunId: billingRun?.id,
    });
    expect(billingRun?.handoffCallId).toBe('call_t');
    expect(orderedPairs(trajectory)).toEqual(['transfer_to_billing->issue_refund']);
  });

  it("return_to_caller: the target run inside the call span is the call's target", () => {
    const caller = agentSpan('assistant', { start: 0, end: 20 });
    const transfer = toolSpan('ask_weather', {
      name: 'execute_tool ask_weather weather-specialist',
      parentSpanId: caller.spanId,
      start: 1,
      end: 10,
      extra: {
        'gen_ai.transfer.mode': 'return_to_caller',
        'gen_ai.transfer.target.name': 'weather-specialist',
      },
    });
    delete transfer.attributes['gen_ai.tool.name'];
    const specialist = agentSpan('weather-specialist', { parentSpanId: transfer.spanId, start: 2, end: 9 });
    const lookup = toolSpan('get_forecast', { parentSpanId: specialist.spanId, start: 3, end: 4 });
    const trajectory = read([caller, transfer, specialist, lookup]);
    const [call] = trajectory.calls.filter((c) => c.tool === 'ask_weather');
    const run = trajectory.agents.find((r) => r.name === 'weather-specialist');
    // The name's target suffix is not part of the tool's name.
    expect(call?.tool).toBe('ask_weather');
    expect(call?.handoff).toMatchObject({ mode: 'return_to_caller', targetRunId: run?.id });
    expect(run).toMatchObject({ parentCallId: call?.id, handoffCallId: call?.id });
  });

  it('a transfer whose target is not in the trace is still a handoff call, with no target run', () => {
    const triage = agentSpan('triage', { start: 0, end: 3 });
    const transfer = toolSpan('transfer_to_billing', {
      parentSpanId: triage.spanId,
      start: 1,
      end: 2,
      extra: { 'gen_ai.transfer.target.name': 'billing' },
    });
    const [call] = read([triage, transfer]).calls;
    expect(call?.handoff).toEqual({ targetName: 'billing' });
  });
  it("ends on agent spans that are each other's parents (a producer's loop of parent ids)", () => {
    const a = agentSpan('a', { start: 0, end: 5 });
    const b = agentSpan('b', { start: 0, end: 5, parentSpanId: a.spanId });
    a.parentSpanId = b.spanId;
    const transfer = toolSpan('transfer_to_c', {
      parentSpanId: a.spanId,
      start: 1,
      end: 2,
      extra: { 'gen_ai.transfer.target.name': 'c' },
    });
    const c = agentSpan('c', { start: 3, end: 4 });
    const trajectory = read([a, b, transfer, c]);
    expect(trajectory.calls[0]?.handoff?.targetRunId).toBe(
      trajectory.agents.find((run) => run.name === 'c')?.id,
    );
  });
});

describe('gen_ai.tool.call.decision', () => {
  it('a deny with no execution span: the call is still a call, not executed, with its decision', () => {
    const agent = agentSpan('support', { start: 0, end: 10 });
    const chat = chatSpan(
      [
        { id: 'call_o', name: 'get_order', arguments: { id: 'A-1' } },
        { id: 'call_r', name: 'issue_refund', arguments: { id: 'A-1' } },
      ],
      { parentSpanId: agent.spanId, start: 1, end: 2 },
    );
    agent.events.push(
      decision(2, {
        'gen_ai.tool.call.decision.outcome': 'allow',
        'gen_ai.tool.call.id': 'call_o',
        'gen_ai.tool.name': 'get_order',
      }),
      decision(2, {
        'gen_ai.tool.call.decision.outcome': 'deny',
        'gen_ai.tool.call.id': 'call_r',
        'gen_ai.tool.name': 'issue_refund',
      }),
    );
    const order = toolSpan('get_order', { parentSpanId: agent.spanId, callId: 'call_o', start: 3, end: 4 });
    const trajectory = read([agent, chat, order]);
    expect(trajectory.issues).toEqual([]);
    const byId = [...trajectory.calls].sort((a, b) => a.id.localeCompare(b.id));
    expect(byId.map((call) => ({ id: call.id, outcome: call.outcome, decisions: call.decisions }))).toEqual([
      {
        id: 'call_o',
        outcome: { status: 'ok' },
        decisions: [{ outcome: 'allow', spanId: agent.spanId, time: 2_000_000n }],
      },
      {
        id: 'call_r',
        outcome: { status: 'not_executed' },
        decisions: [{ outcome: 'deny', spanId: agent.spanId, time: 2_000_000n }],
      },
    ]);
  });

  it('held for approval then allowed, with no execution span: no result, not "not executed"', () => {
    const agent = agentSpan('support', { start: 0, end: 10 });
    const chat = chatSpan([{ id: 'call_r', name: 'issue_refund' }], {
      parentSpanId: agent.spanId,
      start: 1,
      end: 2,
    });
    agent.events.push(
      decision(2, {
        'gen_ai.tool.call.decision.outcome': 'require_approval',
        'gen_ai.tool.call.id': 'call_r',
      }),
      decision(3, { 'gen_ai.tool.call.decision.outcome': 'allow', 'gen_ai.tool.call.id': 'call_r' }),
    );
    const [call] = read([agent, chat]).calls;
    expect(call?.outcome).toEqual({ status: 'no_result' });
    expect(call?.decisions?.map((d) => d.outcome)).toEqual(['require_approval', 'allow']);
  });

  it('a decision that names a call nothing else records makes that call; one without an id goes by tool', () => {
    const agent = agentSpan('support', { start: 0, end: 10 });
    agent.events.push(
      decision(1, {
        'gen_ai.tool.call.decision.outcome': 'deny',
        'gen_ai.tool.call.id': 'call_x',
        'gen_ai.tool.name': 'wire_money',
      }),
      decision(2, { 'gen_ai.tool.call.decision.outcome': 'allow', 'gen_ai.tool.name': 'get_order' }),
    );
    const order = toolSpan('get_order', { parentSpanId: agent.spanId, start: 3, end: 4 });
    const trajectory = read([agent, order]);
    const wire = trajectory.calls.find((call) => call.tool === 'wire_money');
    expect(wire).toMatchObject({
      callId: 'call_x',
      agentName: 'support',
      args: { captured: false },
      outcome: { status: 'not_executed' },
      decisions: [{ outcome: 'deny' }],
    });
    expect(trajectory.calls.find((call) => call.tool === 'get_order')?.decisions).toEqual([
      { outcome: 'allow', spanId: agent.spanId, time: 2_000_000n },
    ]);
  });

  it('a decision it cannot read or place is reported, never guessed onto a call', () => {
    const agent = agentSpan('support', { start: 0, end: 10 });
    agent.events.push(
      decision(1, { 'gen_ai.tool.call.decision.outcome': 'maybe', 'gen_ai.tool.call.id': 'call_o' }),
      decision(1, { 'gen_ai.tool.call.decision.outcome': 'deny' }),
    );
    const order = toolSpan('get_order', { parentSpanId: agent.spanId, callId: 'call_o', start: 3, end: 4 });
    const trajectory = read([agent, order]);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual([
      'decision.unreadable',
      'decision.unlinked',
    ]);
    expect(trajectory.issues[0]?.message).toContain('"maybe"');
    expect(trajectory.calls[0]?.decisions).toBeUndefined();
  });
});

describe('typed-event decisions', () => {
  it('a deny with no result after it is not executed; a result after a deny means the call ran', () => {
    const trajectory = trajectoryFromTypedEvents('t', [
      { kind: 'call', id: 'a', tool: 'issue_refund', args: {} },
      { kind: 'decision', callId: 'a', outcome: 'deny' },
      { kind: 'call', id: 'b', tool: 'issue_refund', args: {} },
      { kind: 'decision', callId: 'b', outcome: 'deny' },
      { kind: 'result', callId: 'b', ok: true, output: { refund: 'R-1' } },
    ]);
    expect(trajectory.call('a')).toMatchObject({
      outcome: { status: 'not_executed' },
      decisions: [{ outcome: 'deny', time: 1n }],
    });
    expect(trajectory.call('b')?.outcome).toEqual({ status: 'ok' });
    expect(trajectory.issues).toEqual([]);
  });

  it('a decision for a call never issued is an issue', () => {
    const trajectory = trajectoryFromTypedEvents('t', [{ kind: 'decision', callId: 'z', outcome: 'allow' }]);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['decision.unlinked']);
  });
});
