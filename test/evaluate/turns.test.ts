/**
 * `order.together` and `efficiency.maxCallsPerTurn`, on the turn each call carries: on built
 * trajectories, on captured fixtures (Vercel AI SDK v7 and the GenAI SDK capture, OpenLLMetry's
 * decorators, which record no turns), and on the corpus's parallel group (`pxi-turn-subagent`:
 * three `read_skill_resource` calls from one response of Phoenix's PXI sub-agent).
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { type Trajectory, UNREAD_TOOL_ACTIVITY } from '../../src/model/trajectory.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { corpusSpans, describeCorpus } from '../helpers/corpus.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { buildTrajectory } from '../helpers/trajectory.js';

function judge(trajectory: Trajectory, rules: Record<string, unknown>) {
  const report = evaluate(trajectory, parseScenario({ id: 'turns', ...rules }, 'turns.yaml'));
  const byName = Object.fromEntries(report.assertions.map((assertion) => [assertion.name, assertion]));
  return { report, byName };
}

const TOGETHER = { order: { together: [['get_order', 'get_refund_policy']] } };

describe('order.together', () => {
  it('passes when the order and the policy are asked for in one turn', () => {
    const trajectory = buildTrajectory([['get_order', 'get_refund_policy'], 'issue_refund']);
    const { report, byName } = judge(trajectory, TOGETHER);
    expect(report.verdict).toBe('pass');
    expect(report.findings).toEqual([]);
    expect(byName['order.together[0]']?.status).toBe('pass');
  });

  it('fails two round trips, naming both calls and the turns they were asked for in', () => {
    const trajectory = buildTrajectory(['get_order', 'get_refund_policy', 'issue_refund']);
    const { report } = judge(trajectory, TOGETHER);
    expect(report.verdict).toBe('fail');
    const [finding] = report.findings;
    expect(finding).toMatchObject({ rule: 'order.together', severity: 'hard', calls: ['c1', 'c2'] });
    expect(finding?.message).toBe(
      'get_order, get_refund_policy are to be asked for in one turn: get_order (call c1) was asked for in turn t1 without get_refund_policy (asked for get_refund_policy in turn t2 (call c2)); get_refund_policy (call c2) was asked for in turn t2 without get_order (asked for get_order in turn t1 (call c1))',
    );
  });

  it('fails a later lookup asked for alone, though the first pair was batched', () => {
    const trajectory = buildTrajectory([['get_order', 'get_refund_policy'], 'get_order']);
    const { report } = judge(trajectory, TOGETHER);
    expect(report.verdict).toBe('fail');
    // The offending call and the policy calls it was not asked for with.
    expect(report.findings[0]?.calls).toEqual(['c2', 'c3']);
    expect(report.findings[0]?.message).toContain('get_order (call c3) was asked for in turn t2');
  });

  it('holds where one of the tools is never called: whether it is, is tools.required’s business', () => {
    const trajectory = buildTrajectory(['get_order', 'issue_refund']);
    expect(judge(trajectory, TOGETHER).report.verdict).toBe('pass');
  });

  it('is inconclusive where the trace records no turns, and still fails what known turns show', () => {
    const turnless = buildTrajectory([
      { tool: 'get_order', noTurn: true },
      { tool: 'get_refund_policy', noTurn: true },
    ]);
    const { report } = judge(turnless, TOGETHER);
    expect(report.verdict).toBe('inconclusive');
    expect(report.findings[0]?.message).toContain('records no turn for calls c1, c2');
    // A known turn without the policy, and a policy call with no turn: it may have been in t1.
    const half = buildTrajectory(['get_order', { tool: 'get_refund_policy', noTurn: true }]);
    expect(judge(half, TOGETHER).report.verdict).toBe('inconclusive');
    // Both calls of the policy have turns, neither is get_order's: a failure, whatever else is unknown.
    const apart = buildTrajectory(['get_order', 'get_refund_policy', { tool: 'get_order', noTurn: true }]);
    expect(judge(apart, TOGETHER).report.verdict).toBe('fail');
  });

  it('counts a call that was not executed: it was asked for', () => {
    const trajectory = buildTrajectory([
      'get_order',
      { tool: 'get_refund_policy', outcome: { status: 'not_executed' } },
    ]);
    expect(judge(trajectory, TOGETHER).report.verdict).toBe('fail');
  });

  it('rejects a group that lists a tool twice, or only one tool', () => {
    expect(() => parseScenario({ order: { together: [['get_order', 'get_order']] } }, 'refund.yaml')).toThrow(
      'scenario refund.yaml: order.together[0]: get_order is listed twice; list each tool of a group once',
    );
    expect(() => parseScenario({ order: { together: [['get_order']] } }, 'refund.yaml')).toThrow(
      /order\.together\[0\]/,
    );
  });
});

describe('efficiency.maxCallsPerTurn', () => {
  it('passes up to the limit and warns past it, naming the turn and its calls', () => {
    const trajectory = buildTrajectory([['a', 'b', 'c'], 'd', ['e', 'f']]);
    expect(judge(trajectory, { efficiency: { maxCallsPerTurn: 3 } }).report.verdict).toBe('pass');
    const { report } = judge(trajectory, { efficiency: { maxCallsPerTurn: 2 } });
    // Efficiency is a warning by default: the verdict stands, the score drops.
    expect(report.verdict).toBe('pass');
    expect(report.scores.efficiency).toBe(0);
    expect(report.findings).toEqual([
      expect.objectContaining({
        rule: 'efficiency.maxCallsPerTurn',
        severity: 'warning',
        calls: ['c1', 'c2', 'c3'],
        message: 'at most 2 calls per turn: turn t1 asked for 3 calls (calls c1, c2, c3)',
      }),
    ]);
    const hard = judge(trajectory, { efficiency: { maxCallsPerTurn: 2 }, severity: { efficiency: 'hard' } });
    expect(hard.report.verdict).toBe('fail');
  });

  it('is inconclusive only where calls with no turn could push a turn over the limit', () => {
    const trajectory = buildTrajectory([['a', 'b'], { tool: 'c', noTurn: true }]);
    const undecided = judge(trajectory, {
      efficiency: { maxCallsPerTurn: 2 },
      severity: { efficiency: 'hard' },
    });
    expect(undecided.report.verdict).toBe('inconclusive');
    expect(undecided.report.findings[0]?.message).toBe(
      'at most 2 calls per turn, but the trace records no turn for call c3 (the fullest recorded turn asked for 2), so how many were asked for in one turn cannot be told',
    );
    // Three calls in all can never put more than three in one turn.
    expect(judge(trajectory, { efficiency: { maxCallsPerTurn: 3 } }).report.findings).toEqual([]);
  });

  it('rejects a limit below 1', () => {
    expect(() => parseScenario({ efficiency: { maxCallsPerTurn: 0 } }, 'refund.yaml')).toThrow(
      /efficiency\.maxCallsPerTurn/,
    );
  });
});

describe('turns in captured fixtures', () => {
  it('Vercel AI SDK v7: get_order and get_refund_policy come from one response', () => {
    const trajectory = trajectoryOf(fixture('vercel-ai-v7-genai-refund'));
    const { byName } = judge(trajectory, {
      ...TOGETHER,
      efficiency: { maxCallsPerTurn: 2 },
    });
    expect(byName['order.together[0]']?.status).toBe('pass');
    expect(byName['efficiency.maxCallsPerTurn']?.status).toBe('pass');
    expect(judge(trajectory, { efficiency: { maxCallsPerTurn: 1 } }).report.findings[0]?.calls).toEqual(
      trajectory.calls.filter((call) => call.tool.startsWith('get_')).map((call) => call.id),
    );
  });

  it('the GenAI SDK capture: the order alone, then the policy with the customer: two round trips', () => {
    const trajectory = trajectoryOf(fixture('sdk-genai-refund'));
    const { report } = judge(trajectory, TOGETHER);
    expect(report.verdict).toBe('fail');
    expect(report.findings[0]?.message).toMatch(
      /get_order \(call \S+\) was asked for in turn turn:\w+ without get_refund_policy/,
    );
    const customer = judge(trajectory, { order: { together: [['get_refund_policy', 'get_customer']] } });
    expect(customer.report.verdict).toBe('pass');
  });

  it('OpenLLMetry decorators record no turns: both rules are inconclusive where they could fail', () => {
    const trajectory = trajectoryOf(fixture('openllmetry-documented-decorators'));
    expect(trajectory.calls.every((call) => call.turnId === undefined)).toBe(true);
    const { byName } = judge(trajectory, {
      ...TOGETHER,
      efficiency: { maxCallsPerTurn: 2 },
    });
    expect(byName['order.together[0]']?.status).toBe('inconclusive');
    expect(byName['efficiency.maxCallsPerTurn']?.status).toBe('inconclusive');
  });
});

describeCorpus('the corpus: pxi-turn-subagent', () => {
  const spans = corpusSpans('openinference-phoenix-pxi/pxi-turn-subagent.otlp.json');
  const trajectory = normalizeTrace(spans[0]?.traceId ?? '', spans) as Trajectory;

  it('three read_skill_resource calls in one turn: within 3 per turn, over 2', () => {
    expect(judge(trajectory, { efficiency: { maxCallsPerTurn: 3 } }).report.findings).toEqual([]);
    const { report } = judge(trajectory, { efficiency: { maxCallsPerTurn: 2 } });
    expect(report.findings).toHaveLength(1);
    expect(report.findings[0]?.calls).toEqual(['call-04', 'call-05', 'call-06']);
    expect(report.findings[0]?.message).toBe(
      'at most 2 calls per turn: turn turn:3402f5cfe4ae2adf asked for 3 calls (calls call-04, call-05, call-06)',
    );
  });

  it('load_skill came a turn before the resources it loaded: not together', () => {
    const { report } = judge(trajectory, { order: { together: [['load_skill', 'read_skill_resource']] } });
    expect(report.verdict).toBe('fail');
    expect(report.findings[0]?.calls).toEqual(['call-03', 'call-04', 'call-05', 'call-06']);
    // The sub-agent's bash calls and the parent's call_subagent are in different runs' turns.
    const across = judge(trajectory, { order: { together: [['call_subagent', 'bash']] } });
    expect(across.report.verdict).toBe('fail');
  });
});

describe('where the trace shows tool activity toolpath could not read', () => {
  const unread = [{ kind: UNREAD_TOOL_ACTIVITY, message: 'span x looks like a tool span', spanIds: ['x'] }];

  it('a turn over the limit stays over it; a missing partner may be among the unread calls', () => {
    const trajectory = buildTrajectory([['a', 'b', 'c'], 'get_order'], { issues: unread });
    const over = judge(trajectory, { efficiency: { maxCallsPerTurn: 2 } });
    expect(over.byName['efficiency.maxCallsPerTurn']?.status).toBe('fail');
    const alone = buildTrajectory(['get_order', 'get_refund_policy'], { issues: unread });
    expect(judge(alone, TOGETHER).byName['order.together[0]']?.status).toBe('inconclusive');
  });
});
