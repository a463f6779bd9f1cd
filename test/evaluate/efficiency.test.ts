import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { efficiencyFamily } from '../../src/evaluate/efficiency.js';
import type { RuleResult } from '../../src/evaluate/rule.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import { canonicalJson, type JsonValue } from '../../src/model/json.js';
import type { TokenUsage, Trajectory } from '../../src/model/trajectory.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { type EfficiencySection, rulesSchema } from '../../src/scenario/native.js';
import { jsonValue, reorder } from '../helpers/json-arbitraries.js';
import { buildTrajectory, NOT_CAPTURED, type StepSpec } from '../helpers/trajectory.js';

const section = (input: Record<string, unknown>): EfficiencySection =>
  rulesSchema.parse({ efficiency: input }).efficiency as EfficiencySection;

const only = (trajectory: Trajectory, input: Record<string, unknown>): RuleResult => {
  const results = efficiencyFamily(trajectory, section(input));
  expect(results).toHaveLength(1);
  return results[0] as RuleResult;
};
const ids = (result: RuleResult) => result.calls.map((call) => call.id);

const getOrder = { tool: 'get_order', args: { orderId: 'O-17' } };
const policy = { tool: 'get_refund_policy', args: { orderId: 'O-17' } };
const refund = { tool: 'issue_refund', args: { orderId: 'O-17', amount: 40 } };
const confirm = { tool: 'send_confirmation', args: { email: 'sam@example.test', refundId: 'R-9' } };
/** Seed 000's good run, and the same run with the order looked up twice. */
const goodRun = (): StepSpec[] => [getOrder, policy, refund, confirm];
const lookedUpTwice = (): StepSpec[] => [getOrder, getOrder, policy, refund, confirm];

const unavailable = { status: 'error', errorType: 'HTTPError', message: '503 Service Unavailable' } as const;
const invalid = {
  status: 'error',
  errorType: 'ValidationError',
  message: 'amount must be positive',
} as const;

describe('efficiency.budget', () => {
  it('passes within the budget and warns past it, naming the calls over budget', () => {
    expect(only(buildTrajectory(goodRun()), { maxCalls: 4 })).toMatchObject({
      rule: 'efficiency.budget',
      dimension: 'efficiency',
      status: 'pass',
      severity: 'warning',
    });
    const result = only(buildTrajectory([...lookedUpTwice(), 'get_order']), { maxCalls: 4 });
    expect(result).toMatchObject({
      status: 'fail',
      severity: 'warning',
      reason: '6 calls, budget 4 (over budget: calls c5, c6)',
    });
    expect(ids(result)).toEqual(['c5', 'c6']);
  });
});

describe('efficiency.repeat', () => {
  it('warns when a successful lookup is repeated with identical arguments', () => {
    const result = only(buildTrajectory(lookedUpTwice()), { repeats: {} });
    expect(result).toMatchObject({
      rule: 'efficiency.repeat',
      name: 'efficiency.repeat',
      status: 'fail',
      severity: 'warning',
      reason:
        'get_order was called 2 times with identical arguments {"orderId":"O-17"} (calls c1, c2): ' +
        '1 repeat (call c2), at most 0 allowed',
    });
    expect(ids(result)).toEqual(['c1', 'c2']);
    expect(result.alwaysHard).toBeUndefined();
  });

  it('compares canonical JSON: key order does not matter, values do', () => {
    const reordered = buildTrajectory([
      { tool: 'search', args: { q: 'kettle', page: 1 } },
      { tool: 'search', args: { page: 1, q: 'kettle' } },
      { tool: 'search', args: { page: 2, q: 'kettle' } },
    ]);
    expect(only(reordered, { repeats: {} }).reason).toBe(
      'search was called 2 times with identical arguments {"page":1,"q":"kettle"} (calls c1, c2): ' +
        '1 repeat (call c2), at most 0 allowed',
    );
    expect(only(buildTrajectory(goodRun()), { repeats: {} }).status).toBe('pass');
  });

  it('groups exactly the calls with the same tool and canonical arguments (hashes only narrow the comparison)', () => {
    const call = fc.record({
      tool: fc.constantFrom('a', 'b'),
      args: fc.oneof(fc.constantFrom<JsonValue>({ q: 1, n: 'x' }, { n: 'x', q: 1 }, { q: 2 }), jsonValue),
      reordered: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(call, { maxLength: 8 }), (calls) => {
        const steps = calls.map(({ tool, args, reordered }) => ({
          tool,
          args: reordered ? reorder(args) : args,
        }));
        const trajectory = buildTrajectory(steps);
        const result = only(trajectory, { repeats: { max: 0 } });
        // The reference: group by tool and canonical JSON, in the order of each group's first call.
        const groups = new Map<string, string[]>();
        for (const { tool, args, id } of trajectory.calls) {
          const key = `${tool} ${canonicalJson(args.captured ? args.value : null)}`;
          groups.set(key, [...(groups.get(key) ?? []), id]);
        }
        const repeated = [...groups.values()].filter((group) => group.length > 1);
        expect(result.status).toBe(repeated.length > 0 ? 'fail' : 'pass');
        expect(ids(result)).toEqual(repeated.flat());
      }),
    );
  });

  it('allows up to `max` repeats of each distinct call', () => {
    const thrice = buildTrajectory([getOrder, getOrder, getOrder, policy, policy]);
    expect(only(thrice, { repeats: { max: 2 } }).status).toBe('pass');
    expect(only(thrice, { repeats: { max: 1 } }).reason).toBe(
      'get_order was called 3 times with identical arguments {"orderId":"O-17"} (calls c1, c2, c3): ' +
        '2 repeats (calls c2, c3), at most 1 allowed',
    );
  });

  it('leaves a retry after an error to the retry rule, but counts it when no retries are declared', () => {
    const trajectory = buildTrajectory([{ ...refund, outcome: unavailable }, refund]);
    expect(only(trajectory, { repeats: {} }).reason).toBe(
      'issue_refund was called 2 times with identical arguments {"amount":40,"orderId":"O-17"} (calls c1, c2): ' +
        '1 repeat (call c2), at most 0 allowed',
    );
    const [repeat] = efficiencyFamily(trajectory, section({ repeats: {}, retries: { transient: ['503'] } }));
    expect(repeat?.status).toBe('pass');
  });

  it('counts an identical call issued alongside a failing one as a repeat: it did not see the failure', () => {
    const trajectory = buildTrajectory([[{ ...refund, outcome: unavailable }, refund]]);
    const [repeat] = efficiencyFamily(trajectory, section({ repeats: {}, retries: { transient: ['503'] } }));
    expect(repeat?.reason).toBe(
      'issue_refund was called 2 times with identical arguments {"amount":40,"orderId":"O-17"} (calls c1, c2): ' +
        '1 repeat (call c2), at most 0 allowed',
    );
  });

  it('is inconclusive when arguments of a tool called more than once were not captured', () => {
    const trajectory = buildTrajectory([getOrder, { tool: 'get_order', args: NOT_CAPTURED }, policy]);
    expect(only(trajectory, { repeats: {} })).toMatchObject({
      status: 'inconclusive',
      reason:
        'the arguments of get_order (call c2) were not captured, so its repeated calls cannot be told apart',
    });
    const once = buildTrajectory([{ tool: 'get_order', args: NOT_CAPTURED }, policy]);
    expect(only(once, { repeats: {} }).status).toBe('pass');
  });
});

describe('efficiency.retry', () => {
  it('passes a retry after a declared transient 503 (a substring of the message)', () => {
    const trajectory = buildTrajectory([getOrder, { ...refund, outcome: unavailable }, refund, confirm]);
    const result = only(trajectory, { retries: { transient: ['503'] } });
    expect(result).toMatchObject({ rule: 'efficiency.retry', status: 'pass', severity: 'warning' });
    expect(ids(result)).toEqual(['c3']);
    expect(only(trajectory, { retries: { transient: ['HTTPError'] } }).status).toBe('pass');
  });

  it('fails a retry after a permanent validation error, saying what is declared transient', () => {
    const trajectory = buildTrajectory([getOrder, { ...refund, outcome: invalid }, refund]);
    const result = only(trajectory, { retries: { transient: ['503', 'timeout'] } });
    expect(result).toMatchObject({
      status: 'fail',
      severity: 'warning',
      reason:
        'issue_refund (call c3) retried call c2 after a permanent error (ValidationError: amount must be positive); ' +
        'declared transient: 503, timeout',
    });
    expect(ids(result)).toEqual(['c2', 'c3']);
    expect(only(trajectory, { retries: {} }).reason).toBe(
      'issue_refund (call c3) retried call c2 after a permanent error (ValidationError: amount must be positive); ' +
        'no error is declared transient',
    );
    const bare = buildTrajectory([{ ...refund, outcome: { status: 'error' } }, refund]);
    expect(only(bare, { retries: {} }).reason).toBe(
      'issue_refund (call c2) retried call c1 after a permanent error (no error type or message recorded); ' +
        'no error is declared transient',
    );
  });

  it('fails when a call is retried more than `max` times in a row', () => {
    const trajectory = buildTrajectory([
      { ...refund, outcome: unavailable },
      { ...refund, outcome: unavailable },
      refund,
    ]);
    expect(only(trajectory, { retries: { transient: ['503'], max: 2 } }).status).toBe('pass');
    const result = only(trajectory, { retries: { transient: ['503'] } });
    expect(result.reason).toBe(
      'issue_refund (call c1) was retried 2 times (calls c2, c3), at most 1 allowed',
    );
    expect(ids(result)).toEqual(['c1', 'c2', 'c3']);
  });

  it('does not call a changed call a retry: correcting the arguments is fine', () => {
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', args: { amount: -40 }, outcome: invalid },
      { tool: 'issue_refund', args: { amount: 40 } },
    ]);
    expect(only(trajectory, { retries: {} }).status).toBe('pass');
  });

  it('is inconclusive when arguments after a failure were not captured', () => {
    const trajectory = buildTrajectory([
      { ...refund, outcome: invalid },
      { tool: 'issue_refund', args: NOT_CAPTURED },
    ]);
    expect(only(trajectory, { retries: {} })).toMatchObject({
      status: 'inconclusive',
      reason:
        'the arguments of issue_refund (call c2) were not captured, so whether it was retried after an error is unknown',
    });
  });
});

describe('efficiency.duration', () => {
  it("measures the root span, else the first call's start to the last call's end", () => {
    const root = { name: 'invoke_agent support', startTimeUnixNano: 0n, endTimeUnixNano: 812_000_000n };
    const rooted = buildTrajectory(goodRun(), { root });
    expect(only(rooted, { maxDurationMs: 500 })).toMatchObject({
      rule: 'efficiency.duration',
      status: 'fail',
      severity: 'warning',
      reason: '812 ms (root span invoke_agent support), budget 500 ms',
    });
    expect(only(rooted, { maxDurationMs: 812 }).status).toBe('pass');
    // Step k runs from 2k ms to 2k+1 ms: four steps take 7 ms.
    expect(only(buildTrajectory(goodRun()), { maxDurationMs: 5 }).reason).toBe(
      "7 ms (first call's start to last call's end), budget 5 ms",
    );
  });

  it('is inconclusive when the trace records no times', () => {
    expect(only(buildTrajectory([]), { maxDurationMs: 5 })).toMatchObject({
      status: 'inconclusive',
      reason: 'the trace records no start and end times, so its duration is unknown; budget 5 ms',
    });
  });
});

describe('efficiency.tokens', () => {
  const withUsage = (usage: (TokenUsage | undefined)[]): Trajectory => {
    const trajectory = buildTrajectory(usage.map(() => 'step'));
    trajectory.turns.forEach((turn, index) => {
      const used = usage[index];
      if (used) turn.usage = used;
    });
    return trajectory;
  };

  it('sums input and output tokens over the turns', () => {
    const trajectory = withUsage([
      { inputTokens: 400, outputTokens: 100 },
      { inputTokens: 500, outputTokens: 200 },
    ]);
    expect(only(trajectory, { maxTokens: 1200 }).status).toBe('pass');
    expect(only(trajectory, { maxTokens: 1000 })).toMatchObject({
      rule: 'efficiency.tokens',
      status: 'fail',
      severity: 'warning',
      reason: '1200 tokens (900 input, 300 output), budget 1000',
    });
  });

  it('is inconclusive when no turn recorded usage, or when the turns that did stay within budget', () => {
    expect(only(withUsage([undefined, undefined]), { maxTokens: 10 }).reason).toBe(
      'no turn recorded token usage (2 turns); budget 10',
    );
    const partial = withUsage([{ inputTokens: 400, outputTokens: 100 }, undefined, { outputTokens: 50 }]);
    expect(only(partial, { maxTokens: 1000 })).toMatchObject({
      status: 'inconclusive',
      reason:
        '550 tokens (400 input, 150 output) in the 2 of 3 turns that recorded usage, budget 1000; turns t2 recorded none',
    });
    expect(only(partial, { maxTokens: 500 })).toMatchObject({
      status: 'fail',
      reason:
        'at least 550 tokens (400 input, 150 output) in the 2 of 3 turns that recorded usage, budget 500',
    });
  });
});

describe('efficiency family', () => {
  it('reports each budget the section sets, in order, all warnings; nothing for an empty section', () => {
    const results = efficiencyFamily(
      buildTrajectory(lookedUpTwice()),
      section({ maxCalls: 4, repeats: {}, retries: {}, maxDurationMs: 100, maxTokens: 100 }),
    );
    expect(results.map((result) => [result.rule, result.status, result.severity])).toEqual([
      ['efficiency.budget', 'fail', 'warning'],
      ['efficiency.repeat', 'fail', 'warning'],
      ['efficiency.retry', 'pass', 'warning'],
      ['efficiency.duration', 'pass', 'warning'],
      ['efficiency.tokens', 'inconclusive', 'warning'],
    ]);
    expect(efficiencyFamily(buildTrajectory(lookedUpTwice()), section({}))).toEqual([]);
  });
});

describe('efficiency on a captured trace (OTel GenAI SDK refund run: a gateway timeout, then the refund)', () => {
  const file = 'sdk-genai-refund.otlp.json';
  const text = readFileSync(new URL(`../spans/${file}`, import.meta.url), 'utf8');
  const read = readStoredTraces(text, file).input;
  const [trajectory] = normalizeSpans(read?.format === 'otlp-json' ? read.spans : []);
  if (!trajectory) throw new Error(`${file}: no trajectory`);

  it('a retry after the declared timeout is fine and not a repeat; undeclared, it is neither', () => {
    const declared = efficiencyFamily(
      trajectory,
      section({ repeats: {}, retries: { transient: ['PaymentGatewayTimeout'] } }),
    );
    expect(declared.map((result) => result.status)).toEqual(['pass', 'pass']);
    const undeclared = efficiencyFamily(trajectory, section({ retries: {} }));
    expect(undeclared[0]?.reason).toBe(
      'issue_refund (call call_ref_05) retried call call_ref_04 after a permanent error ' +
        '(PaymentGatewayTimeout: payment gateway did not answer within 5000 ms); no error is declared transient',
    );
  });

  it('reads the calls, the root span duration and the token usage of every turn', () => {
    const results = efficiencyFamily(
      trajectory,
      section({ maxCalls: 5, maxDurationMs: 40, maxTokens: 3000 }),
    );
    expect(results.map((result) => result.reason)).toEqual([
      '6 calls, budget 5 (over budget: call call_conf_06)',
      '44.827 ms (root span invoke_agent support-agent), budget 40 ms',
      '3207 tokens (3021 input, 186 output), budget 3000',
    ]);
  });
});
