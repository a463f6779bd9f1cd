import { describe, expect, it } from 'vitest';
import { milestonesFamily } from '../../src/evaluate/milestones.js';
import type { RuleResult } from '../../src/evaluate/rule.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import type { MilestonesSection } from '../../src/scenario/native.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { buildTrajectory, NOT_CAPTURED } from '../helpers/trajectory.js';

const DEFINE = {
  order_loaded: { tool: 'get_order' },
  policy_checked: { tool: 'get_refund_policy' },
  refund_issued: { tool: 'issue_refund' },
  confirmed: { tool: 'send_confirmation' },
};

/** Parses a `milestones` section through the real schema, with the refund milestones defined by default. */
function milestones(section: Record<string, unknown>): MilestonesSection {
  const parsed = parseScenario({ milestones: { define: DEFINE, ...section } }, 'milestones.json').rules
    .milestones;
  if (!parsed) throw new Error('no milestones section');
  return parsed;
}

/** Results as plain data, calls by id. */
function run(trajectory: Trajectory, section: Record<string, unknown>) {
  return milestonesFamily(trajectory, milestones(section)).map((result: RuleResult) => ({
    ...result,
    calls: result.calls.map((call) => call.id),
  }));
}

function only(trajectory: Trajectory, section: Record<string, unknown>) {
  const results = run(trajectory, section);
  expect(results).toHaveLength(1);
  return results[0] as (typeof results)[number];
}

describe('milestones.requires', () => {
  const refundNeedsChecks = { requires: { refund_issued: ['order_loaded', 'policy_checked'] } };

  it('passes when each prerequisite was reached before every call reaching the milestone', () => {
    const trajectory = buildTrajectory([
      ['get_order', 'get_refund_policy'],
      'issue_refund',
      'send_confirmation',
    ]);
    expect(only(trajectory, refundNeedsChecks)).toEqual({
      rule: 'milestones.requires',
      dimension: 'order',
      name: 'milestones.requires:refund_issued',
      status: 'pass',
      reason: '',
      calls: ['c1', 'c2', 'c3'],
    });
  });

  it('fails a call whose prerequisite was reached only after it', () => {
    const trajectory = buildTrajectory(['get_order', 'issue_refund', 'get_refund_policy']);
    const result = only(trajectory, refundNeedsChecks);
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'issue_refund (call c2) reached refund_issued before policy_checked: policy_checked was reached after it (call c3)',
    );
    expect(result.calls).toEqual(['c2', 'c3']);
  });

  it('a prerequisite reached in the same turn is not before; one never reached is named too', () => {
    const trajectory = buildTrajectory([['get_refund_policy', 'issue_refund']]);
    expect(only(trajectory, refundNeedsChecks).reason).toBe(
      'issue_refund (call c2) reached refund_issued before order_loaded and policy_checked: order_loaded was ' +
        'never reached, and policy_checked was reached concurrently with it, in the same turn (call c1)',
    );
  });

  it('a failed call does not reach an ok milestone, and the reason says why it missed', () => {
    const trajectory = buildTrajectory([
      'get_order',
      { tool: 'get_refund_policy', outcome: { status: 'error', errorType: 'Timeout', message: 'upstream' } },
      'issue_refund',
    ]);
    expect(only(trajectory, refundNeedsChecks).reason).toBe(
      'issue_refund (call c3) reached refund_issued before policy_checked: policy_checked was never reached ' +
        '(get_refund_policy (call c2): it failed (Timeout: upstream))',
    );
  });

  it('holds when the milestone is never reached (end says whether it must be)', () => {
    expect(only(buildTrajectory(['get_order']), refundNeedsChecks).status).toBe('pass');
  });

  it('is inconclusive when the call may reach the milestone but its arguments were not captured', () => {
    const section = {
      define: { ...DEFINE, full_refund: { tool: 'issue_refund', match: { args: { full: true } } } },
      requires: { full_refund: ['policy_checked'] },
    };
    const unknown = buildTrajectory([{ tool: 'issue_refund', args: NOT_CAPTURED }]);
    const result = only(unknown, section);
    expect(result.status).toBe('inconclusive');
    expect(result.reason).toBe(
      'could not decide: issue_refund (call c1) may have reached full_refund (arguments were not captured) ' +
        'with no policy_checked before it',
    );
    // A call whose arguments say it is not a full refund does not reach the milestone.
    expect(only(buildTrajectory([{ tool: 'issue_refund', args: { full: false } }]), section).status).toBe(
      'pass',
    );
    expect(only(buildTrajectory([{ tool: 'issue_refund', args: { full: true } }]), section).status).toBe(
      'fail',
    );
  });

  it('is inconclusive when the only prerequisite call before it may not reach the prerequisite', () => {
    const section = {
      define: { ...DEFINE, eu_policy: { tool: 'get_refund_policy', match: { args: { region: 'eu' } } } },
      requires: { refund_issued: ['eu_policy'] },
    };
    const trajectory = buildTrajectory([{ tool: 'get_refund_policy', args: NOT_CAPTURED }, 'issue_refund']);
    expect(only(trajectory, section)).toMatchObject({
      status: 'inconclusive',
      reason:
        'could not decide: issue_refund (call c2) reached refund_issued, with eu_policy before it only if ' +
        'get_refund_policy (call c1) reached it (arguments were not captured)',
      calls: ['c1', 'c2'],
    });
    const known = buildTrajectory([{ tool: 'get_refund_policy', args: { region: 'eu' } }, 'issue_refund']);
    expect(only(known, section).status).toBe('pass');
  });
});

describe('milestones.forbidden', () => {
  const noRefundAfterConfirmation = { forbidden: [['confirmed', 'refund_issued']] };

  it('fails a call reaching `to` after a call reaching `from`', () => {
    const trajectory = buildTrajectory(['issue_refund', 'send_confirmation', 'issue_refund']);
    expect(only(trajectory, noRefundAfterConfirmation)).toEqual({
      rule: 'milestones.forbidden',
      dimension: 'order',
      name: 'milestones.forbidden:confirmed->refund_issued',
      status: 'fail',
      reason:
        'refund_issued must not follow confirmed: issue_refund (call c3) reached refund_issued after ' +
        'send_confirmation (call c2) reached confirmed',
      calls: ['c2', 'c3'],
    });
  });

  it('passes when the two are reached in one turn, or in the allowed order', () => {
    expect(
      only(buildTrajectory(['issue_refund', 'send_confirmation']), noRefundAfterConfirmation).status,
    ).toBe('pass');
    expect(
      only(buildTrajectory([['send_confirmation', 'issue_refund']]), noRefundAfterConfirmation).status,
    ).toBe('pass');
  });

  it('only counts calls that reach the milestones: a failed confirmation reaches nothing', () => {
    const trajectory = buildTrajectory([
      { tool: 'send_confirmation', outcome: { status: 'error' } },
      'issue_refund',
    ]);
    expect(only(trajectory, noRefundAfterConfirmation).status).toBe('pass');
  });

  it('is inconclusive when a call may have reached one side', () => {
    const trajectory = buildTrajectory(['send_confirmation', { tool: 'issue_refund', noResult: true }]);
    expect(only(trajectory, noRefundAfterConfirmation)).toMatchObject({
      status: 'inconclusive',
      reason:
        'could not decide: issue_refund (call c2) may have reached refund_issued (it never reported a result) ' +
        'after send_confirmation (call c1) reached confirmed',
    });
  });
});

describe('milestones.end', () => {
  it('passes when the milestone was reached, naming the calls that reached it', () => {
    const trajectory = buildTrajectory(['issue_refund', 'send_confirmation']);
    expect(only(trajectory, { end: ['confirmed'] })).toEqual({
      rule: 'milestones.end',
      dimension: 'order',
      name: 'milestones.end:confirmed',
      status: 'pass',
      reason: '',
      calls: ['c2'],
    });
  });

  it('fails when the tool was never called', () => {
    expect(only(buildTrajectory(['issue_refund']), { end: ['confirmed'] }).reason).toBe(
      'confirmed was never reached: it needs a successful call of send_confirmation; send_confirmation was never called',
    );
  });

  it('fails saying why each call of the tool missed it: outcome, arguments', () => {
    const section = {
      define: {
        notified: {
          tool: ['send_email', 'send_sms'],
          match: { mode: 'superset', args: { template: 'refund' } },
        },
      },
      end: ['notified'],
    };
    const trajectory = buildTrajectory([
      {
        tool: 'send_email',
        args: { template: 'refund' },
        outcome: { status: 'error', errorType: 'SmtpError' },
      },
      { tool: 'send_sms', args: { template: 'promo' } },
    ]);
    const result = only(trajectory, section);
    expect(result.reason).toBe(
      'notified was never reached: it needs a successful call of send_email or send_sms with the expected ' +
        'arguments {"template":"refund"}; saw send_email (call c1): it failed (SmtpError); ' +
        'send_sms (call c2): template: expected "refund", saw "promo"',
    );
    expect(result.calls).toEqual(['c1', 'c2']);
  });

  it('reads the outcome a milestone asks for: error, or any', () => {
    const section = {
      define: {
        refund_failed: { tool: 'issue_refund', outcome: 'error' },
        refund_tried: { tool: 'issue_refund', outcome: 'any' },
      },
      end: ['refund_failed', 'refund_tried'],
    };
    const ok = run(buildTrajectory(['issue_refund']), section);
    expect(ok.map((result) => [result.name, result.status, result.reason])).toEqual([
      [
        'milestones.end:refund_failed',
        'fail',
        'refund_failed was never reached: it needs a failed call of issue_refund; saw issue_refund (call c1): it succeeded',
      ],
      ['milestones.end:refund_tried', 'pass', ''],
    ]);
    const failed = run(buildTrajectory([{ tool: 'issue_refund', outcome: { status: 'error' } }]), section);
    expect(failed.map((result) => result.status)).toEqual(['pass', 'pass']);
  });

  it('one call can reach several milestones', () => {
    const section = {
      define: {
        refund_issued: { tool: 'issue_refund' },
        full_refund: { tool: 'issue_refund', match: { args: { full: true } } },
      },
      end: ['refund_issued', 'full_refund'],
    };
    const results = run(buildTrajectory([{ tool: 'issue_refund', args: { full: true } }]), section);
    expect(results.map((result) => [result.status, result.calls])).toEqual([
      ['pass', ['c1']],
      ['pass', ['c1']],
    ]);
  });

  it('is inconclusive when only calls whose arguments were not captured could reach it', () => {
    const section = {
      define: { full_refund: { tool: 'issue_refund', match: { args: { full: true } } } },
      end: ['full_refund'],
    };
    expect(only(buildTrajectory([{ tool: 'issue_refund', args: NOT_CAPTURED }]), section)).toMatchObject({
      status: 'inconclusive',
      reason:
        'could not decide whether full_refund was reached: issue_refund (call c1) may have reached it ' +
        '(arguments were not captured)',
      calls: ['c1'],
    });
    // A failed call misses an ok milestone whatever its arguments: no doubt left.
    const failed = buildTrajectory([
      { tool: 'issue_refund', args: NOT_CAPTURED, outcome: { status: 'error' } },
    ]);
    expect(only(failed, section).status).toBe('fail');
  });
});

describe('milestones on a real trace (Vercel AI SDK v7, GenAI mode)', () => {
  it('checks before refund, no refund after confirmation, and the confirmation reached', () => {
    const trajectory = trajectoryOf(fixture('vercel-ai-v7-genai-refund'));
    const results = run(trajectory, {
      requires: { refund_issued: ['order_loaded', 'policy_checked'], policy_checked: ['order_loaded'] },
      forbidden: [['confirmed', 'refund_issued']],
      end: ['confirmed'],
    });
    expect(results.map((result) => [result.name, result.status, result.reason])).toEqual([
      ['milestones.requires:refund_issued', 'pass', ''],
      [
        'milestones.requires:policy_checked',
        'fail',
        'get_refund_policy (call call_get_refund_policy_1) reached policy_checked before order_loaded: ' +
          'order_loaded was reached concurrently with it, in the same turn (call call_get_order_1)',
      ],
      ['milestones.forbidden:confirmed->refund_issued', 'pass', ''],
      ['milestones.end:confirmed', 'pass', ''],
    ]);
  });
});

describe('milestones section schema', () => {
  const load = (section: Record<string, unknown>) =>
    parseScenario({ milestones: { define: DEFINE, ...section } }, 'refund.json');

  it('rejects a milestone name that is not defined, wherever it is used, suggesting the closest', () => {
    expect(() =>
      load({
        requires: { refund_isued: ['policy_checked', 'policy_chcked'] },
        forbidden: [['confirmed', 'escalated']],
        end: ['confirmd'],
      }),
    ).toThrow(
      [
        'scenario refund.json: milestones.requires.refund_isued: unknown milestone "refund_isued" (did you mean ' +
          'refund_issued?); defined: order_loaded, policy_checked, refund_issued, confirmed',
        'scenario refund.json: milestones.requires.refund_isued[1]: unknown milestone "policy_chcked" (did you ' +
          'mean policy_checked?); defined: order_loaded, policy_checked, refund_issued, confirmed',
        'scenario refund.json: milestones.forbidden[0][1]: unknown milestone "escalated"; defined: ' +
          'order_loaded, policy_checked, refund_issued, confirmed',
        'scenario refund.json: milestones.end[0]: unknown milestone "confirmd" (did you mean confirmed?); ' +
          'defined: order_loaded, policy_checked, refund_issued, confirmed',
      ].join('\n'),
    );
  });

  it('loads a section that only names defined milestones', () => {
    expect(
      load({ requires: { refund_issued: ['policy_checked'] }, forbidden: [['confirmed', 'refund_issued']] })
        .rules.milestones?.define.refund_issued,
    ).toEqual({ tool: ['issue_refund'], outcome: 'ok' });
  });

  it('the family itself never throws on a section built in code with an unknown name', () => {
    const section = {
      define: {},
      requires: { a: ['b'] },
      forbidden: [['a', 'b']],
      end: ['a'],
    } as MilestonesSection;
    expect(milestonesFamily(buildTrajectory(['x']), section).map((result) => result.reason)).toEqual([
      'unknown milestone a, b; defined: none',
      'unknown milestone a, b; defined: none',
      'unknown milestone a; defined: none',
    ]);
  });
});

describe('milestones.never', () => {
  it('passes when no call reaches the milestone, whatever came before', () => {
    const trajectory = buildTrajectory(['get_order', 'get_refund_policy', 'send_confirmation']);
    expect(only(trajectory, { never: ['refund_issued'] })).toMatchObject({
      rule: 'milestones.never',
      name: 'milestones.never:refund_issued',
      status: 'pass',
    });
  });

  it('fails on the first call that reaches it, with no prerequisite to hang a transition on', () => {
    const trajectory = buildTrajectory(['issue_refund', 'get_order']);
    expect(only(trajectory, { never: ['refund_issued'] })).toMatchObject({
      status: 'fail',
      calls: ['c1'],
      reason: 'refund_issued must never be reached, but issue_refund (call c1) reached it',
    });
  });

  it('a call that missed the milestone (failed, or denied before it ran) does not reach it', () => {
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', outcome: { status: 'error' } },
      { tool: 'issue_refund', outcome: { status: 'not_executed' } },
    ]);
    expect(only(trajectory, { never: ['refund_issued'] }).status).toBe('pass');
  });

  it('is inconclusive on a call that may have reached it', () => {
    const trajectory = buildTrajectory([{ tool: 'issue_refund', noResult: true }]);
    expect(only(trajectory, { never: ['refund_issued'] })).toMatchObject({
      status: 'inconclusive',
      calls: ['c1'],
      reason:
        'could not decide whether refund_issued, which must never be reached, was: issue_refund (call c1) may have reached it (it never reported a result)',
    });
    const blind = buildTrajectory([{ tool: 'issue_refund', args: NOT_CAPTURED }]);
    const section = {
      define: { ...DEFINE, big_refund: { tool: 'issue_refund', match: { args: { amount: 500 } } } },
      never: ['big_refund'],
    };
    expect(only(blind, section).status).toBe('inconclusive');
  });

  it('an unknown milestone is a load error that says what is defined', () => {
    expect(() => milestones({ never: ['refund_isued'] })).toThrow(
      'milestones.never[0]: unknown milestone "refund_isued" (did you mean refund_issued?); defined: order_loaded, policy_checked, refund_issued, confirmed',
    );
  });
});
