/**
 * Per-agent rules (`agents:`) and handoff rules (`handoffs:`) on recorded multi-agent runs:
 * `openinference-openai-agents-*` (the OpenAI Agents SDK for JS, its OpenInference bridge, scripted
 * models: test/spans/capture/openinference/capture-openai-agents-multi-agent.mjs) and
 * `sdk-genai-agents-*` (a real OTel SDK emitting the GenAI conventions' `invoke_agent` nesting and
 * transfer refinement: test/spans/capture/sdk-genai-agents.ts).
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { FINDING_EVENT, reportEvents } from '../../src/judging/evaluation-events.js';
import type { Report } from '../../src/model/report.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';

function judge(file: string, rules: Record<string, unknown>): Report {
  return evaluate(trajectoryOf(fixture(file)), parseScenario({ id: 'support', ...rules }, 'support.yaml'));
}

const findingsOf = (report: Report, rule: string) => report.findings.filter((f) => f.rule === rule);
const statusOf = (report: Report, name: string) => report.assertions.find((a) => a.name === name)?.status;

/** Billing may refund, triage may not. */
const AGENTS = {
  agents: {
    billing: { tools: { allowed: ['issue_refund'] } },
    triage: { tools: { forbidden: ['issue_refund'] } },
  },
};

describe.each([
  ['OpenAI Agents JS handoff', 'openinference-openai-agents-handoff-to-billing', 'call_issue_refund_1'],
  ['GenAI transfer', 'sdk-genai-agents-transfer', 'call_refund'],
])('%s: triage hands off to billing, billing refunds', (_, file) => {
  it('agents.billing.tools.allowed: [issue_refund] passes; triage made no call of its own but the handoff', () => {
    const report = judge(file, AGENTS);
    expect(report.findings).toEqual([]);
    expect(report.verdict).toBe('pass');
    expect(statusOf(report, 'agents.billing.no_unexpected_tool')).toBe('pass');
    expect(statusOf(report, 'agents.triage.tools.forbidden')).toBe('pass');
  });

  it('the same allowlist for the whole trace fails: the transfer is a call too', () => {
    const report = judge(file, { tools: { allowed: ['issue_refund'] } });
    expect(report.verdict).toBe('fail');
    expect(findingsOf(report, 'tools.allowed')[0]?.message).toContain('transfer_to_billing');
  });

  it('a handoff to a forbidden target fails, naming both agents', () => {
    const report = judge(file, { handoffs: { forbidden: [{ from: 'triage', to: 'billing' }] } });
    expect(report.verdict).toBe('fail');
    const [finding] = findingsOf(report, 'handoffs.forbidden');
    expect(finding).toMatchObject({ severity: 'hard' });
    expect(finding?.message).toMatch(/^forbidden handoffs: triage -> billing \(call call_transfer/);
  });

  it('allowed pairs (deny by default), required and max hold; not_made passes', () => {
    const report = judge(file, {
      handoffs: {
        allowed: [{ from: 'triage', to: 'billing' }],
        required: [{ from: '*', to: 'billing' }],
        max: 1,
      },
    });
    expect(report.findings).toEqual([]);
    expect(report.assertions.map((a) => `${a.name}:${a.status}`)).toEqual([
      'handoffs.allowed:pass',
      'handoffs.required[0]:pass',
      'handoffs.max:pass',
      'handoffs.not_made:pass',
    ]);
    const denied = judge(file, { handoffs: { allowed: [{ from: 'triage', to: 'sales' }] } });
    expect(findingsOf(denied, 'handoffs.allowed')[0]?.message).toContain(
      'handoffs not on the allowed list: triage -> billing',
    );
    expect(judge(file, { handoffs: { max: 0 } }).verdict).toBe('fail');
  });
});

describe.each([
  ['OpenAI Agents JS', 'openinference-openai-agents-triage-refunds', 'call_issue_refund_1'],
  ['GenAI', 'sdk-genai-agents-triage-refunds', 'call_refund'],
])('%s: triage refunds itself', (_, file, refundId) => {
  it('fails agents.triage rules, naming the agent; billing never ran: its rules are inconclusive', () => {
    const report = judge(file, AGENTS);
    expect(report.verdict).toBe('fail');
    const [finding] = findingsOf(report, 'agents.triage.tools.forbidden');
    expect(finding).toMatchObject({
      agent: 'triage',
      severity: 'hard',
      calls: [refundId],
      assertion: 'agents.triage.tools.forbidden',
    });
    expect(finding?.message).toContain('called forbidden tools: issue_refund');
    // The finding event back into OTel names the agent too.
    const events = reportEvents(report).filter((event) => event.name === FINDING_EVENT);
    expect(events.map((event) => event.attributes['toolpath.finding.agent'])).toEqual(['billing', 'triage']);
    const [billing] = findingsOf(report, 'agents.billing.tools.allowed');
    expect(billing).toMatchObject({ agent: 'billing', inconclusive: true });
    expect(billing?.message).toBe(
      'agent billing never ran in this trace (no run or call of it), so its rules have nothing to judge; agents that ran: triage',
    );
  });

  it('required: true makes the agent that never ran a failing finding', () => {
    const report = judge(file, {
      agents: { billing: { required: true, tools: { allowed: ['issue_refund'] } } },
    });
    expect(report.verdict).toBe('fail');
    expect(findingsOf(report, 'agents.billing.required')[0]).toMatchObject({
      agent: 'billing',
      severity: 'hard',
    });
    expect(findingsOf(report, 'agents.billing.tools.allowed')[0]?.inconclusive).toBe(true);
    // While a conversation may go on, billing may still run: pending, not failed.
    const scenario = parseScenario(
      { id: 'support', agents: { billing: { required: true } } },
      'support.yaml',
    );
    const provisional = evaluate(trajectoryOf(fixture(file)), scenario, { provisional: true });
    expect(provisional.verdict).toBe('inconclusive');
    expect(findingsOf(provisional, 'agents.billing.required')[0]?.pending).toBe(true);
  });

  it('a required handoff that never happened fails', () => {
    const report = judge(file, { handoffs: { required: [{ from: 'triage', to: 'billing' }] } });
    expect(findingsOf(report, 'handoffs.required')[0]?.message).toBe(
      'expected a handoff triage -> billing; no handoff was made',
    );
  });
});

describe.each([
  [
    'OpenAI Agents JS: two handoffs asked for in one response, the SDK makes the first',
    'openinference-openai-agents-handoff-ignored',
    'triage -> sales (call call_transfer_2): no run of sales after it',
  ],
  [
    'GenAI: a transfer to billing announced, no billing run',
    'sdk-genai-agents-transfer-not-made',
    'triage -> billing (call call_transfer): no run of billing after it',
  ],
])('%s', (_, file, listed) => {
  it('fails handoffs.not_made', () => {
    const report = judge(file, { handoffs: { max: 2 } });
    expect(report.verdict).toBe('fail');
    const [finding] = findingsOf(report, 'handoffs.not_made');
    expect(finding?.message).toBe(`handoffs asked for but never made: ${listed}`);
    expect(finding?.severity).toBe('hard');
  });
});

describe('agent as a tool: the sub-agent nests inside its caller', () => {
  it.each([
    ['openinference-openai-agents-agent-as-tool', 'billing'],
    ['sdk-genai-agents-sub-agent', 'billing'],
  ])(
    '%s: the sub-agent call is the caller’s, the calls inside it the sub-agent’s, each counted once',
    (file, tool) => {
      const report = judge(file, {
        efficiency: { maxCalls: 3 },
        agents: {
          triage: { tools: { allowed: [tool] }, efficiency: { maxCalls: 1 } },
          billing: { tools: { allowed: ['get_order', 'issue_refund'] }, efficiency: { maxCalls: 2 } },
        },
      });
      expect(report.findings).toEqual([]);
      expect(report.stats.calls).toBe(3);
      // One call fewer than there are and the budgets fail: nothing was counted twice.
      const tight = judge(file, {
        efficiency: { maxCalls: 2 },
        agents: { billing: { efficiency: { maxCalls: 1 } } },
      });
      expect(tight.findings.map((f) => `${f.rule}: ${f.message}`)).toEqual([
        expect.stringMatching(/^efficiency\.budget: 3 calls, budget 2 /),
        expect.stringMatching(/^agents\.billing\.efficiency\.budget: 2 calls, budget 1 /),
      ]);
    },
  );
});

describe('"*": every agent that ran', () => {
  it('judges each agent on its own calls, in order of first appearance', () => {
    const report = judge('sdk-genai-agents-sub-agent', {
      agents: { '*': { tools: { forbidden: ['issue_refund'] } } },
    });
    expect(report.assertions.map((a) => `${a.name}:${a.status}`)).toEqual([
      'agents.triage.tools.forbidden:pass',
      'agents.billing.tools.forbidden:fail',
    ]);
  });

  it('on a trace that names no agent: inconclusive, saying so', () => {
    const report = judge('langsmith-documented-refund', {
      agents: { '*': { tools: { required: ['issue_refund'] } } },
    });
    const [finding] = report.findings.filter((f) => f.rule.startsWith('agents.'));
    expect(finding).toMatchObject({ rule: 'agents.*.tools.required', inconclusive: true });
    expect(finding?.message).toContain('no agent ran in this trace');
  });
});

describe('severity of an agent’s rules', () => {
  it('is set by its full id, by the rule id or by the family', () => {
    const scenario = {
      agents: { billing: { tools: { counts: { issue_refund: { max: 0 } } } } },
    };
    const file = 'sdk-genai-agents-transfer';
    const severity = (overrides?: Record<string, string>) =>
      findingsOf(
        judge(file, { ...scenario, ...(overrides && { severity: overrides }) }),
        'agents.billing.tools.count',
      )[0]?.severity;
    expect(severity()).toBe('hard');
    expect(severity({ 'agents.billing.tools.count': 'warning' })).toBe('warning');
    expect(severity({ 'tools.count': 'warning' })).toBe('warning');
    expect(severity({ tools: 'warning' })).toBe('warning');
  });
});
