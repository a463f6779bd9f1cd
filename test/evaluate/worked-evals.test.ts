/**
 * The worked evals of seed 001 (refund argument correctness, forbidden escalation, handoff
 * order) and seed 000's tutorial scenario, judged on real spans: traces the demo agent's
 * machinery (a real OTel SDK provider, GenAI spans, OTLP JSON) recorded into test/spans/
 * (regenerate: `npx tsx test/spans/capture/demo-agent/capture.ts`), read the way `toolpath eval`
 * reads them. Each verdict and reason is the one the seed describes.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runEval, type StoredText } from '../../src/cli/run-eval.js';
import type { Report } from '../../src/model/report.js';
import { parseScenario, type Scenario } from '../../src/scenario/scenario.js';
import { installToolpathMatchers } from '../../src/vitest.js';
import { captureConversations } from '../helpers/worked-evals.js';

installToolpathMatchers();

async function fixture(name: string): Promise<StoredText> {
  const url = new URL(`../spans/demo-agent-${name}.otlp.json`, import.meta.url);
  return { source: name, text: await readFile(url, 'utf8') };
}

/** Evaluates the named fixtures against one scenario; one report per fixture, by name. */
async function judge(scenario: Scenario, names: string[]): Promise<Record<string, Report>> {
  const run = runEval(await Promise.all(names.map(fixture)), [scenario]);
  expect(run.errors).toEqual([]);
  expect(run.reports.map(({ source }) => source)).toEqual(names);
  return Object.fromEntries(run.reports.map(({ source, report }) => [source, report]));
}

/** Seed 001's worked evals, verbatim. */
const REFUND = {
  tool_call_args: [
    {
      tool: 'issue_refund',
      match: { mode: 'subset', args: { order_id: 'ord_42', amount_cents: 5000 } },
    },
  ],
};
const SUPPORT = { allowed_tools: ['lookup_account', 'run_diagnostics', 'create_ticket', 'kb_query'] };
const HANDOFF = {
  expected_tool_sequence: [
    { tool: 'identify_customer' },
    { tool: 'fetch_case_context' },
    { tool: 'transfer_to_agent' },
  ],
};

describe('seed 001 worked evals on real spans', () => {
  it('refund agent: issue_refund with the right order and amount passes', async () => {
    const { 'refund-right-amount': report } = await judge(parseScenario(REFUND, 'refund.json'), [
      'refund-right-amount',
    ]);
    expect(report).toPassScenario();
    expect(report?.assertions).toEqual([{ name: 'tool_call_args:issue_refund', status: 'pass', reason: '' }]);
  });

  it('refund agent: the wrong amount fails, naming the call, the argument, expected and seen', async () => {
    const { 'refund-wrong-amount': report } = await judge(parseScenario(REFUND, 'refund.json'), [
      'refund-wrong-amount',
    ]);
    expect(report).toFailScenario();
    const reason =
      'no call to issue_refund matched the expected arguments {"order_id":"ord_42","amount_cents":5000}; ' +
      'saw 1 call: #1 (call call_3) amount_cents: expected 5000, saw 4000';
    expect(report?.assertions).toEqual([{ name: 'tool_call_args:issue_refund', status: 'fail', reason }]);
    expect(report?.findings).toEqual([
      expect.objectContaining({
        rule: 'arguments.match',
        severity: 'hard',
        message: reason,
        calls: ['call_3'],
        spans: [expect.stringMatching(/^[0-9a-f]{16}$/)],
      }),
    ]);
  });

  it('technical support: a trace that stays on the allowlist passes', async () => {
    const { 'support-diagnoses-first': report } = await judge(parseScenario(SUPPORT, 'support.json'), [
      'support-diagnoses-first',
    ]);
    expect(report).toPassScenario();
    expect(report?.stats.calls).toBe(4);
  });

  it('technical support: transfer_to_human before the diagnostics fails no_unexpected_tool, naming it', async () => {
    const { 'support-escalates-early': report } = await judge(parseScenario(SUPPORT, 'support.json'), [
      'support-escalates-early',
    ]);
    expect(report).toFailScenario();
    expect(report?.assertions).toEqual([
      {
        name: 'no_unexpected_tool',
        status: 'fail',
        reason:
          'called tools not on the allowed list: transfer_to_human (call call_2); ' +
          'allowed: lookup_account, run_diagnostics, create_ticket, kb_query',
      },
    ]);
    expect(report?.findings[0]).toMatchObject({ rule: 'tools.allowed', severity: 'hard', calls: ['call_2'] });
  });

  it('handoff: identify, fetch context, then transfer passes', async () => {
    const { 'handoff-in-order': report } = await judge(parseScenario(HANDOFF, 'handoff.json'), [
      'handoff-in-order',
    ]);
    expect(report).toPassScenario();
    expect(report?.assertions).toEqual([{ name: 'tool_sequence', status: 'pass', reason: '' }]);
  });

  it('handoff: transferring before fetching context fails tool_sequence, saying how far it got', async () => {
    const reports = await judge(parseScenario(HANDOFF, 'handoff.json'), [
      'handoff-transfers-before-context',
      'handoff-transfers-alongside-context',
    ]);
    expect(reports['handoff-transfers-before-context']?.assertions).toEqual([
      {
        name: 'tool_sequence',
        status: 'fail',
        reason:
          'matched 2 of 3 steps: identify_customer (call call_1), fetch_case_context (call call_3); ' +
          'no transfer_to_agent call after fetch_case_context (call call_3): ' +
          'transfer_to_agent was called before it (call call_2)',
      },
    ]);
    // Asked for in the same turn as the context fetch: it could not have used it, whatever the clock says.
    expect(reports['handoff-transfers-alongside-context']?.assertions).toEqual([
      {
        name: 'tool_sequence',
        status: 'fail',
        reason:
          'matched 2 of 3 steps: identify_customer (call call_1), fetch_case_context (call call_2); ' +
          'no transfer_to_agent call after fetch_case_context (call call_2): ' +
          'transfer_to_agent was called concurrently with it, not after (call call_3)',
      },
    ]);
    for (const report of Object.values(reports)) expect(report).toFailScenario();
  });
});

describe('the same evals in the native format, chosen per trace by appliesTo', () => {
  // Native argument modes read from the call's side: seed 001's `subset` is `superset` here.
  const scenarios = [
    {
      id: 'refund.amount',
      appliesTo: { agent: 'refund-agent' },
      arguments: [{ tool: 'issue_refund', match: { args: { order_id: 'ord_42', amount_cents: 5000 } } }],
    },
    {
      id: 'support.no-escalation',
      appliesTo: { agent: 'tech-support-agent' },
      tools: { allowed: SUPPORT.allowed_tools },
    },
    {
      id: 'handoff.order',
      appliesTo: { agent: 'handoff-agent', rootSpan: 'invoke_agent handoff-agent' },
      order: { sequence: { steps: HANDOFF.expected_tool_sequence } },
    },
  ].map((document) => parseScenario(document, `${document.id}.yaml`));

  it('evaluates each trace once, by its own agent’s scenario, with the same verdicts', async () => {
    const names = [
      'refund-right-amount',
      'refund-wrong-amount',
      'support-diagnoses-first',
      'support-escalates-early',
      'handoff-in-order',
      'handoff-transfers-before-context',
      'good-refund',
    ];
    const run = runEval(await Promise.all(names.map(fixture)), scenarios);
    expect(run.reports.map(({ source, report }) => [source, report.scenario.id, report.verdict])).toEqual([
      ['refund-right-amount', 'refund.amount', 'pass'],
      ['refund-wrong-amount', 'refund.amount', 'fail'],
      ['support-diagnoses-first', 'support.no-escalation', 'pass'],
      ['support-escalates-early', 'support.no-escalation', 'fail'],
      ['handoff-in-order', 'handoff.order', 'pass'],
      ['handoff-transfers-before-context', 'handoff.order', 'fail'],
    ]);
    // The demo's support-agent trace: no scenario here is about it.
    expect(run.unmatched?.map(({ source }) => source)).toEqual(['good-refund']);
    expect(run.summary).toMatchObject({ traces: 7, evaluated: 6, passed: 3, failed: 3, inconclusive: 0 });
  });
});

/** Seed 000's tutorial scenario, in its own format, verbatim. */
const TUTORIAL = {
  allowedTools: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
  requiredTools: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
  orderRules: [
    { before: 'get_order', after: 'issue_refund' },
    { before: 'get_refund_policy', after: 'issue_refund' },
    { before: 'issue_refund', after: 'send_confirmation' },
  ],
  maxCalls: 4,
  terminalTools: ['send_confirmation'],
  expected: { orderId: 'O-17', customerEmail: 'sam@example.test' },
};

describe("seed 000's tutorial scenario against the demo agent's traces", () => {
  const tutorial = parseScenario(TUTORIAL, 'tutorial.json');
  const judgeOne = async (name: string) => (await judge(tutorial, [name]))[name] as Report;
  const failures = (report: Report) => report.assertions.filter(({ status }) => status !== 'pass');

  it('the good trace passes every check (the two reads run in parallel: the order rules allow it)', async () => {
    const report = await judgeOne('good-refund');
    expect(report).toPassScenario();
    expect(report.findings).toEqual([]);
    expect(report.stats.calls).toBe(4);
  });

  it('refunding before the policy check fails order.before, naming both calls', async () => {
    const report = await judgeOne('refund-before-policy');
    expect(report).toFailScenario();
    expect(failures(report).map(({ name }) => name)).toEqual(['order.before[1]']);
    expect(report.findings).toHaveLength(1);
    expect(report).toHaveFinding('order.before', {
      severity: 'hard',
      calls: ['call_2', 'call_3'],
      message: /issue_refund \(call call_2\).*get_refund_policy.*call_3/,
    });
  });

  it('a call after the terminal send_confirmation fails order.terminal', async () => {
    const report = await judgeOne('call-after-terminal');
    expect(report).toFailScenario();
    expect(report).toHaveFinding('order.terminal', {
      severity: 'hard',
      calls: expect.arrayContaining(['call_4', 'call_5']),
    });
  });

  it('a confirmation to another address fails expected.customerEmail, saying expected and seen', async () => {
    const report = await judgeOne('wrong-email');
    expect(report).toFailScenario();
    expect(failures(report)).toEqual([
      {
        name: 'expected.customerEmail',
        status: 'fail',
        reason:
          'send_confirmation call #1 (call call_4) did not match the expected arguments ' +
          '{"email":"sam@example.test"}: email: expected "sam@example.test", saw "sam@example.com"',
      },
    ]);
  });

  it('has no grounding rules: a made-up refund id passes it (the seed checks that in code, not in the object)', async () => {
    expect(await judgeOne('made-up-confirmation')).toPassScenario();
  });

  it('the seed’s coded grounding, written as native grounding rules, catches the made-up refund id', async () => {
    const grounding = parseScenario(
      {
        id: 'tutorial.grounding',
        grounding: [
          { tool: 'issue_refund', path: 'amount', from: { tool: 'get_order', path: 'amount' } },
          { tool: 'send_confirmation', path: 'refundId', from: { tool: 'issue_refund', path: 'refundId' } },
        ],
      },
      'tutorial-grounding.yaml',
    );
    const reports = await judge(grounding, ['good-refund', 'made-up-confirmation']);
    expect(reports['good-refund']).toPassScenario(grounding);
    const report = reports['made-up-confirmation'];
    expect(report).toFailScenario(grounding);
    expect(report?.findings).toHaveLength(1);
    expect(report).toHaveFinding('grounding.source', {
      severity: 'hard',
      calls: ['call_4', 'call_3'],
      message: /refundId "R-7731".*call_4.*R-1001/,
    });
  });

  it('a call with another orderId fails the tenant gate (expected.orderId)', async () => {
    const report = await judgeOne('wrong-order-id');
    expect(report).toFailScenario();
    expect(report).toHaveFinding('safety.tenant', { severity: 'hard', calls: ['call_3'], message: '"O-71"' });
  });

  it('a repeated lookup only warns: over the budget of 4 and a repeated identical call, verdict still pass', async () => {
    const report = await judgeOne('repeated-lookup');
    expect(report).toPassScenario();
    expect(report).toHaveFinding('efficiency.budget', { severity: 'warning' });
    expect(report).toHaveFinding('efficiency.repeat', { severity: 'warning' });
    expect(report.scores.efficiency).toBeLessThan(1);
  });

  it('the good trace still passes with every family the scenario uses wired', async () => {
    const report = await judgeOne('good-refund');
    expect(report).toPassScenario();
    expect(report.findings).toEqual([]);
    expect(Object.keys(report.scores).sort()).toEqual(
      ['arguments', 'efficiency', 'order', 'safety', 'structure'].sort(),
    );
  });
});

describe('the fixtures are what the demo agent records today', () => {
  it('re-capturing the worked-eval conversations gives the same assertions as the stored traces', async () => {
    const live = await captureConversations();
    const scenarios = [REFUND, SUPPORT, HANDOFF].map((document, index) =>
      parseScenario(document, `${index}.json`),
    );
    const results = (inputs: StoredText[]) =>
      runEval(inputs, scenarios).reports.map(({ source, report }) => [source, report.assertions]);
    const stored = await Promise.all(live.map(({ name }) => fixture(name)));
    expect(results(live.map(({ name, otlpJson }) => ({ source: name, text: otlpJson })))).toEqual(
      results(stored),
    );
    expect(live).toHaveLength(7);
  });
});
