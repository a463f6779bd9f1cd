/**
 * What the in-process processor costs an app: a mixed workload (one agent trace per five
 * ordinary HTTP traces, interleaved as a server would run them) made with a real TracerProvider
 * and real tracer calls, through
 *   (a) a BatchSpanProcessor alone (the baseline);
 *   (b) trajectoryProcessor wrapping the same kind of BatchSpanProcessor, with a realistic scenario
 *       (tools allowed/required, order.before, grounding, safety, efficiency) and an SDK MeterProvider.
 * Both export the same way, twice over: with the real OTLP/protobuf exporter to a receiver in a
 * child process (what an app runs: serializing GenAI spans with their messages costs more than
 * making them), and with a discarding exporter (span work alone, the lowest baseline there is).
 * Rounds alternate between the configurations (in a rotating order); each round ends with
 * `forceFlush()`, so deferred judging and exporting are inside the measured time. Medians of the
 * per-round ns/span, wall time and this process's CPU time (wall time also counts waiting on the
 * receiver, which flatters (b); CPU time does not), the ratio of medians against (a) measured in
 * the same run, and the median of per-round ratios (paired: steadier when the load drifts). The machine is shared and noisy:
 * compare ratios, not absolute times. Budget (DESIGN.md, In process): with `worker: true` ((d)
 * below) the app's thread busy at most 1.25x what it is with (a) (event loop utilization, paired);
 * the fast path (ordinary traffic alone, (b)) at most 1.10x; process CPU printed beside, not a gate.
 * With the OTLP exporter, also (c): (b) with judging left out (every trace gets one remembered
 * judgement), so (b) - (c) is what judging costs in the app and (c) - (a) everything else; and
 * (d), (b) with `worker: true`: judging on a worker thread, the app's thread buffering, making the
 * records and applying the judgements (a round's flush waits for the worker). CPU time is the
 * whole process's, the worker's included. The app thread column is the time the event loop was
 * busy (`performance.eventLoopUtilization`): what the app's own requests compete with, without
 * the waits for the exporter or the worker that wall time counts.
 * The same for ordinary traffic alone (no agent traces): the processor's fast path.
 *
 * Then memory: agent traces held open (root not ended) in a processor with large limits, heap
 * delta after GC per buffered span, beside the same spans retained by a plain array.
 *
 *   npx tsx --expose-gc bench/processor.ts              (tsx passes --expose-gc on to node)
 *   npx tsx bench/processor.ts                          (the same without the heap figures)
 *   node --cpu-prof --import tsx bench/processor.ts     (CPU profile in ./CPU.*.cpuprofile)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import {
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  BatchSpanProcessor,
  NoopSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { type Report, type TrajectoryProcessor, trajectoryProcessor } from '../src/index.js';
import type { Judgement, TraceJudge } from '../src/judging/trace-judge.js';

const TOOLS = ['search_kb', 'get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'];

/** A support agent's refund scenario, every family the brief asks for. */
export const PROCESSOR_SCENARIO = {
  id: 'support.refund',
  version: '3',
  appliesTo: { agent: 'support' },
  tools: { allowed: TOOLS, forbidden: ['delete_account'], required: ['issue_refund'] },
  order: {
    before: [
      { before: 'get_refund_policy', after: 'issue_refund' },
      { before: 'get_order', after: ['issue_refund', 'send_confirmation'] },
    ],
    terminal: ['send_confirmation'],
  },
  grounding: [
    { tool: 'issue_refund', path: 'amount', from: { tool: 'get_order', path: 'amount' } },
    { tool: 'send_confirmation', path: 'refundId', from: { tool: 'issue_refund', path: 'refundId' } },
    { tool: 'get_refund_policy', path: 'orderId', from: 'any' },
  ],
  safety: { irreversible: ['issue_refund'], tenant: { path: 'tenant', value: 't-7' } },
  efficiency: { maxCalls: 12, repeats: { max: 0 }, maxTokens: 50_000 },
};

// ---------------------------------------------------------------- the workload

/** Counts what reaches the exporter, then hands it to `next` (an OTLP exporter) or forgets it. */
class CountingExporter implements SpanExporter {
  /** The app's spans; toolpath's evaluation spans are counted apart. */
  spans = 0;
  evaluationSpans = 0;
  constructor(private readonly next?: SpanExporter) {}
  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    for (const span of spans) {
      if (span.name === 'toolpath.evaluate') this.evaluationSpans++;
      else this.spans++;
    }
    if (this.next) this.next.export(spans, done);
    else done({ code: 0 });
  }
  async shutdown(): Promise<void> {
    await this.next?.shutdown();
  }
}

/**
 * An OTLP/HTTP receiver in a child process (so its work is not on the measured thread): reads
 * each request and answers an empty ExportTraceServiceResponse.
 */
async function startSink(): Promise<{ url: string; stop: () => void }> {
  const script = `
    const server = require('node:http').createServer((req, res) => {
      req.on('data', () => {});
      req.on('end', () => { res.writeHead(200, { 'content-type': 'application/x-protobuf' }); res.end(); });
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [port] = (await once(child.stdout, 'data')) as [Buffer];
  return { url: `http://127.0.0.1:${String(port).trim()}/v1/traces`, stop: () => child.kill() };
}

/** Where a configuration's BatchSpanProcessor exports to: nowhere, or OTLP/protobuf over loopback. */
type Sink = { url: string } | undefined;

const exporterFor = (sink: Sink) =>
  new CountingExporter(sink ? new OTLPTraceExporter({ url: sink.url }) : undefined);

type Part = Record<string, unknown>;
type Message = { role: string; parts: Part[] };

const USAGE_TEXT = 'Order A-%d arrived broken. Please refund me.';

/**
 * One refund conversation as GenAI spans: an `invoke_agent support` root, five chat turns whose
 * input messages hold the whole conversation so far (tool_call and tool_call_response parts) and
 * five `execute_tool` children with arguments and results: 11 spans. Yields between model turns,
 * where a real agent would wait on the model and the server would run other requests.
 * Every 7th run refunds before checking the policy, every 11th makes up the refund id.
 * With `holdRoot`, yields once more before the root ends.
 */
export function* agentTrace(
  tracer: Tracer,
  n: number,
  parent: Context,
  holdRoot = false,
): Generator<void, number, void> {
  const tenant = 't-7';
  const orderId = `A-${n}`;
  const amount = 10 + (n % 90) + 0.5;
  const refundId = `R-${n}`;
  const email = `customer${n}@example.com`;
  const root = tracer.startSpan(
    'invoke_agent support',
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'support',
        'gen_ai.agent.id': 'agent-support-1',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.conversation.id': `conv-${n}`,
      },
    },
    parent,
  );
  const inRoot = trace.setSpan(parent, root);
  const history: Message[] = [
    { role: 'system', parts: [{ type: 'text', content: 'You are a support agent.' }] },
    { role: 'user', parts: [{ type: 'text', content: USAGE_TEXT.replace('%d', String(n)) }] },
  ];
  let spans = 1;
  let turn = 0;
  const chat = (calls: { id: string; name: string; arguments: Part }[], text?: string) => {
    turn++;
    const output: Message = {
      role: 'assistant',
      parts: text
        ? [{ type: 'text', content: text }]
        : calls.map((call) => ({
            type: 'tool_call',
            id: call.id,
            name: call.name,
            arguments: call.arguments,
          })),
    };
    const span = tracer.startSpan(
      'chat gpt-4o',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.model': 'gpt-4o-2024-08-06',
          'gen_ai.response.id': `chatcmpl-${n}-${turn}`,
          'gen_ai.response.finish_reasons': [text ? 'stop' : 'tool_calls'],
          'gen_ai.usage.input_tokens': 400 + 150 * turn,
          'gen_ai.usage.output_tokens': 40,
          'gen_ai.input.messages': JSON.stringify(history),
          'gen_ai.output.messages': JSON.stringify([output]),
        },
      },
      inRoot,
    );
    span.end();
    spans++;
    history.push(output);
  };
  const execute = (results: { id: string; name: string; arguments: Part; result: Part }[]) => {
    const shown: Part[] = [];
    for (const call of results) {
      const span = tracer.startSpan(
        `execute_tool ${call.name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': call.name,
            'gen_ai.tool.type': 'function',
            'gen_ai.tool.call.id': call.id,
            'gen_ai.tool.call.arguments': JSON.stringify(call.arguments),
            'gen_ai.tool.call.result': JSON.stringify(call.result),
          },
        },
        inRoot,
      );
      span.end();
      spans++;
      shown.push({ type: 'tool_call_response', id: call.id, response: call.result });
    }
    history.push({ role: 'tool', parts: shown });
  };

  const lookUp = [
    {
      id: `call_${n}_1`,
      name: 'search_kb',
      arguments: { query: 'refund broken item', tenant },
      result: { articles: [{ id: 'kb-12', title: 'Refunds for damaged goods' }] },
    },
    {
      id: `call_${n}_2`,
      name: 'get_order',
      arguments: { orderId, tenant },
      result: { orderId, amount, customerEmail: email, status: 'delivered' },
    },
  ];
  const policy = {
    id: `call_${n}_3`,
    name: 'get_refund_policy',
    arguments: { orderId, tenant },
    result: { refundable: true, windowDays: 30 },
  };
  const refund = {
    id: `call_${n}_4`,
    name: 'issue_refund',
    arguments: { orderId, amount, tenant },
    result: { refundId, status: 'issued' },
  };
  const confirm = {
    id: `call_${n}_5`,
    name: 'send_confirmation',
    arguments: { email, refundId: n % 11 === 0 ? 'R-0000' : refundId, tenant },
    result: { sent: true },
  };
  const steps =
    n % 7 === 0 ? [lookUp, [refund], [policy], [confirm]] : [lookUp, [policy], [refund], [confirm]];
  for (const step of steps) {
    chat(step);
    yield;
    execute(step);
  }
  // Values for the answer checks to ground (bench/judge.ts): the refund id and the amount.
  chat([], `Your refund ${refundId} of $${amount} is on its way to ${email}.`);
  if (holdRoot) yield;
  root.end();
  return spans;
}

/** An ordinary request: a server span with a database query, a cache read and an HTTP call: 4 spans. */
export function httpTrace(tracer: Tracer, n: number, parent: Context): number {
  const server = tracer.startSpan(
    'GET /orders/:id',
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'GET',
        'url.path': `/orders/${n}`,
        'url.scheme': 'https',
        'http.route': '/orders/:id',
        'server.address': 'shop.example.com',
        'server.port': 443,
        'user_agent.original': 'Mozilla/5.0 (X11; Linux x86_64)',
        'client.address': '10.0.0.12',
        'network.protocol.version': '1.1',
      },
    },
    parent,
  );
  const inServer = trace.setSpan(parent, server);
  const db = tracer.startSpan(
    'SELECT shop.orders',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'postgresql',
        'db.namespace': 'shop',
        'db.collection.name': 'orders',
        'db.operation.name': 'SELECT',
        'db.query.text': 'SELECT id, amount, status FROM orders WHERE id = $1',
        'server.address': 'db.internal',
        'server.port': 5432,
      },
    },
    inServer,
  );
  db.end();
  const cache = tracer.startSpan(
    'GET',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'redis',
        'db.operation.name': 'GET',
        'db.namespace': '0',
        'server.address': 'cache.internal',
        'server.port': 6379,
      },
    },
    inServer,
  );
  cache.end();
  const downstream = tracer.startSpan(
    'GET',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'GET',
        'url.full': `https://inventory.internal/items?order=${n}`,
        'server.address': 'inventory.internal',
        'server.port': 443,
        'http.response.status_code': 200,
      },
    },
    inServer,
  );
  downstream.end();
  server.setAttribute('http.response.status_code', n % 50 === 0 ? 500 : 200);
  if (n % 50 === 0) server.setStatus({ code: SpanStatusCode.ERROR });
  server.end();
  return 4;
}

/** Agent conversations in flight at once; after each agent step, one ordinary request runs. */
const CONCURRENT_AGENTS = 4;

/**
 * One round: `agents` agent traces (4 at a time, round robin) and five ordinary requests per
 * agent trace, interleaved. Yields now and then, so the BatchSpanProcessor's exports finish: a
 * microtask (a burst of requests that never lets the event loop turn, so a worker's answers wait
 * for the round's flush), or with `turning` to the event loop, as a server does between requests.
 * Returns the spans created.
 */
async function round(tracer: Tracer, agents: number, first: number, turning = false): Promise<number> {
  const parent = context.active();
  let spans = 0;
  let next = 0;
  let http = first * 5;
  const live: Generator<void, number, void>[] = [];
  while (next < agents || live.length > 0) {
    while (live.length < CONCURRENT_AGENTS && next < agents)
      live.push(agentTrace(tracer, first + next++, parent));
    for (let i = 0; i < live.length; ) {
      const step = (live[i] as Generator<void, number, void>).next();
      spans += httpTrace(tracer, http++, parent);
      if (step.done) {
        spans += step.value;
        live.splice(i, 1);
      } else {
        i++;
      }
    }
    if (turning) await new Promise((resolve) => setImmediate(resolve));
    else await null;
  }
  return spans;
}

// ---------------------------------------------------------------- configurations

interface Config {
  name: string;
  tracer: Tracer;
  exporter: CountingExporter;
  flush: () => Promise<void>;
  shutdown: () => Promise<void>;
  processor?: TrajectoryProcessor;
  reports?: Report[];
}

function baseline(name: string, sink?: Sink): Config {
  const exporter = exporterFor(sink);
  const batch = new BatchSpanProcessor({ exporter });
  const provider = new TracerProvider({ spanProcessors: [batch] });
  return {
    name,
    tracer: provider.getTracer('app', '1.0.0'),
    exporter,
    flush: () => batch.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/** Where (b), (c) and (d) judge: on the app's thread, not at all, or on a worker thread. */
type Judging = 'here' | 'none' | 'worker';

function withProcessor(name: string, sink?: Sink, judging: Judging = 'here'): Config {
  const meterProvider = new MeterProvider();
  const exporter = exporterFor(sink);
  const reports: Report[] = [];
  const processor = trajectoryProcessor({
    scenarios: [PROCESSOR_SCENARIO],
    export: new BatchSpanProcessor({ exporter }),
    meterProvider,
    worker: judging === 'worker',
    onReport: (report: Report) => {
      if (reports.length < 1_000) reports.push(report);
    },
  });
  if (judging === 'none') withoutJudging(processor);
  const provider = new TracerProvider({ spanProcessors: [processor] });
  return {
    name,
    tracer: provider.getTracer('app', '1.0.0'),
    exporter,
    processor,
    reports,
    flush: () => processor.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/**
 * For the breakdown: the processor with judging left out. Its judge answers every trace with the
 * judgement of the first trace that passed, pointed at the trace's own root, so buffering, span
 * records, the events on the root and forwarding cost what they cost in (b), and (b) - (c) is what
 * judging costs in the app. Reaches into the private judge of the processor's app-thread drain: a benchmark's diagnosis only.
 */
function withoutJudging(processor: TrajectoryProcessor): void {
  const judge = (processor as unknown as { appThread?: { judge?: TraceJudge } }).appThread?.judge;
  if (!judge)
    throw new Error('bench: the processor no longer judges through appThread.judge; update withoutJudging');
  const judgeForReal = judge.judge.bind(judge);
  let canned: Judgement | undefined;
  judge.judge = (traceId, spans, incomplete) => {
    if (canned === undefined) {
      const judgement = judgeForReal(traceId, spans, incomplete);
      if (judgement.reports.every((report) => report.verdict === 'pass')) canned = judgement;
      return judgement;
    }
    const root = spans.find((span) => span.parentSpanId === undefined);
    return { ...canned, evaluatedSpanId: root?.spanId };
  };
}

// ---------------------------------------------------------------- timing

/** What one round of a benchmark runs; returns the spans it created. */
interface Workload {
  title: string;
  /** Agent traces a round (for the "every agent trace judged" check). */
  agentTraces: number;
  rounds: number;
  run: (tracer: Tracer, round: number) => Promise<number>;
}

const AGENTS_PER_ROUND = 24; // 24 x 11 + 120 x 4 = 744 spans a round
const WARMUP_ROUNDS = 30;

const MIXED: Workload = {
  title: `mixed workload: 1 agent trace (11 GenAI spans) per 5 HTTP traces (4 spans), ${AGENTS_PER_ROUND} agent traces a round`,
  agentTraces: AGENTS_PER_ROUND,
  rounds: 150,
  run: (tracer, r) => round(tracer, AGENTS_PER_ROUND, r * AGENTS_PER_ROUND),
};

const MIXED_TURNING: Workload = {
  ...MIXED,
  title: `${MIXED.title}, the event loop turning between requests`,
  run: (tracer, r) => round(tracer, AGENTS_PER_ROUND, r * AGENTS_PER_ROUND, true),
};

const HTTP_ONLY: Workload = {
  title: 'ordinary traffic only (the fast path): 180 HTTP traces (4 spans) a round',
  agentTraces: 0,
  rounds: 100,
  run: async (tracer, r) => {
    const parent = context.active();
    let spans = 0;
    for (let i = 0; i < 180; i++) {
      spans += httpTrace(tracer, r * 180 + i, parent);
      if (i % 6 === 5) await null;
    }
    return spans;
  },
};

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[sorted.length >> 1] as number;
};

/** The budget a table is judged by: one configuration's app thread over (a)'s, paired. */
interface Gate {
  /** What is judged, for the verdict line. */
  what: string;
  /** The configuration's position in the table. */
  index: number;
  limit: number;
}

async function timeProcessors(
  workload: Workload,
  exporting: string,
  configs: Config[],
  gate?: Gate,
): Promise<void> {
  const wall = configs.map(() => [] as number[]);
  /** Time in each round's closing flush (exporting; with a worker, also waiting for its last judgements). */
  const flushes = configs.map(() => [] as number[]);
  const cpu = configs.map(() => [] as number[]);
  /** The app's thread busy (event loop not idle): what the app pays where its own requests run. */
  const busy = configs.map(() => [] as number[]);
  const created = configs.map(() => 0);
  const rounds = WARMUP_ROUNDS + workload.rounds;
  for (let r = 0; r < rounds; r++) {
    // The same traces for every configuration in a round; the order rotates.
    for (let k = 0; k < configs.length; k++) {
      const index = (r + k) % configs.length;
      const config = configs[index] as Config;
      const start = performance.now();
      const startCpu = process.cpuUsage();
      const startLoop = performance.eventLoopUtilization();
      const spans = await workload.run(config.tracer, r);
      const flushStart = performance.now();
      await config.flush();
      const flushed = performance.now() - flushStart;
      const usage = process.cpuUsage(startCpu);
      const loop = performance.eventLoopUtilization(startLoop);
      const elapsed = performance.now() - start;
      created[index] = (created[index] as number) + spans;
      if (r >= WARMUP_ROUNDS) {
        (wall[index] as number[]).push((elapsed * 1e6) / spans);
        (cpu[index] as number[]).push(((usage.user + usage.system) * 1e3) / spans);
        (flushes[index] as number[]).push(flushed);
        (busy[index] as number[]).push((loop.active * 1e6) / spans);
      }
    }
  }
  console.log(`\n${workload.title}, ${exporting},`);
  console.log(`${workload.rounds} rounds after ${WARMUP_ROUNDS} warm-up rounds, medians.`);
  console.log(
    'Wall time counts waiting on the exporter; CPU time (this process) counts only work, the fairer measure.',
  );
  console.log(
    'configuration                     wall ns/span   p25..p75         ratio  paired    cpu ns/span   ratio  paired   flush ms   app thread ns/span  ratio  paired',
  );
  const a = {
    wall: median(wall[0] as number[]),
    cpu: median(cpu[0] as number[]),
    busy: median(busy[0] as number[]),
  };
  // The median of a configuration's time over (a)'s in the same round: steadier when the load drifts.
  const paired = (samples: number[][], index: number) =>
    median((samples[index] as number[]).map((x, r) => x / ((samples[0] as number[])[r] as number)));
  configs.forEach((config, index) => {
    const values = [...(wall[index] as number[])].sort((x, y) => x - y);
    const q = (f: number) => values[Math.floor(values.length * f)] as number;
    const m = median(values);
    const c = median(cpu[index] as number[]);
    const b = median(busy[index] as number[]);
    console.log(
      `${config.name.padEnd(32)} ${m.toFixed(0).padStart(9)}   ${q(0.25).toFixed(0).padStart(6)}..${q(0.75).toFixed(0).padEnd(7)}` +
        `  ${(m / a.wall).toFixed(2).padStart(5)}x ${paired(wall, index).toFixed(2).padStart(5)}x` +
        `  ${c.toFixed(0).padStart(11)}   ${(c / a.cpu).toFixed(2).padStart(5)}x ${paired(cpu, index).toFixed(2).padStart(5)}x` +
        `  ${median(flushes[index] as number[])
          .toFixed(2)
          .padStart(8)}` +
        `   ${b.toFixed(0).padStart(18)}  ${(b / a.busy).toFixed(2).padStart(5)}x ${paired(busy, index).toFixed(2).padStart(5)}x`,
    );
  });
  if (gate) {
    const thread = paired(busy, gate.index);
    console.log(
      `budget (DESIGN.md, In process): ${gate.what}, the app's thread at most ${gate.limit.toFixed(2)}x the BatchSpanProcessor alone ` +
        `(event loop utilization, paired): ${thread.toFixed(2)}x, ${thread <= gate.limit ? 'met' : 'NOT MET'}; ` +
        `process CPU ${paired(cpu, gate.index).toFixed(2)}x paired (printed, not a gate)`,
    );
  }
  // Sanity: nothing lost on the way (the BSP drops when its queue is full), every agent trace judged.
  for (const [index, config] of configs.entries()) {
    const made = created[index] as number;
    if (config.exporter.spans !== made)
      console.log(`  ! ${config.name}: exporter got ${config.exporter.spans} spans of ${made} created`);
    if (config.processor) {
      const stats = config.processor.stats();
      const agentTraces = workload.agentTraces * rounds;
      const verdicts = new Map<string, number>();
      for (const report of config.reports ?? [])
        verdicts.set(report.verdict, (verdicts.get(report.verdict) ?? 0) + 1);
      const dropped = Object.entries(stats.dropped).filter(([, n]) => n > 0);
      console.log(
        `  ${config.name}: judged ${stats.judgedTraces} of ${agentTraces} agent traces` +
          (verdicts.size > 0
            ? `; first 1,000 verdicts ${JSON.stringify(Object.fromEntries(verdicts))}`
            : '') +
          `; dropped ${dropped.length > 0 ? JSON.stringify(Object.fromEntries(dropped)) : 'nothing'}`,
      );
      if (stats.judgedTraces !== agentTraces) console.log('  ! not every agent trace was judged');
    }
  }
  for (const config of configs) await config.shutdown();
}

// ---------------------------------------------------------------- memory

const gc = (globalThis as { gc?: () => void }).gc;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc?.();
  return process.memoryUsage().heapUsed;
}

/** Runs `n` agent conversations up to the root's end: 10 spans ended per trace, the root still open. */
function holdOpen(tracer: Tracer, n: number): Generator<void, number, void>[] {
  const parent = context.active();
  const runs = Array.from({ length: n }, (_, i) => agentTrace(tracer, 1_000_000 + i, parent, true));
  for (const run of runs) for (let step = 0; step < 5; step++) run.next();
  return runs;
}

/** A processor that keeps every ended span (what the SDK spans themselves weigh). */
class RetainingProcessor implements SpanProcessor {
  readonly spans: ReadableSpan[] = [];
  onStart(_span: Span): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** Heap delta (after GC) of holding `n` conversations open in a provider with this span processor. */
async function heldHeap(spanProcessor: SpanProcessor, n: number, whileHeld?: () => void): Promise<number> {
  const provider = new TracerProvider({ spanProcessors: [spanProcessor] });
  const before = heapAfterGc();
  const runs = holdOpen(provider.getTracer('app', '1.0.0'), n);
  const delta = heapAfterGc() - before;
  whileHeld?.();
  for (const run of runs) run.next();
  await provider.forceFlush();
  await provider.shutdown();
  return delta;
}

async function measureHeap(): Promise<void> {
  if (!gc) {
    console.log('\nheap per buffered span: run with --expose-gc (npx tsx --expose-gc bench/processor.ts)');
    return;
  }
  const N = 2_000;
  // What the app itself holds (open roots, the conversations' state): spans not retained.
  const app = await heldHeap(new NoopSpanProcessor(), N);
  // The same ended spans kept by an array.
  const retaining = new RetainingProcessor();
  const plain = (await heldHeap(retaining, N)) - app;
  const retained = retaining.spans.length - N; // the roots ended after the measurement
  // The processor, with limits large enough to hold everything, forwarding to a processor that keeps nothing.
  const processor = trajectoryProcessor({
    scenarios: [PROCESSOR_SCENARIO],
    export: new NoopSpanProcessor(),
    limits: { maxTraces: 1_000_000, maxSpans: 10_000_000, maxSpansPerTrace: 10_000 },
  });
  let buffered = 0;
  let traces = 0;
  const inBuffer =
    (await heldHeap(processor, N, () => {
      ({ bufferedSpans: buffered, bufferedTraces: traces } = processor.stats());
    })) - app;
  const judged = processor.stats().judgedTraces;
  console.log(
    `\nheap after GC, ${N} agent traces held open (10 spans ended, root open): ${buffered} spans buffered in ${traces} traces`,
  );
  console.log(`  app alone (roots, conversation state)   ${(app / N).toFixed(0).padStart(7)} B per trace`);
  console.log(
    `  spans kept by an array                  ${(plain / retained).toFixed(0).padStart(7)} B per span (over the app alone)`,
  );
  console.log(
    `  spans buffered by the processor         ${(inBuffer / buffered).toFixed(0).padStart(7)} B per span (over the app alone; with per-trace state)`,
  );
  console.log(
    `  processor / array                       ${(inBuffer / buffered / (plain / retained)).toFixed(2).padStart(7)}x`,
  );
  if (judged !== N) console.log(`  ! judged ${judged} of ${N}`);
}

// Run when invoked, not when imported (the workload is exported for profiling scripts).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sink = await startSink();
  try {
    await timeProcessors(
      MIXED,
      'exporting OTLP/protobuf over loopback (what an app runs)',
      [
        baseline('(a) BatchSpanProcessor', sink),
        withProcessor('(b) trajectoryProcessor + BSP', sink),
        withProcessor('(c) (b) without judging', sink, 'none'),
        withProcessor('(d) (b) judging on a worker', sink, 'worker'),
      ],
      { what: '(d) with worker: true', index: 3, limit: 1.25 },
    );
    // Not a gate: what (d) costs an app that returns to its event loop between requests, where
    // the worker's answers come back while the round runs instead of at its flush.
    await timeProcessors(MIXED_TURNING, 'exporting OTLP/protobuf over loopback', [
      baseline('(a) BatchSpanProcessor', sink),
      withProcessor('(d) (b) judging on a worker', sink, 'worker'),
    ]);
    await timeProcessors(MIXED, 'discarding exporter (span work alone: a lower bound for (a))', [
      baseline('(a) BatchSpanProcessor'),
      withProcessor('(b) trajectoryProcessor + BSP'),
      withProcessor('(d) (b) judging on a worker', undefined, 'worker'),
    ]);
    await timeProcessors(
      HTTP_ONLY,
      'exporting OTLP/protobuf over loopback',
      [baseline('(a) BatchSpanProcessor', sink), withProcessor('(b) trajectoryProcessor + BSP', sink)],
      { what: 'the fast path (no agent spans), (b)', index: 1, limit: 1.1 },
    );
  } finally {
    sink.stop();
  }
  await measureHeap();
}
