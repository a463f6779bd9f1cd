/**
 * What each section of bench/judge.ts's scenario adds to judging one trace: the same 200 traces
 * judged against the scenario cut to one section (tools, order, grounding, safety, efficiency),
 * against one trivial rule, and against the whole scenario, beside JSON.parse of the JSON
 * attributes and normalizeTrace alone. Warm (the same traces again and again), rounds of each
 * taking turns, medians of CPU time per trace. A section's cost is its row minus the trivial
 * rule's; normalizing is the floor every scenario pays.
 *
 *   npx tsx bench/judge-sections.ts
 */
import { TraceJudge } from '../src/judging/trace-judge.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { normalizeTrace } from '../src/normalizers/normalize.js';
import { agentRecords, jsonAttributes } from './agent-records.js';
import { PROCESSOR_SCENARIO } from './processor.js';

const TRACES = 200;
const ROUNDS = 21;
const PER_ROUND = 1_000;

const traces = Array.from({ length: TRACES }, (_, n) => agentRecords(n));
const texts = traces.map(jsonAttributes);

const { id, version, appliesTo, tools, order, grounding, safety, efficiency } = PROCESSOR_SCENARIO;
const head = { id, version, appliesTo };
const scenarios: [string, Readonly<Record<string, unknown>>][] = [
  ['one trivial rule (tools.forbidden)', { ...head, tools: { forbidden: ['no_such_tool'] } }],
  ['tools', { ...head, tools }],
  ['order', { ...head, order }],
  ['grounding', { ...head, grounding }],
  ['safety', { ...head, safety }],
  ['efficiency', { ...head, efficiency }],
  ['the whole scenario', PROCESSOR_SCENARIO],
];

type Contender = [string, (index: number) => void];
const contenders: Contender[] = [
  [
    'JSON.parse of the JSON attributes',
    (index) => {
      for (const text of texts[index] as string[]) JSON.parse(text);
    },
  ],
  [
    'normalizeTrace',
    (index) => {
      const trace = traces[index] as SpanRecord[];
      normalizeTrace((trace[0] as SpanRecord).traceId, trace);
    },
  ],
  ...scenarios.map(([name, scenario]): Contender => {
    const judge = new TraceJudge({ scenarios: [scenario] });
    return [
      `judged: ${name}`,
      (index) => {
        const trace = traces[index] as SpanRecord[];
        judge.judge((trace[0] as SpanRecord).traceId, trace);
      },
    ];
  }),
];

const samples = contenders.map((): number[] => []);
for (let round = -3; round < ROUNDS; round++) {
  for (let k = 0; k < contenders.length; k++) {
    const each = (contenders[k] as Contender)[1];
    const start = process.cpuUsage();
    for (let i = 0; i < PER_ROUND; i++) each(i % TRACES);
    const used = process.cpuUsage(start);
    if (round >= 0) (samples[k] as number[]).push((used.user + used.system) / PER_ROUND);
  }
}
const median = (list: readonly number[]) => [...list].sort((a, b) => a - b)[list.length >> 1] as number;
const medians = samples.map(median);
const parse = medians[0] as number;
const trivial = medians[2] as number;
console.log(`the same ${TRACES} traces, ${ROUNDS} rounds of ${PER_ROUND} each, medians of CPU time`);
console.log(`${'contender'.padEnd(46)} µs/trace   ratio to JSON.parse   over the trivial rule`);
contenders.forEach(([name], k) => {
  const value = medians[k] as number;
  const over = k > 2 ? `${(value - trivial).toFixed(1).padStart(8)} µs` : '';
  console.log(
    `${name.padEnd(46)} ${value.toFixed(1).padStart(8)}   ${(value / parse).toFixed(2).padStart(6)}x              ${over}`,
  );
});
