/**
 * Handoff rules on the edge cases real SDKs will not produce on demand: a run control reached
 * with no handoff recorded, a transfer span still open, a handoff by an agent the trace does not
 * name; and the scenario errors of `agents` and `handoffs`. The main paths run on recorded
 * spans (agents.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { renderTrajectory } from '../../src/cli/view-html.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { Report } from '../../src/model/report.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { errorOf } from '../helpers/scenario-errors.js';
import { spanRecord, TRACE_ID, toolSpan } from '../helpers/spans.js';

const agentSpan = (name: string, fields: Parameters<typeof spanRecord>[0] = {}) =>
  spanRecord({
    name: `invoke_agent ${name}`,
    ...fields,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': name },
  });

const TRANSFER = {
  'gen_ai.transfer.mode': 'pass_control',
  'gen_ai.transfer.target.name': 'billing',
  'gen_ai.transfer.target.type': 'agent',
};

function read(spans: SpanRecord[]): Trajectory {
  const trajectory = normalizeTrace(TRACE_ID, spans);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

function judge(trajectory: Trajectory, rules: Record<string, unknown>): Report {
  return evaluate(trajectory, parseScenario({ id: 'handoffs', ...rules }, 'handoffs.yaml'));
}

const resultOf = (report: Report, name: string) => report.assertions.find((a) => a.name === name);

/** triage looks an order up, then sales runs and quotes: no transfer span says how. */
function unrecordedHandoff(): Trajectory {
  const triage = agentSpan('triage', { start: 0, end: 3 });
  const lookup = toolSpan('get_order', { parentSpanId: triage.spanId, callId: 'c1', start: 1, end: 2 });
  const sales = agentSpan('sales', { start: 4, end: 8 });
  const quote = toolSpan('quote', { parentSpanId: sales.spanId, callId: 'c2', start: 5, end: 6 });
  return read([triage, lookup, sales, quote]);
}

describe('a run no handoff or call started', () => {
  it('is named by the trajectory; the entry agent is not', () => {
    const trajectory = unrecordedHandoff();
    expect(trajectory.unstartedRuns().map((run) => run.name)).toEqual(['sales']);
  });

  it('is said so in `toolpath view`; a handoff target says which call handed off to it', () => {
    const { html } = renderTrajectory(unrecordedHandoff(), []);
    expect(html).toMatch(
      /agent <strong>sales<\/strong><span class="muted"> · no recorded handoff or call started it</,
    );
    const triage = agentSpan('triage', { start: 0, end: 3 });
    const transfer = toolSpan('transfer_to_billing', {
      parentSpanId: triage.spanId,
      callId: 't1',
      start: 1,
      end: 2,
      extra: TRANSFER,
    });
    const handedOff = renderTrajectory(
      read([triage, transfer, agentSpan('billing', { start: 4, end: 6 })]),
      [],
    );
    expect(handedOff.html).toContain(
      '<strong>billing</strong><span class="muted"> · handed off to by call t1<',
    );
  });

  it('leaves handoffs.allowed, .forbidden and .max undecided where it could be a handoff they judge', () => {
    const trajectory = unrecordedHandoff();
    const report = judge(trajectory, {
      handoffs: {
        allowed: [{ from: 'triage', to: 'billing' }],
        forbidden: [{ from: 'triage', to: 'sales' }],
        max: 0,
      },
    });
    expect(report.verdict).toBe('inconclusive');
    for (const name of ['handoffs.allowed', 'handoffs.forbidden', 'handoffs.max'])
      expect(resultOf(report, name)?.status).toBe('inconclusive');
    expect(resultOf(report, 'handoffs.allowed')?.reason).toMatch(
      /^control reached sales \(span [0-9a-f]+\) with no handoff or call recorded as starting it: a handoff no allowed pair covers may be missing from the trace$/,
    );
    expect(resultOf(report, 'handoffs.not_made')?.status).toBe('pass');
  });

  it('does not where every way to it is allowed, or none is forbidden', () => {
    const report = judge(unrecordedHandoff(), {
      handoffs: {
        allowed: [{ from: '*', to: 'sales' }],
        forbidden: [{ from: 'triage', to: 'billing' }],
        max: 1,
      },
    });
    expect(report.findings).toEqual([]);
  });
});

describe('handoffs.not_made', () => {
  it('is undecided while the transfer span is still open', () => {
    const triage = agentSpan('triage', { start: 0, end: null });
    const transfer = toolSpan('transfer_to_billing', {
      parentSpanId: triage.spanId,
      callId: 't1',
      start: 1,
      end: null,
      extra: TRANSFER,
    });
    const report = judge(read([triage, transfer]), { handoffs: { max: 1 } });
    expect(resultOf(report, 'handoffs.not_made')).toMatchObject({
      status: 'inconclusive',
      reason:
        'triage -> billing (call t1) is still open (no end recorded) and no run of the target follows: whether control passed is unknown',
    });
  });

  it('fails for a transfer that failed, saying so', () => {
    const triage = agentSpan('triage', { start: 0, end: 4 });
    const transfer = toolSpan('transfer_to_billing', {
      parentSpanId: triage.spanId,
      callId: 't1',
      start: 1,
      end: 2,
      status: { code: 'error', message: 'no such agent' },
      extra: TRANSFER,
    });
    const report = judge(read([triage, transfer]), { handoffs: { max: 1 } });
    expect(resultOf(report, 'handoffs.not_made')?.reason).toBe(
      'handoffs asked for but never made: triage -> billing (call t1), which failed: no run of billing after it',
    );
  });
});

describe('a handoff by an agent the trace does not name', () => {
  const transfer = toolSpan('transfer_to_billing', { callId: 't1', start: 1, end: 2, extra: TRANSFER });
  const billing = agentSpan('billing', { start: 3, end: 6 });

  it('is undecided by pairs that name a caller, judged by those that do not', () => {
    const trajectory = read([transfer, billing]);
    const named = judge(trajectory, {
      handoffs: {
        allowed: [{ from: 'triage', to: 'billing' }],
        forbidden: [{ from: 'triage', to: 'billing' }],
      },
    });
    expect(resultOf(named, 'handoffs.allowed')?.status).toBe('inconclusive');
    expect(resultOf(named, 'handoffs.forbidden')?.status).toBe('inconclusive');
    const any = judge(trajectory, { handoffs: { forbidden: [{ from: '*', to: 'billing' }] } });
    expect(resultOf(any, 'handoffs.forbidden')?.reason).toBe(
      'forbidden handoffs: an unnamed agent -> billing (call t1)',
    );
  });
});

describe('a target spelt as a transfer tool spells it', () => {
  it('names the agent whose name it is in function style; the rules know it by either name', () => {
    const triage = agentSpan('triage', { start: 0, end: 3 });
    const transfer = toolSpan('transfer_to_billing_agent', {
      parentSpanId: triage.spanId,
      callId: 't1',
      start: 1,
      end: 2,
      extra: { ...TRANSFER, 'gen_ai.transfer.target.name': 'billing_agent' },
    });
    const billing = agentSpan('Billing Agent', { start: 4, end: 6 });
    const trajectory = read([triage, transfer, billing]);
    expect(trajectory.call('t1')?.handoff?.targetRunId).toBe(
      trajectory.agents.find((run) => run.name === 'Billing Agent')?.id,
    );
    for (const to of ['Billing Agent', 'billing_agent'])
      expect(judge(trajectory, { handoffs: { required: [{ from: 'triage', to }] } }).findings).toEqual([]);
    // Another agent is not it.
    const other = read([triage, transfer, agentSpan('Billing', { start: 4, end: 6 })]);
    expect(resultOf(judge(other, { handoffs: { max: 1 } }), 'handoffs.not_made')?.status).toBe('fail');
  });
});

describe('scenario errors', () => {
  it('a handoff pair needs both ends; an agent body is checked as a scenario body is', () => {
    expect(errorOf({ handoffs: { allowed: [{ from: 'triage' }] } })).toContain('handoffs.allowed[0].to');
    expect(errorOf({ agents: { billing: { tool: { allowed: [] } } } })).toContain('agents.billing');
    expect(errorOf({ agents: { billing: { outcome: [] } } })).toContain('outcome');
    expect(errorOf({ agents: { billing: { required: 'yes' } } })).toContain('agents.billing.required');
    expect(errorOf({ agents: { billing: {} } })).toBe(
      'scenario refund.yaml: agents.billing: no rules for this agent: give at least one rule section, or required: true',
    );
  });
});
