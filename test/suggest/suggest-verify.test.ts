import { describe, expect, it } from 'vitest';
import { UNREAD_TOOL_ACTIVITY } from '../../src/model/trajectory.js';
import { ruleLabel } from '../../src/suggest/rules.js';
import { suggestScenarios } from '../../src/suggest/suggest.js';
import { buildTrajectory, NOT_CAPTURED } from '../helpers/trajectory.js';

const root = { name: 'run', agentName: 'agent' };
const labels = (runs: Parameters<typeof suggestScenarios>[0]) =>
  suggestScenarios(runs).agents[0]?.rules.map(({ rule }) => ruleLabel(rule)) ?? [];

describe('toolpath suggest never trusts the mining alone', () => {
  it('leaves out every rule the evaluator cannot decide on a good run (tool use it did not read)', () => {
    const steps = ['search', 'answer'];
    const clean = { source: 'a', trajectory: buildTrajectory(steps, { root, traceId: 'a' }) };
    const unread = {
      source: 'b',
      trajectory: buildTrajectory(steps, {
        root,
        traceId: 'b',
        issues: [{ kind: UNREAD_TOOL_ACTIVITY, message: 'a tool span no convention read', spanIds: ['x'] }],
      }),
    };
    expect(labels([clean])).toContain('order.before: search before answer');
    const [agent] = suggestScenarios([clean, unread]).agents;
    const kept = agent?.rules.map(({ rule }) => ruleLabel(rule)) ?? [];
    // What the calls seen prove stands; what more calls could change is undecided, so left out.
    expect(kept).not.toContain('order.before: search before answer');
    expect(kept).not.toContain('tools.required: search');
    expect(agent?.dropped).toBeGreaterThan(0);
  });

  it('suggests no argument rule for a tool whose arguments some run did not capture', () => {
    const run = (source: string, args: unknown) => ({
      source,
      trajectory: buildTrajectory([{ tool: 'lookup', args: args as never }], { root, traceId: source }),
    });
    expect(labels([run('a', { q: 'x' }), run('b', { q: 'x' })])).toContain('arguments: lookup.q = "x"');
    expect(labels([run('a', { q: 'x' }), run('b', { q: 'y' })]).some((l) => l.startsWith('arguments'))).toBe(
      false,
    );
    expect(
      labels([run('a', { q: 'x' }), run('b', NOT_CAPTURED)]).some((l) => l.startsWith('arguments')),
    ).toBe(false);
    // One run cannot tell a constant from this run's value.
    expect(labels([run('a', { q: 'x' })]).some((l) => l.startsWith('arguments'))).toBe(false);
  });

  it('orders on happens-before: calls asked for in one turn make no pair', () => {
    const parallel = buildTrajectory([['a', 'b'], 'c'], { root, traceId: 'p' });
    const rules = labels([{ source: 'p', trajectory: parallel }]);
    expect(rules.filter((l) => l.startsWith('order.before'))).toEqual([
      'order.before: a before c',
      'order.before: b before c',
    ]);
    expect(rules).toContain('order.terminal: c');
  });
});

describe('toolpath suggest on odd tool names', () => {
  it('drops a rule the scenario loader cannot hold (a tools.counts key __proto__) instead of suggesting a no-op', () => {
    const trajectory = buildTrajectory(['__proto__', 'constructor'], { root, traceId: 'odd' });
    const [agent] = suggestScenarios([{ source: 'odd', trajectory }]).agents;
    const rules = agent?.rules.map(({ rule }) => ruleLabel(rule)) ?? [];
    expect(rules).toContain('tools.required: __proto__');
    expect(rules).toContain('tools.counts: constructor at most 1');
    // The loaded scenario has no such count to check: no check passed, so the rule is not suggested.
    expect(rules).not.toContain('tools.counts: __proto__ at most 1');
    expect(agent?.dropped).toBe(1);
  });
});
