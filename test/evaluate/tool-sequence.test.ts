import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchSequence, searchSequenceByPairs } from '../../src/evaluate/sequence-search.js';
import { checkToolSequence } from '../../src/evaluate/tool-sequence.js';
import { type CallTiming, type ToolCall, Trajectory } from '../../src/model/trajectory.js';
import type { OrderSection } from '../../src/scenario/native.js';

type SequenceStep = NonNullable<OrderSection['sequence']>['steps'][number];

import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { spanRecord, TRACE_ID, toolSpan } from '../helpers/spans.js';
import { buildTrajectory, type CallSpec, NOT_CAPTURED, type StepSpec } from '../helpers/trajectory.js';

/** Parses `expected_tool_sequence` through the real schema. */
function sequence(steps: unknown[]): SequenceStep[] {
  return parseScenario({ expected_tool_sequence: steps }, 'test.json').rules.order?.sequence?.steps ?? [];
}

const ids = (calls: readonly ToolCall[]) => calls.map((call) => call.id);

describe('tool_sequence', () => {
  it('passes the seed interleaving example: other calls between the steps do not matter', () => {
    const trajectory = buildTrajectory([
      { tool: 'lookup_account', args: { customer_id: 'cus_1' } },
      { tool: 'log_event', args: { event: 'account_viewed' } },
      { tool: 'kb_query', args: { q: 'refund policy' } },
      { tool: 'issue_refund', args: { order_id: 'ord_42' } },
    ]);
    const { result, calls } = checkToolSequence(
      trajectory,
      sequence([{ tool: 'lookup_account' }, { tool: 'issue_refund' }]),
    );
    expect(result).toEqual({ name: 'tool_sequence', status: 'pass', reason: '' });
    expect(ids(calls)).toEqual(['c1', 'c4']);
  });

  it('fails the handoff example when the transfer comes before the fetch, saying how far it got', () => {
    const trajectory = buildTrajectory(['identify_customer', 'transfer_to_agent', 'fetch_case_context']);
    const { result, calls } = checkToolSequence(
      trajectory,
      sequence([
        { tool: 'identify_customer' },
        { tool: 'fetch_case_context' },
        { tool: 'transfer_to_agent' },
      ]),
    );
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'matched 2 of 3 steps: identify_customer (call c1), fetch_case_context (call c3); ' +
        'no transfer_to_agent call after fetch_case_context (call c3): transfer_to_agent was called before it (call c2)',
    );
    expect(ids(calls)).toEqual(['c1', 'c3', 'c2']);
  });

  it('says how far a longer sequence got when a step is never called', () => {
    const trajectory = buildTrajectory(['lookup_account', 'kb_query', 'check_refund_eligibility']);
    const { result } = checkToolSequence(
      trajectory,
      sequence([
        { tool: 'lookup_account' },
        { tool: 'check_refund_eligibility' },
        { tool: 'issue_refund' },
        { tool: 'send_email' },
      ]),
    );
    expect(result.reason).toBe(
      'matched 2 of 4 steps: lookup_account (call c1), check_refund_eligibility (call c3); issue_refund was never called',
    );
  });

  it('does not let two calls issued in parallel in one turn satisfy "A then B"', () => {
    const trajectory = buildTrajectory([['lookup_account', 'issue_refund']]);
    const { result } = checkToolSequence(
      trajectory,
      sequence([{ tool: 'lookup_account' }, { tool: 'issue_refund' }]),
    );
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'matched 1 of 2 steps: lookup_account (call c1); no issue_refund call after lookup_account (call c1): ' +
        'issue_refund was called concurrently with it, not after (call c2)',
    );
    // The same two calls in consecutive turns do satisfy it.
    const sequential = buildTrajectory(['lookup_account', 'issue_refund']);
    expect(
      checkToolSequence(sequential, sequence([{ tool: 'lookup_account' }, { tool: 'issue_refund' }])).result
        .status,
    ).toBe('pass');
  });

  it('does not count a call issued before the previous step finished', () => {
    // lookup_account runs across steps 0..1; issue_refund is issued in step 1, before lookup's result.
    const trajectory = buildTrajectory([{ tool: 'lookup_account', completesAtStep: 1 }, 'issue_refund']);
    const { result } = checkToolSequence(
      trajectory,
      sequence([{ tool: 'lookup_account' }, { tool: 'issue_refund' }]),
    );
    expect(result.status).toBe('fail');
    expect(result.reason).toContain('concurrently with it, not after (call c2)');
  });

  it('checks per-step arguments, and says when the tool came after but with other arguments', () => {
    const steps = sequence([
      { tool: 'lookup_account' },
      { tool: 'issue_refund', match: { mode: 'subset', args: { amount_cents: 5000 } } },
    ]);
    const wrong = buildTrajectory(['lookup_account', { tool: 'issue_refund', args: { amount_cents: 4000 } }]);
    const { result } = checkToolSequence(wrong, steps);
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'matched 1 of 2 steps: lookup_account (call c1); no issue_refund call with the expected arguments ' +
        '{"amount_cents":5000} after lookup_account (call c1): issue_refund was called after it with other ' +
        'arguments (call c2: amount_cents: expected 5000, saw 4000)',
    );
    const retried = buildTrajectory([
      'lookup_account',
      { tool: 'issue_refund', args: { amount_cents: 4000 } },
      { tool: 'issue_refund', args: { amount_cents: 5000 } },
    ]);
    const passed = checkToolSequence(retried, steps);
    expect(passed.result.status).toBe('pass');
    expect(ids(passed.calls)).toEqual(['c1', 'c3']);
  });

  it('explains a first step whose calls all have other arguments', () => {
    const trajectory = buildTrajectory([{ tool: 'issue_refund', args: { amount_cents: 1 } }]);
    const { result } = checkToolSequence(
      trajectory,
      sequence([{ tool: 'issue_refund', match: { mode: 'exact', args: { amount_cents: 5000 } } }]),
    );
    expect(result.reason).toBe(
      'matched 0 of 1 steps; issue_refund was called 1 time, but not with exactly the arguments ' +
        '{"amount_cents":5000}: call c1: amount_cents: expected 5000, saw 1',
    );
  });

  it('needs a distinct call for a repeated step', () => {
    const steps = sequence([{ tool: 'kb_query' }, { tool: 'kb_query' }]);
    const once = checkToolSequence(buildTrajectory(['kb_query']), steps);
    expect(once.result.reason).toBe(
      'matched 1 of 2 steps: kb_query (call c1); no kb_query call after kb_query (call c1): ' +
        'kb_query was called only as the previous step (call c1)',
    );
    expect(checkToolSequence(buildTrajectory(['kb_query', 'kb_query']), steps).result.status).toBe('pass');
  });

  it('finds a chain that greedy first fit misses on a partial order', () => {
    // a1 is first in causal order but still running when b is issued; a2 finished before b.
    const trajectory = buildTrajectory([
      { tool: 'a', completesAtStep: 2, id: 'a1' },
      { tool: 'a', id: 'a2' },
      { tool: 'b', id: 'b' },
    ]);
    expect(ids(trajectory.calls)).toEqual(['a1', 'a2', 'b']);
    const { result, calls } = checkToolSequence(trajectory, sequence([{ tool: 'a' }, { tool: 'b' }]));
    expect(result.status).toBe('pass');
    expect(ids(calls)).toEqual(['a2', 'b']);
  });

  it('is inconclusive when the sequence hinges on a call whose arguments were not captured', () => {
    const steps = sequence([
      { tool: 'lookup_account' },
      { tool: 'issue_refund', match: { mode: 'subset', args: { amount_cents: 5000 } } },
    ]);
    const trajectory = buildTrajectory(['lookup_account', { tool: 'issue_refund', args: NOT_CAPTURED }]);
    const { result, calls } = checkToolSequence(trajectory, steps);
    expect(result.status).toBe('inconclusive');
    expect(result.reason).toBe(
      'could not decide: matched 1 of 2 steps: lookup_account (call c1); the rest holds only if these calls ' +
        'match: issue_refund (call c2) arguments were not captured',
    );
    expect(ids(calls)).toEqual(['c1', 'c2']);
    // Without a per-step match, arguments are not needed at all.
    const plain = sequence([{ tool: 'lookup_account' }, { tool: 'issue_refund' }]);
    expect(checkToolSequence(trajectory, plain).result.status).toBe('pass');
  });

  it('fails rather than stays undecided when even uncaptured calls could not complete it', () => {
    const steps = sequence([
      { tool: 'issue_refund', match: { mode: 'subset', args: { amount_cents: 5000 } } },
      { tool: 'lookup_account' },
    ]);
    const trajectory = buildTrajectory(['lookup_account', { tool: 'issue_refund', args: NOT_CAPTURED }]);
    expect(checkToolSequence(trajectory, steps).result.status).toBe('fail');
  });
});

// ---- property: the dynamic program agrees with brute force over every tuple of calls ----

const TOOLS = ['a', 'b', 'c'] as const;

interface RandomStep {
  tool: (typeof TOOLS)[number];
  v?: number;
}

const callArbitrary = (maxStep: number) =>
  fc.record({
    tool: fc.constantFrom(...TOOLS),
    v: fc.option(fc.integer({ min: 0, max: 1 }), { nil: undefined }), // undefined: not captured
    extra: fc.integer({ min: 0, max: maxStep }),
    noResult: fc.integer({ min: 0, max: 9 }).map((n) => n === 0), // one call in ten never reports back
  });

const trajectoryArbitrary = fc
  .array(fc.array(callArbitrary(2), { minLength: 0, maxLength: 3 }), { minLength: 1, maxLength: 5 })
  .map((groups) =>
    groups.map(
      (group, stepIndex): StepSpec =>
        group.map(
          (call): CallSpec => ({
            tool: call.tool,
            args: call.v === undefined ? NOT_CAPTURED : { v: call.v },
            completesAtStep: stepIndex + call.extra,
            noResult: call.noResult,
          }),
        ),
    ),
  );

const stepsArbitrary = fc.array(
  fc.record({
    tool: fc.constantFrom(...TOOLS),
    v: fc.option(fc.integer({ min: 0, max: 1 }), { nil: undefined }),
  }),
  { minLength: 1, maxLength: 4 },
);

/** Written independently of match-args: a step matches a call by tool, and by `v` when the step asks. */
function stepAccepts(step: RandomStep, call: ToolCall, undecidedCounts: boolean): boolean {
  if (call.tool !== step.tool) return false;
  if (step.v === undefined) return true;
  if (!call.args.captured) return undecidedCounts;
  return (call.args.value as { v: number }).v === step.v;
}

/** Longest prefix of steps some tuple of calls satisfies, trying every tuple. */
function bruteForceReached(
  trajectory: Trajectory,
  steps: readonly RandomStep[],
  undecidedCounts: boolean,
): number {
  let best = 0;
  const extend = (depth: number, previous: ToolCall | undefined): void => {
    best = Math.max(best, depth);
    const step = steps[depth];
    if (!step) return;
    for (const call of trajectory.calls) {
      if (!stepAccepts(step, call, undecidedCounts)) continue;
      if (previous && !trajectory.happensBefore(previous, call)) continue;
      extend(depth + 1, call);
    }
  };
  extend(0, undefined);
  return best;
}

/** Checks a search result against brute force: same reach, and a witness chain that is itself valid. */
function expectSearchAgrees(
  trajectory: Trajectory,
  randomSteps: readonly RandomStep[],
  search: ReturnType<typeof searchSequence>,
): void {
  const certain = bruteForceReached(trajectory, randomSteps, false);
  expect(search.reached).toBe(certain);
  expect(search.chain).toHaveLength(certain);
  search.chain.forEach((call, index) => {
    expect(stepAccepts(randomSteps[index] as RandomStep, call, false)).toBe(true);
    const next = search.chain[index + 1];
    if (next) expect(trajectory.happensBefore(call, next)).toBe(true);
  });
  // follows(): some frontier call happens-before the call, exactly as the relation says.
  for (const call of trajectory.calls) {
    expect(search.follows(call)).toBe(search.frontier.some((end) => trajectory.happensBefore(end, call)));
  }
}

/** Random timings straight into the model, including zero-length calls and calls with no result. */
const timedTrajectoryArbitrary = fc
  .array(
    fc.record({
      tool: fc.constantFrom(...TOOLS),
      v: fc.integer({ min: 0, max: 1 }),
      issuedAt: fc.integer({ min: 0, max: 6 }),
      duration: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    }),
    { maxLength: 7 },
  )
  .map((specs) => {
    const timing = new Map<string, CallTiming>();
    const calls = specs.map((spec, index): ToolCall => {
      const id = `c${index + 1}`;
      const issuedAt = BigInt(spec.issuedAt);
      timing.set(
        id,
        spec.duration === undefined
          ? { issuedAt }
          : { issuedAt, completedAt: issuedAt + BigInt(spec.duration) },
      );
      return {
        id,
        tool: spec.tool,
        args: { captured: true, value: { v: spec.v } },
        result: { captured: false },
        outcome: { status: 'ok' },
        convention: 'test',
      };
    });
    return new Trajectory({ traceId: 't', calls, timing });
  });

describe('tool_sequence property', () => {
  it('agrees with a brute-force search over all index tuples on small random trajectories', () => {
    fc.assert(
      fc.property(trajectoryArbitrary, stepsArbitrary, (steps, randomSteps) => {
        const trajectory = buildTrajectory(steps);
        const parsed = sequence(
          randomSteps.map((step) =>
            step.v === undefined
              ? { tool: step.tool }
              : { tool: step.tool, match: { mode: 'subset', args: { v: step.v } } },
          ),
        );
        const certain = bruteForceReached(trajectory, randomSteps, false);
        const possible = bruteForceReached(trajectory, randomSteps, true);
        const expected =
          certain === randomSteps.length ? 'pass' : possible === randomSteps.length ? 'inconclusive' : 'fail';
        const { result, calls } = checkToolSequence(trajectory, parsed);
        expect(result.status).toBe(expected);
        if (expected === 'pass') expect(calls).toHaveLength(randomSteps.length);

        const accepts = randomSteps.map((step) => (call: ToolCall) => stepAccepts(step, call, false));
        expectSearchAgrees(trajectory, randomSteps, searchSequence(trajectory, accepts));
        expectSearchAgrees(trajectory, randomSteps, searchSequenceByPairs(trajectory, accepts));
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with brute force on arbitrary timings, zero-length calls and calls with no result included', () => {
    fc.assert(
      fc.property(timedTrajectoryArbitrary, stepsArbitrary, (trajectory, randomSteps) => {
        const accepts = randomSteps.map((step) => (call: ToolCall) => stepAccepts(step, call, false));
        expectSearchAgrees(trajectory, randomSteps, searchSequence(trajectory, accepts));
        expectSearchAgrees(trajectory, randomSteps, searchSequenceByPairs(trajectory, accepts));
      }),
      { numRuns: 1000 },
    );
  });

  it('stays fast on a wide parallel batch: 10,000 concurrent calls of one tool', () => {
    const trajectory = buildTrajectory([Array.from({ length: 10_000 }, () => 'kb_query'), 'issue_refund']);
    const started = performance.now();
    const { result } = checkToolSequence(
      trajectory,
      sequence([{ tool: 'kb_query' }, { tool: 'kb_query' }, { tool: 'issue_refund' }]),
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(result.status).toBe('fail');
    expect(result.reason).toMatch(
      /^matched 1 of 3 steps: kb_query \(call c1\); no kb_query call after kb_query \(call c1\): kb_query was called only as the previous step \(calls c1, c2, .*, c10, and 9990 more\)$/,
    );
  });
});

describe('tool_sequence on a causal graph with a branch beside the chain', () => {
  it('finds a -> b although a call concurrent with both is listed between b and d', () => {
    // Turn 1 issues a and c (c starts late and runs long); turn 2 is shown only a and issues b;
    // turn 3 is shown b and issues d. Listing: a, b, c, d; the calls after a are b and d, not a
    // suffix of the listing (c is concurrent with everything).
    const root = spanRecord({
      name: 'invoke_agent x',
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
      end: 100,
    });
    const chat = (start: number, issued: string[], shown: string[]) =>
      spanRecord({
        name: 'chat m',
        parentSpanId: root.spanId,
        start,
        end: start + 1,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': JSON.stringify([
            { role: 'tool', parts: shown.map((id) => ({ type: 'tool_call_response', id, response: 1 })) },
          ]),
          'gen_ai.output.messages': JSON.stringify([
            {
              role: 'assistant',
              parts: issued.map((id) => ({ type: 'tool_call', id, name: id.toUpperCase(), arguments: {} })),
            },
          ]),
        },
      });
    const tool = (id: string, start: number, end: number) =>
      toolSpan(id.toUpperCase(), { parentSpanId: root.spanId, callId: id, start, end });
    const records = [
      root,
      chat(0, ['a', 'c'], []),
      tool('a', 2, 3),
      tool('c', 15, 90),
      chat(10, ['b'], ['a']),
      tool('b', 12, 13),
      chat(20, ['d'], ['b']),
      tool('d', 22, 23),
    ];
    const trajectory = normalizeTrace(TRACE_ID, records);
    if (!trajectory) throw new Error('no trajectory');
    expect(trajectory.calls.map((call) => call.id)).toEqual(['a', 'b', 'c', 'd']);
    for (const steps of [
      ['A', 'B'],
      ['A', 'D'],
      ['A', 'B', 'D'],
    ]) {
      const accepts = steps.map((tool) => (call: ToolCall) => call.tool === tool);
      expect([steps, searchSequence(trajectory, accepts).reached]).toEqual([steps, steps.length]);
    }
    const withC = ['C', 'B'].map((tool) => (call: ToolCall) => call.tool === tool);
    expect(searchSequence(trajectory, withC).reached).toBe(searchSequenceByPairs(trajectory, withC).reached);
  });
});
