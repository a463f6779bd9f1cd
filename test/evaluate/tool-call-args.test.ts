import { describe, expect, it } from 'vitest';
import { checkToolCallArgs } from '../../src/evaluate/tool-call-args.js';
import type { ArgumentRule } from '../../src/scenario/native.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { buildTrajectory, NOT_CAPTURED } from '../helpers/trajectory.js';

/** Parses one `tool_call_args` entry through the real schema, so regexes get compiled. */
function assertion(entry: unknown): ArgumentRule {
  const parsed = parseScenario({ tool_call_args: [entry] }, 'test.json').rules.arguments?.[0];
  if (!parsed) throw new Error('no assertion');
  return parsed;
}

const refund5000 = assertion({
  tool: 'issue_refund',
  match: { mode: 'subset', args: { order_id: 'ord_42', amount_cents: 5000 } },
});

describe('tool_call_args without call_index', () => {
  it('passes when any call of the tool matches', () => {
    const trajectory = buildTrajectory([
      'lookup_account',
      { tool: 'issue_refund', args: { order_id: 'ord_42', amount_cents: 4000 } },
      { tool: 'issue_refund', args: { order_id: 'ord_42', amount_cents: 5000, reason: 'late' } },
    ]);
    const { result, calls } = checkToolCallArgs(trajectory, refund5000);
    expect(result).toEqual({ name: 'tool_call_args:issue_refund', status: 'pass', reason: '' });
    expect(calls.map((call) => call.id)).toEqual(['c3']);
  });

  it('fails saying what was expected and what each call had', () => {
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', args: { order_id: 'ord_42', amount_cents: 4000 } },
      { tool: 'issue_refund', args: { order_id: 'ord_7', amount_cents: 5000 } },
    ]);
    const { result, calls } = checkToolCallArgs(trajectory, refund5000);
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'no call to issue_refund matched the expected arguments {"order_id":"ord_42","amount_cents":5000}; ' +
        'saw 2 calls: #1 (call c1) amount_cents: expected 5000, saw 4000; ' +
        '#2 (call c2) order_id: expected "ord_42", saw "ord_7"',
    );
    expect(calls.map((call) => call.id)).toEqual(['c1', 'c2']);
  });

  it('fails when the tool was never called', () => {
    const { result } = checkToolCallArgs(buildTrajectory(['lookup_account']), refund5000);
    expect(result).toEqual({
      name: 'tool_call_args:issue_refund',
      status: 'fail',
      reason: 'issue_refund was never called',
    });
  });

  it('exact mode fails on an extra key', () => {
    const exact = assertion({ tool: 'issue_refund', match: { mode: 'exact', args: { order_id: 'ord_42' } } });
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', args: { order_id: 'ord_42', amount_cents: 1 } },
    ]);
    const { result } = checkToolCallArgs(trajectory, exact);
    expect(result.reason).toBe(
      'no call to issue_refund matched exactly the arguments {"order_id":"ord_42"}; ' +
        'saw 1 call: #1 (call c1) extra key amount_cents (saw 1)',
    );
  });

  it('is inconclusive when the arguments were not captured, saying so', () => {
    const trajectory = buildTrajectory([{ tool: 'issue_refund', args: NOT_CAPTURED }]);
    const { result, calls } = checkToolCallArgs(trajectory, refund5000);
    expect(result.status).toBe('inconclusive');
    expect(result.reason).toBe(
      'could not decide whether issue_refund was called with the expected arguments ' +
        '{"order_id":"ord_42","amount_cents":5000}; saw 1 call: #1 (call c1) arguments were not captured',
    );
    expect(calls.map((call) => call.id)).toEqual(['c1']);
  });

  it('passes when one captured call matches even if others were not captured', () => {
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', args: NOT_CAPTURED },
      { tool: 'issue_refund', args: { order_id: 'ord_42', amount_cents: 5000 } },
    ]);
    expect(checkToolCallArgs(trajectory, refund5000).result.status).toBe('pass');
  });

  it('stays inconclusive when a captured call mismatches and another was not captured', () => {
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', args: { order_id: 'ord_42', amount_cents: 1 } },
      { tool: 'issue_refund', args: NOT_CAPTURED },
    ]);
    const { result } = checkToolCallArgs(trajectory, refund5000);
    expect(result.status).toBe('inconclusive');
    expect(result.reason).toContain('#1 (call c1) amount_cents: expected 5000, saw 1');
    expect(result.reason).toContain('#2 (call c2) arguments were not captured');
  });
});

describe('tool_call_args with call_index', () => {
  const secondQuery = assertion({
    tool: 'kb_query',
    call_index: 2,
    match: { mode: 'regex', pattern: 'refund policy', flags: 'i' },
  });

  it('checks the Nth call in causal order', () => {
    const trajectory = buildTrajectory([
      { tool: 'kb_query', args: { q: 'shipping times' } },
      'lookup_account',
      { tool: 'kb_query', args: { q: 'Refund Policy for damaged goods' } },
    ]);
    expect(checkToolCallArgs(trajectory, secondQuery).result).toEqual({
      name: 'tool_call_args:kb_query#2',
      status: 'pass',
      reason: '',
    });
  });

  it('fails when only another call matches', () => {
    const trajectory = buildTrajectory([
      { tool: 'kb_query', args: { q: 'refund policy' } },
      { tool: 'kb_query', args: { q: 'shipping' } },
    ]);
    const { result, calls } = checkToolCallArgs(trajectory, secondQuery);
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'kb_query call #2 (call c2) did not match the pattern /refund policy/i: ' +
        '/refund policy/i did not match {"q":"shipping"}',
    );
    expect(calls.map((call) => call.id)).toEqual(['c2']);
  });

  it('fails when there are fewer calls than call_index', () => {
    const trajectory = buildTrajectory([{ tool: 'kb_query', args: { q: 'refund policy' } }]);
    expect(checkToolCallArgs(trajectory, secondQuery).result.reason).toBe(
      'kb_query was called 1 time; the check asks for call #2',
    );
    expect(checkToolCallArgs(buildTrajectory([]), secondQuery).result.reason).toBe(
      'kb_query was never called; the check asks for call #2',
    );
  });

  it("counts calls in the trajectory's causal order, not in the order they were written", () => {
    // Issued together; the short call completes first, so causal order is short (#1), long (#2).
    const trajectory = buildTrajectory([
      [
        { tool: 'kb_query', args: { q: 'refund policy' }, id: 'long', completesAtStep: 1 },
        { tool: 'kb_query', args: { q: 'shipping' }, id: 'short' },
      ],
      'lookup_account',
    ]);
    expect(trajectory.callsOf('kb_query').map((call) => call.id)).toEqual(['short', 'long']);
    expect(checkToolCallArgs(trajectory, secondQuery).result.status).toBe('pass');
  });

  it('is inconclusive when the Nth call has no captured arguments', () => {
    const trajectory = buildTrajectory([
      { tool: 'kb_query', args: { q: 'x' } },
      { tool: 'kb_query', args: NOT_CAPTURED },
    ]);
    const { result } = checkToolCallArgs(trajectory, secondQuery);
    expect(result.status).toBe('inconclusive');
    expect(result.reason).toBe(
      'kb_query call #2 (call c2) could not be checked against the pattern /refund policy/i: arguments were not captured',
    );
  });
});
