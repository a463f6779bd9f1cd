import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { TRACE_ID, toolSpan } from '../helpers/spans.js';
import { buildTrajectory, NOT_CAPTURED, STEP_NANOS } from '../helpers/trajectory.js';

const refundScenario = parseScenario(
  {
    id: 'support.refund',
    version: 3,
    tool_call_args: [
      { tool: 'issue_refund', match: { mode: 'subset', args: { order_id: 'ord_42', amount_cents: 5000 } } },
      { tool: 'kb_query', call_index: 1, match: { mode: 'regex', pattern: 'refund policy', flags: 'i' } },
    ],
    expected_tool_sequence: [{ tool: 'lookup_account' }, { tool: 'issue_refund' }],
    allowed_tools: ['lookup_account', 'kb_query', 'issue_refund'],
    expected_tool_calls: ['lookup_account', { tool: 'issue_refund' }],
  },
  'refund.yaml',
);

const goodRun = () =>
  buildTrajectory([
    { tool: 'lookup_account', args: { customer_id: 'cus_1' } },
    { tool: 'kb_query', args: { q: 'Refund policy' } },
    { tool: 'issue_refund', args: { order_id: 'ord_42', amount_cents: 5000 } },
  ]);

describe('evaluate', () => {
  it('passes a good run: every assertion in scenario order, full scores, no findings', () => {
    const report = evaluate(goodRun(), refundScenario);
    expect(report.verdict).toBe('pass');
    expect(report.pass).toBe(true);
    expect(report.traceId).toBe('trace-1');
    expect(report.scenario).toEqual({ id: 'support.refund', version: '3' });
    expect(report.assertions.map((assertion) => [assertion.name, assertion.status])).toEqual([
      ['tool_call_args:issue_refund', 'pass'],
      ['tool_call_args:kb_query#1', 'pass'],
      ['tool_sequence', 'pass'],
      ['no_unexpected_tool', 'pass'],
      ['expected_tool_calls:lookup_account', 'pass'],
      ['expected_tool_calls:issue_refund', 'pass'],
    ]);
    expect(report.scores).toEqual({ arguments: 1, order: 1, safety: 1, structure: 1 });
    expect(report.findings).toEqual([]);
  });

  it('fails with one hard finding per failed assertion, naming calls and spans', () => {
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', args: { order_id: 'ord_42', amount_cents: 4000 } },
      'lookup_account',
      'transfer_to_human',
    ]);
    const report = evaluate(trajectory, refundScenario);
    expect(report.verdict).toBe('fail');
    expect(report.pass).toBe(false);
    expect(report.findings).toEqual([
      {
        rule: 'arguments.match',
        severity: 'hard',
        message:
          'no call to issue_refund matched the expected arguments {"order_id":"ord_42","amount_cents":5000}; ' +
          'saw 1 call: #1 (call c1) amount_cents: expected 5000, saw 4000',
        calls: ['c1'],
        spans: ['s1'],
        assertion: 'tool_call_args:issue_refund',
      },
      {
        rule: 'arguments.match',
        severity: 'hard',
        message: 'kb_query was never called; the check asks for call #1',
        calls: [],
        spans: [],
        assertion: 'tool_call_args:kb_query#1',
      },
      {
        rule: 'order.sequence',
        severity: 'hard',
        message:
          'matched 1 of 2 steps: lookup_account (call c2); no issue_refund call after lookup_account (call c2): ' +
          'issue_refund was called before it (call c1)',
        calls: ['c2', 'c1'],
        spans: ['s2', 's1'],
        assertion: 'tool_sequence',
      },
      {
        rule: 'tools.allowed',
        severity: 'hard',
        message:
          'called tools not on the allowed list: transfer_to_human (call c3); allowed: lookup_account, kb_query, issue_refund',
        calls: ['c3'],
        spans: ['s3'],
        assertion: 'no_unexpected_tool',
      },
    ]);
    // The allowlist is a safety gate; both expected tools were called -> structure 1.
    expect(report.scores).toEqual({ arguments: 0, order: 0, safety: 0, structure: 1 });
  });

  it('is inconclusive, not failed, when the only doubt is uncaptured arguments', () => {
    const trajectory = buildTrajectory([
      'lookup_account',
      { tool: 'kb_query', args: { q: 'refund policy' } },
      { tool: 'issue_refund', args: NOT_CAPTURED },
    ]);
    const report = evaluate(trajectory, refundScenario);
    expect(report.verdict).toBe('inconclusive');
    expect(report.pass).toBe(false);
    expect(report.findings).toHaveLength(1);
    expect(report.findings[0]).toMatchObject({
      rule: 'arguments.match',
      severity: 'hard',
      assertion: 'tool_call_args:issue_refund',
      inconclusive: true,
      calls: ['c3'],
    });
    expect(report.findings[0]?.message).toContain('arguments were not captured');
    expect(report.scores.arguments).toBe(0.5);
  });

  it('lets a hard failure outweigh an inconclusive one', () => {
    const trajectory = buildTrajectory([{ tool: 'issue_refund', args: NOT_CAPTURED }, 'delete_account']);
    const report = evaluate(trajectory, refundScenario);
    expect(report.verdict).toBe('fail');
    expect(report.findings.some((finding) => finding.inconclusive)).toBe(true);
  });

  it('scores only the dimensions the scenario checks, and leaves out the version when there is none', () => {
    const scenario = parseScenario({ allowed_tools: ['kb_query'] }, 'kb.json');
    const report = evaluate(buildTrajectory(['kb_query']), scenario);
    expect(report.scores).toEqual({ safety: 1 });
    expect(report.scenario).toEqual({ id: 'kb' });
    expect(report.assertions).toEqual([{ name: 'no_unexpected_tool', status: 'pass', reason: '' }]);
  });

  it('treats an empty expected_tool_sequence as no assertion', () => {
    const scenario = parseScenario({ expected_tool_sequence: [], allowed_tools: [] }, 'x.json');
    const report = evaluate(buildTrajectory([]), scenario);
    expect(report.assertions.map((assertion) => assertion.name)).toEqual(['no_unexpected_tool']);
    expect(report.scores).toEqual({ safety: 1 });
  });

  it('counts calls, turns and errors, and measures duration from the calls', () => {
    const trajectory = buildTrajectory([
      'lookup_account',
      [{ tool: 'kb_query', outcome: { status: 'error', errorType: 'timeout' } }, 'kb_query'],
      'issue_refund',
    ]);
    const { stats } = evaluate(trajectory, refundScenario);
    // First call starts at step 0 (0 ns), the last ends at 2*2+1 = 5 steps.
    expect(stats).toEqual({ calls: 4, turns: 3, errors: 1, durationMs: Number(5n * STEP_NANOS) / 1e6 });
  });

  it('measures duration from the root span when there is one, and is 0 with no times', () => {
    const withRoot = buildTrajectory(['kb_query'], {
      root: { name: 'invoke_agent', startTimeUnixNano: 1_000_000_000n, endTimeUnixNano: 1_812_500_000n },
    });
    expect(evaluate(withRoot, refundScenario).stats.durationMs).toBe(812.5);
    expect(evaluate(buildTrajectory([]), refundScenario).stats).toEqual({
      calls: 0,
      turns: 0,
      errors: 0,
      durationMs: 0,
    });
  });

  it('gives the same report every time the same trajectory is evaluated', () => {
    const trajectory = goodRun();
    expect(evaluate(trajectory, refundScenario)).toEqual(evaluate(trajectory, refundScenario));
  });
});

describe('what the normalizer could not read', () => {
  it('is reported as a warning finding and does not change the verdict', () => {
    const span = toolSpan('lookup', { callId: 'c1', args: '{"id": 4' });
    const trajectory = normalizeTrace(TRACE_ID, [span]);
    if (!trajectory) throw new Error('no trajectory');
    const report = evaluate(trajectory, parseScenario({ allowed_tools: ['lookup'] }, 'issues.json'));
    expect(report.verdict).toBe('pass');
    expect(report.findings).toEqual([
      {
        rule: 'trajectory.arguments.unparsable',
        severity: 'warning',
        message: expect.stringContaining('arguments of lookup'),
        calls: [],
        spans: [span.spanId],
      },
    ]);
  });
});
