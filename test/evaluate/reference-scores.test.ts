/**
 * The reference family's `ignore` paths and graded scores (`referenceScores` in the report:
 * precision, recall, F1 under the optimal pairing): examples, then both against a brute-force
 * search over every pairing on small random trajectories.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { referenceFamily, trajectoryTurns } from '../../src/evaluate/reference.js';

import type { ToolCall } from '../../src/model/trajectory.js';
import type { JsonObject } from '../../src/scenario/assertions.js';
import type { ReferenceSection } from '../../src/scenario/native.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { errorOf } from '../helpers/scenario-errors.js';
import { buildTrajectory } from '../helpers/trajectory.js';

const refund = (amount: number, requestId = 'r1') => ({
  tool: 'issue_refund',
  args: { orderId: 'O-17', amount, requestId },
});

function reportOf(reference: Record<string, unknown>, steps: Parameters<typeof buildTrajectory>[0]) {
  return evaluate(buildTrajectory(steps), parseScenario({ reference }, 'refund.yaml'));
}

describe('reference ignore', () => {
  const turns = [[{ tool: 'issue_refund', args: { orderId: 'O-17', amount: 40, requestId: 'r0' } }]];

  it('leaves the paths out of every comparison, in every argument mode and path override', () => {
    expect(reportOf({ mode: 'superset', turns }, [refund(40)]).verdict).toBe('fail');
    for (const argsMode of ['exact', 'subset', 'superset'])
      expect(
        reportOf({ mode: 'superset', argsMode, ignore: ['requestId'], turns }, [refund(40)]).verdict,
      ).toBe('pass');
    const paths = { mode: 'superset', argsOverrides: { issue_refund: ['*'] }, ignore: ['requestId'], turns };
    expect(reportOf(paths, [refund(40)]).verdict).toBe('pass');
    expect(reportOf(paths, [refund(45)]).verdict).toBe('fail');
  });

  it('takes globs, and still says what differs in what is compared', () => {
    const nested = [[{ tool: 'book', args: { flights: [{ number: 'HAT1', price: 10 }] } }]];
    const call = { tool: 'book', args: { flights: [{ number: 'HAT2', price: 99 }] } };
    const report = reportOf({ mode: 'superset', ignore: ['flights.*.price'], turns: nested }, [call]);
    expect(report.findings[0]?.message).toBe(
      'reference call #1 book {"flights":[{"number":"HAT1","price":10}]} has no match; closest: call c1 book ' +
        'flights[0].number: expected "HAT1", saw "HAT2"; matched 0 of 1 reference calls',
    );
  });

  it('is a known key: a typo gets the closest one', () => {
    expect(errorOf({ reference: { mode: 'superset', ignor: ['requestId'], turns } })).toBe(
      'scenario refund.yaml: reference: unknown key "ignor" (did you mean ignore?)',
    );
  });
});

describe('referenceScores', () => {
  const turns = [[refund(40)], [{ tool: 'send_confirmation' }]];

  it('grades the trajectory under the optimal pairing, beside the verdict', () => {
    const report = reportOf({ mode: 'superset', turns }, [refund(40), 'get_order', refund(45)]);
    expect(report.verdict).toBe('fail');
    expect(report.referenceScores).toEqual({ precision: 1 / 3, recall: 1 / 2, f1: 0.4 });
    const all = reportOf({ mode: 'unordered', turns }, [refund(40), 'send_confirmation']);
    expect(all.referenceScores).toEqual({ precision: 1, recall: 1, f1: 1 });
  });

  it('pairs turn by turn in strict mode', () => {
    const strict = reportOf({ mode: 'strict', turns }, ['send_confirmation', refund(40)]);
    expect(strict.verdict).toBe('fail');
    expect(strict.referenceScores).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it('scores an empty side 1, and is absent without a readable reference', () => {
    expect(reportOf({ mode: 'superset', turns: [] }, []).referenceScores).toEqual({
      precision: 1,
      recall: 1,
      f1: 1,
    });
    expect(reportOf({ mode: 'superset', turns }, []).referenceScores).toEqual({
      precision: 1,
      recall: 0,
      f1: 0,
    });
    const unreadable = reportOf({ mode: 'superset', messages: [{ role: 'assistant', tool_calls: 3 }] }, [
      refund(40),
    ]);
    expect(unreadable.referenceScores).toBeUndefined();
    const none = evaluate(buildTrajectory(['x']), parseScenario({ tools: { allowed: ['x'] } }, 'x.yaml'));
    expect(none).not.toHaveProperty('referenceScores');
  });
});

// ---- against a brute-force search ------------------------------------------------------------

const ARGS: readonly JsonObject[] = [{}, { x: 0 }, { x: 1 }, { x: 1, y: 0 }, { y: 1 }];
const tool = fc.constantFrom('a', 'b');
const call = fc.record({ tool, args: fc.constantFrom(...ARGS) });
const referenceCall = fc
  .record({ tool, args: fc.option(fc.constantFrom(...ARGS), { nil: undefined, freq: 4 }) })
  .map(({ tool, args }) => (args === undefined ? { tool } : { tool, args }));
const turnsOf = <T>(item: fc.Arbitrary<T>) =>
  fc.array(fc.array(item, { minLength: 1, maxLength: 2 }), { maxLength: 3 });
type Reference = { tool: string; args?: JsonObject };

function without(args: JsonObject, ignore: boolean): JsonObject {
  if (!ignore) return args;
  const { y: _, ...rest } = args;
  return rest;
}

function fits(call: ToolCall, reference: Reference, argsMode: ReferenceSection['argsMode'], ignore: boolean) {
  if (call.tool !== reference.tool) return false;
  if (reference.args === undefined || argsMode === 'ignore') return true;
  const actual = without(call.args.captured ? (call.args.value as JsonObject) : {}, ignore);
  const expected = without(reference.args, ignore);
  const sameAt = (key: string) => JSON.stringify(actual[key]) === JSON.stringify(expected[key]);
  const within = (inner: JsonObject, outer: JsonObject) =>
    Object.keys(inner).every((key) => Object.hasOwn(outer, key) && sameAt(key));
  if (argsMode === 'exact') return within(actual, expected) && within(expected, actual);
  return argsMode === 'superset' ? within(expected, actual) : within(actual, expected);
}

/** The largest pairing, by trying every assignment of reference calls to calls. */
function largestPairing(
  calls: readonly ToolCall[],
  references: readonly Reference[],
  accept: typeof fits,
  ...rest: [ReferenceSection['argsMode'], boolean]
) {
  const best = (index: number, taken: Set<number>): number => {
    if (index === references.length) return 0;
    let found = best(index + 1, taken);
    calls.forEach((item, at) => {
      if (taken.has(at) || !accept(item, references[index] as Reference, ...rest)) return;
      taken.add(at);
      found = Math.max(found, 1 + best(index + 1, taken));
      taken.delete(at);
    });
    return found;
  };
  return best(0, new Set());
}

describe('reference ignore and scores properties', () => {
  it('agree with a brute-force search over every pairing', () => {
    const modes = fc.constantFrom<ReferenceSection['mode']>('strict', 'unordered', 'subset', 'superset');
    const argsModes = fc.constantFrom<ReferenceSection['argsMode']>('exact', 'subset', 'superset', 'ignore');
    fc.assert(
      fc.property(
        turnsOf(call),
        turnsOf(referenceCall),
        modes,
        argsModes,
        fc.boolean(),
        (steps, turns, mode, argsMode, ignore) => {
          const trajectory = buildTrajectory(steps);
          const section: ReferenceSection = { mode, argsMode, turns };
          if (ignore) section.ignore = ['y'];
          const [result] = referenceFamily(trajectory, section);
          const references = turns.flat();
          const calls = trajectory.calls;
          let paired: number;
          let holds: boolean;
          if (mode === 'strict') {
            const actual = trajectoryTurns(trajectory);
            const shared = Math.min(actual.length, turns.length);
            paired = 0;
            holds = actual.length === turns.length;
            for (let index = 0; index < shared; index++) {
              const inTurn = largestPairing(actual[index] ?? [], turns[index] ?? [], fits, argsMode, ignore);
              paired += inTurn;
              if (inTurn !== (actual[index]?.length ?? 0) || inTurn !== (turns[index]?.length ?? 0))
                holds = false;
            }
          } else {
            paired = largestPairing(calls, references, fits, argsMode, ignore);
            holds =
              mode === 'superset'
                ? paired === references.length
                : mode === 'subset'
                  ? paired === calls.length
                  : paired === references.length && paired === calls.length;
          }
          expect(result?.status).toBe(holds ? 'pass' : 'fail');
          const precision = calls.length === 0 ? 1 : paired / calls.length;
          const recall = references.length === 0 ? 1 : paired / references.length;
          const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
          expect(result?.referenceScores).toEqual({ precision, recall, f1 });
        },
      ),
      { numRuns: 1000 },
    );
  });
});
