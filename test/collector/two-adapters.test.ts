/**
 * The scaling pattern of examples/collector: a load-balancing tier routes each trace by id to one
 * of several adapters over OTLP/gRPC. Two real `toolpath serve` processes, a client that routes
 * like the Collector's loadbalancing exporter (by trace id, gRPC, spans of one trace in several
 * requests mixed with other traces'), and the proof: every trace judged once, whole, by the
 * adapter its id routes to.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import type { AgentScript } from '../processor/vercel-agent.js';
import { REFUND_SCENARIO } from '../processor/vercel-agent.js';
import { agentSpans, sendWith } from './next-hop.js';

const BIN = new URL('../../src/cli/bin.ts', import.meta.url).pathname;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

interface Adapter {
  grpc: string;
  reportsFile: string;
  stopped: Promise<number | null>;
  process: ChildProcess;
}

async function startAdapter(dir: string, name: string): Promise<Adapter> {
  const reportsFile = join(dir, `${name}.jsonl`);
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    [
      'receivers:',
      '  otlp:',
      '    http: null',
      '    grpc: { endpoint: "127.0.0.1:0" }',
      'scenarios: [refund.json]',
      'decision: { wait: 20s, waitAfterRoot: 5s }',
      `reports: { file: ${JSON.stringify(reportsFile)} }`,
    ].join('\n'),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', BIN, 'serve', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const stopped = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let output = '';
  let errors = '';
  child.stderr?.on('data', (chunk) => (errors += chunk));
  const grpc = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      const match = /OTLP\/gRPC\s+(\S+)/.exec(output);
      if (match) resolve(match[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`adapter ${name} exited ${code}: ${errors}`)));
  });
  return { grpc, reportsFile, stopped, process: child };
}

/** The loadbalancing exporter's choice, in spirit: a stable hash of the trace id over the backends. */
function route(traceId: string, backends: number): number {
  return createHash('sha256').update(traceId).digest().readUInt32BE(0) % backends;
}

describe('two adapters behind a trace-id router', () => {
  it('judges every trace exactly once, whole, on the adapter its id routes to', async () => {
    const dir = temporaryDir('toolpath-two-');
    writeFileSync(join(dir, 'refund.json'), JSON.stringify(REFUND_SCENARIO));
    const adapters = await Promise.all([startAdapter(dir, 'a'), startAdapter(dir, 'b')]);

    const scripts: AgentScript[] = ['good', 'refund-before-policy', 'made-up-confirmation', 'tool-error'];
    const traces: ReadableSpan[][] = [];
    for (let i = 0; i < 16; i++) traces.push(await agentSpans(scripts[i % scripts.length] as AgentScript));
    // Each trace in three parts; the parts of all traces interleaved, as batches from many app instances.
    const parts = traces.flatMap((spans) => [0, 1, 2].map((k) => spans.filter((_, i) => i % 3 === k)));
    parts.sort((x, y) => (x[0]?.spanContext().spanId ?? '').localeCompare(y[0]?.spanContext().spanId ?? ''));
    for (const part of parts) {
      const traceId = part[0]?.spanContext().traceId as string;
      const target = adapters[route(traceId, adapters.length)] as Adapter;
      expect(await sendWith('grpc', `http://${target.grpc}`, part)).toBe(0);
    }
    for (const adapter of adapters) adapter.process.kill('SIGTERM');
    expect(await Promise.all(adapters.map((adapter) => adapter.stopped))).toEqual([0, 0]);

    const judgedBy = new Map<string, number[]>();
    adapters.forEach((adapter, index) => {
      const lines = readFileSync(adapter.reportsFile, 'utf8').trim().split('\n').filter(Boolean);
      for (const line of lines) {
        const report = JSON.parse(line) as Report;
        judgedBy.set(report.traceId, [...(judgedBy.get(report.traceId) ?? []), index]);
        // Whole: every call of the conversation was in the trace that was judged.
        const expectedCalls = traces
          .find((t) => t[0]?.spanContext().traceId === report.traceId)
          ?.filter((s) => s.name.startsWith('execute_tool')).length;
        expect(report.stats.calls).toBe(expectedCalls);
      }
    });
    expect(judgedBy.size).toBe(traces.length);
    for (const [traceId, by] of judgedBy) expect(by).toEqual([route(traceId, adapters.length)]);
    // Both adapters did some of the work.
    expect(new Set([...judgedBy.values()].flat()).size).toBe(2);
  }, 60_000);
});
