import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { OutcomeResult } from '../../src/evaluate/outcome-hooks.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { buildTrajectory } from '../helpers/trajectory.js';

/** A refund scenario whose trajectory rules pass on {@link refundRun}, plus outcome hooks. */
const scenarioWith = (outcome: unknown, extra: Record<string, unknown> = {}) =>
  parseScenario(
    { id: 'support.refund', tools: { required: ['issue_refund'] }, outcome, ...extra },
    'refund.yaml',
  );

const refundRun = () => buildTrajectory(['get_order', 'issue_refund']);

const LEDGER = [{ name: 'ledger', command: './check-ledger.sh' }];

describe('outcome hooks in evaluate: supplied results', () => {
  it('a passing hook is an assertion outcome:<name> under the outcome dimension, with no finding', () => {
    const report = evaluate(refundRun(), scenarioWith(LEDGER), { outcomes: { ledger: { status: 'pass' } } });
    expect(report.verdict).toBe('pass');
    expect(report.scores).toEqual({ structure: 1, outcome: 1 });
    expect(report.assertions).toContainEqual({ name: 'outcome:ledger', status: 'pass', reason: '' });
    expect(report.findings).toEqual([]);
  });

  it('a failing hook is a hard finding that fails the verdict, whatever the trajectory says', () => {
    const report = evaluate(refundRun(), scenarioWith(LEDGER), {
      outcomes: { ledger: { status: 'fail', message: 'refund R-1 is not in the ledger' } },
    });
    expect(report.verdict).toBe('fail');
    expect(report.pass).toBe(false);
    expect(report.scores).toEqual({ structure: 1, outcome: 0 });
    expect(report.findings).toEqual([
      {
        rule: 'outcome.check',
        severity: 'hard',
        message: 'outcome hook ledger failed: refund R-1 is not in the ledger',
        calls: [],
        spans: [],
        assertion: 'outcome:ledger',
      },
    ]);
  });

  it('a failing hook softened to a warning (by family or rule id) only lowers the outcome score', () => {
    for (const severity of [{ outcome: 'warning' }, { 'outcome.check': 'warning' }]) {
      const report = evaluate(refundRun(), scenarioWith(LEDGER, { severity }), {
        outcomes: { ledger: { status: 'fail', message: 'missing' } },
      });
      expect(report.verdict, JSON.stringify(severity)).toBe('pass');
      expect(report.scores.outcome).toBe(0);
      expect(report.findings.map((finding) => [finding.rule, finding.severity])).toEqual([
        ['outcome.check', 'warning'],
      ]);
    }
  });

  it('a hook that could not decide makes a passing trajectory inconclusive, with its reason', () => {
    const report = evaluate(refundRun(), scenarioWith(LEDGER), {
      outcomes: { ledger: { status: 'inconclusive', message: 'timed out after 300 ms' } },
    });
    expect(report.verdict).toBe('inconclusive');
    expect(report.findings).toEqual([
      expect.objectContaining({
        rule: 'outcome.check',
        inconclusive: true,
        message: 'outcome hook ledger could not decide: timed out after 300 ms',
      }),
    ]);
  });

  it('a trajectory failure and an outcome failure are two findings in two dimensions', () => {
    const report = evaluate(buildTrajectory(['get_order']), scenarioWith(LEDGER), {
      outcomes: { ledger: { status: 'fail', message: 'no refund' } },
    });
    expect(report.scores).toEqual({ structure: 0, outcome: 0 });
    expect(report.findings.map((finding) => finding.rule)).toEqual(['tools.required', 'outcome.check']);
  });

  it('several hooks report in the scenario order and share the outcome score', () => {
    const hooks = [{ name: 'ledger' }, { name: 'outbox' }, { name: 'crm' }];
    const report = evaluate(refundRun(), scenarioWith(hooks), {
      outcomes: { crm: { status: 'pass' }, ledger: { status: 'pass' }, outbox: { status: 'fail' } },
    });
    expect(report.assertions.filter((a) => a.name.startsWith('outcome:')).map((a) => a.name)).toEqual([
      'outcome:ledger',
      'outcome:outbox',
      'outcome:crm',
    ]);
    expect(report.scores.outcome).toBeCloseTo(2 / 3);
    expect(report.findings.map((finding) => finding.message)).toEqual([
      'outcome hook outbox failed (it gave no message)',
    ]);
  });
});

describe('outcome hooks in evaluate: no result', () => {
  it('a hook with no command and no result: "no check supplied", inconclusive', () => {
    const report = evaluate(refundRun(), scenarioWith([{ name: 'ledger' }]));
    expect(report.verdict).toBe('inconclusive');
    expect(report.assertions).toContainEqual({
      name: 'outcome:ledger',
      status: 'inconclusive',
      reason:
        'no check supplied for outcome hook ledger: give it a command, or a function to evaluateWithOutcomes',
    });
  });

  it('a hook whose command was not run (evaluate alone): inconclusive, saying where it runs', () => {
    const report = evaluate(refundRun(), scenarioWith(LEDGER), { outcomes: { other: { status: 'pass' } } });
    expect(report.verdict).toBe('inconclusive');
    expect(report.findings[0]?.message).toBe(
      'outcome hook ledger was not run: its command runs under toolpath eval or evaluateWithOutcomes, not evaluate alone',
    );
  });

  it("a hook named like an Object.prototype key does not find the prototype's member", () => {
    const report = evaluate(refundRun(), scenarioWith([{ name: 'constructor' }, { name: 'toString' }]), {
      outcomes: {},
    });
    expect(report.assertions.filter((a) => a.name.startsWith('outcome:')).map((a) => a.status)).toEqual([
      'inconclusive',
      'inconclusive',
    ]);
  });

  it('an unusable result (from untyped code) is inconclusive with what it was, never a throw', () => {
    const circular: Record<string, unknown> = { status: 'passed' };
    circular.self = circular;
    const cases: [unknown, string][] = [
      [null, 'null'],
      [42, '42'],
      [{ status: 'ok' }, '{"status":"ok"}'],
      [{ status: 'fail', message: 7 }, '{"status":"fail","message":7}'],
      [{ status: 'bogus', big: 1n }, 'object'],
      [circular, 'object'],
    ];
    for (const [given, shown] of cases) {
      const outcomes = { ledger: given } as unknown as Record<string, OutcomeResult>;
      const report = evaluate(refundRun(), scenarioWith(LEDGER), { outcomes });
      expect(report.findings[0]?.message, shown).toBe(
        `outcome hook ledger gave an unusable result ${shown}; expected { status: pass | fail | inconclusive, message?: string }`,
      );
      expect(report.verdict).toBe('inconclusive');
    }
  });

  it('a blank message counts as none, and a long one is cut to 500 characters', () => {
    const blank = evaluate(refundRun(), scenarioWith(LEDGER), {
      outcomes: { ledger: { status: 'inconclusive', message: '  \n ' } },
    });
    expect(blank.findings[0]?.message).toBe('outcome hook ledger could not decide (it gave no message)');
    const long = evaluate(refundRun(), scenarioWith(LEDGER), {
      outcomes: { ledger: { status: 'fail', message: 'x'.repeat(10_000) } },
    });
    const message = long.findings[0]?.message ?? '';
    expect(message).toBe(`outcome hook ledger failed: ${'x'.repeat(499)}…`);
  });

  it('a scenario with only an outcome section loads and evaluates an empty trajectory', () => {
    const scenario = parseScenario({ outcome: [{ name: 'ledger' }] }, 'only-outcome.json');
    const report = evaluate(buildTrajectory([]), scenario, { outcomes: { ledger: { status: 'pass' } } });
    expect(report).toMatchObject({ verdict: 'pass', scores: { outcome: 1 }, findings: [] });
  });
});

describe('the outcome section of a scenario', () => {
  it('defaults timeoutMs to 10000 and keeps the command', () => {
    const scenario = scenarioWith([
      { name: 'ledger', command: 'true' },
      { name: 'outbox', timeoutMs: 300 },
    ]);
    expect(scenario.rules.outcome).toEqual([
      { name: 'ledger', command: 'true', timeoutMs: 10_000 },
      { name: 'outbox', timeoutMs: 300 },
    ]);
  });

  it.each([
    [[{ name: 'a' }, { name: 'a' }], 'outcome[1].name: duplicate outcome hook name "a"'],
    [[{ command: 'true' }], 'outcome[0].name: expected a string; the key is missing'],
    [[{ name: '' }], 'outcome[0].name: expected a non-empty string; got ""'],
    [[{ name: 'a', timeoutMs: 0 }], 'outcome[0].timeoutMs: expected an integer >= 1; got 0'],
    [[{ name: 'a', timeout: 5 }], 'outcome[0]: unknown key "timeout"'],
    [[{ name: 'a', timeoutMs: 3_600_001 }], 'outcome[0].timeoutMs: Too big: expected number to be <=3600000'],
  ])('rejects %j', (outcome, problem) => {
    expect(() => scenarioWith(outcome)).toThrow(problem);
  });
});

describe('outcome hooks decide the verdict like any hard rule (property)', () => {
  const status = fc.constantFrom<OutcomeResult['status'] | 'missing'>(
    'pass',
    'fail',
    'inconclusive',
    'missing',
  );

  it('fail if any hook failed, else inconclusive if any undecided, else pass; the same every time', () => {
    fc.assert(
      fc.property(fc.array(status, { minLength: 1, maxLength: 6 }), (statuses) => {
        const hooks = statuses.map((_, index) => ({ name: `h${index}` }));
        const outcomes: Record<string, OutcomeResult> = {};
        statuses.forEach((given, index) => {
          if (given !== 'missing') outcomes[`h${index}`] = { status: given };
        });
        const scenario = scenarioWith(hooks);
        const report = evaluate(refundRun(), scenario, { outcomes });
        const expected = statuses.includes('fail')
          ? 'fail'
          : statuses.some((given) => given !== 'pass')
            ? 'inconclusive'
            : 'pass';
        expect(report.verdict).toBe(expected);
        expect(report.scores.outcome).toBe(
          statuses.filter((given) => given === 'pass').length / statuses.length,
        );
        expect(evaluate(refundRun(), scenario, { outcomes })).toEqual(report);
      }),
    );
  });
});
