/**
 * Properties of the reference family, on small random trajectories: tools from a 3-letter
 * alphabet and arguments from a tiny domain, so duplicates and near-misses are common.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceFamily, trajectoryTurns } from '../../src/evaluate/reference.js';
import { classifyPair, comparePair } from '../../src/evaluate/reference-args.js';
import type { ReferenceCall } from '../../src/evaluate/reference-messages.js';
import type { JsonValue } from '../../src/model/json.js';
import type { Captured, ToolCall, Trajectory } from '../../src/model/trajectory.js';
import type { JsonObject } from '../../src/scenario/assertions.js';
import type { ReferenceSection } from '../../src/scenario/native.js';
import { buildTrajectory, NOT_CAPTURED } from '../helpers/trajectory.js';

type Mode = ReferenceSection['mode'];
type ArgsMode = ReferenceSection['argsMode'];
type Overrides = ReferenceSection['argsOverrides'];
type Status = 'pass' | 'fail' | 'inconclusive';

const MODES: readonly Mode[] = ['strict', 'unordered', 'subset', 'superset'];
const ARGS_MODES: readonly ArgsMode[] = ['exact', 'ignore', 'subset', 'superset'];
const ARGS: readonly JsonObject[] = [{}, { x: 0 }, { x: 1 }, { x: 1, y: 0 }, { y: 1 }];

/** An actual call: arguments sometimes not captured. */
interface CallSpec {
  tool: string;
  args: JsonObject | typeof NOT_CAPTURED;
}

const tool = fc.constantFrom('a', 'b', 'c');
const capturedCall = fc.record({ tool, args: fc.constantFrom(...ARGS) });
const anyCall: fc.Arbitrary<CallSpec> = fc.record({
  tool,
  args: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom<JsonObject | typeof NOT_CAPTURED>(...ARGS) },
    { weight: 1, arbitrary: fc.constant(NOT_CAPTURED) },
  ),
});
/** A reference call: arguments sometimes left out (any arguments). */
const referenceCall: fc.Arbitrary<ReferenceCall> = fc
  .record({ tool, args: fc.option(fc.constantFrom(...ARGS), { nil: undefined, freq: 5 }) })
  .map(({ tool, args }) => (args === undefined ? { tool } : { tool, args }));
/** At most 3 turns of 1–2 calls: at most 6 calls. */
const turnsOf = <T>(call: fc.Arbitrary<T>) =>
  fc.array(fc.array(call, { minLength: 1, maxLength: 2 }), { maxLength: 3 });
const overrides: fc.Arbitrary<Overrides> = fc.constantFrom<Overrides>(
  undefined,
  { a: 'ignore' },
  { b: ['x'] },
  { c: 'superset', a: ['y'] },
  { a: 'subset', b: 'exact' },
);
const argsMode = fc.constantFrom(...ARGS_MODES);
/**
 * A trajectory and a reference: drawn independently, or the reference derived from the
 * trajectory's calls with small edits (the same call, arguments left out or changed, a call
 * dropped), so that passes, near-misses and inconclusive pairs are all common.
 */
const traceAndReference = fc.oneof(
  fc.record({ steps: turnsOf(anyCall), reference: turnsOf(referenceCall) }),
  fc
    .record({
      steps: turnsOf(anyCall),
      edits: fc.array(fc.constantFrom('same', 'same', 'same', 'omit', 'other', 'drop'), {
        minLength: 6,
        maxLength: 6,
      }),
      others: fc.array(fc.constantFrom(...ARGS), { minLength: 6, maxLength: 6 }),
    })
    .map(({ steps, edits, others }) => {
      let index = 0;
      const reference = steps
        .map((turn) =>
          turn.flatMap((call): ReferenceCall[] => {
            const edit = edits[index];
            const other = others[index++] ?? {};
            if (edit === 'drop') return [];
            if (edit === 'omit') return [{ tool: call.tool }];
            const same = edit === 'same' && call.args !== NOT_CAPTURED;
            return [{ tool: call.tool, args: same ? (call.args as JsonObject) : other }];
          }),
        )
        .filter((turn) => turn.length > 0);
      return { steps, reference };
    }),
);
/** For shuffling: a list of random keys to sort by. */
const shuffleKeys = fc.array(fc.integer(), { minLength: 20, maxLength: 20 });

function statusOf(
  trajectory: Trajectory,
  turns: readonly (readonly ReferenceCall[])[],
  mode: Mode,
  args: ArgsMode,
  argsOverrides?: Overrides,
): Status {
  const section: ReferenceSection = { mode, argsMode: args, turns: turns.map((turn) => [...turn]) };
  if (argsOverrides) section.argsOverrides = argsOverrides;
  const [result] = referenceFamily(trajectory, section);
  if (!result) throw new Error('no result');
  return result.status;
}

/** The trajectory's own turns, as a reference. */
function asReference(trajectory: Trajectory): ReferenceCall[][] {
  return trajectoryTurns(trajectory).map((turn) =>
    turn.map((call) =>
      call.args.captured ? { tool: call.tool, args: call.args.value as JsonObject } : { tool: call.tool },
    ),
  );
}

function shuffle<T>(items: readonly T[], keys: readonly number[]): T[] {
  return items
    .map((item, index) => ({ item, key: keys[index % keys.length] ?? 0, index }))
    .sort((p, q) => p.key - q.key || p.index - q.index)
    .map(({ item }) => item);
}

const flip = (mode: ArgsMode): ArgsMode =>
  mode === 'subset' ? 'superset' : mode === 'superset' ? 'subset' : mode;
function flipOverrides(given: Overrides): Overrides {
  if (!given) return given;
  return Object.fromEntries(
    Object.entries(given).map(([name, mode]) => [name, Array.isArray(mode) ? mode : flip(mode)]),
  ) as Overrides;
}

// ---- the brute-force oracle: an independent pair comparison and every pairing tried --------

type PairStatus = 'match' | 'unknown' | 'mismatch';

function oraclePair(call: CallSpec, reference: ReferenceCall, args: ArgsMode, given: Overrides): PairStatus {
  if (call.tool !== reference.tool || reference.args === undefined) {
    return call.tool === reference.tool ? 'match' : 'mismatch';
  }
  const mode = given?.[call.tool] ?? args;
  if (mode === 'ignore') return 'match';
  if (call.args === NOT_CAPTURED) return 'unknown';
  const actual = call.args;
  const expected = reference.args;
  const same = (key: string) => actual[key] === expected[key];
  const has = (object: JsonObject, key: string) => key in object;
  const holds = Array.isArray(mode)
    ? mode.every(same)
    : mode === 'exact'
      ? Object.keys(actual).length === Object.keys(expected).length &&
        Object.keys(expected).every((key) => has(actual, key) && same(key))
      : mode === 'subset'
        ? Object.keys(actual).every((key) => has(expected, key) && same(key))
        : Object.keys(expected).every((key) => has(actual, key) && same(key));
  return holds ? 'match' : 'mismatch';
}

function permutations(count: number): number[][] {
  if (count === 0) return [[]];
  return permutations(count - 1).flatMap((rest) =>
    Array.from({ length: count }, (_, at) => [...rest.slice(0, at), count - 1, ...rest.slice(at)]),
  );
}

/** Some assignment (a permutation's prefix) pairs every item that must be paired, each pair accepted. */
function pairingExists(
  calls: readonly CallSpec[],
  references: readonly ReferenceCall[],
  mode: Exclude<Mode, 'strict'>,
  accept: (call: CallSpec, reference: ReferenceCall) => boolean,
): boolean {
  if (mode === 'unordered' && calls.length !== references.length) return false;
  if (mode === 'subset') {
    if (calls.length > references.length) return false;
    return permutations(references.length).some((order) =>
      calls.every((call, index) => accept(call, references[order[index] as number] as ReferenceCall)),
    );
  }
  if (references.length > calls.length) return false;
  return permutations(calls.length).some((order) =>
    references.every((reference, index) => accept(calls[order[index] as number] as CallSpec, reference)),
  );
}

function oracleStatus(
  actual: readonly (readonly CallSpec[])[],
  reference: readonly (readonly ReferenceCall[])[],
  mode: Mode,
  args: ArgsMode,
  given: Overrides,
): Status {
  const pair = (call: CallSpec, ref: ReferenceCall) => oraclePair(call, ref, args, given);
  const judge = (
    calls: readonly CallSpec[],
    refs: readonly ReferenceCall[],
    flat: Exclude<Mode, 'strict'>,
  ) =>
    pairingExists(calls, refs, flat, (c, r) => pair(c, r) === 'match')
      ? 'pass'
      : pairingExists(calls, refs, flat, (c, r) => pair(c, r) !== 'mismatch')
        ? 'inconclusive'
        : 'fail';
  if (mode !== 'strict') return judge(actual.flat(), reference.flat(), mode);
  if (actual.length !== reference.length) return 'fail';
  const statuses = actual.map((turn, index) => judge(turn, reference[index] ?? [], 'unordered'));
  return statuses.includes('fail') ? 'fail' : statuses.includes('inconclusive') ? 'inconclusive' : 'pass';
}

/** What a first-fit matcher (agentevals) answers for superset: each reference call takes the first free match. */
function firstFitSuperset(calls: readonly CallSpec[], references: readonly ReferenceCall[], args: ArgsMode) {
  const taken = new Set<number>();
  return references.every((reference) => {
    const index = calls.findIndex(
      (call, at) => !taken.has(at) && oraclePair(call, reference, args, undefined) === 'match',
    );
    taken.add(index);
    return index !== -1;
  });
}

describe('reference properties', () => {
  it('a trajectory always matches itself as a reference, in every mode and argument mode', () => {
    fc.assert(
      fc.property(turnsOf(anyCall), overrides, (steps, given) => {
        const trajectory = buildTrajectory(steps);
        const reference = asReference(trajectory);
        for (const mode of MODES)
          for (const args of ARGS_MODES)
            expect(statusOf(trajectory, reference, mode, args, given)).toBe('pass');
      }),
      { numRuns: 300 },
    );
  });

  it('shuffling calls inside one turn never changes a verdict', () => {
    fc.assert(
      fc.property(
        traceAndReference,
        argsMode,
        overrides,
        shuffleKeys,
        ({ steps, reference }, args, given, keys) => {
          const shuffledSteps = steps.map((turn, index) => shuffle(turn, keys.slice(index)));
          const shuffledReference = reference.map((turn, index) => shuffle(turn, keys.slice(index + 7)));
          for (const mode of MODES) {
            expect(statusOf(buildTrajectory(shuffledSteps), shuffledReference, mode, args, given)).toBe(
              statusOf(buildTrajectory(steps), reference, mode, args, given),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('superset(actual = a, reference = b) equals subset(actual = b, reference = a)', () => {
    fc.assert(
      fc.property(turnsOf(capturedCall), turnsOf(capturedCall), argsMode, overrides, (a, b, args, given) => {
        const superset = statusOf(buildTrajectory(a), b, 'superset', args, given);
        // The argument modes read from the actual call's side, so they flip with the roles.
        const subset = statusOf(buildTrajectory(b), a, 'subset', flip(args), flipOverrides(given));
        expect(subset).toBe(superset);
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with a brute-force search over all pairings', () => {
    fc.assert(
      fc.property(
        traceAndReference,
        fc.constantFrom(...MODES),
        argsMode,
        overrides,
        ({ steps, reference }, mode, args, given) => {
          const expected = oracleStatus(steps, reference, mode, args, given);
          expect(statusOf(buildTrajectory(steps), reference, mode, args, given)).toBe(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('the cheap pair status the matcher uses always equals the explained one reasons use', () => {
    const small: fc.Arbitrary<JsonValue> = fc.constantFrom<JsonValue>(0, 1, 'x', null, true, [1, { k: 0 }]);
    const object: fc.Arbitrary<JsonObject> = fc.dictionary(
      fc.constantFrom('x', 'y', 'k', '__proto__'),
      fc.oneof(small, fc.dictionary(fc.constantFrom('x', 'k'), small)),
      { maxKeys: 3 },
    );
    const captured: fc.Arbitrary<Captured<JsonValue>> = fc.oneof(
      object.map((value) => ({ captured: true as const, value })),
      fc.constantFrom<Captured<JsonValue>>(
        { captured: false },
        { captured: true, value: 5 },
        { captured: true, value: '{"x":', parseError: 'cut' },
      ),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('a', 'b'),
        captured,
        fc.constantFrom('a', 'b'),
        fc.option(object, { nil: undefined }),
        argsMode,
        fc.constantFrom<Overrides>(
          undefined,
          { a: ['x', 'y.k'] },
          { a: ['*.x'] },
          { a: 'ignore', b: 'subset' },
        ),
        (callTool, args, referenceTool, referenceArgs, mode, given) => {
          const call: ToolCall = {
            id: 'c1',
            tool: callTool,
            args,
            result: { captured: false },
            outcome: { status: 'ok' },
            convention: 'test',
          };
          const reference: ReferenceCall =
            referenceArgs === undefined
              ? { tool: referenceTool }
              : { tool: referenceTool, args: referenceArgs };
          const section: ReferenceSection = { mode: 'unordered', argsMode: mode, turns: [] };
          if (given) section.argsOverrides = given;
          expect(classifyPair(call, reference, section)).toBe(comparePair(call, reference, section).status);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('finds pairings a first-fit matcher misses, with duplicate calls', () => {
    const calls: CallSpec[] = [
      { tool: 'a', args: { x: 1 } },
      { tool: 'a', args: { x: 1 } },
      { tool: 'a', args: { y: 1 } },
    ];
    const reference: ReferenceCall[] = [
      { tool: 'a', args: {} },
      { tool: 'a', args: {} },
      { tool: 'a', args: { y: 1 } },
    ];
    // First fit gives the loose reference calls #1 and #2 the first two calls, {y:1} among them,
    // and #3 (y = 1) is left with {x:1}. Pairing #3 with the {y:1} call covers all three.
    const trace = [calls[2], calls[0], calls[1]] as CallSpec[];
    expect(firstFitSuperset(trace, reference, 'superset')).toBe(false);
    expect(oracleStatus([trace], [reference], 'superset', 'superset', undefined)).toBe('pass');
    expect(statusOf(buildTrajectory([trace]), [reference], 'superset', 'superset')).toBe('pass');
    expect(statusOf(buildTrajectory([trace]), [reference], 'unordered', 'superset')).toBe('pass');
    expect(statusOf(buildTrajectory([trace]), [reference], 'strict', 'superset')).toBe('pass');
  });
});
