/**
 * Normalizing captured fixtures of several conventions (spans -> Trajectory) with this checkout's
 * normalizers against another checkout's, in one process, rounds interleaved (as judge-pair.ts
 * does for TraceJudge.judge, whose trace is OTel GenAI only). Prints, per fixture, each side's
 * median CPU microseconds per trace and the median of the paired ratios (this / other).
 *
 *   git worktree add --detach ../baseline HEAD~1 && cp -al node_modules ../baseline/
 *   npx tsx bench/normalize-pair.ts ../baseline [fixture ...]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readStoredTraces } from '../src/io/read-traces.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { normalizeSpans } from '../src/normalizers/normalize.js';

const ROUNDS = 31;
const PER_ROUND = 2_000;
const DEFAULT_FIXTURES = [
  'vercel-ai-v6-refund',
  'vercel-ai-v7-legacy-refund',
  'openinference-openai-agents-refund',
  'openinference-langchain-refund',
  'strands-events-refund',
  'langfuse-documented-refund',
  'google-adk-refund',
];

type Normalize = (spans: Iterable<SpanRecord>) => unknown[];

const [other, ...named] = process.argv.slice(2);
if (!other) {
  console.error('usage: npx tsx bench/normalize-pair.ts OTHER_CHECKOUT [fixture ...]');
  process.exit(2);
}
const module = (await import(pathToFileURL(resolve(other, 'src/normalizers/normalize.ts')).href)) as {
  normalizeSpans: Normalize;
};
const theirs: Normalize = module.normalizeSpans;
const ours: Normalize = normalizeSpans;

function spansOf(name: string): SpanRecord[] {
  const file = new URL(`../test/spans/${name}.otlp.json`, import.meta.url);
  const read = readStoredTraces(readFileSync(file, 'utf8'), name);
  if (read.input?.format !== 'otlp-json' || read.errors.length > 0)
    throw new Error(`${name}: not read cleanly`);
  return read.input.spans;
}

/** CPU microseconds per trace over one round. */
function round(normalize: Normalize, spans: SpanRecord[]): number {
  const start = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i++) normalize(spans);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PER_ROUND;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;

for (const name of named.length > 0 ? named : DEFAULT_FIXTURES) {
  const spans = spansOf(name);
  for (let i = 0; i < 3; i++) {
    round(ours, spans);
    round(theirs, spans);
  }
  const mine: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which goes first, so neither always runs on the other's garbage.
    if (i % 2 === 0) {
      mine.push(round(ours, spans));
      base.push(round(theirs, spans));
    } else {
      base.push(round(theirs, spans));
      mine.push(round(ours, spans));
    }
  }
  const ratios = mine.map((value, i) => value / (base[i] as number)).sort((a, b) => a - b);
  console.log(
    `${name} (${spans.length} spans): this ${median(mine).toFixed(1)} µs/trace, ${other} ${median(base).toFixed(1)} µs/trace; ` +
      `median paired ratio ${median(ratios).toFixed(3)}x (range ${ratios[0]?.toFixed(3)}–${ratios.at(-1)?.toFixed(3)})`,
  );
}
