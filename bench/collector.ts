/**
 * The collector adapter's ingest budget: end-to-end ingest of one OTLP export request (decode,
 * assemble, normalize, evaluate, respond) beside bare decoding of the same request, measured
 * side by side in the same run:
 *   (1) bare `JSON.parse(text)` of the OTLP JSON body (the JSON baseline);
 *   (2) JSON end to end: decodeOtlpJsonText (as the HTTP receiver reads JSON) + exportOutcome (adapter.ingest,
 *       as the receivers call it) + adapter.judgeAllNow() (normalize, evaluate against a realistic
 *       scenario, redact, sample) + the response body (`{}`);
 *   (3) bare protobufjs `ExportTraceServiceRequest.decode(buffer)` (the protobuf baseline);
 *   (4) protobuf end to end: decodeExportTraceProtobuf (on the adapter's held texts, as the receivers
 *       decode) + exportOutcome + judgeAllNow + encodeExportTraceResponse.
 * The request: ~1,000 spans of GenAI support-agent conversations (20-50 spans each: an
 * `invoke_agent` root, chat turns whose input messages hold the conversation so far, parallel
 * `execute_tool` calls with arguments and results), built as SpanRecords, turned into SDK
 * ReadableSpans and serialized by otlp-transformer's JsonTraceSerializer and ProtobufTraceSerializer,
 * as an SDK exporter sends them. Twice: whole conversations in one request (each history shares
 * the text of the one before it in the same request), and the same conversations with their turns
 * spread over a dozen requests, as an SDK exporting on a timer sends conversations while they run
 * (a history continues one received in an earlier request); there, each contender goes through
 * all the requests in turn, and the end-to-end ones judge once the last is in. Each end-to-end round gets a fresh TraceAdapter (made and shut down
 * outside the timed part), so every trace is new to it; its waits are huge, so only judgeAllNow judges.
 * Rounds interleave the contenders in a rotating order; medians of wall time (and of process CPU
 * time), the ratio of medians and the median of per-round (paired) ratios. The machine is shared
 * and noisy: compare ratios, not absolute times.
 * Budget (DESIGN.md, Adapter): (4) at least 0.5x the throughput of (3) (bare protobuf decoding),
 * (2) at least 0.35x that of (1) (bare JSON.parse); spans/s per core (CPU time) printed.
 *
 * The end-to-end runs also time their stages (decode, ingest, judge, respond) and print their medians.
 *
 * Then the heap per buffered span (requests ingested, none judged, after GC, bodies let go), and,
 * apart from the ratios, a loopback HTTP figure (startHttpReceiver + fetch, then judgeAllNow).
 *
 *   npx tsx bench/collector.ts                        (ROUNDS=60 for steadier figures; HTTP=0 skips HTTP)
 *   node --expose-gc --import tsx bench/collector.ts  (with the heap figures; or npx tsx --expose-gc ...)
 *   node --cpu-prof --import tsx bench/collector.ts   (CPU profile in ./CPU.*.cpuprofile)
 *   HISTORY=recent npx tsx bench/collector.ts         (chat input messages without the repeated history)
 *   SCENARIO=defaults npx tsx bench/collector.ts      (judged by `toolpath serve`'s built-in scenario, 3 checks, instead)
 *   DURABLE=0 npx tsx bench/collector.ts              (skips durable mode on against off: bench/collector-durable.ts)
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { TraceAdapter } from '../src/collector/adapter.js';
import { startHttpReceiver } from '../src/collector/http-receiver.js';
import type { TraceIngest } from '../src/collector/ingest.js';
import { type DecodeResult, decodeOtlpJsonText } from '../src/collector/otlp-json.js';
import { decodeExportTraceProtobuf, encodeExportTraceResponse } from '../src/collector/otlp-proto.js';
import { ExportTraceServiceRequest } from '../src/collector/otlp-proto-schema.js';
import { decodeOptionsFor, exportOutcome } from '../src/collector/receiver-common.js';
import { DEFAULT_SCENARIO } from '../src/collector/serve.js';
import { toReadableSpan } from '../src/collector/to-readable-span.js';
import type { Report } from '../src/model/report.js';
import type { Attributes, ScopeRecord, SpanRecord } from '../src/model/span-record.js';
import { parseScenario } from '../src/scenario/scenario.js';
import { measureDurable } from './collector-durable.js';
import { PROCESSOR_SCENARIO } from './processor.js';

const SPANS_PER_REQUEST = 1_000;
const ROUNDS = Number(process.env.ROUNDS ?? 30);
const WARMUP_ROUNDS = 8;
/** Requests buffered for the heap figure. */
const HEAP_REQUESTS = Number(process.env.HEAP_REQUESTS ?? 20);
const HTTP_REQUESTS = Number(process.env.HTTP_REQUESTS ?? 20);
/**
 * What each chat span's `gen_ai.input.messages` holds: the whole conversation so far, as
 * instrumentations record it (`full`, the default), or only the system and user messages and the
 * last assistant turn with its tool results (`recent`: a lighter payload, to see how the ratios
 * depend on the repeated history).
 */
const HISTORY = process.env.HISTORY === 'recent' ? 'recent' : 'full';

const TOOLS = [
  'search_kb',
  'get_order',
  'lookup_customer',
  'get_refund_policy',
  'check_inventory',
  'get_shipping_status',
  'issue_refund',
  'add_note',
  'send_confirmation',
];

/** A support agent's refund scenario over every rule family (24 assertions), extending bench/processor's. */
export const SCENARIO = parseScenario(
  {
    id: 'support.refund',
    version: '3',
    appliesTo: { agent: 'support' },
    tools: {
      allowed: TOOLS,
      forbidden: ['delete_account'],
      required: ['get_order', 'issue_refund'],
      counts: { issue_refund: { max: 1 }, search_kb: { max: 20 } },
    },
    order: {
      ...PROCESSOR_SCENARIO.order,
      sequence: {
        steps: [{ tool: 'get_order' }, { tool: 'get_refund_policy' }, { tool: 'issue_refund' }],
      },
    },
    arguments: [
      { tool: 'issue_refund', match: { mode: 'superset', args: { currency: 'EUR' } } },
      { tool: 'get_order', call: 1, match: { mode: 'regex', pattern: '"orderId":\\s*"A-\\d+"' } },
      {
        tool: 'search_kb',
        match: {
          mode: 'schema',
          schema: {
            type: 'object',
            required: ['query'],
            properties: {
              query: { type: 'string', maxLength: 200 },
              limit: { type: 'integer', maximum: 10 },
            },
          },
        },
      },
    ],
    // The in-process benchmark's grounding and safety rules, over longer conversations.
    grounding: PROCESSOR_SCENARIO.grounding,
    safety: PROCESSOR_SCENARIO.safety,
    efficiency: { maxCalls: 60, repeats: { max: 2 }, maxTokens: 500_000 },
    milestones: {
      define: { found: { tool: 'get_order' }, refunded: { tool: 'issue_refund' } },
      requires: { refunded: ['found'] },
      end: ['refunded'],
    },
    reference: {
      mode: 'superset',
      argsMode: 'ignore',
      turns: [[{ tool: 'search_kb' }, { tool: 'get_order' }], [{ tool: 'issue_refund' }]],
    },
  },
  'bench',
);

/**
 * What the adapter judges by: {@link SCENARIO}, or with `SCENARIO=defaults` the scenario
 * `toolpath serve` uses when none is configured (to see how the ratios depend on the scenario).
 */
export const JUDGED_BY =
  process.env.SCENARIO === 'defaults' ? parseScenario(DEFAULT_SCENARIO, 'built-in defaults') : SCENARIO;

// ---------------------------------------------------------------- the request

const RESOURCE: Attributes = {
  'service.name': 'support-agent',
  'service.version': '2.3.1',
  'service.instance.id': '7f3c2a9e-4b1d-4e8a-9c6f-2d5e8a1b3c7d',
  'deployment.environment.name': 'production',
  'telemetry.sdk.language': 'nodejs',
  'telemetry.sdk.name': 'opentelemetry',
  'telemetry.sdk.version': '2.12.1',
  'host.name': 'support-agent-6d9f7c5b8-x2k4q',
  'process.runtime.name': 'nodejs',
  'process.runtime.version': '20.20.2',
};
const SCOPE: ScopeRecord = { name: '@example/agent-telemetry', version: '1.4.0' };

const SYSTEM_PROMPT =
  'You are the customer support agent of Example Shop. Help customers with orders, deliveries, ' +
  'returns and refunds. Always look the order up before acting on it, check the refund policy ' +
  'before issuing a refund, never refund more than the order amount, and confirm every refund to ' +
  'the customer by email. Use the knowledge base for policy questions. Be brief and polite, do ' +
  'not promise what the tools cannot do, and escalate to a human when the customer asks for one ' +
  'or when a tool keeps failing. Never reveal internal notes or other customers’ data.';

type Json = Record<string, unknown>;
type Call = { id: string; name: string; arguments: Json; result: Json; error?: string };
type Message = { role: string; parts: Json[] };

const WAREHOUSES = [
  'berlin',
  'lyon',
  'milan',
  'vienna',
  'madrid',
  'warsaw',
  'prague',
  'lisbon',
  'oslo',
  'dublin',
  'turin',
  'ghent',
];

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/**
 * One support conversation: the root, `5 + middle` chat turns and `7 + 2 * middle` tool calls
 * (two in parallel per turn but the last). `seed` makes the trace (and span) ids unique.
 */
function conversation(seed: number, n: number, middle: number): SpanRecord[] {
  const traceId = `${hex(seed + 1, 8)}${hex(n + 1, 8)}9e107d9d372bb6826bd81d3542a419d6`.slice(0, 32);
  let spanCounter = 0;
  const spanId = () => `${hex(n + 1, 6)}${hex(++spanCounter, 10)}`;
  const tenant = 't-7';
  const orderId = `A-${100_000 + n}`;
  const amount = 20 + (n % 180) + 0.99;
  const refundId = `R-${500_000 + n}`;
  const email = `customer.${n}@example.com`;
  const rootId = spanId();
  const start = STARTED_NS + BigInt(seed) * 1_000_000_000_000n + BigInt(n) * 60_000_000_000n;
  let t = start + 5_000_000n;
  const spans: SpanRecord[] = [];
  const base = {
    traceId,
    status: { code: 'unset' as const },
    events: [],
    links: [],
    resource: RESOURCE,
    scope: SCOPE,
  };
  const history: Message[] = [
    { role: 'system', parts: [{ type: 'text', content: SYSTEM_PROMPT }] },
    {
      role: 'user',
      parts: [
        {
          type: 'text',
          content: `Hi, my order ${orderId} arrived yesterday but the blender inside is cracked and leaks. I would like a refund to my card please, I do not want a replacement.`,
        },
      ],
    },
  ];
  let turn = 0;
  let inputTokens = 0;
  const chat = (calls: Call[], text?: string) => {
    turn++;
    const output: Message = {
      role: 'assistant',
      parts: text
        ? [{ type: 'text', content: text }]
        : calls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments })),
    };
    inputTokens = 350 + JSON.stringify(history).length / 4;
    spans.push({
      ...base,
      spanId: spanId(),
      parentSpanId: rootId,
      name: 'chat gpt-4o',
      kind: 'client',
      startTimeUnixNano: t,
      endTimeUnixNano: t + 900_000_000n,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.request.temperature': 0.2,
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.response.id': `chatcmpl-${hex(seed, 4)}${hex(n, 6)}${turn}`,
        'gen_ai.response.finish_reasons': [text ? 'stop' : 'tool_calls'],
        'gen_ai.usage.input_tokens': Math.round(inputTokens),
        'gen_ai.usage.output_tokens': 30 + 20 * calls.length,
        'server.address': 'api.openai.com',
        'server.port': 443,
        'gen_ai.input.messages': JSON.stringify(
          HISTORY === 'full' || history.length <= 4
            ? history
            : [...history.slice(0, 2), ...history.slice(-2)],
        ),
        'gen_ai.output.messages': JSON.stringify([
          { ...output, finish_reason: text ? 'stop' : 'tool_calls' },
        ]),
      },
    });
    t += 1_000_000_000n;
    history.push(output);
  };
  const execute = (calls: Call[]) => {
    const shown: Json[] = [];
    for (const c of calls) {
      spans.push({
        ...base,
        spanId: spanId(),
        parentSpanId: rootId,
        name: `execute_tool ${c.name}`,
        kind: 'internal',
        startTimeUnixNano: t,
        endTimeUnixNano: t + 80_000_000n,
        ...(c.error && { status: { code: 'error' as const, message: c.error } }),
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': c.name,
          'gen_ai.tool.type': 'function',
          'gen_ai.tool.call.id': c.id,
          'gen_ai.tool.call.arguments': JSON.stringify(c.arguments),
          ...(c.error
            ? { 'error.type': 'ToolTimeout' }
            : { 'gen_ai.tool.call.result': JSON.stringify(c.result) }),
        },
      });
      shown.push({ type: 'tool_call_response', id: c.id, response: c.error ? { error: c.error } : c.result });
    }
    t += 100_000_000n;
    history.push({ role: 'tool', parts: shown });
  };
  let callCounter = 0;
  const call = (name: string, args: Json, result: Json, error?: string): Call => ({
    id: `call_${hex(seed, 4)}${hex(n, 6)}${hex(++callCounter, 4)}`,
    name,
    arguments: { ...args, tenant },
    result,
    ...(error && { error }),
  });
  const article = (i: number) => ({
    id: `kb-${i}`,
    title: ['Refunds for damaged goods', 'Return shipping labels', 'Card refunds: timing', 'Warranty claims'][
      i % 4
    ],
    snippet: 'Items that arrive damaged can be refunded in full within 30 days of delivery.',
    score: 0.9 - i * 0.07,
  });
  const order = {
    orderId,
    status: 'delivered',
    placedAt: '2026-10-28T14:03:11Z',
    deliveredAt: '2026-11-02T09:41:00Z',
    amount,
    currency: 'EUR',
    customerEmail: email,
    items: [
      { sku: 'BL-4410', name: 'Glass blender 1.5 l', quantity: 1, price: amount - 5 },
      { sku: 'SH-0001', name: 'Shipping', quantity: 1, price: 5 },
    ],
  };
  const steps: Call[][] = [
    [
      call(
        'search_kb',
        { query: 'refund damaged item arrived broken', limit: 3 },
        { articles: [0, 1, 2].map(article) },
      ),
      call('get_order', { orderId }, order),
    ],
    [
      call(
        'lookup_customer',
        { email },
        { customerId: `C-${n}`, name: 'Alex Example', tier: 'gold', orders: 14, since: '2021-03-09' },
      ),
      call(
        'get_refund_policy',
        { orderId },
        { refundable: true, windowDays: 30, method: 'original_payment' },
      ),
    ],
  ];
  for (let m = 0; m < middle; m++) {
    steps.push([
      call(
        'check_inventory',
        { sku: 'BL-4410', warehouse: WAREHOUSES[m % WAREHOUSES.length] },
        { sku: 'BL-4410', available: 3 + m, restockDate: null },
        (n + m) % 17 === 0 ? 'inventory service timed out after 5000 ms' : undefined,
      ),
      m === 0
        ? call(
            'get_shipping_status',
            { orderId },
            { carrier: 'DHL', tracking: `JD0146${n}${m}`, delivered: true },
          )
        : call(
            'search_kb',
            { query: `damaged item question ${m}`, limit: 2 },
            { articles: [m, m + 1].map(article) },
          ),
    ]);
  }
  steps.push(
    [
      // Every 9th conversation refunds an amount it never saw: a grounding failure.
      call(
        'issue_refund',
        { orderId, amount: n % 9 === 4 ? amount + 10 : amount, currency: 'EUR' },
        { refundId, status: 'issued', eta: '3-5 days' },
      ),
      call('add_note', { orderId, note: 'Damaged on arrival, refunded in full.' }, { ok: true }),
    ],
    [
      call(
        'send_confirmation',
        { email, refundId, template: 'refund_issued' },
        { sent: true, messageId: `msg-${n}` },
      ),
    ],
  );
  for (const step of steps) {
    chat(step);
    execute(step);
  }
  chat([], `I have refunded ${amount} EUR to your card (refund ${refundId}); you will get an email shortly.`);
  spans.unshift({
    ...base,
    spanId: rootId,
    name: 'invoke_agent support',
    kind: 'internal',
    startTimeUnixNano: start,
    endTimeUnixNano: t,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support',
      'gen_ai.agent.id': 'agent-support-1',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.conversation.id': `conv-${hex(seed, 4)}-${n}`,
    },
  });
  return spans;
}

export interface Request {
  spans: number;
  traces: number;
  json: string;
  protobuf: Buffer;
}

/** Support conversations of about SPANS_PER_REQUEST spans in all (22-49 spans each), as span records; bench/judge.ts judges them too. */
export function conversations(seed: number): SpanRecord[][] {
  const list: SpanRecord[][] = [];
  let spans = 0;
  while (spans < SPANS_PER_REQUEST) {
    // 3..12 middle turns: 22..49 spans a conversation.
    const trace = conversation(seed, list.length, 3 + ((list.length * 7) % 10));
    list.push(trace);
    spans += trace.length;
  }
  return list;
}

/** The records serialized as an exporter does. */
function serialized(records: readonly SpanRecord[], traces: number): Request {
  const readable = records.map((record) => toReadableSpan(record));
  const json = Buffer.from(JsonTraceSerializer.serializeRequest(readable) as Uint8Array).toString('utf8');
  const protobuf = Buffer.from(ProtobufTraceSerializer.serializeRequest(readable) as Uint8Array);
  return { spans: records.length, traces, json, protobuf };
}

/** About SPANS_PER_REQUEST spans of whole conversations (20-50 spans each), serialized as an exporter does. */
export function request(seed: number): Request {
  const list = conversations(seed);
  return serialized(list.flat(), list.length);
}

/** Spans of a turn (a chat span and its parallel tool calls) in each request of {@link spreadRequests}. */
const SPREAD_CHUNK = 3;

/**
 * The conversations of `request(seed)` as an SDK on a timer exports them while they run: request
 * `k` holds the `k`-th few spans of every conversation (about a turn), each root in the request
 * after its conversation's last turn.
 */
export function spreadRequests(seed: number): Request[] {
  const list = conversations(seed);
  const requests: SpanRecord[][] = [];
  const into = (k: number, spans: SpanRecord[]) => {
    const request = requests[k];
    if (request) request.push(...spans);
    else requests[k] = [...spans];
  };
  for (const [root, ...rest] of list) {
    let k = 0;
    for (let at = 0; at < rest.length; at += SPREAD_CHUNK, k++) into(k, rest.slice(at, at + SPREAD_CHUNK));
    into(k, [root as SpanRecord]);
  }
  return requests.map((records) => serialized(records, list.length));
}

// ---------------------------------------------------------------- the contenders

const reports: Report[] = [];
let keepReports = false;

/**
 * Traces start from now, as live ones do: the adapter drops a span of a trace it does not know
 * that ended longer ago than its wait plus its late window (as a late span of a forgotten trace).
 */
const STARTED_NS = BigInt(Date.now()) * 1_000_000n;

function newAdapter(): TraceAdapter {
  return new TraceAdapter({
    scenarios: [JUDGED_BY],
    // Nothing judges on its own: judgeAllNow does, inside the timed part.
    decision: { waitMs: 1e9, waitAfterRootMs: 1e9 },
    sweepIntervalMs: 1e9,
    onReport: (report) => {
      if (keepReports) reports.push(report);
    },
  });
}

/** Stage times of one end-to-end run (ms). */
type Stages = [decode: number, ingest: number, judge: number, respond: number];
const STAGE_NAMES = ['decode', 'ingest', 'judge', 'respond'];

/** The receiver's path after each body is read, then judging; returns the stage times (summed over the requests). */
function endToEnd<B>(
  adapter: TraceAdapter,
  bodies: readonly B[],
  decode: (body: B) => DecodeResult,
  respond: (partial: unknown) => unknown,
) {
  const stages: Stages = [0, 0, 0, 0];
  for (const body of bodies) {
    const t0 = performance.now();
    const decoded = decode(body);
    const t1 = performance.now();
    const outcome = exportOutcome(adapter, decoded);
    const t2 = performance.now();
    if (outcome.kind !== 'accepted') throw new Error(`request not accepted: ${JSON.stringify(outcome)}`);
    respond(outcome.partial);
    stages[0] += t1 - t0;
    stages[1] += t2 - t1;
    stages[3] += performance.now() - t2;
  }
  const t3 = performance.now();
  adapter.judgeAllNow();
  stages[2] = performance.now() - t3;
  return stages;
}

interface Contender {
  name: string;
  /** Untimed, before the timed part. */
  prepare?: () => void;
  run: () => Stages | undefined;
  /** Untimed, after the timed part. */
  finish?: () => Promise<void>;
}

function contenders(requests: readonly Request[]): Contender[] {
  const traces = (requests[0] as Request).traces;
  const jsons = requests.map((req) => req.json);
  const protobufs = requests.map((req) => req.protobuf);
  let adapter: TraceAdapter | undefined;
  const prepare = () => {
    adapter = newAdapter();
  };
  const finish = async () => {
    const stats = adapter?.stats();
    if (stats?.judgedTraces !== traces || stats.bufferedSpans !== 0)
      throw new Error(`judged ${stats?.judgedTraces} of ${traces} traces`);
    await adapter?.shutdown();
  };
  return [
    {
      name: '(1) JSON.parse (baseline)',
      run: () => {
        for (const json of jsons) JSON.parse(json);
        return undefined;
      },
    },
    {
      name: '(2) JSON end to end',
      prepare,
      run: () =>
        endToEnd(adapter as TraceAdapter, jsons, decodeOtlpJsonText, (partial) =>
          JSON.stringify(partial === undefined ? {} : { partialSuccess: partial }),
        ),
      finish,
    },
    {
      name: '(3) protobufjs decode (baseline)',
      run: () => {
        for (const protobuf of protobufs) ExportTraceServiceRequest.decode(protobuf);
        return undefined;
      },
    },
    {
      name: '(4) protobuf end to end',
      prepare,
      run: () =>
        endToEnd(
          adapter as TraceAdapter,
          protobufs,
          // As the receivers decode: on the long values the adapter holds for the request's traces.
          (protobuf) => decodeExportTraceProtobuf(protobuf, decodeOptionsFor(adapter as TraceAdapter)),
          (partial) => encodeExportTraceResponse(partial as Parameters<typeof encodeExportTraceResponse>[0]),
        ),
      finish,
    },
  ];
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[sorted.length >> 1] as number;
};

async function timeIngest(arrangement: string, requests: readonly Request[]): Promise<void> {
  const list = contenders(requests);
  const spans = requests.reduce((sum, req) => sum + req.spans, 0);
  const wall = list.map(() => [] as number[]);
  const cpu = list.map(() => [] as number[]);
  const stages = list.map(() => [] as Stages[]);
  for (let r = -WARMUP_ROUNDS; r < ROUNDS; r++) {
    // The order rotates, so drift in machine load and GC debt fall on every contender alike.
    for (let k = 0; k < list.length; k++) {
      const index = (r + WARMUP_ROUNDS + k) % list.length;
      const contender = list[index] as Contender;
      contender.prepare?.();
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      const stage = contender.run();
      const elapsed = performance.now() - start;
      const used = process.cpuUsage(cpuStart);
      await contender.finish?.();
      if (r < 0) continue;
      wall[index]?.push(elapsed);
      cpu[index]?.push((used.user + used.system) / 1000);
      if (stage) stages[index]?.push(stage);
    }
  }

  console.log(
    `\n${arrangement}: ${spans} spans in ${requests.length} request(s). ${ROUNDS} rounds after ${WARMUP_ROUNDS} warm-up rounds, contenders interleaved; medians (wall time; process CPU time)`,
  );
  console.log(
    'contender                          wall ms    p25..p75 ms      spans/s     cpu ms      spans/s (cpu)',
  );
  for (const [i, contender] of list.entries()) {
    const w = [...(wall[i] as number[])].sort((x, y) => x - y);
    const q = (f: number) => (w[Math.floor(w.length * f)] as number).toFixed(2);
    const m = median(w);
    const c = median(cpu[i] as number[]);
    const rate = (ms: number) => Math.round(spans / (ms / 1000)).toLocaleString('en');
    console.log(
      `${contender.name.padEnd(33)} ${m.toFixed(2).padStart(8)}   ${q(0.25).padStart(6)}..${q(0.75).padEnd(7)} ${rate(m).padStart(10)}   ${c.toFixed(2).padStart(8)}   ${rate(c).padStart(10)}`,
    );
  }

  console.log(
    '\nbudget (DESIGN.md, Adapter): end-to-end throughput at least 0.5x bare protobuf decoding, at least 0.35x bare JSON.parse for OTLP JSON',
  );
  for (const [e2e, base, what, least] of [
    [1, 0, 'JSON     (2)/(1)', 0.35],
    [3, 2, 'protobuf (4)/(3)', 0.5],
  ] as const) {
    const ratioWall = median(wall[base] as number[]) / median(wall[e2e] as number[]);
    const ratioCpu = median(cpu[base] as number[]) / median(cpu[e2e] as number[]);
    // Per round: the baseline's time over the end-to-end time of the same round (steadier under drift).
    const paired = median((wall[e2e] as number[]).map((x, r) => ((wall[base] as number[])[r] as number) / x));
    const verdict = (x: number) => (x >= least ? 'met' : 'NOT met');
    const perCore = Math.round(spans / (median(cpu[e2e] as number[]) / 1000)).toLocaleString('en');
    console.log(
      `  ${what} at least ${least}x: ${ratioWall.toFixed(2)}x (${verdict(ratioWall)}), paired ${paired.toFixed(2)}x, cpu ${ratioCpu.toFixed(2)}x (${verdict(ratioCpu)}); ` +
        `end to end ${perCore} spans/s per core (CPU time); meeting it takes end to end <= ${(median(cpu[base] as number[]) / least).toFixed(1)} cpu ms, now ${median(cpu[e2e] as number[]).toFixed(1)}`,
    );
  }

  console.log('\nwhere end-to-end time goes (medians of each stage, share of the stage sum)');
  for (const i of [1, 3]) {
    const per = STAGE_NAMES.map((_, s) => median((stages[i] as Stages[]).map((st) => st[s] as number)));
    const sum = per.reduce((a, b) => a + b, 0);
    const parts = per.map(
      (ms, s) => `${STAGE_NAMES[s]} ${ms.toFixed(2)} ms (${((ms / sum) * 100).toFixed(0)}%)`,
    );
    console.log(`  ${(list[i] as Contender).name.padEnd(24)} ${parts.join(', ')}`);
  }
}

// ---------------------------------------------------------------- heap per buffered span

const gc = (globalThis as { gc?: () => void }).gc;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc?.();
  return process.memoryUsage().heapUsed;
}

export async function measureHeap(): Promise<void> {
  if (!gc) {
    console.log(
      '\nheap per buffered span: run with --expose-gc (node --expose-gc --import tsx bench/collector.ts, or npx tsx --expose-gc bench/collector.ts)',
    );
    return;
  }
  console.log(
    `\nheap after GC, the conversations of ${HEAP_REQUESTS} requests ingested and not judged (fresh trace ids each; bodies let go)`,
  );
  const arrangements = [
    ['whole conversations a request', (seed: number) => [request(seed)]],
    ['turns spread over requests', spreadRequests],
  ] as const;
  for (const [arrangement, requestsOf] of arrangements) {
    console.log(`  ${arrangement}`);
    for (const [name, decode] of [
      ['JSON', (r: Request) => decodeOtlpJsonText(r.json)],
      // As the receivers decode: on the values the adapter holds for the request's traces.
      [
        'protobuf',
        (r: Request, on: TraceAdapter) => decodeExportTraceProtobuf(r.protobuf, decodeOptionsFor(on)),
      ],
    ] as const) {
      const adapter = newAdapter();
      const before = heapAfterGc();
      let wire = 0;
      for (let i = 0; i < HEAP_REQUESTS; i++) {
        for (const req of requestsOf(1_000 + i)) {
          wire += name === 'JSON' ? Buffer.byteLength(req.json) : req.protobuf.length;
          const result = adapter.ingest(decode(req, adapter));
          if (result.kind !== 'accepted') throw new Error(`not accepted: ${result.message}`);
        }
      }
      const delta = heapAfterGc() - before;
      const { bufferedSpans, bufferedTraces, bufferedBytes } = adapter.stats();
      const per = (bytes: number) => (bytes / bufferedSpans).toFixed(0);
      console.log(
        `    ${name.padEnd(9)} ${bufferedSpans} spans in ${bufferedTraces} traces: ${per(delta).padStart(6)} B per buffered span (as estimated for limits.maxBufferedBytes: ${per(bufferedBytes)} B; body on the wire: ${per(wire)} B)`,
      );
      adapter.judgeAllNow();
      await adapter.shutdown();
    }
  }
}

// ---------------------------------------------------------------- loopback HTTP (not part of the ratios)

async function measureHttp(req: Request): Promise<void> {
  // The receiver takes spans through this; each request gets a fresh adapter.
  let adapter = newAdapter();
  const ingest: TraceIngest = {
    ingest: (decoded) => adapter.ingest(decoded),
    ready: () => true,
    heldTexts: (traceId) => adapter.heldTexts(traceId),
  };
  const receiver = await startHttpReceiver({ host: '127.0.0.1', port: 0, ingest, maxRequestBytes: 64 << 20 });
  const url = `${receiver.url}/v1/traces`;
  console.log(
    `\nloopback HTTP, not part of the ratios: POST /v1/traces with fetch (same process, keep-alive), then judgeAllNow; ${HTTP_REQUESTS} requests each, medians`,
  );
  try {
    for (const [name, type, body] of [
      ['JSON', 'application/json', req.json],
      ['protobuf', 'application/x-protobuf', req.protobuf],
    ] as const) {
      const post: number[] = [];
      const judge: number[] = [];
      for (let i = -3; i < HTTP_REQUESTS; i++) {
        await adapter.shutdown();
        adapter = newAdapter();
        const start = performance.now();
        const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': type }, body });
        await response.arrayBuffer();
        const posted = performance.now();
        adapter.judgeAllNow();
        const judged = performance.now();
        if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
        if (adapter.stats().judgedTraces !== req.traces) throw new Error('not every trace judged');
        if (i < 0) continue;
        post.push(posted - start);
        judge.push(judged - posted);
      }
      const p = median(post);
      const j = median(judge);
      const rate = (ms: number) => Math.round(req.spans / (ms / 1000)).toLocaleString('en');
      console.log(
        `  ${name.padEnd(9)} POST round trip ${p.toFixed(2).padStart(7)} ms + judge ${j.toFixed(2).padStart(6)} ms = ${(p + j).toFixed(2).padStart(7)} ms  ${rate(p + j).padStart(9)} spans/s`,
      );
    }
  } finally {
    await receiver.close();
    await adapter.shutdown();
  }
}

// ---------------------------------------------------------------- run

/** The reports of the traces in these requests, ingested one after another (protobuf, as the receivers decode), then judged. */
async function reportsOf(requests: readonly Request[]): Promise<Report[]> {
  const adapter = newAdapter();
  keepReports = true;
  for (const req of requests)
    exportOutcome(adapter, decodeExportTraceProtobuf(req.protobuf, decodeOptionsFor(adapter)));
  adapter.judgeAllNow();
  keepReports = false;
  await adapter.shutdown();
  return reports.splice(0);
}

/**
 * Both payloads decode cleanly to every span; every trace is judged against every rule, to the
 * same reports whether its turns come in one request or spread over several.
 */
async function sanity(req: Request): Promise<void> {
  for (const decoded of [decodeOtlpJsonText(req.json), decodeExportTraceProtobuf(req.protobuf)]) {
    if (decoded.spans.length !== req.spans || decoded.errors.length > 0)
      throw new Error(
        `decoded ${decoded.spans.length} of ${req.spans} spans: ${JSON.stringify(decoded.errors)}`,
      );
  }
  const whole = await reportsOf([req]);
  if (whole.length !== req.traces) throw new Error(`${whole.length} reports for ${req.traces} traces`);
  const spread = await reportsOf(spreadRequests(0));
  const findings = (list: Report[]) =>
    JSON.stringify(list.map((report) => [report.traceId, report.verdict, report.assertions]).sort());
  if (findings(spread) !== findings(whole))
    throw new Error('turns spread over requests are judged differently');
  const verdicts = new Map<string, number>();
  for (const report of whole) verdicts.set(report.verdict, (verdicts.get(report.verdict) ?? 0) + 1);
  const calls = whole.reduce((n, report) => n + report.stats.calls, 0);
  console.log(
    `request: ${req.spans} spans in ${req.traces} support-agent traces (${calls} tool calls), ${HISTORY} history in chat input messages; OTLP JSON ${(req.json.length / 1024).toFixed(0)} KiB, protobuf ${(req.protobuf.length / 1024).toFixed(0)} KiB`,
  );
  console.log(
    `scenario ${JUDGED_BY.id}: ${(whole[0] as Report).assertions.length} rules; verdicts ${JSON.stringify(Object.fromEntries(verdicts))}`,
  );
  const failing = new Map<string, number>();
  for (const report of whole)
    for (const a of report.assertions)
      if (a.status !== 'pass')
        failing.set(`${a.name} ${a.status}`, (failing.get(`${a.name} ${a.status}`) ?? 0) + 1);
  if (failing.size > 0) console.log(`  not passed (traces): ${JSON.stringify(Object.fromEntries(failing))}`);
}

async function main(): Promise<void> {
  const req = request(0);
  await sanity(req);
  await timeIngest('whole conversations a request', [req]);
  await timeIngest('the same conversations, turns spread over requests', spreadRequests(0));
  await measureHeap();
  if (process.env.HTTP !== '0') await measureHttp(req);
  if (process.env.DURABLE !== '0') await measureDurable(request, JUDGED_BY);
}

// Run when invoked, not when imported (the request builder is exported for profiling scripts).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
