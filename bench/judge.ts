/**
 * What judging one agent trace costs, whatever the workload around it: the 11-span support
 * conversation of bench/processor.ts (an `invoke_agent` root, five chat turns whose input
 * messages hold the conversation so far, five `execute_tool` spans with arguments and results),
 * made by a real TracerProvider, judged against the processor benchmark's scenario. CPU time per
 * trace of
 *   - JSON.parse of every JSON-valued attribute of the trace (the content a judge must read;
 *     the reference, measured in the same run: the machine is shared and noisy);
 *   - normalizeTrace (spans to the causal trajectory);
 *   - TraceJudge.judge (normalize, evaluate, redact, events, sampling decision: what the
 *     processor and the adapter run per trace).
 * Medians over rounds; ratios to the reference. Twice: over the same 200 traces again and again
 * (warm: the usual micro-benchmark), and over fresh traces, each read once right after the tracer
 * made it (what the processor sees; everything, the reference included, costs more then), the
 * contenders taking turns trace by trace, so the verdict is the median of per-round (paired) ratios.
 * One more fresh row judges each trace a second time right after the first (untimed): what the
 * same work costs when its code and data were just used, which tells how much of a fresh trace's
 * cost is the caches rather than the work. Then judging and the reference again on longer
 * conversations (bench/collector.ts's, 22-49 spans with whole histories), shown beside the budget's
 * trace: how the ratio moves with a conversation's length. Then the bytes each allocates per trace (V8's
 * sampling heap profiler, objects already collected included): in an app, what judging allocates
 * costs more than its CPU time, because every extra scavenge copies the app's in-flight spans.
 * Budget (DESIGN.md): judging at most 1.5x JSON.parse of the JSON attributes the spans carry, on
 * fresh traces; the aim is 1.25x.
 *
 *   npx tsx bench/judge.ts
 */
import { Session } from 'node:inspector';
import { TraceJudge } from '../src/judging/trace-judge.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { normalizeTrace } from '../src/normalizers/normalize.js';
import { agentRecords, jsonAttributes } from './agent-records.js';
import { conversations as collectorConversations } from './collector.js';
import { PROCESSOR_SCENARIO } from './processor.js';

const TRACES = 200;
const ROUNDS = 15;
const PER_ROUND = 2_000;
/** Longer conversations timed a round (each costs about 30 of the agent trace). */
const LONGER_PER_ROUND = 60;

/** TRACES distinct conversations. */
function conversations(): SpanRecord[][] {
  return Array.from({ length: TRACES }, (_, n) => agentRecords(n));
}

/**
 * Calls each contender is warmed up with, all of them before any is timed: judging's code is
 * still being compiled thousands of traces in (the instructions a trace takes still fall between
 * 4,000 and 10,000: docs/performance.md), and the first judge timed would pay for what the later
 * ones reuse.
 */
const WARM_UP = 10_000;

function warmUp<T>(inputs: T[], each: (input: T) => void): void {
  for (let i = 0; i < WARM_UP; i++) each(inputs[i % inputs.length] as T);
}

/** Median CPU microseconds per call of `each` over the traces (warmed up before). */
function cpuPerTrace<T>(inputs: T[], each: (input: T) => void): number {
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < PER_ROUND; i++) each(inputs[(round * PER_ROUND + i) % inputs.length] as T);
    const used = process.cpuUsage(start);
    samples.push((used.user + used.system) / PER_ROUND);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1] as number;
}

let nextAgent = TRACES;
/** A fresh agent trace, one not made before. */
const nextAgentRecords = () => agentRecords(nextAgent++);

/**
 * Fresh longer conversations: bench/collector.ts's (22-49 spans, each chat turn's input messages
 * holding the whole conversation so far), one at a time, made again for every pass over them.
 */
function collectorConversationMaker(): () => SpanRecord[] {
  let seed = 1;
  let queue: SpanRecord[][] = [];
  return () => {
    if (queue.length === 0) queue = collectorConversations(seed++);
    return queue.shift() as SpanRecord[];
  };
}

/** Something timed on fresh traces: how a fresh trace becomes its input (not timed), and the call timed. */
interface FreshContender {
  from: (trace: SpanRecord[]) => unknown;
  each: (input: never) => void;
}

/**
 * CPU microseconds per call of each contender on fresh traces: each made by the tracer just before
 * and turned into the contender's input by `from` (neither timed), then read once. Timed call by
 * call, so the cost of making the next trace stays out. The contenders take turns trace by trace
 * (in a rotating order), so a change in the machine's load, or a collector thread at work, falls
 * on all of them alike. Per contender the median of the rounds' means, and per contender after
 * the first the median of the rounds' ratios to the first (paired).
 */
function cpuPerFreshTrace(
  contenders: readonly FreshContender[],
  make: () => SpanRecord[] = nextAgentRecords,
  perRound = PER_ROUND / 4,
): { medians: number[]; paired: number[] } {
  const once = (contender: FreshContender): number => {
    const input = contender.from(make());
    const start = process.cpuUsage();
    (contender.each as (input: unknown) => void)(input);
    const { user, system } = process.cpuUsage(start);
    return user + system;
  };
  for (let i = 0; i < perRound; i++) for (const contender of contenders) once(contender); // warm up
  const rounds: number[][] = contenders.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const used = contenders.map(() => 0);
    for (let i = 0; i < perRound; i++) {
      for (let k = 0; k < contenders.length; k++) {
        const at = (i + k) % contenders.length;
        used[at] = (used[at] as number) + once(contenders[at] as FreshContender);
      }
    }
    for (let k = 0; k < contenders.length; k++) (rounds[k] as number[]).push((used[k] as number) / perRound);
  }
  const median = (samples: readonly number[]) =>
    [...samples].sort((a, b) => a - b)[samples.length >> 1] as number;
  const base = rounds[0] as number[];
  return {
    medians: rounds.map(median),
    paired: rounds.map((samples) => median(samples.map((value, round) => value / (base[round] as number)))),
  };
}

const traces = conversations();
const texts = traces.map(jsonAttributes);
const judge = new TraceJudge({ scenarios: [PROCESSOR_SCENARIO] });
/** The same scenario with the answer checks on: keywords, a pattern, grounding of every value stated, a mention. */
const ANSWER_SCENARIO = {
  ...PROCESSOR_SCENARIO,
  answer: {
    contains: ['refund'],
    notContains: ['sorry'],
    matches: { pattern: 'R-\\d+' },
    grounded: { kinds: ['id', 'amount', 'email', 'url', 'date', 'number'] },
    mentions: [{ tool: 'issue_refund', path: 'refundId' }],
  },
};
const answerJudge = new TraceJudge({ scenarios: [ANSWER_SCENARIO] });
/** The same scenario's rules again per agent (`agents`: the agent by name and `"*"`), and handoff rules. */
const { id: _id, version: _version, appliesTo: _appliesTo, ...AGENT_BODY } = PROCESSOR_SCENARIO;
const AGENTS_SCENARIO = {
  ...PROCESSOR_SCENARIO,
  agents: {
    support: AGENT_BODY,
    '*': { tools: { forbidden: ['delete_account'] }, efficiency: { maxCalls: 12 } },
  },
  handoffs: { allowed: [{ from: 'support', to: 'billing' }], max: 1 },
};
const agentsJudge = new TraceJudge({ scenarios: [AGENTS_SCENARIO] });
const parseAll = (list: string[]) => {
  for (const text of list) JSON.parse(text);
};
const normalizeOne = (trace: SpanRecord[]) => normalizeTrace((trace[0] as SpanRecord).traceId, trace);
const judgeOne = (trace: SpanRecord[]) => judge.judge((trace[0] as SpanRecord).traceId, trace);
const judgeAnswerOne = (trace: SpanRecord[]) => answerJudge.judge((trace[0] as SpanRecord).traceId, trace);
const judgeAgentsOne = (trace: SpanRecord[]) => agentsJudge.judge((trace[0] as SpanRecord).traceId, trace);
// What the answer variant measures: the checks run and pass on these traces (not skipped as inconclusive).
const sample = traces[1] as SpanRecord[];
const checked = answerJudge.judge((sample[0] as SpanRecord).traceId, sample).reports[0]?.assertions ?? [];
console.log(
  `answer checks on one trace: ${checked
    .filter((assertion) => assertion.name.startsWith('answer.'))
    .map((assertion) => `${assertion.name} ${assertion.status}`)
    .join(', ')}`,
);
// And the per-agent rules run on the agent's calls (not inconclusive for want of the agent).
const perAgent = agentsJudge.judge((sample[0] as SpanRecord).traceId, sample).reports[0]?.assertions ?? [];
const agentResults = perAgent.filter((assertion) => assertion.name.startsWith('agents.'));
console.log(
  `per-agent checks on one trace: ${agentResults.length}, ${agentResults.filter((a) => a.status === 'pass').length} passing`,
);
warmUp(texts, parseAll);
for (const each of [normalizeOne, judgeOne, judgeAnswerOne, judgeAgentsOne]) warmUp(traces, each);
const warm = {
  parse: cpuPerTrace(texts, parseAll),
  normalize: cpuPerTrace(traces, normalizeOne),
  judge: cpuPerTrace(traces, judgeOne),
  answer: cpuPerTrace(traces, judgeAnswerOne),
  agents: cpuPerTrace(traces, judgeAgentsOne),
};
const freshRun = cpuPerFreshTrace([
  { from: jsonAttributes, each: parseAll },
  { from: (trace) => trace, each: normalizeOne },
  { from: (trace) => trace, each: judgeOne },
  { from: (trace) => trace, each: judgeAnswerOne },
  { from: (trace) => trace, each: judgeAgentsOne },
  // Judged once untimed, then again: what the same work costs with its code and data just used.
  {
    from: (trace) => {
      judgeOne(trace);
      return trace;
    },
    each: judgeOne,
  },
]);
const fresh = {
  parse: freshRun.medians[0] as number,
  normalize: freshRun.medians[1] as number,
  judge: freshRun.medians[2] as number,
  answer: freshRun.medians[3] as number,
  agents: freshRun.medians[4] as number,
  again: freshRun.medians[5] as number,
};
const freshPaired = {
  parse: 1,
  normalize: freshRun.paired[1] as number,
  judge: freshRun.paired[2] as number,
  answer: freshRun.paired[3] as number,
  agents: freshRun.paired[4] as number,
  again: freshRun.paired[5] as number,
};

const bytes = texts.reduce((sum, list) => sum + list.reduce((n, text) => n + text.length, 0), 0) / TRACES;
console.log(
  `one agent trace: 11 spans, ${(texts[0] as string[]).length} JSON attributes, ${(bytes / 1024).toFixed(1)} KiB of them; medians of ${ROUNDS} rounds, CPU time`,
);
console.log(
  `                                                 the same ${TRACES} again              fresh traces, each once (taking turns)`,
);
console.log(
  'stage                                           µs/trace   ratio to JSON.parse   µs/trace   ratio to JSON.parse   paired',
);
/** A row's "the same 200 again" cells; a dash for what is timed on fresh traces only. */
const warmCells = (key: keyof typeof fresh) => {
  if (!(key in warm)) return '        -         -';
  const value = warm[key as keyof typeof warm];
  return `${value.toFixed(1).padStart(9)}   ${(value / warm.parse).toFixed(2).padStart(6)}x`;
};
const row = (name: string, key: keyof typeof fresh) =>
  console.log(
    `${name.padEnd(46)} ${warmCells(key)}` +
      `            ${fresh[key].toFixed(1).padStart(9)}   ${(fresh[key] / fresh.parse).toFixed(2).padStart(6)}x` +
      `               ${freshPaired[key].toFixed(2).padStart(5)}x`,
  );
row('JSON.parse of the JSON attributes (reference)', 'parse');
row('normalizeTrace', 'normalize');
row('TraceJudge.judge (normalize + evaluate + report)', 'judge');
row('TraceJudge.judge, answer checks on', 'answer');
row('TraceJudge.judge, per-agent rules on', 'agents');
row('TraceJudge.judge, the same trace again at once', 'again');
const judged = freshPaired.judge;
const answered = freshPaired.answer;
console.log(
  `\nbudget (DESIGN.md): TraceJudge.judge at most 1.5x JSON.parse of the JSON attributes, fresh traces (aim 1.25x): ` +
    `paired ${judged.toFixed(2)}x, ${judged <= 1.5 ? 'met' : 'NOT MET'}${judged <= 1.25 ? ', aim met' : judged <= 1.5 ? ', aim not met' : ''}` +
    ` (ratio of medians ${(fresh.judge / fresh.parse).toFixed(2)}x)` +
    `; the same ${TRACES} again: ${(warm.judge / warm.parse).toFixed(2)}x`,
);
console.log(
  `with the answer checks on: ${answered.toFixed(2)}x, ${answered <= 1.5 ? 'met' : 'NOT MET'}; the same ${TRACES} again: ${(warm.answer / warm.parse).toFixed(2)}x`,
);
const perAgentRatio = freshPaired.agents;
console.log(
  `with the per-agent rules on: ${perAgentRatio.toFixed(2)}x, ${perAgentRatio <= 1.5 ? 'met' : 'NOT MET'}; the same ${TRACES} again: ${(warm.agents / warm.parse).toFixed(2)}x`,
);

// The same two contenders on longer conversations: what a turn costs once its histories are long.
const longer = cpuPerFreshTrace(
  [
    { from: jsonAttributes, each: parseAll },
    { from: (trace) => trace, each: judgeOne },
  ],
  collectorConversationMaker(),
  LONGER_PER_ROUND,
);
const sampleLonger = collectorConversations(0);
const longerSpans = sampleLonger.map((trace) => trace.length);
const longerKib =
  sampleLonger.reduce(
    (sum, trace) => sum + jsonAttributes(trace).reduce((n, text) => n + text.length, 0),
    0,
  ) /
  sampleLonger.length /
  1024;
console.log(
  `\nlonger conversations (bench/collector.ts's: ${Math.min(...longerSpans)}-${Math.max(...longerSpans)} spans, ` +
    `${longerKib.toFixed(0)} KiB of JSON attributes each on average), fresh, taking turns, the same scenario:`,
);
console.log(
  `  JSON.parse ${(longer.medians[0] as number).toFixed(0)} µs/trace, TraceJudge.judge ${(longer.medians[1] as number).toFixed(0)} µs/trace: ` +
    `paired ${(longer.paired[1] as number).toFixed(2)}x (shown, not the budget's trace)`,
);

/** Bytes allocated per call of `each` (sampled every 512 bytes; what GC already took counted too). */
async function bytesPerTrace<T>(inputs: T[], each: (input: T) => void): Promise<number> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const calls = 2_000;
  for (let i = 0; i < calls; i++) each(inputs[i % inputs.length] as T);
  const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: { head: SampledNode } };
  session.disconnect();
  const total = (node: SampledNode): number =>
    node.children.reduce((sum, child) => sum + total(child), node.selfSize);
  return total(profile.head) / calls;
}

interface SampledNode {
  selfSize: number;
  children: SampledNode[];
}

const parseBytes = await bytesPerTrace(texts, (list) => {
  for (const text of list) JSON.parse(text);
});
const judgeBytes = await bytesPerTrace(traces, (trace) =>
  judge.judge((trace[0] as SpanRecord).traceId, trace),
);
console.log('\nallocated per trace                             KiB/trace   ratio to JSON.parse');
const kib = (name: string, value: number) =>
  console.log(
    `${name.padEnd(46)} ${(value / 1024).toFixed(1).padStart(9)}   ${(value / parseBytes).toFixed(2).padStart(6)}x`,
  );
kib('JSON.parse of the JSON attributes (reference)', parseBytes);
kib('TraceJudge.judge', judgeBytes);
