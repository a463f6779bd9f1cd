/**
 * How normalizing and evaluating grow with trace size: an agent trace of N tool calls (turns of
 * two parallel calls, each turn shown the previous results) against a scenario of 20+ rules over
 * every family. Printed beside two baselines measured in the same run (the machine is shared and
 * noisy: compare ratios, not absolute times): a bare pass over the calls, and JSON.parse of the
 * trace's OTLP JSON. Then the growth factor of evaluation per 10x calls.
 * Budget (DESIGN.md): a 1,000-call trajectory against a 20-rule scenario in under 5 ms.
 *
 *   npx tsx bench/evaluate.ts
 */
import { performance } from 'node:perf_hooks';
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

function median(run: () => void, minMs = 300, maxSamples = 200): number {
  const samples: number[] = [];
  const until = performance.now() + minMs;
  while (
    samples.length < Math.min(5, maxSamples) ||
    (performance.now() < until && samples.length < maxSamples)
  ) {
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1] as number;
}

/** Median time of evaluating freshly normalized trajectories (after a few untimed warm-up rounds). */
function coldEvaluation(spans: Parameters<typeof normalizeSpans>[0], samples: number): number {
  const times: number[] = [];
  for (let i = 0; i < samples + 3; i++) {
    const [trajectory] = normalizeSpans(spans);
    if (!trajectory) throw new Error('no trajectory');
    const start = performance.now();
    evaluate(trajectory, BENCH_SCENARIO);
    if (i >= 3) times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1] as number;
}

/** The cheapest thing any evaluation must do: look at every call once. */
function barePass(trajectory: Trajectory): number {
  let touched = 0;
  for (const call of trajectory.calls) touched += call.tool.length + (call.args.captured ? 1 : 0);
  return touched;
}

const ms = (x: number) => `${x.toFixed(3).padStart(9)} ms`;
const ratio = (x: number) => `${x.toFixed(1).padStart(8)}x`;
console.log(
  `scenario: ${BENCH_SCENARIO.id}, ${Object.keys(BENCH_SCENARIO.rules).length} families\n` +
    'calls   bare pass     JSON.parse    normalize     evaluate      eval/bare  eval/parse  norm/parse  eval growth',
);
let previous: number | undefined;
for (const calls of [10, 100, 1_000, 10_000]) {
  const text = otlpJsonOf(syntheticAgentSpans(calls, TOOLS));
  const read = readStoredTraces(text, 'bench');
  if (read.input?.format !== 'otlp-json') throw new Error('bench trace did not decode');
  const decoded = read.input.spans;
  const parse = median(() => JSON.parse(text));
  const normalize = median(() => normalizeSpans(decoded));
  const [sample] = normalizeSpans(decoded);
  if (!sample || sample.calls.length !== calls) throw new Error(`expected ${calls} calls`);
  const report = evaluate(sample, BENCH_SCENARIO);
  if (report.assertions.length < 20) throw new Error(`only ${report.assertions.length} rules ran`);
  const bare = median(() => barePass(sample));
  // Reachability is computed once per trajectory, on its first query: a live trace is normalized
  // and then evaluated cold. Each sample does the same, timing the evaluation alone.
  const cold = coldEvaluation(decoded, calls >= 10_000 ? 8 : 40);
  const growth = previous === undefined ? '' : `${(cold / previous).toFixed(1)}x per 10x`;
  previous = cold;
  console.log(
    `${String(calls).padEnd(7)} ${ms(bare)} ${ms(parse)} ${ms(normalize)} ${ms(cold)}  ${ratio(cold / bare)} ${ratio(cold / parse)} ${ratio(normalize / parse)}  ${growth}`,
  );
}
