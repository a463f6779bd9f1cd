import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { orderFamily } from '../../src/evaluate/order.js';
import type { RuleResult } from '../../src/evaluate/rule.js';
import type { ToolCall, Trajectory } from '../../src/model/trajectory.js';
import type { OrderSection } from '../../src/scenario/native.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { buildTrajectory, NOT_CAPTURED } from '../helpers/trajectory.js';

/** Parses an `order` section through the real schema (defaults applied, regexes compiled). */
function order(section: unknown): OrderSection {
  const parsed = parseScenario({ order: section }, 'order.json').rules.order;
  if (!parsed) throw new Error('no order section');
  return parsed;
}

const ids = (calls: readonly ToolCall[]) => calls.map((call) => call.id);

/** The one result of a section that yields one, without its calls (compared separately). */
function only(trajectory: Trajectory, section: unknown): Omit<RuleResult, 'calls'> & { calls: string[] } {
  const results = orderFamily(trajectory, order(section));
  expect(results).toHaveLength(1);
  const [result] = results as [RuleResult];
  return { ...result, calls: ids(result.calls) };
}

describe('order.before', () => {
  const policyFirst = { before: [{ before: 'get_refund_policy', after: 'issue_refund' }] };

  it('passes when every after call has a before call that happened-before it', () => {
    const trajectory = buildTrajectory(['get_order', 'get_refund_policy', 'issue_refund']);
    expect(only(trajectory, policyFirst)).toEqual({
      rule: 'order.before',
      dimension: 'order',
      name: 'order.before[0]',
      status: 'pass',
      reason: '',
      calls: ['c2', 'c3'],
    });
  });

  it('fails an after call whose before tool was called after it', () => {
    const trajectory = buildTrajectory(['get_order', 'lookup', 'issue_refund', 'get_refund_policy']);
    const result = only(trajectory, policyFirst);
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'issue_refund (call c3) came before any get_refund_policy: get_refund_policy was called after it (call c4)',
    );
    expect(result.calls).toEqual(['c3', 'c4']);
  });

  it('a call issued in the same turn as the after call is not before it', () => {
    const trajectory = buildTrajectory(['get_order', ['get_refund_policy', 'issue_refund']]);
    const result = only(trajectory, policyFirst);
    expect(result.reason).toBe(
      'issue_refund (call c3) came before any get_refund_policy: get_refund_policy was called concurrently ' +
        'with it, in the same turn (call c2)',
    );
    expect(result.calls).toEqual(['c3', 'c2']);
  });

  it('says when the before tool was never called', () => {
    const result = only(buildTrajectory(['get_order', 'issue_refund']), policyFirst);
    expect(result.reason).toBe(
      'issue_refund (call c2) came before any get_refund_policy: get_refund_policy was never called',
    );
    expect(result.calls).toEqual(['c2']);
  });

  it('a before call still running when the after call was issued is concurrent with it', () => {
    const trajectory = buildTrajectory([{ tool: 'get_refund_policy', completesAtStep: 1 }, 'issue_refund']);
    expect(only(trajectory, policyFirst).reason).toBe(
      'issue_refund (call c2) came before any get_refund_policy: get_refund_policy was called concurrently ' +
        'with it (call c1)',
    );
  });

  it('a before call that never reported a result orders nothing', () => {
    const trajectory = buildTrajectory([{ tool: 'get_refund_policy', noResult: true }, 'issue_refund']);
    expect(only(trajectory, policyFirst).reason).toBe(
      'issue_refund (call c2) came before any get_refund_policy: get_refund_policy was called before it ' +
        'but never reported a result (call c1)',
    );
  });

  it('holds when no after call was made: presence is tools.required', () => {
    expect(only(buildTrajectory(['get_order']), policyFirst).status).toBe('pass');
    expect(only(buildTrajectory([]), policyFirst).status).toBe('pass');
  });

  it('checks every after call, and names only those with no before call ahead of them', () => {
    const trajectory = buildTrajectory(['issue_refund', 'get_refund_policy', 'issue_refund']);
    const result = only(trajectory, policyFirst);
    expect(result.reason).toBe(
      'issue_refund (call c1) came before any get_refund_policy: get_refund_policy was called after it (call c2)',
    );
    expect(result.calls).toEqual(['c1', 'c2']);
  });

  it('a list in before needs every one of its tools, and names the ones missing', () => {
    const both = { before: [{ before: ['get_order', 'get_refund_policy'], after: 'issue_refund' }] };
    expect(only(buildTrajectory(['get_refund_policy', 'get_order', 'issue_refund']), both).status).toBe(
      'pass',
    );
    expect(only(buildTrajectory([['get_order', 'get_refund_policy'], 'issue_refund']), both).status).toBe(
      'pass',
    );
    // The demo's refund-before-policy trace: the order looked up, the refund issued, then the policy.
    const result = only(buildTrajectory(['get_order', 'issue_refund', 'get_refund_policy']), both);
    expect(result.reason).toBe(
      'issue_refund (call c2) came before any get_refund_policy: get_refund_policy was called after it (call c3)',
    );
    expect(result.calls).toEqual(['c2', 'c3']);
    expect(only(buildTrajectory(['issue_refund']), both).reason).toBe(
      'issue_refund (call c1) came before any get_order and any get_refund_policy: get_order was never ' +
        'called, and get_refund_policy was never called',
    );
  });

  it('before and beforeAny: exactly one of them', () => {
    expect(() => order({ before: [{ after: 'issue_refund' }] })).toThrow(
      /needs `before` \(all of these tools\) or `beforeAny` \(any one of them\)/,
    );
    expect(() => order({ before: [{ before: 'a', beforeAny: 'b', after: 'c' }] })).toThrow(/not both/);
  });

  it('a set in beforeAny is satisfied by any one of its tools, and explains each when none is', () => {
    const either = {
      before: [{ beforeAny: ['get_order', 'lookup_account'], after: ['issue_refund', 'void'] }],
    };
    expect(only(buildTrajectory(['lookup_account', 'issue_refund', 'void']), either).status).toBe('pass');
    const result = only(buildTrajectory([['get_order', 'issue_refund'], 'void']), either);
    expect(result.reason).toBe(
      'issue_refund (call c2) came before any get_order or lookup_account: get_order was called concurrently ' +
        'with it, in the same turn (call c1), and lookup_account was never called',
    );
  });

  it('lists several kinds of misplacement of one tool, and several offending calls', () => {
    const trajectory = buildTrajectory([
      ['get_refund_policy', 'issue_refund'],
      'get_refund_policy',
      ['issue_refund', 'other'],
    ]);
    const result = only(trajectory, { before: [{ before: 'get_refund_policy', after: 'issue_refund' }] });
    expect(result.reason).toBe(
      'issue_refund (call c2) came before any get_refund_policy: get_refund_policy was called concurrently ' +
        'with it, in the same turn (call c1) and after it (call c3)',
    );
  });

  it('gives one result per constraint, by index', () => {
    const results = orderFamily(
      buildTrajectory(['a', 'b']),
      order({
        before: [
          { before: 'a', after: 'b' },
          { before: 'b', after: 'a' },
        ],
      }),
    );
    expect(results.map((result) => [result.name, result.status])).toEqual([
      ['order.before[0]', 'pass'],
      ['order.before[1]', 'fail'],
    ]);
    expect(results[1]?.reason).toBe('a (call c1) came before any b: b was called after it (call c2)');
  });

  it('a tool on both sides needs an earlier call of itself', () => {
    const self = { before: [{ before: 'retry', after: 'retry' }] };
    expect(only(buildTrajectory(['retry']), self).reason).toBe(
      'retry (call c1) came before any retry: retry was not called apart from it',
    );
  });
});

describe('order.terminal', () => {
  const terminal = { terminal: ['send_confirmation', 'transfer_to_human'] };

  it('passes when nothing comes after a terminal call; calls in the same turn are not after it', () => {
    const trajectory = buildTrajectory(['issue_refund', ['send_confirmation', 'log_event']]);
    expect(only(trajectory, terminal)).toEqual({
      rule: 'order.terminal',
      dimension: 'safety',
      name: 'order.terminal',
      status: 'pass',
      reason: '',
      calls: ['c2'],
      alwaysHard: true,
    });
  });

  it('is undecided, never passed, when the terminal call never reported back and the agent went on', () => {
    const trajectory = buildTrajectory([{ tool: 'send_confirmation', noResult: true }, 'issue_refund']);
    const result = only(trajectory, terminal);
    expect(result.status).toBe('inconclusive');
    expect(result.alwaysHard).toBe(true);
    expect(result.reason).toBe(
      'send_confirmation (call c1) is terminal but never reported a result, so whether these calls came after it cannot be told: issue_refund (call c2)',
    );
    expect(result.calls).toEqual(['c1', 'c2']);
    // Calls of its own turn are not after it, reported or not.
    const sameTurn = buildTrajectory([
      'get_order',
      [{ tool: 'send_confirmation', noResult: true }, 'log_event'],
    ]);
    expect(only(sameTurn, terminal).status).toBe('pass');
  });

  it('fails naming the terminal call and the calls after it', () => {
    const trajectory = buildTrajectory(['send_confirmation', 'issue_refund', ['get_order', 'log_event']]);
    const result = only(trajectory, terminal);
    expect(result.status).toBe('fail');
    expect(result.alwaysHard).toBe(true);
    expect(result.reason).toBe(
      'send_confirmation (call c1) is terminal, but calls came after it: issue_refund (call c2), ' +
        'get_order (call c3), log_event (call c4)',
    );
    expect(result.calls).toEqual(['c1', 'c2', 'c3', 'c4']);
  });

  it('a failed terminal call is terminal too, and the reason says it failed', () => {
    const trajectory = buildTrajectory([
      { tool: 'transfer_to_human', outcome: { status: 'error', errorType: 'Timeout' } },
      'issue_refund',
    ]);
    expect(only(trajectory, terminal).reason).toBe(
      'transfer_to_human (call c1, which failed) is terminal, but calls came after it: issue_refund (call c2)',
    );
  });

  it('lists a call after two terminal calls once, under the first', () => {
    const trajectory = buildTrajectory(['send_confirmation', 'transfer_to_human', 'issue_refund']);
    expect(only(trajectory, terminal).reason).toBe(
      'send_confirmation (call c1) is terminal, but calls came after it: transfer_to_human (call c2), ' +
        'issue_refund (call c3)',
    );
  });

  it('is a safety gate: a scenario cannot make it a warning', () => {
    const scenario = parseScenario(
      {
        order: { terminal: ['send_confirmation'] },
        severity: { 'order.terminal': 'warning', order: 'warning' },
      },
      'terminal.json',
    );
    const report = evaluate(buildTrajectory(['send_confirmation', 'issue_refund']), scenario);
    expect(report.verdict).toBe('fail');
    expect(report.findings).toEqual([
      {
        rule: 'order.terminal',
        severity: 'hard',
        message: 'send_confirmation (call c1) is terminal, but calls came after it: issue_refund (call c2)',
        calls: ['c1', 'c2'],
        spans: ['s1', 's2'],
        assertion: 'order.terminal',
      },
    ]);
    expect(report.scores.safety).toBe(0);
  });
});

describe('order.sequence', () => {
  const exact = (...steps: unknown[]) => ({ sequence: { mode: 'exact', steps } });

  it('in_order keeps the seed-001 result name and messages', () => {
    const result = only(buildTrajectory([['lookup_account', 'issue_refund']]), {
      sequence: { steps: [{ tool: 'lookup_account' }, { tool: 'issue_refund' }] },
    });
    expect(result).toMatchObject({ rule: 'order.sequence', dimension: 'order', name: 'tool_sequence' });
    expect(result.reason).toBe(
      'matched 1 of 2 steps: lookup_account (call c1); no issue_refund call after lookup_account (call c1): ' +
        'issue_refund was called concurrently with it, not after (call c2)',
    );
  });

  it('exact passes when the calls are the steps, one after the other', () => {
    const result = only(buildTrajectory(['a', 'b', 'a']), exact({ tool: 'a' }, { tool: 'b' }, { tool: 'a' }));
    expect(result).toMatchObject({
      rule: 'order.sequence',
      name: 'tool_sequence',
      status: 'pass',
      reason: '',
    });
    expect(result.calls).toEqual(['c1', 'c2', 'c3']);
  });

  it('exact fails on a call in between, which in_order allows', () => {
    const trajectory = buildTrajectory(['a', 'x', 'b']);
    expect(only(trajectory, { sequence: { steps: [{ tool: 'a' }, { tool: 'b' }] } }).status).toBe('pass');
    expect(only(trajectory, exact({ tool: 'a' }, { tool: 'b' })).reason).toBe(
      'matched 1 of 2 steps: a (call c1); diverged at step 2: expected b, saw x (call c2)',
    );
  });

  it('exact fails on calls after the last step, and on steps after the last call', () => {
    expect(only(buildTrajectory(['a', 'b', 'c']), exact({ tool: 'a' }, { tool: 'b' })).reason).toBe(
      'matched 2 of 2 steps: a (call c1), b (call c2); then 1 more call, expected none: c (call c3)',
    );
    const short = only(buildTrajectory(['a', 'b']), exact({ tool: 'a' }, { tool: 'b' }, { tool: 'c' }));
    expect(short.reason).toBe(
      'matched 2 of 3 steps: a (call c1), b (call c2); the calls ended there; expected c next',
    );
    expect(only(buildTrajectory([]), exact({ tool: 'a' })).reason).toBe(
      'matched 0 of 1 steps; no tool was called; expected a first',
    );
  });

  it('exact does not let a step share a turn with the next, whichever is listed first', () => {
    const steps = exact({ tool: 'a' }, { tool: 'b' }, { tool: 'c' });
    const result = only(buildTrajectory(['a', ['b', 'c']]), steps);
    expect(result.reason).toBe(
      'matched 1 of 3 steps: a (call c1); diverged at step 2: b (call c2) and c (call c3) happened ' +
        'concurrently, in the same turn, not one after the other',
    );
    expect(result.calls).toEqual(['c1', 'c2', 'c3']);
    const swapped = buildTrajectory([
      'a',
      [
        { tool: 'c', id: 'c3' },
        { tool: 'b', id: 'c2' },
      ],
    ]);
    expect(only(swapped, steps).reason).toBe(
      'matched 1 of 3 steps: a (call c1); diverged at step 2: c (call c3) and b (call c2) happened ' +
        'concurrently, in the same turn, not one after the other',
    );
  });

  it('exact says when a step overlaps the next or never reported a result', () => {
    const steps = exact({ tool: 'a' }, { tool: 'b' });
    expect(only(buildTrajectory([{ tool: 'a', completesAtStep: 1 }, 'b']), steps).reason).toBe(
      'matched 0 of 2 steps; diverged at step 1: a (call c1) and b (call c2) happened concurrently, ' +
        'not one after the other',
    );
    expect(only(buildTrajectory([{ tool: 'a', noResult: true }, 'b']), steps).reason).toBe(
      'matched 0 of 2 steps; diverged at step 1: a (call c1) never reported a result, so b (call c2) ' +
        'did not come after it',
    );
  });

  it('exact checks per-step arguments, and is inconclusive only when nothing else diverges', () => {
    const steps = exact(
      { tool: 'lookup_account' },
      { tool: 'issue_refund', match: { mode: 'superset', args: { amount_cents: 5000 } } },
    );
    const wrong = buildTrajectory(['lookup_account', { tool: 'issue_refund', args: { amount_cents: 4000 } }]);
    expect(only(wrong, steps).reason).toBe(
      'matched 1 of 2 steps: lookup_account (call c1); diverged at step 2: expected issue_refund with the ' +
        'expected arguments {"amount_cents":5000}, saw call c2: amount_cents: expected 5000, saw 4000',
    );
    const unknown = buildTrajectory(['lookup_account', { tool: 'issue_refund', args: NOT_CAPTURED }]);
    const result = only(unknown, steps);
    expect(result.status).toBe('inconclusive');
    expect(result.reason).toBe(
      'could not decide: the calls are the steps only if these calls match: issue_refund (call c2) ' +
        'arguments were not captured',
    );
    const unknownThenExtra = buildTrajectory([
      'lookup_account',
      { tool: 'issue_refund', args: NOT_CAPTURED },
      'send_email',
    ]);
    expect(only(unknownThenExtra, steps).status).toBe('fail');
  });
});

describe('order on a real trace (Vercel AI SDK v7, GenAI mode)', () => {
  // get_order and get_refund_policy in one turn, then issue_refund, then send_confirmation.
  const trajectory = trajectoryOf(fixture('vercel-ai-v7-genai-refund'));

  it('both lookups happened before the refund, and nothing came after the confirmation', () => {
    const results = orderFamily(
      trajectory,
      order({
        before: [
          { before: ['get_order', 'get_refund_policy'], after: 'issue_refund' },
          { before: 'get_order', after: 'issue_refund' },
          { before: 'get_refund_policy', after: ['issue_refund', 'send_confirmation'] },
        ],
        terminal: ['send_confirmation'],
        sequence: {
          mode: 'exact',
          steps: [{ tool: 'get_order' }, { tool: 'issue_refund' }, { tool: 'send_confirmation' }],
        },
      }),
    );
    expect(results.map((result) => [result.name, result.status, result.reason])).toEqual([
      ['order.before[0]', 'pass', ''],
      ['order.before[1]', 'pass', ''],
      ['order.before[2]', 'pass', ''],
      ['order.terminal', 'pass', ''],
      [
        'tool_sequence',
        'fail',
        'matched 0 of 3 steps; diverged at step 1: get_order (call call_get_order_1) and get_refund_policy ' +
          '(call call_get_refund_policy_1) happened concurrently, in the same turn, not one after the other',
      ],
    ]);
  });

  it('the two lookups were asked for together, so neither is before the other', () => {
    const [result] = orderFamily(
      trajectory,
      order({ before: [{ before: 'get_order', after: 'get_refund_policy' }] }),
    );
    expect(result?.status).toBe('fail');
    expect(result?.reason).toBe(
      'get_refund_policy (call call_get_refund_policy_1) came before any get_order: get_order was called ' +
        'concurrently with it, in the same turn (call call_get_order_1)',
    );
    expect(result?.calls.map((call) => call.spanId)).toHaveLength(2);
  });
});
