/**
 * The new rules against brute-force oracles on random trajectories (turns on the causal graph a
 * normalizer builds, some calls with no recorded turn, every outcome, random decisions):
 *
 * - `order.together` and `efficiency.maxCallsPerTurn`: every way of giving the turnless calls a
 *   turn (one already recorded, or a new one) is tried. A pass must pass in all of them, a failure
 *   fail in all of them; maxCallsPerTurn is inconclusive exactly when they disagree, order.together
 *   at least never where they all pass.
 * - `milestones.never`: every way a call's unknowns could have turned out (a call with no result
 *   succeeded or failed; uncaptured arguments matched or not), judged the same way, exactly.
 * - `safety.approval`: the definition read literally, on every pair of calls and `happensBefore`
 *   itself, with none of the rule's shortcuts (causal listing, first witness).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { CausalGraph } from '../../src/model/causal-order.js';
import {
  type DecisionOutcome,
  type ToolCall,
  Trajectory,
  type TrajectoryIssue,
  type Turn,
} from '../../src/model/trajectory.js';
import { parseScenario } from '../../src/scenario/scenario.js';

const TOOLS = ['a', 'b', 'c', 'confirm'] as const;
type Status = 'ok' | 'error' | 'no_result' | 'not_executed';

const randomCall = fc.record({
  tool: fc.constantFrom(...TOOLS),
  status: fc.constantFrom<Status>('ok', 'ok', 'ok', 'error', 'no_result', 'not_executed'),
  noTurn: fc.constantFrom(false, false, false, true),
  lag: fc.constantFrom(0, 0, 1),
  v: fc.option(fc.constantFrom(0, 1), { nil: undefined }),
  decisions: fc.array(fc.constantFrom<DecisionOutcome>('allow', 'deny', 'require_approval'), {
    maxLength: 2,
  }),
});
type RandomCall = typeof randomCall extends fc.Arbitrary<infer T> ? T : never;
const randomTurns = fc.array(fc.array(randomCall, { minLength: 1, maxLength: 4 }), {
  minLength: 1,
  maxLength: 4,
});

/** Turn k issues its calls; the turn that consumes a call's result (unless it has none) comes after it. */
function build(turns: readonly (readonly RandomCall[])[], issues: TrajectoryIssue[] = []): Trajectory {
  const graph = new CausalGraph();
  const calls: ToolCall[] = [];
  const turnList: Turn[] = turns.map((_, k) => ({ id: `t${k}`, issued: [], consumed: [] }));
  turns.forEach((_, k) => {
    graph.addNode(`turn${k}`, BigInt(k * 100), false);
    if (k > 0) graph.addEdge(`turn${k - 1}`, `turn${k}`);
  });
  turns.forEach((group, k) => {
    group.forEach((random, index) => {
      const id = `t${k}c${index}`;
      graph.addNode(id, BigInt(k * 100 + 1 + index), true);
      graph.addEdge(`turn${k}`, id);
      const reported = random.status === 'ok' || random.status === 'error';
      const consumer = k + 1 + random.lag;
      if (reported && consumer < turns.length) graph.addEdge(id, `turn${consumer}`);
      const call: ToolCall = {
        id,
        tool: random.tool,
        args: random.v === undefined ? { captured: false } : { captured: true, value: { v: random.v } },
        result: { captured: false },
        outcome: { status: random.status },
        convention: 'test',
      };
      if (!random.noTurn) {
        call.turnId = `t${k}`;
        turnList[k]?.issued.push(id);
      }
      if (random.decisions.length > 0) call.decisions = random.decisions.map((outcome) => ({ outcome }));
      calls.push(call);
    });
  });
  return new Trajectory({ traceId: 't', calls, order: graph, turns: turnList, issues });
}

type Verdict = 'pass' | 'fail' | 'inconclusive';

/** The status of the one assertion a single-rule scenario reports. */
function statusOf(trajectory: Trajectory, rules: Record<string, unknown>): Verdict {
  const report = evaluate(trajectory, parseScenario({ id: 'property', ...rules }, 'property.json'));
  expect(report.assertions).toHaveLength(1);
  return report.assertions[0]?.status as Verdict;
}

/** Pass if every world passes, fail if every world fails, else inconclusive. */
function overWorlds(worlds: Iterable<boolean>): Verdict {
  let passes = false;
  let fails = false;
  for (const ok of worlds) {
    if (ok) passes = true;
    else fails = true;
  }
  if (passes && !fails) return 'pass';
  return fails && !passes ? 'fail' : 'inconclusive';
}

/** Every assignment of a turn to the calls with none: a recorded turn, or a new one of their own. */
function* turnAssignments(calls: readonly ToolCall[]): Generator<(call: ToolCall) => string> {
  const known = [...new Set(calls.flatMap((call) => (call.turnId === undefined ? [] : [call.turnId])))];
  const turnless = calls.filter((call) => call.turnId === undefined);
  const choices = [...known, ...turnless.map((_, index) => `new${index}`)];
  const picks = new Array<number>(turnless.length).fill(0);
  while (true) {
    const assigned = new Map(
      turnless.map((call, index) => [call, choices[picks[index] as number] as string]),
    );
    yield (call) => call.turnId ?? (assigned.get(call) as string);
    let position = 0;
    while (position < picks.length && picks[position] === choices.length - 1) picks[position++] = 0;
    if (position === picks.length) return;
    picks[position] = (picks[position] as number) + 1;
  }
}

function togetherHolds(
  calls: readonly ToolCall[],
  group: readonly string[],
  turnOf: (call: ToolCall) => string,
) {
  const grouped = calls.filter((call) => group.includes(call.tool));
  if (group.some((tool) => !grouped.some((call) => call.tool === tool))) return true;
  return grouped.every((call) =>
    group.every(
      (tool) =>
        tool === call.tool || grouped.some((other) => other.tool === tool && turnOf(other) === turnOf(call)),
    ),
  );
}

function fullestTurn(calls: readonly ToolCall[], turnOf: (call: ToolCall) => string): number {
  let fullest = 0;
  for (const call of calls)
    fullest = Math.max(fullest, calls.filter((other) => turnOf(other) === turnOf(call)).length);
  return fullest;
}

/** Keeps the turnless calls few, so every assignment can be tried. */
const fewTurnless = (turns: readonly (readonly RandomCall[])[]) =>
  turns.flat().filter((call) => call.noTurn).length <= 3;

describe('order.together against every turn the turnless calls could have had', () => {
  it('passes only where all pass, fails only where all fail, and is never inconclusive where all pass', () => {
    const group = fc.uniqueArray(fc.constantFrom(...TOOLS), { minLength: 2, maxLength: 3 });
    fc.assert(
      fc.property(randomTurns.filter(fewTurnless), group, (turns, tools) => {
        const trajectory = build(turns);
        const status = statusOf(trajectory, { order: { together: [tools] } });
        const worlds = overWorlds(
          [...turnAssignments(trajectory.calls)].map((turnOf) =>
            togetherHolds(trajectory.calls, tools, turnOf),
          ),
        );
        if (status === 'inconclusive') expect(worlds).not.toBe('pass');
        else expect(status).toBe(worlds);
      }),
      { numRuns: 400 },
    );
  });
});

describe('efficiency.maxCallsPerTurn against every turn the turnless calls could have had', () => {
  it('agrees exactly: pass where all pass, fail where all fail, inconclusive where they differ', () => {
    fc.assert(
      fc.property(randomTurns.filter(fewTurnless), fc.integer({ min: 1, max: 5 }), (turns, max) => {
        const trajectory = build(turns);
        const status = statusOf(trajectory, { efficiency: { maxCallsPerTurn: max } });
        const worlds = overWorlds(
          [...turnAssignments(trajectory.calls)].map(
            (turnOf) => fullestTurn(trajectory.calls, turnOf) <= max,
          ),
        );
        expect(status).toBe(worlds);
      }),
      { numRuns: 400 },
    );
  });
});

describe('milestones.never against every way the unknowns could have turned out', () => {
  it('agrees exactly', () => {
    const milestone = fc.record(
      {
        tool: fc.uniqueArray(fc.constantFrom(...TOOLS), { minLength: 1, maxLength: 2 }),
        outcome: fc.constantFrom('ok', 'error', 'any'),
        match: fc.record({ args: fc.record({ v: fc.constantFrom(0, 1) }) }),
      },
      { requiredKeys: ['tool', 'outcome'] },
    );
    fc.assert(
      fc.property(randomTurns, milestone, (turns, defined) => {
        const trajectory = build(turns);
        const status = statusOf(trajectory, { milestones: { define: { m: defined }, never: ['m'] } });
        // A call may reach m: in no world, in some, or in all (its worlds are independent of the others').
        const reaches = trajectory.calls.map((call) => {
          if (!(defined.tool as readonly string[]).includes(call.tool)) return [false];
          const statuses = call.outcome.status === 'no_result' ? ['ok', 'error'] : [call.outcome.status];
          const values = !call.args.captured ? [0, 1] : [(call.args.value as { v: number }).v];
          return statuses.flatMap((outcome) =>
            values.map(
              (v) =>
                (defined.outcome === 'any' || outcome === defined.outcome) &&
                (defined.match === undefined || defined.match.args.v === v),
            ),
          );
        });
        const always = reaches.some((worlds) => worlds.every(Boolean));
        const sometimes = reaches.some((worlds) => worlds.some(Boolean));
        expect(status).toBe(always ? 'fail' : sometimes ? 'inconclusive' : 'pass');
      }),
      { numRuns: 400 },
    );
  });
});

describe('safety.approval against its definition read literally', () => {
  it('agrees on every random trajectory, with and without an approving tool and unlinked decisions', () => {
    fc.assert(
      fc.property(
        randomTurns,
        fc.constantFrom<readonly string[]>([], ['confirm'], ['confirm', 'b']),
        fc.boolean(),
        (turns, by, unlinked) => {
          const issues: TrajectoryIssue[] = unlinked
            ? [{ kind: 'decision.unlinked', message: 'an allow decision names no call', spanIds: ['d'] }]
            : [];
          const trajectory = build(turns, issues);
          const status = statusOf(trajectory, {
            safety: { approval: [by.length === 0 ? { tool: 'a' } : { tool: 'a', by }] },
          });
          expect(status).toBe(approvalOracle(trajectory, by, unlinked));
        },
      ),
      { numRuns: 600 },
    );
  });
});

function approvalOracle(trajectory: Trajectory, by: readonly string[], unlinked: boolean): Verdict {
  const { calls } = trajectory;
  const anyDecision = unlinked || calls.some((call) => (call.decisions ?? []).length > 0);
  const sameTurn = (x: ToolCall, y: ToolCall) => x.turnId !== undefined && x.turnId === y.turnId;
  let failed = false;
  let doubtful = false;
  for (const call of calls.filter((each) => each.tool === 'a')) {
    const status = call.outcome.status;
    const decisions = (call.decisions ?? []).map((decision) => decision.outcome);
    if (status === 'not_executed') continue;
    if (decisions.includes('deny')) {
      failed = true;
      continue;
    }
    if (status === 'error' || decisions.includes('allow')) continue;
    const approvers = calls.filter((other) => other !== call && by.includes(other.tool));
    const confirmed = approvers.some(
      (other) =>
        other.outcome.status === 'ok' && trajectory.happensBefore(other, call) && !sameTurn(other, call),
    );
    if (confirmed) continue;
    const pendingBefore = approvers.some(
      (other) =>
        other.outcome.status === 'no_result' &&
        calls.indexOf(other) < calls.indexOf(call) &&
        !sameTurn(other, call),
    );
    if (status === 'no_result' || pendingBefore || unlinked || (by.length === 0 && !anyDecision))
      doubtful = true;
    else failed = true;
  }
  if (failed) return 'fail';
  return doubtful ? 'inconclusive' : 'pass';
}
