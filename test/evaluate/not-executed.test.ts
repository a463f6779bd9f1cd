/**
 * A call a pre-execution decision denied (or held for approval) that never ran: outcome
 * `not_executed`. It is still a call the agent made: rules about what the agent asked for (tools,
 * counts, order, arguments) count it. It reported no result and had no effect: rules about results
 * and effects (grounding, safety.irreversible, order.terminal's gate, milestones that need an
 * outcome) treat it as never having run.
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { JsonValue } from '../../src/model/json.js';
import type { CallOutcome, Trajectory } from '../../src/model/trajectory.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { buildTrajectory } from '../helpers/trajectory.js';

const NOT_EXECUTED: CallOutcome = { status: 'not_executed' };

/** The verdict and each rule's status (by assertion name) of a scenario on a trajectory. */
function judge(trajectory: Trajectory, rules: Record<string, unknown>) {
  const report = evaluate(trajectory, parseScenario({ id: 'not-executed', ...rules }, 'not-executed.json'));
  const statuses = Object.fromEntries(
    report.assertions.map((assertion) => [assertion.name, assertion.status]),
  );
  return { verdict: report.verdict, statuses, report };
}

function withResult(trajectory: Trajectory, id: string, value: JsonValue): Trajectory {
  const call = trajectory.call(id);
  if (!call) throw new Error(`no call ${id}`);
  call.result = { captured: true, value };
  return trajectory;
}

describe('a call that was not executed', () => {
  it('still counts as a call for tools.*: allowed, forbidden, required and counts', () => {
    const trajectory = buildTrajectory(['get_order', { tool: 'issue_refund', outcome: NOT_EXECUTED }]);
    expect(trajectory.calls[1]?.outcome).toEqual(NOT_EXECUTED);
    const counted = judge(trajectory, {
      tools: { required: ['issue_refund'], counts: { issue_refund: { max: 1, min: 1 } } },
    });
    expect(counted.verdict).toBe('pass');
    const forbidden = judge(trajectory, { tools: { forbidden: ['issue_refund'] } });
    expect(forbidden.verdict).toBe('fail');
    const allowed = judge(trajectory, { tools: { allowed: ['get_order'] } });
    expect(allowed.verdict).toBe('fail');
    expect(counted.report.stats).toMatchObject({ calls: 2, errors: 0 });
  });

  it('is no source for grounding: what the model was shown in its place grounds nothing', () => {
    // get_order was denied; the framework showed the model a made-up order in its place.
    const trajectory = withResult(
      buildTrajectory([
        { tool: 'get_order', outcome: NOT_EXECUTED },
        { tool: 'issue_refund', args: { orderId: 'O-17' } },
      ]),
      'c1',
      { orderId: 'O-17' },
    );
    expect(trajectory.resultsVisibleTo(trajectory.calls[1] as never)).toEqual([]);
    const { verdict, report } = judge(trajectory, {
      grounding: [{ tool: 'issue_refund', path: 'orderId', from: { tool: 'get_order', path: 'orderId' } }],
    });
    expect(verdict).toBe('fail');
    expect(report.findings.map((finding) => finding.rule)).toEqual(['grounding.source']);
    // The same trajectory with the call run is grounded.
    const ran = withResult(
      buildTrajectory(['get_order', { tool: 'issue_refund', args: { orderId: 'O-17' } }]),
      'c1',
      { orderId: 'O-17' },
    );
    expect(
      judge(ran, {
        grounding: [{ tool: 'issue_refund', path: 'orderId', from: { tool: 'get_order', path: 'orderId' } }],
      }).verdict,
    ).toBe('pass');
  });

  it('is no second refund for safety.irreversible, before or after the one that ran', () => {
    const denied = { tool: 'issue_refund', outcome: NOT_EXECUTED };
    const trajectory = buildTrajectory(['get_order', 'issue_refund', denied]);
    expect(judge(trajectory, { safety: { irreversible: ['issue_refund'] } }).verdict).toBe('pass');
    // One that ran twice still fails.
    const twice = buildTrajectory(['get_order', 'issue_refund', 'issue_refund']);
    expect(judge(twice, { safety: { irreversible: ['issue_refund'] } }).verdict).toBe('fail');
  });

  it('is no order.terminal gate: a denied escalation handed nothing away', () => {
    const trajectory = buildTrajectory([
      { tool: 'escalate', outcome: NOT_EXECUTED },
      'get_order',
      'send_confirmation',
    ]);
    expect(judge(trajectory, { order: { terminal: ['escalate'] } }).verdict).toBe('pass');
    // A call after a terminal call counts, executed or not.
    const after = buildTrajectory(['escalate', { tool: 'get_order', outcome: NOT_EXECUTED }]);
    expect(judge(after, { order: { terminal: ['escalate'] } }).verdict).toBe('fail');
  });

  it('still takes its place in order.before: a denied refund before the policy check is out of order', () => {
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', outcome: NOT_EXECUTED },
      'get_refund_policy',
    ]);
    const { verdict } = judge(trajectory, {
      order: { before: [{ before: 'get_refund_policy', after: 'issue_refund' }] },
    });
    expect(verdict).toBe('fail');
  });

  it('misses a milestone that needs an outcome, saying it was not executed, and reaches one that takes any', () => {
    const trajectory = buildTrajectory(['get_order', { tool: 'issue_refund', outcome: NOT_EXECUTED }]);
    const define = { loaded: { tool: 'get_order' }, refunded: { tool: 'issue_refund' } };
    const needsOk = judge(trajectory, { milestones: { define, end: ['refunded'] } });
    expect(needsOk.verdict).toBe('fail');
    expect(needsOk.report.findings[0]?.message).toContain('was not executed');
    const any = judge(trajectory, {
      milestones: {
        define: { ...define, refunded: { tool: 'issue_refund', outcome: 'any' } },
        end: ['refunded'],
      },
    });
    expect(any.verdict).toBe('pass');
  });

  it('is a repeat, not a retry, when the agent asks again with the same arguments', () => {
    const refund = { tool: 'issue_refund', args: { orderId: 'O-17' } };
    const trajectory = buildTrajectory([{ ...refund, outcome: NOT_EXECUTED }, refund]);
    const { statuses } = judge(trajectory, {
      efficiency: { repeats: { max: 0 }, retries: { transient: ['GatewayTimeout'], max: 1 } },
    });
    expect(statuses).toMatchObject({ 'efficiency.repeat': 'fail', 'efficiency.retry': 'pass' });
  });
});
