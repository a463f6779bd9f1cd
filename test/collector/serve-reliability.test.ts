/**
 * `toolpath serve` as a real process, under what broke it in an attack (issue 24): an argument
 * nested 5,000 deep, findings queued for a next hop that is down at SIGTERM, one request with
 * more traces than `limits.maxTraces`, a late span after 100,000 other traces were judged, a
 * span of a forgotten trace, and clients arriving while it drains.
 */
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import {
  agentRoot,
  grpcExport,
  type JsonSpan,
  postSpans,
  spanIdOf,
  startServe,
  toolSpan,
  traceIdOf,
} from '../helpers/serve-process.js';
import { eventually } from './next-hop.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** An OTLP/HTTP next hop: `/v1/traces` as `onTraces` says, `/v1/metrics` recorded and answered 200. */
async function nextHop(onTraces: (req: IncomingMessage, res: ServerResponse) => void) {
  const metrics: unknown[] = [];
  const server: Server = createServer((req, res) => {
    if (req.url === '/v1/traces') return onTraces(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      metrics.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, metrics };
}

/** The report lines of a reports file (none while it does not exist). */
function reportLines(file: string): { traceId: string; verdict: string; findings: { rule: string }[] }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/** The value of a Prometheus gauge or counter with these labels in a scrape, or undefined. */
function scraped(text: string, name: string): number | undefined {
  const line = text.split('\n').find((row) => row.startsWith(`${name} `) || row.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('toolpath serve under attack', () => {
  it('judges a trace whose tool arguments nest 5,000 deep: inconclusive, and says why', async () => {
    const scenario = [
      'id: refund.arguments',
      'arguments:',
      '  - { tool: issue_refund, match: { mode: superset, args: { amount: 40 } } }',
      '  - { tool: issue_refund, match: { mode: exact, args: { orderId: [], amount: 40 } } }',
      '  - { tool: issue_refund, match: { mode: regex, pattern: "amount" } }',
      '',
    ].join('\n');
    const serve = await startServe('scenarios: [deep.yaml]\nreports: { file: reports.jsonl }\n', {
      'deep.yaml': scenario,
    });
    const deep = `{"orderId":${'['.repeat(5_000)}${']'.repeat(5_000)},"amount":40}`;
    const response = await postSpans(serve.httpUrl, [agentRoot(1), toolSpan(1, 1, 'issue_refund', deep)]);
    expect(response.status).toBe(200);
    expect(await serve.stop()).toBe(0);
    const [report, ...others] = reportLines(join(serve.dir, 'reports.jsonl'));
    expect(others).toEqual([]);
    expect(report?.verdict).toBe('inconclusive');
    expect(report?.findings.map((finding) => finding.rule)).toContain('trajectory.arguments.too_deep');
    expect(serve.stdout()).toMatch(/toolpath serve: stopped; 1 trace judged, 0 late spans; nothing lost/);
  }, 60_000);

  it('counts every finding it could not deliver at SIGTERM, in the stop line and the last metrics export', async () => {
    // The next hop is down for traces (every connection reset) and up for metrics.
    const hop = await nextHop((req) => req.socket.destroy());
    const traces = 300;
    const serve = await startServe(
      [
        'exporters:',
        `  otlp: { endpoint: "${hop.url}", protocol: http/json }`,
        'decision: { waitAfterRoot: 10ms }',
        '',
      ].join('\n'),
    );
    const roots = Array.from({ length: traces }, (_, n) => agentRoot(n));
    expect((await postSpans(serve.httpUrl, roots)).status).toBe(200);
    expect(await serve.stop()).toBe(0);
    expect(serve.stdout()).toMatch(
      new RegExp(
        `stopped; ${traces} traces judged, 0 late spans; lost: ${traces} findings \\(next hop unreachable\\)`,
      ),
    );
    const last = hop.metrics.at(-1) as {
      resourceMetrics: {
        scopeMetrics: {
          metrics: {
            name: string;
            sum?: {
              dataPoints: {
                asDouble: number;
                attributes: { key: string; value: { stringValue: string } }[];
              }[];
            };
          }[];
        }[];
      }[];
    };
    const dropped = last.resourceMetrics
      .flatMap((resource) => resource.scopeMetrics)
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.name === 'toolpath.traces.dropped');
    const byReason = Object.fromEntries(
      (dropped?.sum?.dataPoints ?? []).map((point) => [
        point.attributes.find((a) => a.key === 'toolpath.drop.reason')?.value.stringValue,
        point.asDouble,
      ]),
    );
    // The last export, made as it stopped, holds what was lost then (and nothing else was dropped).
    expect(byReason).toEqual({ forward_unsent_at_shutdown: traces });
  }, 90_000);

  it(`takes the traces of a request that fit limits.maxTraces and rejects the rest for good: 200, not 429 for ever`, async () => {
    const serve = await startServe('');
    const spans: JsonSpan[] = Array.from({ length: 10_001 }, (_, n) => ({
      traceId: traceIdOf(n),
      spanId: spanIdOf(0),
      name: 'work',
    }));
    const response = await postSpans(serve.httpUrl, spans);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      partialSuccess: { rejectedSpans: string; errorMessage: string };
    };
    expect(body.partialSuccess.rejectedSpans).toBe('1');
    expect(body.partialSuccess.errorMessage).toMatch(
      /^1 of 10001 spans not kept: 1 of 1 traces past limits\.maxTraces \(10000 traces at once; the request brought 10001 new traces\)/,
    );
    expect(await serve.stop()).toBe(0);
    expect(serve.stdout()).toMatch(
      /stopped; 10000 traces judged, 0 late spans; nothing lost; dropped: 1 span \(of traces past limits\.maxTraces/,
    );
  }, 90_000);

  it('judges a trace once when its late span comes after 100,000 other traces were judged, and drops a span of a forgotten trace', async () => {
    const prometheus = await freePort();
    const serve = await startServe(
      [
        'reports: { file: reports.jsonl }',
        'decision: { wait: 1s, waitAfterRoot: 10ms }',
        `metrics: { prometheus: { endpoint: "127.0.0.1:${prometheus}" } }`,
        '',
      ].join('\n'),
    );
    const reports = join(serve.dir, 'reports.jsonl');
    const scrape = async () => (await fetch(`http://127.0.0.1:${prometheus}/metrics`)).text();
    const judgedAll = async () => scraped(await scrape(), 'toolpath_buffer_traces') === 0;
    expect((await postSpans(serve.httpUrl, [agentRoot(0)])).status).toBe(200);
    await eventually(() => reportLines(reports).length === 1, 'the agent trace judged', 30_000);
    // 100,001 other traces, judged one batch after another.
    for (let first = 1; first <= 100_001; ) {
      const count = Math.min(5_000, 100_002 - first);
      const batch = Array.from({ length: count }, (_, n) => ({
        traceId: traceIdOf(first + n),
        spanId: spanIdOf(0),
        name: 'work',
      }));
      const response = await postSpans(serve.httpUrl, batch);
      if (response.status === 429) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      expect(response.status).toBe(200);
      first += count;
    }
    for (let ready = await judgedAll(); !ready; ready = await judgedAll())
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await postSpans(serve.httpUrl, [toolSpan(0, 1, 'lookup', '{}')])).status).toBe(200);
    // An agent trace never seen, whose root ended 20 minutes ago: late, not a trace to judge.
    const stale = { ...agentRoot(200_000), endTimeUnixNano: BigInt(Date.now() - 20 * 60_000) * 1_000_000n };
    const answer = (await (await postSpans(serve.httpUrl, [stale])).json()) as {
      partialSuccess?: { rejectedSpans: string; errorMessage: string };
    };
    expect(await serve.stop()).toBe(0);
    // One report for the first trace: its late span followed its decision.
    expect(reportLines(reports).map((line) => line.traceId)).toEqual([traceIdOf(0)]);
    expect(answer.partialSuccess?.rejectedSpans).toBe('1');
    expect(answer.partialSuccess?.errorMessage).toMatch(/late_unknown/);
    // (Batches that came while the buffer was full were refused, 429, and sent again.)
    expect(serve.stdout()).toMatch(
      /stopped; 100002 traces judged, 1 late span; nothing lost; dropped: .*\b1 span \(late, of traces no longer known\)\n/,
    );
  }, 240_000);

  it('keeps both listeners open while it drains, answering 503 / UNAVAILABLE with Retry-After until the last forward attempt ends', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let exports = 0;
    const hop = await nextHop((req, res) => {
      exports++;
      req.resume();
      held.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    cleanup.push(release);
    const serve = await startServe(
      ['exporters:', `  otlp: { endpoint: "${hop.url}", protocol: http/json }`, ''].join('\n'),
    );
    expect((await postSpans(serve.httpUrl, [agentRoot(1)])).status).toBe(200);
    serve.child.kill('SIGTERM');
    // The trace is judged at SIGTERM and its findings sent: the next hop holds that export.
    await eventually(() => exports > 0, 'the last forward attempt', 30_000);
    const refused = await postSpans(serve.httpUrl, [agentRoot(2)]);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await fetch(`${serve.httpUrl}/readyz`)).status).toBe(503);
    expect((await fetch(`${serve.httpUrl}/healthz`)).status).toBe(200);
    const error = await grpcExport(serve.grpcAddress);
    expect(error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(error?.details).toBe('shutting down');
    release();
    expect(await serve.exited).toBe(0);
    expect(serve.stdout()).toMatch(/stopped; 1 trace judged, 0 late spans; nothing lost/);
    await expect(fetch(`${serve.httpUrl}/healthz`)).rejects.toThrow();
  }, 60_000);
});
