/**
 * A trace toolpath cannot read an agent from (only HTTP and database spans, as an app that is
 * not instrumented for GenAI exports): eval says no agent or tool spans were recognized and
 * points at `toolpath inspect`, instead of blaming an `appliesTo` no scenario has.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
let plain: string;
let scenario: string;

beforeAll(async () => {
  dir = temporaryDir('toolpath-no-agent-');
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('shop');
  const root = tracer.startSpan('GET /orders/:id', {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': 'GET' },
  });
  const inRoot = trace.setSpan(context.active(), root);
  tracer.startSpan('SELECT orders', { attributes: { 'db.system.name': 'postgresql' } }, inRoot).end();
  root.end();
  await provider.forceFlush();
  plain = join(dir, 'plain.otlp.json');
  await writeFile(
    plain,
    new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())),
  );
  scenario = join(dir, 'refund.yaml');
  await writeFile(scenario, 'id: support.refund\ntools:\n  required: [issue_refund]\n');
});

describe('eval of a trace with no agent spans', () => {
  it('says no agent or tool spans were recognized and names toolpath inspect, in every format', async () => {
    const run = await runCli(['eval', '-s', scenario, plain]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `NOTHING EVALUATED  no agent or tool spans recognized in the trace (no convention toolpath reads claimed a span); run toolpath inspect ${plain} to see what was read from each span`,
    );
    expect(run.stdout).not.toContain('appliesTo');
    const junit = await runCli(['eval', '-s', scenario, '--format', 'junit', plain]);
    expect(junit.code).toBe(1);
    expect(junit.stdout).toContain('message="no agent or tool spans recognized in the trace');
    const markdown = await runCli(['eval', '-s', scenario, '--format', 'markdown', plain]);
    expect(markdown.stdout).toContain(`run \`toolpath inspect ${plain}\` to see what was read`);
  });

  it('still blames appliesTo when the traces were read and no scenario applies to them', async () => {
    const elsewhere = join(dir, 'billing.yaml');
    await writeFile(elsewhere, 'id: billing\nappliesTo: { agent: billing-agent }\ntools:\n  allowed: [x]\n');
    const good = new URL('../spans/demo-agent-good-refund.otlp.json', import.meta.url).pathname;
    const run = await runCli(['eval', '-s', elsewhere, good]);
    expect(run.stdout).toContain(
      "NOTHING EVALUATED  no scenario applies to any of the traces (check appliesTo; the traces' root agents: support-agent)",
    );
    // Nothing judged is not "ALL PASSED", and the run still exits 1.
    expect(run.stdout).toContain('NOTHING EVALUATED  billing  pass rate n/a (0 of 0 traces passed)');
    expect(run.stdout).not.toContain('ALL PASSED');
    expect(run.code).toBe(1);
    const both = await runCli(['eval', '-s', elsewhere, good, plain]);
    expect(both.stdout).toContain('run toolpath inspect');
    expect(both.stdout).toContain('no scenario applies to the other traces (check appliesTo)');
  });
});
