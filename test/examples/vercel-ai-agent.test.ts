/**
 * Runs examples/vercel-ai-agent/agent.ts for real, as a child process, with its OTLP endpoint
 * pointed at a loopback HTTP server started here, and reads what the exporter sent the way a
 * backend would: the verdicts must be in the exported spans, not only in the app's output.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeExportTraceRequest, parseOtlpJsonText, type SpanRecord } from '../../src/index.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = 'examples/vercel-ai-agent/agent.ts';

interface Received {
  spans: SpanRecord[];
  /** Requests that were not OTLP JSON, or spans that did not decode. */
  problems: string[];
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let server: Server;
let endpoint: string;
const received: Received = { spans: [], problems: [] };
let run: Run;

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

/** A minimal OTLP/HTTP trace receiver: JSON bodies, decoded with toolpath's own decoder. */
function startReceiver(): Promise<string> {
  server = createServer((request, response) => {
    body(request)
      .then((bytes) => {
        const type = request.headers['content-type'] ?? '';
        if (
          request.method !== 'POST' ||
          request.url !== '/v1/traces' ||
          !type.startsWith('application/json')
        ) {
          received.problems.push(`unexpected request: ${request.method} ${request.url} ${type}`);
          response.writeHead(415).end();
          return;
        }
        const decoded = decodeExportTraceRequest(parseOtlpJsonText(bytes.toString('utf8')));
        received.spans.push(...decoded.spans);
        for (const error of decoded.errors) received.problems.push(`${error.path}: ${error.message}`);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      })
      .catch((error: unknown) => {
        received.problems.push(String(error));
        response.writeHead(400).end();
      });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve(`http://127.0.0.1:${port}/v1/traces`);
    });
  });
}

function runExample(): Promise<Run> {
  // The child sees only our endpoint, whatever OTEL_* settings the test runner has.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('OTEL_')));
  const child = spawn(process.execPath, ['--import', 'tsx', EXAMPLE], {
    cwd: REPO,
    env: { ...env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 25_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

beforeAll(async () => {
  endpoint = await startReceiver();
  run = await runExample();
}, 30_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

/** The agent span (the AI SDK's `invoke_agent`) of one conversation. */
function agentSpan(conversation: string): SpanRecord {
  const span = received.spans.find(
    (s) =>
      s.attributes['gen_ai.operation.name'] === 'invoke_agent' &&
      s.attributes['gen_ai.conversation.id'] === conversation,
  );
  if (!span) throw new Error(`no agent span of ${conversation} was exported`);
  return span;
}

const eventsNamed = (span: SpanRecord, name: string) =>
  span.events.filter((event) => event.name === name).map((event) => event.attributes);

const spansOfTrace = (traceId: string) => received.spans.filter((span) => span.traceId === traceId);

/** The trace id the example printed with a verdict line. */
function printedTrace(verdict: string): string | undefined {
  return run.stdout.match(new RegExp(`support\\.refund@1 ${verdict}.* trace=([0-9a-f]{32})`))?.[1];
}

describe('examples/vercel-ai-agent', () => {
  it('runs to the end and exits 0, with no errors from toolpath or the exporter', () => {
    expect(run.signal, run.stderr).toBeNull();
    expect(run.code, run.stderr).toBe(0);
    // diag (warnings and errors of toolpath and the exporter) writes to stderr.
    expect(run.stderr).not.toMatch(/toolpath|export|error/i);
    expect(received.problems).toEqual([]);
    expect(run.stdout).toMatch(/toolpath judged 3 traces/);
  });

  it('exports the good conversation with a passing gen_ai.evaluation.result on its agent span', () => {
    const agent = agentSpan('good-refund');
    expect(agent.parentSpanId).toBeUndefined();
    const results = eventsNamed(agent, 'gen_ai.evaluation.result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      'gen_ai.evaluation.name': 'support.refund@1',
      'gen_ai.evaluation.score.label': 'pass',
      'gen_ai.evaluation.score.value': 1,
      'toolpath.trajectory.tool_calls': 4,
    });
    expect(eventsNamed(agent, 'toolpath.finding')).toEqual([]);
    // Kept because it called an irreversible tool; every span of the trace carries the stamp.
    for (const span of spansOfTrace(agent.traceId)) {
      expect(span.attributes['toolpath.sampling.reason']).toBe('irreversible_tool');
      expect(span.attributes['toolpath.sampling.adjusted_count']).toBe(1);
    }
    expect(printedTrace('pass')).toBe(agent.traceId);
  });

  it('exports the refund-before-policy conversation with a failing result and an order.before finding', () => {
    const agent = agentSpan('refund-before-policy');
    expect(eventsNamed(agent, 'gen_ai.evaluation.result')[0]).toMatchObject({
      'gen_ai.evaluation.name': 'support.refund@1',
      'gen_ai.evaluation.score.label': 'fail',
    });
    const finding = eventsNamed(agent, 'toolpath.finding').find(
      (event) => event['toolpath.finding.rule'] === 'order.before',
    );
    expect(finding).toMatchObject({
      'toolpath.scenario.id': 'support.refund',
      'toolpath.finding.severity': 'hard',
    });
    // The spans the finding names are spans of that trace the backend received.
    const trace = spansOfTrace(agent.traceId);
    const named = finding?.['toolpath.finding.spans'] as string[];
    expect(named.length).toBeGreaterThan(0);
    for (const id of named) expect(trace.map((span) => span.spanId)).toContain(id);
    expect(trace.filter((span) => span.attributes['gen_ai.operation.name'] === 'execute_tool')).toHaveLength(
      4,
    );
    expect(agent.attributes['toolpath.sampling.reason']).toBe('hard_finding');
  });

  it('puts the verdict of the conversation inside an HTTP request on a toolpath.evaluate span under the agent span', () => {
    const agent = agentSpan('made-up-confirmation');
    expect(agent.parentSpanId).toBeDefined();
    expect(eventsNamed(agent, 'gen_ai.evaluation.result')).toEqual([]);
    const evaluation = spansOfTrace(agent.traceId).find((span) => span.name === 'toolpath.evaluate');
    expect(evaluation?.parentSpanId).toBe(agent.spanId);
    const evaluated = evaluation as SpanRecord;
    expect(eventsNamed(evaluated, 'gen_ai.evaluation.result')[0]?.['gen_ai.evaluation.score.label']).toBe(
      'fail',
    );
    expect(
      eventsNamed(evaluated, 'toolpath.finding').map((event) => event['toolpath.finding.rule']),
    ).toContain('grounding.source');
    expect(evaluated.attributes['toolpath.sampling.reason']).toBe('hard_finding');
  });
});
