/**
 * One long conversation through the adapter behind its real OTLP/HTTP receiver: N traces of two
 * calls each (20,000 by default: 40,000 calls, under the default `maxCalls`), all in one
 * conversation, then one trace of no conversation; against the same N traces with no
 * conversation id, measured in the same run. Prints, for each: the time from the first request
 * to the trace of no conversation judged (wall and process CPU), the reports file's size, its
 * longest line and longest provisional line, and the process's peak RSS after each; then the ratios. The machine is shared and noisy:
 * compare ratios, not absolute times.
 *
 *   npx tsx bench/long-conversation.ts          (N=5000 for a quick run)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceAdapter } from '../src/collector/adapter.js';
import { startHttpReceiver } from '../src/collector/http-receiver.js';
import { ReportsFile } from '../src/collector/reports-file.js';

const N = Number(process.env.N ?? 20_000);
const SCENARIO = {
  id: 'chat',
  scope: 'conversation',
  tools: { required: ['get_order', 'issue_refund'], counts: { get_order: { max: 1 } } },
  order: { before: [{ before: 'get_order', after: 'issue_refund' }] },
};
const START = BigInt(Date.now() - 600_000) * 1_000_000n;

const hex = (n: number, digits: number) => (n + 1).toString(16).padStart(digits, '0');

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  end: bigint;
  attributes: Record<string, string>;
}

/** Trace `n`: an agent run calling get_order then issue_refund, 1 ms after trace n-1 ended. */
function trace(n: number, conversationId: string | undefined): JsonSpan[] {
  const traceId = hex(n, 32);
  const end = START + BigInt(n) * 3_000_000n;
  const tool = (span: number, name: string): JsonSpan => ({
    traceId,
    spanId: hex(span, 16),
    parentSpanId: hex(0, 16),
    name: `execute_tool ${name}`,
    end: end + BigInt(span - 1) * 1_000_000n,
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': `call-${span}`,
      'gen_ai.tool.call.arguments': '{"orderId":"A1"}',
    },
  });
  const attributes: Record<string, string> = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'support',
  };
  if (conversationId !== undefined) attributes['gen_ai.conversation.id'] = conversationId;
  const root = {
    traceId,
    spanId: hex(0, 16),
    name: 'invoke_agent support',
    end: end + 2_000_000n,
    attributes,
  };
  return [root, tool(1, 'get_order'), tool(2, 'issue_refund')];
}

/** POSTs spans to `/v1/traces` as OTLP JSON. */
function postSpans(url: string, spans: readonly JsonSpan[]): Promise<Response> {
  const body = JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
        scopeSpans: [
          {
            scope: { name: 'bench' },
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId && { parentSpanId: span.parentSpanId }),
              name: span.name,
              kind: 1,
              startTimeUnixNano: String(span.end - 1_000_000n),
              endTimeUnixNano: String(span.end),
              attributes: Object.entries(span.attributes).map(([key, value]) => ({
                key,
                value: { stringValue: value },
              })),
              status: {},
            })),
          },
        ],
      },
    ],
  });
  return fetch(`${url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

interface Run {
  wallMs: number;
  cpuMs: number;
  reportBytes: number;
  longestLine: number;
  longestProvisional: number;
  rssMiB: number;
}

async function run(conversationId: string | undefined): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'toolpath-long-'));
  const path = join(dir, 'reports.jsonl');
  const reports = new ReportsFile(path);
  let lone = false;
  const loneId = trace(N, undefined)[0]?.traceId;
  const adapter = new TraceAdapter({
    scenarios: [SCENARIO],
    decision: { waitMs: 1e9, waitAfterRootMs: 10 },
    conversations: { idleMs: 1e12 },
    limits: { maxTraces: N + 10 },
    onJudged: (spans, judgement) => {
      reports.writeTrace(spans, judgement.reports);
      if (judgement.trajectory?.traceId === loneId) lone = true;
    },
    onConversationJudged: (judgement) => reports.writeReports(judgement.reports),
  });
  const receiver = await startHttpReceiver({
    host: '127.0.0.1',
    port: 0,
    ingest: adapter,
    maxRequestBytes: 64 << 20,
  });
  const wall = performance.now();
  const cpu = process.cpuUsage();
  for (let first = 0; first < N; first += 500) {
    const spans: JsonSpan[] = [];
    for (let n = first; n < Math.min(N, first + 500); n++) spans.push(...trace(n, conversationId));
    const response = await postSpans(receiver.url, spans);
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
  }
  await postSpans(receiver.url, trace(N, undefined));
  while (!lone) await new Promise((resolve) => setTimeout(resolve, 10));
  const wallMs = performance.now() - wall;
  const used = process.cpuUsage(cpu);
  await receiver.close();
  await adapter.shutdown();
  await reports.close();
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: Run = {
    wallMs,
    cpuMs: (used.user + used.system) / 1000,
    reportBytes: lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0),
    longestLine: Math.max(...lines.map((line) => Buffer.byteLength(line))),
    longestProvisional: Math.max(
      0,
      ...lines.filter((line) => line.includes('"final":false')).map((line) => Buffer.byteLength(line)),
    ),
    rssMiB: process.resourceUsage().maxRSS / 1024,
  };
  rmSync(dir, { recursive: true, force: true });
  return out;
}

const alone = await run(undefined);
const together = await run('long');
const show = (name: string, r: Run) =>
  console.log(
    `${name}: ${r.wallMs.toFixed(0)} ms wall, ${r.cpuMs.toFixed(0)} ms CPU to the trace of no conversation judged; ` +
      `reports ${(r.reportBytes / 1024 / 1024).toFixed(1)} MiB, longest line ${r.longestLine} B (provisional ${r.longestProvisional} B); peak RSS ${r.rssMiB.toFixed(0)} MiB`,
  );
console.log(`${N} traces of 2 calls, then one trace of no conversation`);
show('no conversation  ', alone);
show('one conversation ', together);
console.log(
  `ratio one conversation / no conversation: ${(together.wallMs / alone.wallMs).toFixed(2)}x wall, ${(together.cpuMs / alone.cpuMs).toFixed(2)}x CPU`,
);
