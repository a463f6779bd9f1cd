/**
 * A rule that fails over a very long trajectory (a conversation's cumulative calls) reports the
 * failure: listing its calls never passes them as arguments of one function call, which throws
 * past about 125,000 of them in V8.
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { buildTrajectory } from '../helpers/trajectory.js';

const CALLS = 150_000;

describe('failing rules over 150,000 calls', () => {
  it('order.before, milestones.requires and efficiency.repeat report their failures', () => {
    // One parallel batch: every search alongside the pay, none of them before it, all identical.
    const trajectory = buildTrajectory([
      [...Array.from({ length: CALLS }, () => ({ tool: 'search', args: { q: 'same' } })), 'pay'],
    ]);
    const scenario = parseScenario(
      {
        order: { before: [{ before: 'search', after: 'pay' }] },
        milestones: {
          define: { searched: { tool: 'search' }, paid: { tool: 'pay' } },
          requires: { paid: ['searched'] },
        },
        efficiency: { repeats: { max: 0 } },
      },
      'long.json',
    );
    const report = evaluate(trajectory, scenario);
    const statuses = Object.fromEntries(report.assertions.map((result) => [result.name, result.status]));
    expect(statuses).toMatchObject({
      'order.before[0]': 'fail',
      'milestones.requires:paid': 'fail',
      'efficiency.repeat': 'fail',
    });
    const repeat = report.findings.find((finding) => finding.rule === 'efficiency.repeat');
    expect(repeat?.calls).toHaveLength(CALLS);
  });
});
