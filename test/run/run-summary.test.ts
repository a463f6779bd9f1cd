import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Report, Verdict } from '../../src/model/report.js';
import {
  type GatedScenario,
  type RunEvaluation,
  rateText,
  runExitStatus,
  summarizeRun,
  summarizeScenarios,
} from '../../src/run/run-summary.js';

let traceNumber = 0;
function report(scenario: string, verdict: Verdict): Report {
  traceNumber++;
  return {
    traceId: `t${traceNumber}`,
    scenario: { id: scenario },
    verdict,
    pass: verdict === 'pass',
    scores: {},
    findings: [],
    assertions: [],
    stats: { calls: 1, turns: 1, errors: 0, durationMs: 1 },
    toolpathVersion: '0.1.0',
  };
}
const evals = (scenario: string, verdicts: string, extra: Partial<RunEvaluation> = {}): RunEvaluation[] =>
  [...verdicts].map((mark) => ({
    report: report(scenario, mark === '+' ? 'pass' : mark === '?' ? 'inconclusive' : 'fail'),
    ...extra,
  }));

describe('pass rate and gate per scenario', () => {
  it('counts passed over evaluated, inconclusive as not passed', () => {
    const [summary] = summarizeScenarios(evals('s', '++-?'), [{ id: 's' }]);
    expect(summary).toMatchObject({
      id: 's',
      unit: 'trace',
      evaluated: 4,
      passed: 2,
      failed: 1,
      inconclusive: 1,
      passRate: 0.5,
      gate: { gated: false, met: false, reason: 'no gate, so every trace must pass: 2 of 4 traces did not' },
    });
  });

  it('a min pass rate is met at exactly the rate and missed just above it', () => {
    const run = evals('s', '+++-');
    const at = summarizeScenarios(run, [{ id: 's', gate: { minPassRate: 0.75 } }])[0];
    expect(at?.gate).toEqual({
      gated: true,
      met: true,
      minPassRate: 0.75,
      reason: 'pass rate 3/4 = 0.75, at least the min pass rate 0.75',
    });
    const above = summarizeScenarios(run, [{ id: 's', gate: { minPassRate: 0.7500000000000001 } }])[0];
    expect(above?.gate.met).toBe(false);
    expect(above?.gate.reason).toBe('pass rate 3/4 = 0.75, below the min pass rate 0.7500000000000001');
    // A rate four decimals do not say exactly is marked as rounded.
    const sevenths = summarizeScenarios(evals('s', '++++---'), [
      { id: 's', gate: { minPassRate: 4 / 7 } },
    ])[0];
    expect(sevenths?.gate).toMatchObject({
      met: true,
      reason: 'pass rate 4/7 ≈ 0.5714, at least the min pass rate 0.5714285714285714',
    });
  });

  it('a gated scenario that judged nothing misses: no gate holds on nothing', () => {
    const [summary] = summarizeScenarios([], [{ id: 's', gate: { minPassRate: 0 } }]);
    expect(summary).toMatchObject({ evaluated: 0, passRate: null });
    expect(summary?.gate).toMatchObject({
      met: false,
      reason: 'nothing evaluated: no pass rate to hold to the min pass rate 0',
    });
    // Without a gate, nothing judged is nothing failed (the run-level rule covers "nothing at all").
    expect(summarizeScenarios([], [{ id: 's' }])[0]?.gate).toEqual({
      gated: false,
      met: true,
      reason: 'no gate; it applied to none of the traces, so nothing was judged',
    });
  });

  it('judges the traces of a dataset row together: the row fails when one of them fails', () => {
    const run = [
      ...evals('s', '++', { row: 'a' }),
      ...evals('s', '+-', { row: 'b' }),
      ...evals('s', '+?', { row: 'c' }),
    ];
    const [summary] = summarizeScenarios(run, [{ id: 's' }], { dataset: true });
    expect(summary).toMatchObject({ unit: 'row', evaluated: 3, passed: 1, failed: 1, inconclusive: 1 });
  });

  it("counts a row's trials one by one", () => {
    const run = [
      ...evals('s', '+', { row: 'a', trial: 1, task: 'a' }),
      ...evals('s', '-', { row: 'a', trial: 2, task: 'a' }),
      ...evals('s', '++', { row: 'a', trial: 3, task: 'a' }),
    ];
    const [summary] = summarizeScenarios(run, [{ id: 's' }], { dataset: true });
    expect(summary).toMatchObject({ unit: 'trial', evaluated: 3, passed: 2, failed: 1 });
  });

  it('pass^k over tasks, with tasks of too few trials and trials without a task left out and counted', () => {
    const trial = (task: string | undefined, marks: string) =>
      evals('s', marks, task === undefined ? {} : { task });
    // A: 2 of 3 pass, B: 3 of 3, C: one trial, and two traces that name no task.
    const run = [...trial('A', '++-'), ...trial('B', '+++'), ...trial('C', '+'), ...trial(undefined, '+-')];
    const gate = { passK: { k: 2, min: 0.6 }, trialsBy: { attribute: 'task.id' } };
    const [summary] = summarizeScenarios(run, [{ id: 's', gate }]);
    // A: C(2,2)/C(3,2) = 1/3, B: 1; mean 2/3.
    expect(summary?.gate.passK).toEqual({
      k: 2,
      value: 2 / 3,
      tasks: 2,
      leftOut: 1,
      noTask: 2,
      min: 0.6,
      met: true,
      trialsBy: 'task.id',
    });
    expect(summary?.gate.reason).toBe(
      'pass^2 ≈ 0.6667 over 2 tasks, at least the min 0.6 (1 task with fewer than 2 trials left out; 2 trials with no task left out (no single task.id attribute))',
    );
    const none = summarizeScenarios(trial(undefined, '++'), [
      { id: 's', gate: { passK: { k: 2, min: 0 } } },
    ])[0];
    expect(none?.gate).toMatchObject({ met: false });
    expect(none?.gate.reason).toBe(
      'pass^2: no task has 2 trials (2 trials with no task left out (not in a dataset row; group traces with gate.trialsBy))',
    );
  });

  it('both gates must hold when both are given', () => {
    const run = [...evals('s', '++', { task: 'A' }), ...evals('s', '+-', { task: 'B' })];
    const both = { minPassRate: 0.75, passK: { k: 2, min: 0.5 } };
    const [summary] = summarizeScenarios(run, [{ id: 's', gate: both }]);
    // pass rate 3/4 holds; pass^2 = (1 + 0) / 2 = 0.5 holds.
    expect(summary?.gate.met).toBe(true);
    const stricter = summarizeScenarios(run, [{ id: 's', gate: { ...both, passK: { k: 2, min: 0.51 } } }])[0];
    expect(stricter?.gate).toMatchObject({
      met: false,
      minPassRate: 0.75,
      passK: { met: false, value: 0.5 },
    });
    expect(stricter?.gate.reason).toBe(
      'pass rate 3/4 = 0.75, at least the min pass rate 0.75; pass^2 = 0.5 over 2 tasks, below the min 0.51',
    );
  });

  it('keeps the order of the scenarios given, and adds any only the reports name', () => {
    const summaries = summarizeScenarios(
      [...evals('b', '+'), ...evals('c', '+')],
      [{ id: 'a' }, { id: 'b' }],
    );
    expect(summaries.map((s) => s.id)).toEqual(['a', 'b', 'c']);
  });

  it('rateText says when four decimals are exact', () => {
    expect(rateText(0.6)).toBe('= 0.6');
    expect(rateText(1)).toBe('= 1');
    expect(rateText(2 / 3)).toBe('≈ 0.6667');
  });
});

describe('the exit status of a run', () => {
  const scenarioArb = fc.record({
    id: fc.constantFrom('a', 'b', 'c'),
    gate: fc.option(
      fc.oneof(
        fc.record({ minPassRate: fc.double({ min: 0, max: 1, noNaN: true }) }),
        fc.record({
          passK: fc.record({
            k: fc.integer({ min: 1, max: 3 }),
            min: fc.double({ min: 0, max: 1, noNaN: true }),
          }),
        }),
      ),
      { nil: undefined },
    ),
  });
  const evaluationArb = fc.record({
    scenario: fc.constantFrom('a', 'b', 'c'),
    verdict: fc.constantFrom<Verdict>('pass', 'fail', 'inconclusive'),
    task: fc.option(fc.constantFrom('t1', 't2'), { nil: undefined }),
  });

  it('is 2 on an input error, else 1 on a missed gate or a failure in an ungated scenario, else 0 (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(scenarioArb, { selector: (s) => s.id, maxLength: 3 }),
        fc.array(evaluationArb, { maxLength: 12 }),
        fc.nat({ max: 2 }),
        (scenarios: GatedScenario[], drawn, errors) => {
          const known = new Set(scenarios.map((s) => s.id));
          const run = drawn
            .filter((e) => known.has(e.scenario))
            .map((e) => ({ report: report(e.scenario, e.verdict), ...(e.task && { task: e.task }) }));
          const summary = summarizeRun(run.length, run, scenarios);
          const expected = (() => {
            if (errors > 0) return 2;
            for (const scenario of scenarios) {
              const mine = run.filter((e) => e.report.scenario.id === scenario.id);
              const passed = mine.filter((e) => e.report.verdict === 'pass').length;
              if (!scenario.gate) {
                if (passed < mine.length) return 1;
                continue;
              }
              if (
                scenario.gate.minPassRate !== undefined &&
                (mine.length === 0 || passed / mine.length < scenario.gate.minPassRate)
              )
                return 1;
              const passK = scenario.gate.passK;
              if (passK) {
                const tasks = new Map<string, boolean[]>();
                for (const e of mine)
                  if (e.task) tasks.set(e.task, [...(tasks.get(e.task) ?? []), e.report.verdict === 'pass']);
                const shares = [...tasks.values()]
                  .filter((t) => t.length >= passK.k)
                  .map((t) => {
                    let chance = 1;
                    const c = t.filter(Boolean).length;
                    for (let i = 0; i < passK.k; i++) chance *= (c - i) / (t.length - i);
                    return chance;
                  });
                if (shares.length === 0) return 1;
                if (shares.reduce((x, y) => x + y, 0) / shares.length < passK.min) return 1;
              }
            }
            return 0;
          })();
          expect(runExitStatus(summary, errors)).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is 1 when there were traces and nothing was evaluated at all', () => {
    expect(runExitStatus(summarizeRun(3, [], [{ id: 'a' }]), 0)).toBe(1);
    expect(runExitStatus(summarizeRun(0, [], [{ id: 'a' }]), 0)).toBe(0);
  });
});
