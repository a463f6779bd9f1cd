/**
 * `outcome: ok | error | any` on counts, forbidden tools, repeats, sequence steps, reference calls
 * and argument rules: what each says when a call failed, never reported a result, or was denied
 * before it ran, and what a scenario that misspells the key or its value is told.
 */
import { describe, expect, it } from 'vitest';
import { outcomeAnswer } from '../../src/evaluate/call-outcome.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { CallOutcome } from '../../src/model/trajectory.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { errorOf } from '../helpers/scenario-errors.js';
import { buildTrajectory, type CallSpec } from '../helpers/trajectory.js';

const failed: CallOutcome = { status: 'error', errorType: 'PaymentDeclined', message: 'card expired' };
const notExecuted = { status: 'not_executed' } as unknown as CallOutcome;
const refund = (extra: Partial<Exclude<CallSpec, string>> = {}): CallSpec => ({
  tool: 'issue_refund',
  args: { orderId: 'O-17', amount: 40 },
  ...extra,
});

function reportOf(document: Record<string, unknown>, steps: Parameters<typeof buildTrajectory>[0]) {
  return evaluate(buildTrajectory(steps), parseScenario(document, 'refund.yaml'));
}

function reasonOf(document: Record<string, unknown>, steps: Parameters<typeof buildTrajectory>[0]) {
  const report = reportOf(document, steps);
  const [finding] = report.findings;
  return { verdict: report.verdict, reason: finding?.message ?? '' };
}

describe('the outcome predicate', () => {
  it('counts a call denied before it ran only for any, and one with no result as unknown for ok and error', () => {
    const [ok, error, open, denied] = buildTrajectory([
      refund(),
      refund({ outcome: failed }),
      refund({ noResult: true }),
      refund({ outcome: notExecuted }),
    ]).calls;
    const answers = (required: 'ok' | 'error' | 'any') =>
      [ok, error, open, denied].map((call) => outcomeAnswer(required, call as NonNullable<typeof call>));
    expect(answers('ok')).toEqual(['yes', 'no', 'unknown', 'no']);
    expect(answers('error')).toEqual(['no', 'yes', 'unknown', 'no']);
    expect(answers('any')).toEqual(['yes', 'yes', 'yes', 'yes']);
  });
});

describe('tools.counts with an outcome', () => {
  const atMostOne = { tools: { counts: { issue_refund: { max: 1, outcome: 'ok' } } } };

  it('ignores failed calls, and says how many succeeded when too many did', () => {
    expect(reasonOf(atMostOne, [refund({ outcome: failed }), refund()]).verdict).toBe('pass');
    expect(reasonOf(atMostOne, [refund(), refund({ outcome: notExecuted }), refund()])).toEqual({
      verdict: 'fail',
      reason: 'issue_refund succeeded 2 times (calls c1, c3); expected at most 1 successful call',
    });
  });

  it('is inconclusive when a call with no result could tip it, and says how many would have to', () => {
    expect(reasonOf(atMostOne, [refund(), refund({ noResult: true })])).toEqual({
      verdict: 'inconclusive',
      reason:
        'issue_refund succeeded 1 time (call c1), and 1 more never reported a result (call c2); expected at ' +
        'most 1 successful call: it holds only if none of the calls without a result succeeded',
    });
    const atLeastTwo = { tools: { counts: { issue_refund: { min: 2, outcome: 'error' } } } };
    expect(reasonOf(atLeastTwo, [refund({ outcome: failed }), refund({ noResult: true })]).reason).toBe(
      'issue_refund failed 1 time (call c1), and 1 more never reported a result (call c2); expected at ' +
        'least 2 failed calls: it holds only if all of the calls without a result failed',
    );
  });

  it('is not inconclusive when the calls with no result cannot change it', () => {
    expect(reasonOf(atMostOne, [refund({ noResult: true })]).verdict).toBe('pass');
    expect(reasonOf(atMostOne, [refund(), refund(), refund({ noResult: true })]).verdict).toBe('fail');
  });
});

describe('tools.forbidden with an outcome', () => {
  const scenario = { tools: { forbidden: ['admin_reset', { tool: 'delete_user', outcome: 'ok' }] } };

  it('forbids a bare name whatever the outcome, and {tool, outcome} only with that outcome', () => {
    expect(reasonOf(scenario, [{ tool: 'delete_user', outcome: failed }]).verdict).toBe('pass');
    expect(reasonOf(scenario, [{ tool: 'delete_user', outcome: notExecuted }]).verdict).toBe('pass');
    expect(reasonOf(scenario, [{ tool: 'admin_reset', outcome: notExecuted }, 'delete_user'])).toEqual({
      verdict: 'fail',
      reason:
        'called forbidden tools: admin_reset (call c1), delete_user (call c2, which succeeded: forbidden when it succeeds)',
    });
  });

  it('is inconclusive when a forbidden-if-successful call never reported a result', () => {
    expect(reasonOf(scenario, [{ tool: 'delete_user', noResult: true }])).toEqual({
      verdict: 'inconclusive',
      reason:
        'whether forbidden calls were made is unknown: delete_user (call c1) never reported a result, ' +
        'and it is forbidden when it succeeds',
    });
  });

  it('forbids a call with no result when both outcomes are forbidden: it ended one way or the other', () => {
    const both = {
      tools: {
        forbidden: [
          { tool: 'x', outcome: 'ok' },
          { tool: 'x', outcome: 'error' },
        ],
      },
    };
    expect(reasonOf(both, [{ tool: 'x', noResult: true }]).verdict).toBe('fail');
    expect(reasonOf(both, [{ tool: 'x', outcome: notExecuted }]).verdict).toBe('pass');
  });
});

describe('efficiency.repeats with an outcome', () => {
  const scenario = { efficiency: { repeats: { max: 0, outcome: 'ok' } }, severity: { efficiency: 'hard' } };

  it('counts only the identical calls that succeeded', () => {
    expect(reasonOf(scenario, [refund({ outcome: failed }), refund()]).verdict).toBe('pass');
    expect(reasonOf(scenario, [refund(), refund({ outcome: failed }), refund()])).toEqual({
      verdict: 'fail',
      reason:
        'issue_refund was called 3 times with identical arguments {"amount":40,"orderId":"O-17"} ' +
        '(calls c1, c2, c3): 1 successful repeat (call c3), at most 0 allowed',
    });
  });

  it('is inconclusive when an identical call with no result would be a repeat if it succeeded', () => {
    expect(reasonOf(scenario, [refund(), refund({ noResult: true })])).toEqual({
      verdict: 'inconclusive',
      reason:
        'issue_refund was called 2 times with identical arguments {"amount":40,"orderId":"O-17"} ' +
        '(calls c1, c2): 0 successful repeats, at most 0 allowed, but call c2 never reported a result and could make it 1',
    });
  });
});

describe('sequence steps with an outcome', () => {
  const scenario = {
    order: { sequence: { steps: [{ tool: 'get_order' }, { tool: 'issue_refund', outcome: 'ok' }] } },
  };

  it('takes only a call that ended that way, and says why the others do not count', () => {
    expect(reasonOf(scenario, ['get_order', refund({ outcome: failed }), refund()]).verdict).toBe('pass');
    expect(reasonOf(scenario, ['get_order', refund({ outcome: failed })])).toEqual({
      verdict: 'fail',
      reason:
        'matched 1 of 2 steps: get_order (call c1); no issue_refund call that succeeded after get_order (call c1): ' +
        'issue_refund was called after it, but not as the step asks (call c2: it failed (PaymentDeclined: card expired); expected a successful call)',
    });
  });

  it('is inconclusive on a last step whose call never reported a result', () => {
    const { verdict, reason } = reasonOf(scenario, ['get_order', refund({ noResult: true })]);
    expect(verdict).toBe('inconclusive');
    expect(reason).toContain(
      'issue_refund (call c2) it never reported a result, so whether it succeeded is unknown',
    );
  });

  it('explains a first step no call satisfied, in exact mode too', () => {
    const first = { order: { sequence: { steps: [{ tool: 'issue_refund', outcome: 'error' }] } } };
    expect(reasonOf(first, [refund()]).reason).toBe(
      'matched 0 of 1 steps; issue_refund was called 1 time, but none that failed: call c1: it succeeded; expected a failed call',
    );
    const exact = {
      order: { sequence: { mode: 'exact', steps: [{ tool: 'issue_refund', outcome: 'ok' }] } },
    };
    expect(reasonOf(exact, [refund({ outcome: notExecuted })]).reason).toBe(
      'matched 0 of 1 steps; diverged at step 1: expected issue_refund that succeeded, saw call c1: ' +
        'it was not executed (a decision denied it or held it for approval); expected a successful call',
    );
  });
});

describe('reference calls with an outcome', () => {
  const reference = (outcome: string, mode = 'superset') => ({
    reference: { mode, turns: [[{ tool: 'issue_refund', args: { orderId: 'O-17', amount: 40 }, outcome }]] },
  });

  it('pair only with a call that ended that way', () => {
    expect(reasonOf(reference('ok'), [refund({ outcome: failed }), refund()]).verdict).toBe('pass');
    expect(reasonOf(reference('ok'), [refund({ outcome: failed })])).toEqual({
      verdict: 'fail',
      reason:
        'reference call #1 issue_refund {"orderId":"O-17","amount":40} (a call that succeeded) has no match; ' +
        'closest: call c1 issue_refund it failed (PaymentDeclined: card expired), expected a successful call; ' +
        'matched 0 of 1 reference calls',
    });
  });

  it('are inconclusive on a call with no result, unless it stands for one reference call whichever way it ended', () => {
    expect(reasonOf(reference('ok'), [refund({ noResult: true })])).toEqual({
      verdict: 'inconclusive',
      reason:
        'a pairing exists only if calls whose arguments or outcome could not be checked match: call c1 ' +
        'issue_refund as reference call #1 issue_refund {"orderId":"O-17","amount":40} (a call that succeeded) ' +
        '(it never reported a result); matched 0 of 1 reference calls with arguments compared',
    });
    const either = {
      reference: {
        mode: 'subset',
        turns: [
          [
            { tool: 'issue_refund', outcome: 'ok' },
            { tool: 'issue_refund', outcome: 'error' },
          ],
        ],
      },
    };
    expect(reasonOf(either, [refund({ noResult: true })]).verdict).toBe('pass');
    expect(reasonOf(either, [refund({ noResult: true }), refund({ noResult: true })]).verdict).toBe(
      'inconclusive',
    );
  });
});

describe('arguments rules with an outcome', () => {
  const rule = (extra: Record<string, unknown>) => ({
    arguments: [{ tool: 'issue_refund', match: { args: { amount: 40 } }, outcome: 'ok', ...extra }],
  });

  it('need a matching call that succeeded; call still counts every call of the tool', () => {
    expect(reasonOf(rule({}), [refund({ outcome: failed }), refund()]).verdict).toBe('pass');
    expect(reasonOf(rule({ call: 1 }), [refund({ outcome: failed }), refund()])).toEqual({
      verdict: 'fail',
      reason:
        'issue_refund call #1 (call c1) did not match the expected arguments {"amount":40}, in a call that ' +
        'succeeded: it failed (PaymentDeclined: card expired); expected a successful call',
    });
    expect(reasonOf(rule({}), [refund({ noResult: true })]).reason).toBe(
      'could not decide whether issue_refund was called with the expected arguments {"amount":40}, in a call ' +
        'that succeeded; saw 1 call: #1 (call c1) it never reported a result, so whether it succeeded is unknown',
    );
  });
});

describe('outcome in scenario files', () => {
  it('is rejected when misspelt, as a key or as a value, with the closest name', () => {
    expect(errorOf({ tools: { counts: { issue_refund: { max: 1, outcom: 'ok' } } } })).toBe(
      'scenario refund.yaml: tools.counts.issue_refund: unknown key "outcom" (did you mean outcome?)',
    );
    expect(errorOf({ tools: { forbidden: [{ tool: 'delete_user', outcome: 'eror' }] } })).toBe(
      'scenario refund.yaml: tools.forbidden[0].outcome: expected "ok" or "error" or "any"; got "eror" (did you mean error?)',
    );
    expect(errorOf({ tools: { forbidden: [{ tol: 'delete_user' }] } })).toContain(
      'tools.forbidden[0]: unknown key "tol" (did you mean tool?)',
    );
    expect(errorOf({ efficiency: { repeats: { max: 0, outcome: 'OK' } } })).toBe(
      'scenario refund.yaml: efficiency.repeats.outcome: expected "ok" or "error" or "any"; got "OK" (did you mean ok?)',
    );
    expect(errorOf({ order: { sequence: { steps: [{ tool: 'x', outcme: 'ok' }] } } })).toBe(
      'scenario refund.yaml: order.sequence.steps[0]: unknown key "outcme" (did you mean outcome?)',
    );
    expect(errorOf({ reference: { mode: 'superset', turns: [[{ tool: 'x', outcome: 'any_' }]] } })).toBe(
      'scenario refund.yaml: reference.turns[0][0].outcome: expected "ok" or "error" or "any"; got "any_" (did you mean any?)',
    );
    expect(errorOf({ arguments: [{ tool: 'x', match: { args: {} }, outcomes: 'ok' }] })).toBe(
      'scenario refund.yaml: arguments[0]: unknown key "outcomes" (did you mean outcome?)',
    );
  });
});
