/**
 * How normalizing and evaluating grow with trace size: an agent trace of N tool calls (turns of
 * two parallel calls, each turn shown the previous results) against a scenario of 20+ rules over
 * every family, from 10 to 100,000 calls. Printed beside two baselines measured in the same run
 * (the machine is shared and noisy: compare ratios, not absolute times): a bare pass over the
 * calls, and JSON.parse of the trace's OTLP JSON. Times are CPU time (what this process used,
 * its GC threads included), medians. Heap per call: what one normalized and evaluated trajectory
 * keeps (its calls, turns, happens-before and report), after GC, typed arrays included. Then the
 * growth factor per 10x calls of each.
 * Budget (DESIGN.md, Growth): a 1,000-call trajectory against a 20-rule scenario in under 5 ms;
 * normalize and evaluate each grow at most 12x per 10x calls from 1,000 to 100,000 calls; heap
 * per call within 2x from 1,000 to 100,000.
 *
 *   npm run bench        (tsx --expose-gc bench/evaluate.ts)
 */
import { readStoredTraces } from '../src/cli/read-traces.js';
import { evaluate } from '../src/evaluate/evaluate.js';
import type { Trajectory } from '../src/model/trajectory.js';
import { normalizeSpans } from '../src/normalizers/normalize.js';
import { parseScenario } from '../src/scenario/scenario.js';
import { otlpJsonOf, syntheticAgentSpans } from './synthetic-trace.js';

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

function medianOf(samples: number[]): number {
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1] as number;
}

/** Median CPU time of `run`: at least `minSamples`, then more until `minMs` of samples (at most 200). */
function median(run: () => void, minSamples = 5, minMs = 300): number {
  const samples: number[] = [];
  let total = 0;
  while (samples.length < minSamples || (total < minMs && samples.length < 200)) {
    const ms = cpuMs(run);
    samples.push(ms);
    total += ms;
  }
  return medianOf(samples);
}

/** Median CPU time of evaluating freshly normalized trajectories (after a few untimed warm-up rounds). */
function coldEvaluation(spans: Parameters<typeof normalizeSpans>[0], samples: number): number {
  const times: number[] = [];
  for (let i = 0; i < samples + 3; i++) {
    const [trajectory] = normalizeSpans(spans);
    if (!trajectory) throw new Error('no trajectory');
    const ms = cpuMs(() => evaluate(trajectory, BENCH_SCENARIO));
    if (i >= 3) times.push(ms);
  }
  return medianOf(times);
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

/**
 * Bytes per call that normalized and evaluated trajectories keep, their reports included: three
 * of them held at once, after one warm-up (compiled code and caches stay out of the count).
 */
function heapPerCall(spans: Parameters<typeof normalizeSpans>[0], calls: number): number {
  const judged = () => {
    const [trajectory] = normalizeSpans(spans);
    if (!trajectory) throw new Error('no trajectory');
    return { trajectory, report: evaluate(trajectory, BENCH_SCENARIO) };
  };
  judged();
  const before = heldBytes();
  const held = [judged(), judged(), judged()];
  const after = heldBytes();
  if (held.some(({ trajectory, report }) => report.stats.calls !== trajectory.calls.length))
    throw new Error('a report of another trajectory');
  return (after - before) / (held.length * calls);
}

/** The cheapest thing any evaluation must do: look at every call once. */
function barePass(trajectory: Trajectory): number {
  let touched = 0;
  for (const call of trajectory.calls) touched += call.tool.length + (call.args.captured ? 1 : 0);
  return touched;
}

interface Row {
  calls: number;
  normalize: number;
  evaluate: number;
  heapPerCall: number;
}

const ms = (x: number) => `${x.toFixed(3).padStart(9)} ms`;
const ratio = (x: number) => `${x.toFixed(1).padStart(6)}x`;
const growth = (x: number | undefined) => (x === undefined ? ''.padStart(6) : `${x.toFixed(1).padStart(5)}x`);
console.log(
  `scenario: ${BENCH_SCENARIO.id}, ${Object.keys(BENCH_SCENARIO.rules).length} families; CPU time, medians; heap: bytes a trajectory and its report keep after GC\n` +
    'calls     bare pass    JSON.parse     normalize      evaluate  heap/call  eval/parse norm/parse  growth per 10x: normalize evaluate heap/call',
);
const rows: Row[] = [];
for (const calls of [10, 100, 1_000, 10_000, 100_000]) {
  const big = calls >= 10_000;
  const text = otlpJsonOf(syntheticAgentSpans(calls, TOOLS));
  const read = readStoredTraces(text, 'bench');
  if (read.input?.format !== 'otlp-json') throw new Error('bench trace did not decode');
  const decoded = read.input.spans;
  const parse = median(() => JSON.parse(text), big ? 3 : 5);
  const normalize = median(() => normalizeSpans(decoded), big ? 5 : 5);
  const [sample] = normalizeSpans(decoded);
  if (!sample || sample.calls.length !== calls) throw new Error(`expected ${calls} calls`);
  const report = evaluate(sample, BENCH_SCENARIO);
  if (report.assertions.length < 20) throw new Error(`only ${report.assertions.length} rules ran`);
  const bare = median(() => barePass(sample));
  // Reachability is computed once per trajectory, on its first query: a live trace is normalized
  // and then evaluated cold. Each sample does the same, timing the evaluation alone.
  const cold = coldEvaluation(decoded, calls >= 100_000 ? 5 : big ? 8 : 40);
  const heap = heapPerCall(decoded, calls);
  const previous = rows[rows.length - 1];
  rows.push({ calls, normalize, evaluate: cold, heapPerCall: heap });
  console.log(
    `${calls.toLocaleString('en-US').padEnd(7)} ${ms(bare)} ${ms(parse)} ${ms(normalize)} ${ms(cold)} ${`${heap.toFixed(0)} B`.padStart(10)}` +
      `  ${ratio(cold / parse)}    ${ratio(normalize / parse)}                  ${growth(previous && normalize / previous.normalize)}   ${growth(previous && cold / previous.evaluate)}    ${growth(previous && heap / previous.heapPerCall)}`,
  );
}

const at = (calls: number) => rows.find((row) => row.calls === calls) as Row;
const steps = [
  [at(1_000), at(10_000)],
  [at(10_000), at(100_000)],
] as const;
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
const growths = (key: 'normalize' | 'evaluate') => steps.map(([from, to]) => to[key] / from[key]);
const normalizeGrowth = growths('normalize');
const evaluateGrowth = growths('evaluate');
const heapRatio = at(100_000).heapPerCall / at(1_000).heapPerCall;
const listed = (factors: number[]) => factors.map((f) => `${f.toFixed(1)}x`).join(', ');
console.log(
  `\nbudget (DESIGN.md, Growth): 1,000 calls evaluated in under 5 ms: ${at(1_000).evaluate.toFixed(2)} ms, ${met(at(1_000).evaluate < 5)}; ` +
    `at most 12x per 10x from 1,000 to 100,000 calls: normalize ${listed(normalizeGrowth)}, ${met(normalizeGrowth.every((f) => f <= 12))}; ` +
    `evaluate ${listed(evaluateGrowth)}, ${met(evaluateGrowth.every((f) => f <= 12))}; ` +
    `heap per call within 2x from 1,000 to 100,000: ${heapRatio.toFixed(2)}x, ${met(heapRatio <= 2 && heapRatio >= 0.5)}`,
);
