/**
 * Durable mode as a real process: `toolpath serve` with `storage`, under load from the SDK's
 * three OTLP exporters, killed with SIGKILL at random moments and started again on the same
 * folder, over and over; then every trace that was answered 200 must have exactly one report
 * line and its findings at the next hop, and no trace may be judged twice.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it } from 'vitest';
import { EVALUATION_SPAN_NAME } from '../../src/judging/evaluation-events.js';
import { freePort } from '../helpers/free-port.js';
import { chaosRandom } from '../helpers/seeded-random.js';
import { startServe } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { eventually, type NextHop, startNextHop } from './next-hop.js';

const { random } = chaosRandom('test/collector/serve-durable.test.ts');

const CYCLES = Number(process.env.KILL_CYCLES ?? 20);
const BUDGET_MS = 180_000;

/** Makes agent traces with the real SDK: an `invoke_agent` root and tool calls, some repeated. */
class Traces {
  private readonly exporter = new InMemorySpanExporter();
  private readonly provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: this.exporter })],
  });
  private readonly tracer = this.provider.getTracer('durable-test');
  private made = 0;

  /** `count` whole traces, their spans in one list, and their ids. */
  next(count: number): { spans: ReadableSpan[]; traceIds: string[] } {
    const traceIds: string[] = [];
    for (let n = 0; n < count; n++) {
      const index = this.made++;
      const root = this.tracer.startSpan('invoke_agent support', {
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
      });
      const parent = trace.setSpan(context.active(), root);
      // Every fifth trace repeats one call four times: over the built-in scenario's two repeats.
      const calls = index % 5 === 0 ? 4 : 1 + (index % 3);
      for (let call = 0; call < calls; call++) {
        const tool = this.tracer.startSpan(
          'execute_tool get_order',
          {
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': 'get_order',
              'gen_ai.tool.call.id': `call-${call}`,
              'gen_ai.tool.call.arguments': JSON.stringify({ orderId: index % 5 === 0 ? 'A1' : `A${call}` }),
            },
          },
          parent,
        );
        tool.end();
      }
      root.end();
      traceIds.push(root.spanContext().traceId);
    }
    const spans = this.exporter.getFinishedSpans().slice();
    this.exporter.reset();
    return { spans, traceIds };
  }
}

function reportLines(file: string): { traceId: string; findings: { rule: string }[] }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

function exporters(httpPort: number, grpcPort: number): SpanExporter[] {
  const timeoutMillis = 4_000;
  return [
    new ProtobufExporter({ url: `http://127.0.0.1:${httpPort}/v1/traces`, timeoutMillis }),
    new JsonExporter({ url: `http://127.0.0.1:${httpPort}/v1/traces`, timeoutMillis }),
    new GrpcExporter({ url: `http://127.0.0.1:${grpcPort}`, timeoutMillis }),
  ];
}

const hops: NextHop[] = [];
afterAll(async () => {
  for (const hop of hops.splice(0)) await hop.close();
});

describe('toolpath serve with storage, killed with SIGKILL under load', () => {
  it(
    `judges every acknowledged trace exactly once and delivers its findings, over ${CYCLES} kills`,
    async () => {
      const started = Date.now();
      const hop = await startNextHop();
      hops.push(hop);
      const dir = temporaryDir('toolpath-durable-kill-');
      const storage = join(dir, 'storage');
      const reports = join(dir, 'reports.jsonl');
      const [httpPort, grpcPort] = [await freePort(), await freePort()];
      const yaml = [
        'receivers:',
        '  otlp:',
        `    http: { endpoint: "127.0.0.1:${httpPort}" }`,
        `    grpc: { endpoint: "127.0.0.1:${grpcPort}" }`,
        `storage: { directory: "${storage}" }`,
        `reports: { file: "${reports}" }`,
        `exporters: { otlp: { endpoint: "${hop.url}", protocol: http/protobuf } }`,
        'decision: { waitAfterRoot: 300ms, wait: 5s }',
        '',
      ].join('\n');
      const traces = new Traces();
      const acked = new Set<string>();
      const allClients: Promise<void>[] = [];
      let sent = 0;
      let replayed = 0;

      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const serve = await startServe(yaml, {}, { bundled: true });
        replayed += Number(/replayed (\d+) traces/.exec(serve.stdout())?.[1] ?? 0);
        let killed = false;
        const clients = exporters(httpPort, grpcPort).map(async (exporter) => {
          while (!killed) {
            const batch = traces.next(5 + Math.floor(random() * 20));
            sent += batch.traceIds.length;
            const code = await new Promise<number>((resolve) =>
              exporter.export(batch.spans, (result) => resolve(result.code)),
            );
            if (code === 0) for (const id of batch.traceIds) acked.add(id);
          }
          await exporter.shutdown().catch(() => undefined);
        });
        // A random moment: while requests are in flight, traces buffered, findings queued.
        await new Promise((resolve) => setTimeout(resolve, 100 + random() * 1_200));
        serve.child.kill('SIGKILL');
        await serve.exited;
        killed = true;
        // Exports in flight end (failed, or answered by the next start) while it starts.
        allClients.push(...clients);
      }

      // One last start: it replays what the last kill left, and judges it.
      const serve = await startServe(yaml, {}, { bundled: true });
      await Promise.all(allClients);
      replayed += Number(/replayed (\d+) traces/.exec(serve.stdout())?.[1] ?? 0);
      const evaluations = () => hop.spans.filter((span) => span.name === EVALUATION_SPAN_NAME);
      await eventually(
        () => {
          const reported = new Set(reportLines(reports).map((line) => line.traceId));
          const delivered = new Set(evaluations().map((span) => span.traceId));
          return [...acked].every((id) => reported.has(id) && delivered.has(id));
        },
        'every acknowledged trace reported and its findings delivered',
        30_000,
      );
      expect(await serve.stop()).toBe(0);

      const lines = reportLines(reports);
      const perTrace = new Map<string, number>();
      for (const line of lines) perTrace.set(line.traceId, (perTrace.get(line.traceId) ?? 0) + 1);
      const twice = [...perTrace].filter(([, count]) => count > 1);
      expect(twice).toEqual([]);
      expect([...acked].filter((id) => !perTrace.has(id))).toEqual([]);
      // Findings at the next hop: each acknowledged trace's evaluation span, under one span id
      // however many times it was sent, with its evaluation events.
      const byTrace = new Map<string, Set<string>>();
      for (const span of evaluations()) {
        const ids = byTrace.get(span.traceId) ?? new Set<string>();
        ids.add(span.spanId);
        byTrace.set(span.traceId, ids);
      }
      expect([...acked].filter((id) => byTrace.get(id)?.size !== 1)).toEqual([]);
      expect(evaluations().every((span) => (span.events?.length ?? 0) > 0)).toBe(true);
      // The kills landed while traces were buffered, and the repeats were found.
      expect(replayed).toBeGreaterThan(0);
      expect(lines.some((line) => line.findings.some((f) => f.rule.startsWith('efficiency.repeat')))).toBe(
        true,
      );
      expect(acked.size).toBeGreaterThan(CYCLES * 10);
      console.log(
        `durable kill test: ${CYCLES} kills, ${sent} traces sent, ${acked.size} acknowledged, ${perTrace.size} judged, ${replayed} replayed after kills, ${evaluations().length} evaluation spans received (${byTrace.size} traces), ${Date.now() - started} ms`,
      );
      expect(Date.now() - started).toBeLessThan(BUDGET_MS);
    },
    BUDGET_MS + 30_000,
  );
});
