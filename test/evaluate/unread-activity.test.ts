/**
 * While a trajectory shows tool use toolpath did not read, nothing that depends on the calls
 * passes: a pass is inconclusive and says which spans; a failure the calls seen prove stays a
 * failure; the verdict is never `pass`. Checked rule by rule, then over random scenarios and
 * trajectories against the same evaluation without the issue.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { type TrajectoryIssue, UNREAD_TOOL_ACTIVITY } from '../../src/model/trajectory.js';
import { parseScenario, type Scenario, ScenarioError } from '../../src/scenario/scenario.js';
import { buildTrajectory, type StepSpec } from '../helpers/trajectory.js';

const UNREAD: TrajectoryIssue = {
  kind: UNREAD_TOOL_ACTIVITY,
  message: 'the agent used tools toolpath could not read (span 00000000000000aa "Function: refund": ...)',
  spanIds: ['00000000000000aa', '00000000000000bb'],
};

const STEPS: StepSpec[] = ['get_order', ['get_policy', 'kb_query'], 'issue_refund'];

function judged(scenario: unknown, issues: TrajectoryIssue[] = [UNREAD]) {
  const parsed = parseScenario({ id: 'refund', ...(scenario as object) }, 'refund');
  return evaluate(buildTrajectory(STEPS, { issues }), parsed);
}

function statusOf(report: ReturnType<typeof judged>, rule: string) {
  return report.assertions.find((assertion) =>
    report.findings.some((f) => f.assertion === assertion.name && f.rule === rule),
  )?.status;
}

describe('a trajectory with unread tool activity', () => {
  it('turns a pass into an inconclusive result naming the unread spans, and is itself hard and inconclusive', () => {
    const report = judged({ tools: { allowed: ['get_order', 'get_policy', 'kb_query', 'issue_refund'] } });
    expect(report.verdict).toBe('inconclusive');
    expect(report.assertions).toEqual([
      {
        name: 'no_unexpected_tool',
        status: 'inconclusive',
        reason: expect.stringContaining('could not read (spans 00000000000000aa, 00000000000000bb)'),
      },
    ]);
    expect(report.findings.at(-1)).toEqual({
      rule: 'trajectory.unread_tool_activity',
      severity: 'hard',
      inconclusive: true,
      message: UNREAD.message,
      calls: [],
      spans: UNREAD.spanIds,
    });
  });

  it('keeps the failures the calls seen prove: a forbidden tool, a tool off the allowlist, a call after a terminal one', () => {
    const report = judged({
      tools: { allowed: ['get_order', 'get_policy', 'kb_query'], forbidden: ['issue_refund'] },
      order: { terminal: ['get_order'] },
    });
    expect(report.verdict).toBe('fail');
    expect(statusOf(report, 'tools.allowed')).toBe('fail');
    expect(statusOf(report, 'tools.forbidden')).toBe('fail');
    expect(statusOf(report, 'order.terminal')).toBe('fail');
  });

  it('makes a failure for want of a call inconclusive: what is missing may be among the unread calls', () => {
    const report = judged({
      tools: { required: ['send_confirmation'] },
      order: { before: [{ before: 'verify', after: 'issue_refund' }] },
    });
    expect(report.verdict).toBe('inconclusive');
    const required = report.assertions.find((assertion) => assertion.name.includes('send_confirmation'));
    expect(required?.status).toBe('inconclusive');
    expect(required?.reason).toMatch(
      /^send_confirmation was never called.*; but the trace shows tool activity toolpath could not read/,
    );
    expect(
      report.findings.filter((finding) => finding.rule === 'order.before').map((f) => f.inconclusive),
    ).toEqual([true]);
  });

  it('leaves what does not depend on the calls alone (durations), and still never passes', () => {
    const report = judged({ efficiency: { maxDurationMs: 60_000 } });
    expect(report.assertions.map((assertion) => assertion.status)).toEqual(['pass']);
    expect(report.verdict).toBe('inconclusive');
  });

  it('is the same report as without the issue when the trajectory has none', () => {
    const scenario = { tools: { allowed: ['get_order'], required: ['issue_refund'] } };
    const report = judged(scenario, []);
    expect(report.findings.map((finding) => finding.rule)).toEqual(['tools.allowed']);
    expect(report.verdict).toBe('fail');
  });
});

/** Rules whose failures no further call can undo, and rules that do not look at calls. */
const PROVEN = new Set([
  'tools.allowed',
  'tools.forbidden',
  'order.terminal',
  'safety.irreversible',
  'efficiency.budget',
  'efficiency.repeat',
]);
const INDEPENDENT = new Set(['efficiency.duration']);
const TOOLS = ['a', 'b', 'c', 'd'] as const;

const step = fc.oneof(
  fc.constantFrom(...TOOLS),
  fc.uniqueArray(fc.constantFrom(...TOOLS), { minLength: 1, maxLength: 3 }),
);
const tools = fc.uniqueArray(fc.constantFrom(...TOOLS), { maxLength: 4 });
const scenario = fc.record(
  {
    tools: fc.record({ allowed: tools, forbidden: tools, required: tools }, { requiredKeys: [] }),
    order: fc.record(
      {
        before: fc.array(fc.record({ before: fc.constantFrom(...TOOLS), after: fc.constantFrom(...TOOLS) }), {
          maxLength: 2,
        }),
        terminal: tools,
      },
      { requiredKeys: [] },
    ),
    safety: fc.record({ irreversible: tools }, { requiredKeys: [] }),
    efficiency: fc.record(
      { maxCalls: fc.nat(6), maxDurationMs: fc.constantFrom(0, 1_000_000), repeats: fc.constant({ max: 0 }) },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

describe('over random scenarios and trajectories', () => {
  it('never passes; each result is the one without the issue, undecided unless the calls seen prove a failure or it needs no calls', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 6 }), scenario, (steps, sections) => {
        const parsed = scenarioOf(sections);
        fc.pre(parsed !== undefined);
        if (!parsed) return;
        const without = evaluate(buildTrajectory(steps), parsed);
        const withIssue = evaluate(buildTrajectory(steps, { issues: [UNREAD] }), parsed);
        expect(withIssue.verdict).not.toBe('pass');
        if (without.verdict === 'fail' && withIssue.verdict !== 'fail') {
          // Only failures more calls could undo may become undecided.
          const proven = without.findings.filter(
            (f) => !f.inconclusive && f.severity === 'hard' && PROVEN.has(f.rule),
          );
          expect(proven).toEqual([]);
        }
        expect(withIssue.assertions.map((a) => a.name)).toEqual(without.assertions.map((a) => a.name));
        without.assertions.forEach((before, i) => {
          const after = withIssue.assertions[i];
          const rule =
            without.findings.find((f) => f.assertion === before.name)?.rule ?? ruleOfPassing(before.name);
          if (before.status === 'inconclusive' || INDEPENDENT.has(rule)) expect(after).toEqual(before);
          else if (before.status === 'fail' && PROVEN.has(rule)) expect(after).toEqual(before);
          else expect(after?.status).toBe('inconclusive');
        });
      }),
      { numRuns: 300 },
    );
  });
});

/** The scenario, or undefined for one the schema refuses (no rule at all). */
function scenarioOf(sections: object): Scenario | undefined {
  try {
    return parseScenario({ id: 'random', ...sections }, 'random');
  } catch (error) {
    if (error instanceof ScenarioError) return undefined;
    throw error;
  }
}

/** The rule of a passing assertion, from its name (passes make no finding to read it from). */
function ruleOfPassing(name: string): string {
  if (name === 'no_unexpected_tool') return 'tools.allowed';
  if (name.startsWith('expected_tool_calls:')) return 'tools.required';
  if (name.startsWith('efficiency.duration')) return 'efficiency.duration';
  const dot = name.indexOf('[');
  const colon = name.indexOf(':');
  const cut = [dot, colon].filter((at) => at !== -1);
  return cut.length === 0 ? name : name.slice(0, Math.min(...cut));
}
