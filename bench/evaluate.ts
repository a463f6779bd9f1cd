/**
 * How normalizing and evaluating grow with trace size: an agent trace of N tool calls (turns of
 * two parallel calls, each turn shown the previous results) against a 20-assertion scenario.
 * Prints each cost and its ratio to JSON.parse of the same trace's OTLP JSON, measured in the
 * same run (the machine is shared and noisy: ratios, not absolute times, are what to compare).
 * Budget (DESIGN.md): a 1,000-call trajectory against a 20-rule scenario in under 5 ms.
 *
 *   npx tsx bench/evaluate.ts
 */
import { performance } from 'node:perf_hooks';
import { readStoredTraces } from '../src/cli/read-traces.js';
import { evaluate } from '../src/evaluate/evaluate.js';
import type { SpanRecord } from '../src/model/span-record.js';
import type { Trajectory } from '../src/model/trajectory.js';
import { normalizeSpans } from '../src/normalizers/normalize.js';
import { parseScenario } from '../src/scenario/scenario.js';
import { otlpJsonOf, syntheticAgentSpans } from './synthetic-trace.js';

const TOOLS = ['search', 'lookup', 'fetch', 'rank', 'pay', 'notify'];

const scenario = parseScenario(
  {
    id: 'bench',
    allowed_tools: TOOLS,
    expected_tool_calls: TOOLS,
    expected_tool_sequence: [
      { tool: 'search' },
      { tool: 'rank' },
      { tool: 'pay', match: { mode: 'subset', args: { n: 3 } } },
      { tool: 'notify' },
    ],
    tool_call_args: [
      ...TOOLS.map((tool) => ({ tool, match: { mode: 'subset', args: { n: 1 } } })),
      ...TOOLS.slice(0, 3).map((tool) => ({
        tool,
        call_index: 2,
        match: { mode: 'regex', pattern: '"n":\\s*\\d+' },
      })),
      { tool: 'pay', match: { mode: 'exact', args: { n: 3, currency: 'EUR' } } },
    ],
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

console.log('calls   JSON.parse   decode      normalize   evaluate    normalize/parse  evaluate/parse');
for (const calls of [10, 100, 1_000, 10_000]) {
  const spans: SpanRecord[] = syntheticAgentSpans(calls, TOOLS);
  const text = otlpJsonOf(spans);
  const read = readStoredTraces(text, 'bench');
  if (read.input?.format !== 'otlp-json') throw new Error('bench trace did not decode');
  const decoded = read.input.spans;
  const parse = median(() => JSON.parse(text));
  const decode = median(() => readStoredTraces(text, 'bench'));
  const normalize = median(() => normalizeSpans(decoded));
  const [trajectory] = normalizeSpans(decoded);
  if (!trajectory || trajectory.calls.length !== calls) throw new Error(`expected ${calls} calls`);
  // Reachability is computed once per trajectory, on its first query: a live trace is evaluated
  // cold, so each sample evaluates a trajectory normalized beforehand and never queried.
  const fresh = Array.from(
    { length: calls >= 10_000 ? 6 : 40 },
    () => normalizeSpans(decoded)[0] as Trajectory,
  );
  const cold = median(
    () => {
      const next = fresh.pop();
      if (next) evaluate(next, scenario);
    },
    0,
    fresh.length,
  );
  const ms = (x: number) => `${x.toFixed(3).padStart(9)} ms`;
  console.log(
    `${String(calls).padEnd(7)} ${ms(parse)} ${ms(decode)} ${ms(normalize)} ${ms(cold)}   ${(normalize / parse).toFixed(2).padStart(8)}x       ${(cold / parse).toFixed(2).padStart(8)}x`,
  );
}
