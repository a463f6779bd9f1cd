/**
 * How normalizing and evaluating grow with trace size: an agent trace of N tool calls (turns of
 * two parallel calls, each turn shown the previous results) against a scenario of 20+ rules over
 * every family, from 10 to 100,000 calls. Printed beside two baselines measured in the same run
 * (the machine is shared and noisy: compare ratios, not absolute times): a bare pass over the
 * calls, and JSON.parse of the trace's OTLP JSON. Times are CPU time (what this process used,
 * its GC threads included): per round the mean of a few runs back to back, then the median of
 * the rounds (see measure()). Heap per call: what one normalized and evaluated trajectory
 * keeps (its calls, turns, happens-before and report), after GC, typed arrays included. Then the
 * growth factor per 10x calls of each.
 * The sizes are measured in turn within each round, so a change in the machine's load moves them
 * all alike and the growth factors stay comparable.
 * Budget (DESIGN.md, Growth): a 1,000-call trajectory against a 20-rule scenario in under 5 ms;
 * normalize and evaluate each grow at most 12x per 10x calls from 1,000 to 100,000 calls; heap
 * per call within 2x from 1,000 to 100,000.
 *
 * With `shapes`, the same for the other shapes agents make, from 10,000 to 100,000 calls: wide
 * parallel groups, sub-agents nested in calls, agent runs one after another.
 *
 *   npm run bench                 (tsx --expose-gc bench/evaluate.ts)
 *   npm run bench -- shapes
 */

import { evaluate } from '../src/evaluate/evaluate.js';
import { readStoredTraces } from '../src/io/read-traces.js';
import type { SpanRecord } from '../src/model/span-record.js';
import type { Trajectory } from '../src/model/trajectory.js';
import { normalizeSpans } from '../src/normalizers/normalize.js';
import { parseScenario } from '../src/scenario/scenario.js';
import { CHAIN, otlpJsonOf, syntheticAgentSpans, type TraceShape } from './synthetic-trace.js';

const TOOLS = ['search', 'lookup', 'fetch', 'rank', 'pay', 'notify'];
/** 22 rules, every family. */
export const BENCH_SCENARIO = parseScenario(
  {
    id: 'bench',
    tools: {
      allowed: TOOLS,
      forbidden: ['admin_reset'],
      required: ['search', 'pay'],
      counts: { pay: { max: 100_000 } },
    },
    order: {
      before: [
        { before: 'search', after: 'rank' },
        { before: ['lookup', 'fetch'], after: 'pay' },
      ],
      terminal: ['admin_reset'],
      sequence: {
        steps: [
          { tool: 'search' },
          { tool: 'rank' },
          { tool: 'pay', match: { args: { n: 3 } } },
          { tool: 'notify' },
        ],
      },
    },
    arguments: [
      { tool: 'pay', match: { mode: 'superset', args: { n: 1 } } },
      { tool: 'lookup', call: 2, match: { mode: 'regex', pattern: '"n":\\s*\\d+' } },
      {
        tool: 'fetch',
        match: {
          mode: 'schema',
          schema: { type: 'object', properties: { n: { type: 'integer', maximum: 6 } } },
        },
      },
    ],
    grounding: [
      { tool: 'pay', path: 'n', from: { tool: 'lookup', path: 'n' } },
      { tool: 'notify', path: 'n', from: 'any' },
    ],
    safety: { irreversible: ['admin_reset'], tenant: { path: 'tenant', value: 't-1' } },
    efficiency: { maxCalls: 1_000_000, repeats: { max: 1_000_000 }, maxTokens: 10_000_000 },
    milestones: {
      define: { searched: { tool: 'search' }, paid: { tool: 'pay' } },
      requires: { paid: ['searched'] },
      end: ['paid'],
    },
    reference: { mode: 'superset', argsMode: 'ignore', turns: [[{ tool: 'search' }], [{ tool: 'pay' }]] },
  },
  'bench',
);

/** CPU milliseconds `run` takes (user + system, this process). */
function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function medianOf(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] as number;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc)
  throw new Error('bench/evaluate.ts measures heap after GC: run it with --expose-gc (npm run bench does)');

/** Heap and typed-array bytes in use after two full collections. */
function heldBytes(): number {
  gc?.();
  gc?.();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/** One trace to measure: its OTLP JSON text and the spans decoded from it. */
interface Input {
  calls: number;
  text: string;
  spans: SpanRecord[];
}

function input(calls: number, shape: TraceShape): Input {
  const text = otlpJsonOf(syntheticAgentSpans(calls, TOOLS, shape));
  const read = readStoredTraces(text, 'bench');
  if (read.input?.format !== 'otlp-json') throw new Error('bench trace did not decode');
  const [trajectory] = normalizeSpans(read.input.spans);
  if (!trajectory || trajectory.calls.length !== calls) throw new Error(`expected ${calls} calls`);
  const report = evaluate(trajectory, BENCH_SCENARIO);
  if (report.assertions.length < 20) throw new Error(`only ${report.assertions.length} rules ran`);
  return { calls, text, spans: read.input.spans };
}

function normalized(spans: readonly SpanRecord[]): Trajectory {
  const [trajectory] = normalizeSpans(spans);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

/** CPU times of one input: JSON.parse of its text, normalizing, and evaluating (see measure()). */
interface Times {
  parse: number;
  normalize: number;
  evaluate: number;
  /** The median of single evaluations: how long one takes, the collections of others left out. */
  evaluateOnce: number;
}

/**
 * `rounds` rounds over every input in turn, each input `repeats(calls)` times a round; a round's
 * figure for an input is its mean over those repeats, so the collections its allocations cause
 * are counted at every size (a median of single samples would leave out the samples a scavenge
 * fell in at small sizes, where most have none, and count them at large ones, where all have
 * some). Each sample normalizes the spans, then evaluates that fresh trajectory: reachability
 * is computed on a trajectory's first question, and a live trace is normalized and evaluated
 * once. Then as many rounds of JSON.parse alone: the garbage of a 100,000-call parse (hundreds
 * of MB) would otherwise be collected in the samples timed after it. (Collecting it with gc()
 * first is worse: V8 shrinks the young generation after a full collection.)
 */
function measure(inputs: readonly Input[], rounds: number, repeats: (calls: number) => number): Times[] {
  const samples = inputs.map(() => ({
    parse: [] as number[],
    normalize: [] as number[],
    evaluate: [] as number[],
    single: [] as number[],
  }));
  // Round -1 warms up.
  for (let round = -1; round < rounds; round++) {
    inputs.forEach(({ calls, spans }, i) => {
      const times = repeats(calls);
      let normalize = 0;
      let evaluation = 0;
      for (let k = 0; k < times; k++) {
        let trajectory: Trajectory | undefined;
        normalize += cpuMs(() => {
          trajectory = normalized(spans);
        });
        const once = cpuMs(() => evaluate(trajectory as Trajectory, BENCH_SCENARIO));
        evaluation += once;
        if (round >= 0) samples[i]?.single.push(once);
      }
      if (round < 0) return;
      samples[i]?.normalize.push(normalize / times);
      samples[i]?.evaluate.push(evaluation / times);
    });
  }
  for (let round = -1; round < rounds; round++) {
    inputs.forEach(({ calls, text }, i) => {
      const times = repeats(calls);
      let parse = 0;
      for (let k = 0; k < times; k++) parse += cpuMs(() => JSON.parse(text));
      if (round >= 0) samples[i]?.parse.push(parse / times);
    });
  }
  return samples.map((of) => ({
    parse: medianOf(of.parse),
    normalize: medianOf(of.normalize),
    evaluate: medianOf(of.evaluate),
    evaluateOnce: medianOf(of.single),
  }));
}

/**
 * Bytes per call that normalized and evaluated trajectories keep, their reports included: enough
 * of them held at once for 30,000 calls (at least three), after one warm-up (compiled code and
 * caches stay out of the count).
 */
function heapPerCall({ calls, spans }: Input): number {
  const judged = () => {
    const trajectory = normalized(spans);
    return { trajectory, report: evaluate(trajectory, BENCH_SCENARIO) };
  };
  judged();
  const before = heldBytes();
  const held = Array.from({ length: Math.max(3, Math.ceil(30_000 / calls)) }, judged);
  const after = heldBytes();
  if (held.some(({ trajectory, report }) => report.stats.calls !== trajectory.calls.length))
    throw new Error('a report of another trajectory');
  return (after - before) / (held.length * calls);
}

/** The cheapest thing any evaluation must do: look at every call once (median µs-scale CPU time). */
function barePass({ spans }: Input): number {
  const trajectory = normalized(spans);
  const times: number[] = [];
  for (let k = 0; k < 50; k++) {
    times.push(
      cpuMs(() => {
        let touched = 0;
        for (const call of trajectory.calls) touched += call.tool.length + (call.args.captured ? 1 : 0);
        if (touched < 0) throw new Error('unreachable');
      }),
    );
  }
  return medianOf(times);
}

const ms = (x: number) => `${x.toFixed(3).padStart(9)} ms`;
const ratio = (x: number) => `${x.toFixed(1).padStart(6)}x`;
const growth = (x: number | undefined) => (x === undefined ? ''.padStart(6) : `${x.toFixed(1).padStart(5)}x`);
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
const listed = (factors: readonly number[]) => factors.map((f) => `${f.toFixed(1)}x`).join(', ');

const SIZES = [10, 100, 1_000, 10_000, 100_000];
/** Samples per round: about as much time for each size up to 10,000 calls. */
const repeats = (calls: number) => Math.max(1, Math.min(40, Math.round(30_000 / calls)));
const inputs = SIZES.map((calls) => input(calls, CHAIN));
const times = measure(inputs, 7, repeats);
const heap = inputs.map(heapPerCall);
console.log(
  `scenario: ${BENCH_SCENARIO.id}, ${Object.keys(BENCH_SCENARIO.rules).length} families; CPU time, median of 7 rounds of means (sizes in turn); ` +
    'heap: bytes a trajectory and its report keep after GC\n' +
    'calls     bare pass    JSON.parse     normalize      evaluate  heap/call  eval/parse norm/parse  growth per 10x: normalize evaluate heap/call',
);
inputs.forEach((item, i) => {
  const t = times[i] as Times;
  const before = times[i - 1];
  const g = (now: number, then: number | undefined) => growth(then === undefined ? undefined : now / then);
  console.log(
    `${item.calls.toLocaleString('en-US').padEnd(7)} ${ms(barePass(item))} ${ms(t.parse)} ${ms(t.normalize)} ${ms(t.evaluate)} ${`${(heap[i] as number).toFixed(0)} B`.padStart(10)}` +
      `  ${ratio(t.evaluate / t.parse)}    ${ratio(t.normalize / t.parse)}                  ${g(t.normalize, before?.normalize)}   ${g(t.evaluate, before?.evaluate)}    ${g(heap[i] as number, heap[i - 1])}`,
  );
});

const at = (calls: number) => SIZES.indexOf(calls);
const steps = [
  [at(1_000), at(10_000)],
  [at(10_000), at(100_000)],
] as const;
const growths = (key: 'parse' | 'normalize' | 'evaluate') =>
  steps.map(([from, to]) => (times[to] as Times)[key] / (times[from] as Times)[key]);
const normalizeGrowth = growths('normalize');
const evaluateGrowth = growths('evaluate');
// What the machine's caches do to work that is linear by construction, in the same run.
const parseGrowth = growths('parse');
const heapRatio = (heap[at(100_000)] as number) / (heap[at(1_000)] as number);
const thousand = times[at(1_000)] as Times;
console.log(
  `\nbudget (DESIGN.md, Growth): 1,000 calls evaluated in under 5 ms (median of single evaluations): ${thousand.evaluateOnce.toFixed(2)} ms, ` +
    `${met(thousand.evaluateOnce < 5)} (${thousand.evaluate.toFixed(2)} ms with the collections it causes); ` +
    `at most 12x per 10x from 1,000 to 100,000 calls: normalize ${listed(normalizeGrowth)}, ${met(normalizeGrowth.every((f) => f <= 12))}; ` +
    `evaluate ${listed(evaluateGrowth)}, ${met(evaluateGrowth.every((f) => f <= 12))}; ` +
    `heap per call within 2x from 1,000 to 100,000: ${heapRatio.toFixed(2)}x, ${met(heapRatio <= 2 && heapRatio >= 0.5)}`,
);
console.log(
  `beside: JSON.parse of the same traces, linear work, grew ${listed(parseGrowth)} over the same steps in this run`,
);

if (process.argv.includes('shapes')) {
  const shapes: [string, TraceShape][] = [
    ['wide parallel groups (100 calls a turn)', { width: 100 }],
    ['sub-agents nested in calls (2 deep)', { width: 2, nested: { turns: 4, depth: 2 } }],
    ['agent runs one after another (100 calls each)', { width: 2, runOf: 100 }],
  ];
  console.log(
    '\nother shapes, 10,000 -> 100,000 calls (median of 3 rounds)\n' +
      'shape                                              normalize 10k / 100k      growth   evaluate 10k / 100k       growth  heap/call 10k / 100k',
  );
  for (const [name, shape] of shapes) {
    const pair = [input(10_000, shape), input(100_000, shape)];
    const [small, large] = measure(pair, 3, () => 1) as [Times, Times];
    const [heapSmall, heapLarge] = pair.map(heapPerCall) as [number, number];
    console.log(
      `${name.padEnd(50)} ${ms(small.normalize)} ${ms(large.normalize)} ${growth(large.normalize / small.normalize)}  ` +
        `${ms(small.evaluate)} ${ms(large.evaluate)} ${growth(large.evaluate / small.evaluate)}  ${`${heapSmall.toFixed(0)} B`.padStart(8)} ${`${heapLarge.toFixed(0)} B`.padStart(8)}`,
    );
  }
}
