/**
 * Order verdicts are judged on happens-before, so calls asked for in one turn commute: listing
 * or starting them in another order never changes a verdict of the order or milestones family.
 * `order.before` against a brute-force oracle over every pair of calls: `before` is all of its
 * tools, `beforeAny` one of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { milestonesFamily } from '../../src/evaluate/milestones.js';
import { orderFamily } from '../../src/evaluate/order.js';
import { CausalGraph } from '../../src/model/causal-order.js';
import { type ToolCall, Trajectory, type Turn } from '../../src/model/trajectory.js';
import { parseScenario } from '../../src/scenario/scenario.js';

const TOOLS = ['a', 'b', 'c'] as const;

const randomCall = fc.record({
  tool: fc.constantFrom(...TOOLS),
  v: fc.option(fc.constantFrom(0, 1), { nil: undefined }), // undefined: arguments not captured
  outcome: fc.constantFrom('ok', 'ok', 'ok', 'error', 'no_result'),
  lag: fc.constantFrom(0, 0, 1), // 1: the result is only consumed a turn later
  key: fc.nat(), // where the call goes in the shuffled listing of its turn
});
type RandomCall = typeof randomCall extends fc.Arbitrary<infer T> ? T : never;

/**
 * A trajectory on the causal graph a normalizer builds: turn k issues its calls, and the turn
 * that consumes a call's result comes after it. With `shuffle`, each turn's calls are listed and
 * started in another order (by `key`); ids stay the same, so verdicts can be compared.
 */
function turnsTrajectory(turns: readonly (readonly RandomCall[])[], shuffle: boolean): Trajectory {
  const graph = new CausalGraph();
  const calls: ToolCall[] = [];
  const turnList: Turn[] = [];
  turns.forEach((_, k) => {
    graph.addNode(`turn${k}`, BigInt(k * 100), false);
    if (k > 0) graph.addEdge(`turn${k - 1}`, `turn${k}`);
    turnList.push({ id: `t${k}`, issued: [], consumed: [] });
  });
  turns.forEach((group, k) => {
    const listing = group.map((call, index) => ({ call, index }));
    if (shuffle) listing.sort((x, y) => x.call.key - y.call.key || y.index - x.index);
    listing.forEach(({ call, index }, position) => {
      const id = `t${k}c${index}`;
      graph.addNode(id, BigInt(k * 100 + 1 + position), true);
      graph.addEdge(`turn${k}`, id);
      turnList[k]?.issued.push(id);
      const consumer = turnList[k + 1 + call.lag];
      if (call.outcome !== 'no_result' && consumer) {
        graph.addEdge(id, `turn${k + 1 + call.lag}`);
        consumer.consumed.push(id);
      }
      calls.push({
        id,
        tool: call.tool,
        args: call.v === undefined ? { captured: false } : { captured: true, value: { v: call.v } },
        result: { captured: false },
        outcome: call.outcome === 'error' ? { status: 'error' } : { status: call.outcome },
        turnId: `t${k}`,
        convention: 'test',
      });
    });
  });
  return new Trajectory({ traceId: 't', calls, order: graph, turns: turnList });
}

const toolSet = fc.uniqueArray(fc.constantFrom(...TOOLS), { minLength: 1, maxLength: 2 });
const step = fc.record(
  { tool: fc.constantFrom(...TOOLS), match: fc.record({ args: fc.record({ v: fc.constantFrom(0, 1) }) }) },
  { requiredKeys: ['tool'] },
);
const milestoneNames = ['m0', 'm1', 'm2'] as const;
const milestoneName = fc.constantFrom(...milestoneNames);

const randomScenario = fc.record({
  order: fc.record({
    before: fc.array(
      fc.oneof(
        fc.record({ before: toolSet, after: toolSet }),
        fc.record({ beforeAny: toolSet, after: toolSet }),
      ),
      { maxLength: 2 },
    ),
    terminal: toolSet,
    together: fc.array(fc.uniqueArray(fc.constantFrom(...TOOLS), { minLength: 2, maxLength: 3 }), {
      maxLength: 2,
    }),
    sequence: fc.record({
      mode: fc.constantFrom('in_order', 'exact'),
      steps: fc.array(step, { minLength: 1, maxLength: 3 }),
    }),
  }),
  milestones: fc.record({
    define: fc.tuple(
      ...milestoneNames.map(() =>
        fc.record(
          {
            tool: toolSet,
            outcome: fc.constantFrom('ok', 'error', 'any'),
            match: fc.record({ args: fc.record({ v: fc.constantFrom(0, 1) }) }),
          },
          { requiredKeys: ['tool', 'outcome'] },
        ),
      ),
    ),
    requires: fc.dictionary(milestoneName, fc.array(milestoneName, { minLength: 1, maxLength: 2 })),
    forbidden: fc.array(fc.tuple(milestoneName, milestoneName), { maxLength: 2 }),
    end: fc.array(milestoneName, { maxLength: 2 }),
    never: fc.array(milestoneName, { maxLength: 2 }),
  }),
});

describe('order verdicts on happens-before', () => {
  it('never change when the calls of one turn are listed and started in another order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(randomCall, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
        randomScenario,
        (turns, random) => {
          const define = Object.fromEntries(random.milestones.define.map((m, index) => [`m${index}`, m]));
          const scenario = parseScenario(
            { order: random.order, milestones: { ...random.milestones, define } },
            'random.json',
          );
          const verdicts = (trajectory: Trajectory) => {
            const { order: orderSection, milestones } = scenario.rules;
            if (!orderSection || !milestones) throw new Error('sections missing');
            return [
              ...orderFamily(trajectory, orderSection),
              ...milestonesFamily(trajectory, milestones),
            ].map((result) => `${result.name}: ${result.status}`);
          };
          const listed = turnsTrajectory(turns, false);
          const shuffled = turnsTrajectory(turns, true);
          expect(verdicts(shuffled)).toEqual(verdicts(listed));
        },
      ),
      { numRuns: 500 },
    );
  });
});

/**
 * The oracle: every `after` call has, for each tool asked for (all of them, or one with `beforeAny`),
 * another call of it in another turn that happened-before it, tried over every call of the trace.
 */
function beforeHolds(
  trajectory: Trajectory,
  constraint: { before?: readonly string[]; beforeAny?: readonly string[]; after: readonly string[] },
): boolean {
  const earlier = (call: ToolCall, tool: string) =>
    trajectory.calls.some(
      (other) =>
        other !== call &&
        other.tool === tool &&
        other.turnId !== call.turnId &&
        trajectory.happensBefore(other, call),
    );
  return trajectory.calls
    .filter((call) => constraint.after.includes(call.tool))
    .every((call) =>
      constraint.beforeAny
        ? constraint.beforeAny.some((tool) => earlier(call, tool))
        : (constraint.before ?? []).every((tool) => earlier(call, tool)),
    );
}

describe('order.before against a brute-force oracle', () => {
  it('passes exactly when every after call has each before tool (or one beforeAny tool) causally ahead', () => {
    const tools = fc.uniqueArray(fc.constantFrom(...TOOLS), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(
        fc.array(fc.array(randomCall, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        tools,
        tools,
        (turns, any, listed, after) => {
          const constraint = any ? { beforeAny: listed, after } : { before: listed, after };
          const section = parseScenario({ order: { before: [constraint] } }, 'oracle.json').rules.order;
          if (!section) throw new Error('no order section');
          const trajectory = turnsTrajectory(turns, true);
          const [result] = orderFamily(trajectory, section);
          expect(result?.status).toBe(beforeHolds(trajectory, constraint) ? 'pass' : 'fail');
        },
      ),
      { numRuns: 1000 },
    );
  });
});
