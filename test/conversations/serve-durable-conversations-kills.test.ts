/**
 * Conversations under random SIGKILLs: real `toolpath serve` processes with storage, two clients
 * (the SDK's protobuf/HTTP and gRPC exporters) sending conversations of two traces, each trace in
 * its own request, the process killed at random moments and started again on the same folder.
 * At the end every conversation with an acknowledged trace is judged final exactly once, on
 * every trace of it that was acknowledged (and none that was never sent), and its findings are
 * at the next hop under one span id.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it } from 'vitest';
import { EVALUATION_SPAN_NAME } from '../../src/judging/evaluation-events.js';
import type { Report } from '../../src/model/report.js';
import { eventually, type NextHop, startNextHop } from '../collector/next-hop.js';
import { CHAT_SCENARIO, recordMessages } from '../helpers/chat-conversation.js';
import { freePort } from '../helpers/free-port.js';
import { chaosRandom } from '../helpers/seeded-random.js';
import { startServe } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const { random } = chaosRandom('test/conversations/serve-durable-conversations-kills.test.ts');

const CYCLES = Number(process.env.KILL_CYCLES ?? 10);
const CONVERSATIONS = 400;

const hops: NextHop[] = [];
afterAll(async () => {
  for (const hop of hops.splice(0)) await hop.close();
});

describe('toolpath serve with storage, conversations under random SIGKILLs', () => {
  it(`judges every conversation final once on its acknowledged traces, over ${CYCLES} kills`, async () => {
    const started = Date.now();
    const hop = await startNextHop();
    hops.push(hop);
    const dir = temporaryDir('toolpath-durable-conversation-kills-');
    const reportsFile = join(dir, 'reports.jsonl');
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    // Longer than a restart and an exporter's retries: a conversation is not split by idling.
    const yaml = [
      'receivers:',
      '  otlp:',
      `    http: { endpoint: "127.0.0.1:${httpPort}" }`,
      `    grpc: { endpoint: "127.0.0.1:${grpcPort}" }`,
      `storage: { directory: "${join(dir, 'storage')}" }`,
      `reports: { file: "${reportsFile}" }`,
      `exporters: { otlp: { endpoint: "${hop.url}", protocol: http/protobuf } }`,
      'scenarios: ["*.json"]',
      'decision: { waitAfterRoot: 100ms, wait: 5s }',
      'conversations: { idleTimeout: 8s }',
      '',
    ].join('\n');
    const files = { 'chat.json': JSON.stringify(CHAT_SCENARIO) };
    const conversations: { id: string; traces: ReadableSpan[][] }[] = [];
    for (let n = 0; n < CONVERSATIONS; n++) {
      const id = `chat-${n}`;
      conversations.push({ id, traces: await recordMessages(['lookup', 'refund'], id) });
    }
    const traceIdOf = (spans: readonly ReadableSpan[]) => spans[0]?.spanContext().traceId as string;
    const sent = new Map<string, Set<string>>();
    const acked = new Map<string, Set<string>>();
    const add = (map: Map<string, Set<string>>, id: string, traceId: string) => {
      const set = map.get(id) ?? new Set<string>();
      set.add(traceId);
      map.set(id, set);
    };
    let next = 0;
    const client = async (exporter: SpanExporter, cycle: { killed: boolean }) => {
      while (!cycle.killed && next < conversations.length) {
        const conversation = conversations[next++] as (typeof conversations)[number];
        for (const spans of conversation.traces) {
          add(sent, conversation.id, traceIdOf(spans));
          const code = await new Promise<number>((resolve) =>
            exporter.export(spans, (result) => resolve(result.code)),
          );
          if (code === 0) add(acked, conversation.id, traceIdOf(spans));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      await exporter.shutdown().catch(() => undefined);
    };
    const clients: Promise<void>[] = [];
    let heldAgain = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const serve = await startServe(yaml, files, { bundled: true });
      heldAgain += Number(/held (\d+) conversations? again/.exec(serve.stdout())?.[1] ?? 0);
      const state = { killed: false };
      clients.push(
        client(
          new ProtobufExporter({ url: `http://127.0.0.1:${httpPort}/v1/traces`, timeoutMillis: 3_000 }),
          state,
        ),
        client(new GrpcExporter({ url: `http://127.0.0.1:${grpcPort}`, timeoutMillis: 3_000 }), state),
      );
      // A random moment: traces buffered, conversations held, findings queued.
      await new Promise((resolve) => setTimeout(resolve, 300 + random() * 1_200));
      serve.child.kill('SIGKILL');
      await serve.exited;
      state.killed = true;
    }
    const serve = await startServe(yaml, files, { bundled: true });
    heldAgain += Number(/held (\d+) conversations? again/.exec(serve.stdout())?.[1] ?? 0);
    await Promise.all(clients);
    const reports = (): Report[] =>
      existsSync(reportsFile)
        ? readFileSync(reportsFile, 'utf8')
            .split('\n')
            // The last piece is a line still being written (or empty): only whole lines are reports.
            .slice(0, -1)
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as Report)
        : [];
    const finals = () => reports().filter((report) => report.final === true);
    await eventually(
      () => [...acked.keys()].every((id) => finals().some((report) => report.conversationId === id)),
      'a final report for every conversation with an acknowledged trace',
      40_000,
    );
    const finalSpans = () =>
      hop.spans.filter(
        (span) =>
          span.name === EVALUATION_SPAN_NAME && span.attributes['toolpath.conversation.final'] === true,
      );
    await eventually(
      () => new Set(finalSpans().map((span) => span.attributes['gen_ai.conversation.id'])).size >= acked.size,
      'every final at the next hop',
    );
    expect(await serve.stop()).toBe(0);

    const byConversation = new Map<string, Report[]>();
    for (const report of finals()) {
      const id = report.conversationId as string;
      byConversation.set(id, [...(byConversation.get(id) ?? []), report]);
    }
    const twice = [...byConversation].filter(([, list]) => list.length !== 1).map(([id]) => id);
    expect(twice).toEqual([]);
    for (const [id, traceIds] of acked) {
      const final = byConversation.get(id)?.[0];
      const judgedOn = new Set(final?.traceIds);
      // Every acknowledged trace is in it, and nothing that was never sent.
      expect(
        [...traceIds].filter((traceId) => !judgedOn.has(traceId)),
        id,
      ).toEqual([]);
      expect(
        [...judgedOn].filter((traceId) => !sent.get(id)?.has(traceId)),
        id,
      ).toEqual([]);
      if (judgedOn.size === 2) expect(final?.verdict, id).toBe('pass');
    }
    const spanIds = new Map<string, Set<string>>();
    for (const span of finalSpans())
      add(spanIds, String(span.attributes['gen_ai.conversation.id']), span.spanId);
    expect([...spanIds].filter(([, ids]) => ids.size !== 1)).toEqual([]);
    expect(heldAgain).toBeGreaterThan(0);
    const whole = [...acked.values()].filter((traceIds) => traceIds.size === 2).length;
    expect(whole).toBeGreaterThan(CYCLES);
    console.log(
      `durable conversations kill test: ${CYCLES} kills, ${sent.size} conversations sent, ${acked.size} with an acknowledged trace (${whole} both), ${heldAgain} held again after kills, ${Date.now() - started} ms`,
    );
  }, 180_000);
});
