/**
 * Durable mode keeps conversations across a crash: a real `toolpath serve` with `storage`, the
 * traces of one conversation sent by the real OTLP exporters in different requests, the process
 * killed with SIGKILL and started again on the same folder between them (or between the last
 * trace and the idle timeout). The final judgement comes once, on every acknowledged trace, and
 * its findings reach the next hop.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it } from 'vitest';
import { EVALUATION_SPAN_NAME } from '../../src/judging/evaluation-events.js';
import type { Report } from '../../src/model/report.js';
import { eventually, type NextHop, sendWith, startNextHop } from '../collector/next-hop.js';
import { CHAT_SCENARIO, recordMessages } from '../helpers/chat-conversation.js';
import { type ServeProcess, startServe } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** At most one refund in a conversation. */
const ONE_REFUND = {
  id: 'chat.one-refund',
  scope: 'conversation',
  tools: { counts: { issue_refund: { max: 1 } } },
};

const hops: NextHop[] = [];
afterAll(async () => {
  for (const hop of hops.splice(0)) await hop.close();
});

interface Setup {
  start(): Promise<ServeProcess>;
  reports(): Report[];
  hop: NextHop;
}

async function setup(scenario: object, idleTimeout: string): Promise<Setup> {
  const hop = await startNextHop();
  hops.push(hop);
  const dir = temporaryDir('toolpath-durable-conversations-');
  const reportsFile = join(dir, 'reports.jsonl');
  const yaml = [
    `storage: { directory: "${join(dir, 'storage')}" }`,
    `reports: { file: "${reportsFile}" }`,
    `exporters: { otlp: { endpoint: "${hop.url}", protocol: http/protobuf } }`,
    'scenarios: ["*.json"]',
    'decision: { waitAfterRoot: 100ms, wait: 5s }',
    `conversations: { idleTimeout: ${idleTimeout} }`,
    '',
  ].join('\n');
  const files = { 'scenario.json': JSON.stringify(scenario) };
  return {
    hop,
    start: () => startServe(yaml, files, { bundled: true }),
    reports: () =>
      existsSync(reportsFile)
        ? readFileSync(reportsFile, 'utf8')
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as Report)
        : [],
  };
}

const traceIdOf = (spans: readonly ReadableSpan[] | undefined) => spans?.[0]?.spanContext().traceId as string;

/** The provisional report of `traceId` is written and its own findings are at the next hop: it is done. */
async function judgedAndDelivered(setup: Setup, traceId: string): Promise<void> {
  await eventually(
    () => setup.reports().some((report) => report.traceId === traceId && report.final === false),
    `the provisional report after trace ${traceId}`,
  );
  await eventually(
    () =>
      setup.hop.spans.some(
        (span) =>
          span.traceId === traceId &&
          span.name === EVALUATION_SPAN_NAME &&
          span.attributes['toolpath.conversation.final'] === undefined,
      ),
    `trace ${traceId}'s findings at the next hop`,
  );
  // Its `done` record goes out with the next batch of the log.
  await new Promise((resolve) => setTimeout(resolve, 200));
}

async function kill(serve: ServeProcess): Promise<void> {
  serve.child.kill('SIGKILL');
  await serve.exited;
}

/** Waits for the final report, then a while longer, and checks there is one; returns it. */
async function theFinal(setup: Setup, conversationId: string): Promise<Report> {
  const finals = () =>
    setup.reports().filter((report) => report.final === true && report.conversationId === conversationId);
  await eventually(() => finals().length > 0, `the final report of ${conversationId}`, 30_000);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(finals()).toHaveLength(1);
  return finals()[0] as Report;
}

/** The final evaluation span of the conversation at the next hop, under one span id however often sent. */
async function finalSpanAtNextHop(setup: Setup, traceId: string): Promise<string> {
  const spans = () =>
    setup.hop.spans.filter(
      (span) => span.name === EVALUATION_SPAN_NAME && span.attributes['toolpath.conversation.final'] === true,
    );
  await eventually(() => spans().length > 0, 'the final evaluation span at the next hop');
  expect(new Set(spans().map((span) => span.spanId)).size).toBe(1);
  const span = spans()[0];
  expect(span?.traceId).toBe(traceId);
  const result = span?.events.find((event) => event.name === 'gen_ai.evaluation.result');
  return String(result?.attributes['toolpath.verdict']);
}

describe('toolpath serve with storage, a conversation across a SIGKILL', () => {
  it('fails tools.counts max 1 with one refund before the crash and one after', async () => {
    const run = await setup(ONE_REFUND, '10s');
    const [first, second] = await recordMessages(['refund', 'refund'], 'chat-two-refunds');
    const before = await run.start();
    expect(await sendWith('http/protobuf+gzip', before.httpUrl, first ?? [])).toBe(0);
    await judgedAndDelivered(run, traceIdOf(first));
    await kill(before);

    const after = await run.start();
    expect(after.stdout()).toMatch(/held 1 conversation again \(1 trace\)/);
    expect(await sendWith('grpc', `http://${after.grpcAddress}`, second ?? [])).toBe(0);
    // The second refund is over the maximum at once, in the provisional report too.
    await eventually(
      () => run.reports().some((report) => report.traceId === traceIdOf(second) && report.final === false),
      'the provisional report after the second trace',
    );
    const provisional = run.reports().find((report) => report.traceId === traceIdOf(second));
    expect(provisional?.verdict).toBe('fail');
    const final = await theFinal(run, 'chat-two-refunds');
    expect(final).toMatchObject({ verdict: 'fail', traceIds: [traceIdOf(first), traceIdOf(second)] });
    expect(final.findings.map((finding) => finding.rule)).toContain('tools.count');
    expect(await finalSpanAtNextHop(run, traceIdOf(second))).toBe('fail');
    expect(await after.stop()).toBe(0);
  }, 60_000);

  it('passes order.before with the lookup before the crash and the refund after', async () => {
    const run = await setup(CHAT_SCENARIO, '10s');
    const [lookup, refund] = await recordMessages(['lookup', 'refund'], 'chat-lookup-then-refund');
    const before = await run.start();
    expect(await sendWith('http/json', before.httpUrl, lookup ?? [])).toBe(0);
    await judgedAndDelivered(run, traceIdOf(lookup));
    await kill(before);

    const after = await run.start();
    expect(await sendWith('http/protobuf+gzip', after.httpUrl, refund ?? [])).toBe(0);
    const final = await theFinal(run, 'chat-lookup-then-refund');
    expect(final).toMatchObject({ verdict: 'pass', traceIds: [traceIdOf(lookup), traceIdOf(refund)] });
    expect(await finalSpanAtNextHop(run, traceIdOf(refund))).toBe('pass');
    expect(await after.stop()).toBe(0);
  }, 60_000);

  it('still judges a conversation final once when the crash comes between its last trace and the idle timeout', async () => {
    const run = await setup(CHAT_SCENARIO, '5s');
    const [lookup, refund] = await recordMessages(['lookup', 'refund'], 'chat-crash-while-idle');
    const before = await run.start();
    expect(await sendWith('http/protobuf+gzip', before.httpUrl, lookup ?? [])).toBe(0);
    expect(await sendWith('grpc', `http://${before.grpcAddress}`, refund ?? [])).toBe(0);
    await judgedAndDelivered(run, traceIdOf(refund));
    expect(run.reports().filter((report) => report.final === true)).toEqual([]);
    await kill(before);

    const after = await run.start();
    expect(after.stdout()).toMatch(/held 1 conversation again \(2 traces\)/);
    const final = await theFinal(run, 'chat-crash-while-idle');
    expect(final).toMatchObject({ verdict: 'pass', traceIds: [traceIdOf(lookup), traceIdOf(refund)] });
    expect(await finalSpanAtNextHop(run, traceIdOf(refund))).toBe('pass');
    expect(await after.stop()).toBe(0);
    // Final and delivered: a third start has nothing of it to hold again.
    const third = await run.start();
    expect(third.stdout()).not.toMatch(/held \d+ conversation/);
    expect(await third.stop()).toBe(0);
    expect(run.reports().filter((report) => report.final === true)).toHaveLength(1);
  }, 60_000);
});
