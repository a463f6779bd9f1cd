import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allOfKPass, passHatK, type Trial } from '../../src/run/pass-k.js';
import { describeCorpus } from '../helpers/corpus.js';

/** C(n, k) exactly. */
function binomial(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let result = 1n;
  for (let i = 0; i < k; i++) result = (result * BigInt(n - i)) / BigInt(i + 1);
  return result;
}

/** The oracle: over every k-subset of a task's trials, the share where all pass; averaged over tasks. */
function bruteForcePassHatK(trials: readonly Trial[], k: number): { value: number | null; leftOut: number } {
  const byTask = new Map<string, boolean[]>();
  for (const { task, pass } of trials) byTask.set(task, [...(byTask.get(task) ?? []), pass]);
  const shares: number[] = [];
  let leftOut = 0;
  for (const passes of byTask.values()) {
    if (passes.length < k) {
      leftOut++;
      continue;
    }
    let all = 0;
    let subsets = 0;
    const choose = (start: number, left: number, ok: boolean) => {
      if (left === 0) {
        subsets++;
        if (ok) all++;
        return;
      }
      for (let i = start; i <= passes.length - left; i++)
        choose(i + 1, left - 1, ok && (passes[i] as boolean));
    };
    choose(0, k, true);
    shares.push(all / subsets);
  }
  return {
    value: shares.length === 0 ? null : shares.reduce((a, b) => a + b, 0) / shares.length,
    leftOut,
  };
}

const trials = (task: string, outcomes: string): Trial[] =>
  [...outcomes].map((mark) => ({ task, pass: mark === '+' }));

describe('pass^k', () => {
  // A: 3 of 4 pass, B: 1 of 4, C: 2 of 2, D: one trial.
  const CASE = [...trials('A', '++-+'), ...trials('B', '-+--'), ...trials('C', '++'), ...trials('D', '+')];

  it('equals the formula on a case computed by hand', () => {
    // k=1: (3/4 + 1/4 + 2/2 + 1/1) / 4
    expect(passHatK(CASE, 1)).toEqual({ k: 1, value: 0.75, tasks: 4, leftOut: 0 });
    // k=2: A C(3,2)/C(4,2) = 3/6, B C(1,2)/C(4,2) = 0, C C(2,2)/C(2,2) = 1; D left out
    expect(passHatK(CASE, 2)).toEqual({ k: 2, value: 0.5, tasks: 3, leftOut: 1 });
    // k=3: A C(3,3)/C(4,3) = 1/4, B 0; C and D left out
    expect(passHatK(CASE, 3)).toEqual({ k: 3, value: 0.125, tasks: 2, leftOut: 2 });
    // k=4: A 0 (one failed), B 0
    expect(passHatK(CASE, 4)).toEqual({ k: 4, value: 0, tasks: 2, leftOut: 2 });
    expect(passHatK(CASE, 5)).toEqual({ k: 5, value: null, tasks: 0, leftOut: 4 });
  });

  it('a 60% agent passes four trials in a row far less often than 60% of the time', () => {
    // Every task passes 3 of 5 trials: pass^1 is 0.6, pass^4 is C(3,4)/C(5,4) = 0.
    const sixty = ['a', 'b', 'c'].flatMap((task) => trials(task, '++-+-'));
    expect(passHatK(sixty, 1).value).toBeCloseTo(0.6, 15);
    expect(passHatK(sixty, 2).value).toBeCloseTo(3 / 10, 15);
    expect(passHatK(sixty, 4).value).toBe(0);
  });

  it('agrees with counting every k-subset of trials (fast-check)', () => {
    const trialArb = fc.record({ task: fc.constantFrom('t1', 't2', 't3', 't4'), pass: fc.boolean() });
    fc.assert(
      fc.property(fc.array(trialArb, { maxLength: 40 }), fc.integer({ min: 1, max: 8 }), (list, k) => {
        const got = passHatK(list, k);
        const expected = bruteForcePassHatK(list, k);
        expect(got.leftOut).toBe(expected.leftOut);
        if (expected.value === null) expect(got.value).toBeNull();
        else expect(got.value).toBeCloseTo(expected.value, 12);
      }),
      { numRuns: 300 },
    );
  });

  it('C(c, k) / C(n, k) without building the binomials, exact where they are', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.nat(), fc.nat(), (n, cSeed, kSeed) => {
        const c = cSeed % (n + 1);
        const k = (kSeed % n) + 1;
        const exact = Number((binomial(c, k) * 10n ** 18n) / binomial(n, k)) / 1e18;
        expect(allOfKPass(n, c, k)).toBeCloseTo(exact, 12);
      }),
    );
    // C(100, 50) is far beyond 2^53; the product form still gives 1 for all-pass.
    expect(allOfKPass(100, 100, 50)).toBe(1);
    expect(() => allOfKPass(3, 4, 1)).toThrow(/0 <= c <= n/);
    expect(() => passHatK([], 0)).toThrow(/k must be an integer >= 1/);
  });
});

describeCorpus(
  "pass^k on tau-bench's own per-trial verdicts (../shared/corpus/taubench/verdicts.json)",
  () => {
    type Verdict = { task: number; trial: number; actionsPass: boolean; reward: number };
    const read = async () =>
      Object.values(
        JSON.parse(await readFile('../shared/corpus/taubench/verdicts.json', 'utf8')) as Record<
          string,
          Verdict
        >,
      );

    /** tau-bench's display_metrics, written out independently: comb(c, k) / comb(num_trials, k), exact, averaged. */
    function tauBenchFormula(
      verdicts: readonly Verdict[],
      passed: (v: Verdict) => boolean,
      k: number,
    ): number {
      const numTrials = new Set(verdicts.map((v) => v.trial)).size;
      const c = new Map<number, number>();
      for (const v of verdicts) c.set(v.task, (c.get(v.task) ?? 0) + (passed(v) ? 1 : 0));
      const sum = [...c.values()].reduce((total, count) => total + binomial(count, k), 0n);
      const denominator = binomial(numTrials, k) * BigInt(c.size);
      return Number((sum * 10n ** 18n) / denominator) / 1e18;
    }

    it('holds 4 trials of each of 50 tasks', async () => {
      const verdicts = await read();
      expect(verdicts).toHaveLength(200);
      const perTask = new Map<number, number>();
      for (const v of verdicts) perTask.set(v.task, (perTask.get(v.task) ?? 0) + 1);
      expect(perTask.size).toBe(50);
      expect(new Set(perTask.values())).toEqual(new Set([4]));
    });

    it.each([1, 2, 3, 4])(
      'pass^%i of the action verdicts equals the formula computed independently',
      async (k) => {
        const verdicts = await read();
        const measured = passHatK(
          verdicts.map((v) => ({ task: String(v.task), pass: v.actionsPass })),
          k,
        );
        expect(measured.tasks).toBe(50);
        expect(measured.leftOut).toBe(0);
        expect(measured.value).toBeCloseTo(
          tauBenchFormula(verdicts, (v) => v.actionsPass, k),
          12,
        );
        // The same figures from tau-bench's display_metrics run in Python (math.comb) on these verdicts.
        expect(measured.value).toBeCloseTo([0.44, 0.3, 0.245, 0.22][k - 1] as number, 12);
      },
    );

    it.each([1, 2, 3, 4])(
      'pass^%i of the rewards (reward 1 = success, as tau-bench counts) too',
      async (k) => {
        const verdicts = await read();
        const success = (v: Verdict) => v.reward >= 1 - 1e-6 && v.reward <= 1 + 1e-6;
        const measured = passHatK(
          verdicts.map((v) => ({ task: String(v.task), pass: success(v) })),
          k,
        );
        expect(measured.value).toBeCloseTo(tauBenchFormula(verdicts, success, k), 12);
        expect(measured.value).toBeCloseTo([0.42, 0.2733333333333333, 0.22, 0.2][k - 1] as number, 12);
      },
    );
  },
);
