/**
 * The two-tier layout of examples/collector for conversations: the app copies the conversation
 * id from baggage onto every span (the contrib BaggageSpanProcessor), the first tier routes each
 * span by that attribute and, on a span without it, by trace id (as the loadbalancing exporter's
 * `routing_key: attributes` does), and two real adapters judge. The proof: every trace judged
 * whole exactly once, every conversation judged on one adapter with all its traces.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, propagation } from '@opentelemetry/api';
import { BaggageSpanProcessor } from '@opentelemetry/baggage-span-processor';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { type RunningService, startService } from '../../src/collector/serve.js';
import { runAgent } from '../../src/demo/agent.js';
import { ScriptedModel, type ScriptStep } from '../../src/demo/mock-model.js';
import { supportTools } from '../../src/demo/tools.js';
import type { Report } from '../../src/model/report.js';
import { eventually, sendWith } from '../collector/next-hop.js';
import { CHAT_SCENARIO, PER_TRACE_SCENARIO } from '../helpers/chat-conversation.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const CONVERSATION_KEY = 'gen_ai.conversation.id';
const order = { orderId: 'O-17' };
const lookUp: ScriptStep = () => ({ toolCalls: [{ name: 'get_order', arguments: order }] });
const refund: ScriptStep = () => ({
  toolCalls: [{ name: 'issue_refund', arguments: { ...order, amount: 40 } }],
});
const answer: ScriptStep = () => ({ text: 'Done.' });

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** The app: each message's trace; the conversation id in baggage, copied onto every span. */
async function recordApp(conversations: number, anonymous: number): Promise<ReadableSpan[][]> {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [
      new BaggageSpanProcessor((key) => key === CONVERSATION_KEY),
      new SimpleSpanProcessor(exporter),
    ],
  });
  const tracer = provider.getTracer('chat-app');
  const traces: ReadableSpan[][] = [];
  const message = async (steps: ScriptStep[], conversationId?: string) => {
    exporter.reset();
    const run = () => runAgent(tracer, 'support-agent', new ScriptedModel(steps), supportTools(), 'hi');
    if (conversationId === undefined) await run();
    else {
      const baggage = propagation.createBaggage({ [CONVERSATION_KEY]: { value: conversationId } });
      await context.with(propagation.setBaggage(context.active(), baggage), run);
    }
    traces.push([...exporter.getFinishedSpans()]);
  };
  try {
    for (let c = 0; c < conversations; c++) {
      await message([lookUp, answer], `conv-${c}`);
      await new Promise((resolve) => setTimeout(resolve, 3));
      await message([refund, answer], `conv-${c}`);
    }
    for (let a = 0; a < anonymous; a++) await message([lookUp, refund, answer]);
    return traces;
  } finally {
    await provider.shutdown();
    context.disable();
  }
}

/** The first tier's choice, in spirit: a stable hash of the routing attribute, else of the trace id. */
function route(span: ReadableSpan, backends: number): number {
  const id = span.attributes[CONVERSATION_KEY];
  const key = typeof id === 'string' ? id : span.spanContext().traceId;
  return createHash('sha256').update(key).digest().readUInt32BE(0) % backends;
}

async function adapter(
  dir: string,
  name: string,
): Promise<{ running: RunningService; reports: () => Report[] }> {
  const config = parseAdapterConfig(
    {
      receivers: { otlp: { http: null, grpc: { endpoint: '127.0.0.1:0' } } },
      scenarios: ['*.json'],
      decision: { wait: '10s', waitAfterRoot: '100ms' },
      conversations: { idleTimeout: '60s' },
      reports: { file: `${name}.jsonl` },
    },
    `${name}.yaml`,
  );
  const running = await startService(config, { baseDir: dir, log: () => {} });
  cleanup.push(() => running.close());
  // Whole lines only: polled while the sink appends, the last line may be half written.
  const reports = () => {
    const text = readFileSync(join(dir, `${name}.jsonl`), 'utf8');
    return text
      .slice(0, text.lastIndexOf('\n') + 1)
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Report);
  };
  return { running, reports };
}

describe('two adapters behind a router on the conversation id', () => {
  it('judges every trace whole once and every conversation on one adapter', async () => {
    const dir = temporaryDir('toolpath-two-conversations-');
    writeFileSync(join(dir, 'chat.json'), JSON.stringify(CHAT_SCENARIO));
    writeFileSync(join(dir, 'per-trace.json'), JSON.stringify(PER_TRACE_SCENARIO));
    const adapters = [await adapter(dir, 'a'), await adapter(dir, 'b')];
    const traces = await recordApp(8, 4);
    // Every span of a conversation's traces carries its id: the BaggageSpanProcessor copied it.
    for (const spans of traces.slice(0, 16))
      for (const span of spans) expect(typeof span.attributes[CONVERSATION_KEY]).toBe('string');

    // Each trace's spans go in two batches, in order, each span where the router sends it.
    for (const spans of traces) {
      for (const half of [spans.slice(0, 2), spans.slice(2)]) {
        for (const [backend, target] of adapters.entries()) {
          const part = half.filter((span) => route(span, adapters.length) === backend);
          if (part.length > 0)
            expect(await sendWith('grpc', `http://${target.running.grpcAddress}`, part)).toBe(0);
        }
      }
    }
    await eventually(
      () =>
        adapters.flatMap((a) => a.reports()).filter((r) => r.scenario.id === PER_TRACE_SCENARIO.id).length ===
        traces.length,
      'every trace judged',
    );
    for (const { running } of adapters) await running.close();

    const perTrace = new Map<string, number>();
    const conversationOn = new Map<string, number[]>();
    adapters.forEach(({ reports }, index) => {
      for (const report of reports()) {
        if (report.scenario.id === PER_TRACE_SCENARIO.id) {
          perTrace.set(report.traceId, (perTrace.get(report.traceId) ?? 0) + 1);
          // Whole: the report saw every call of its trace.
          const spans = traces.find((t) => t[0]?.spanContext().traceId === report.traceId) ?? [];
          expect(report.stats.calls).toBe(
            spans.filter((span) => span.name.startsWith('execute_tool')).length,
          );
        }
        if (report.final === true && report.conversationId !== undefined)
          conversationOn.set(report.conversationId, [
            ...(conversationOn.get(report.conversationId) ?? []),
            index,
          ]);
        if (report.final === true) expect(report.traceIds).toHaveLength(2);
      }
    });
    expect([...perTrace.values()]).toEqual(traces.map(() => 1));
    expect(perTrace.size).toBe(traces.length);
    expect(conversationOn.size).toBe(8);
    for (const [id, on] of conversationOn) expect(on, id).toHaveLength(1);
    // Both adapters did some of the conversations.
    expect(new Set([...conversationOn.values()].flat()).size).toBe(2);
  }, 60_000);
});
