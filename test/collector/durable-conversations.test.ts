/**
 * Durable mode's conversation records in the adapter, behind the real OTLP/HTTP receiver: a
 * member record cut or corrupted by a crash mid-write (detected, counted, the conversation still
 * judged final once on all its traces), a final's records lost after its report line, a final
 * whose next hop was down (judged again for its output, its line written once), conversation
 * traces forced out at `storage.maxBytes` (the conversation then judged inconclusive, saying so),
 * a conversation closed at `maxConversations` that goes on after a restart, and a graceful stop
 * that keeps conversations for the next start.
 */
import { readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdapterOptions, TraceAdapter } from '../../src/collector/adapter.js';
import { EVALUATION_SPAN_NAME } from '../../src/judging/evaluation-events.js';
import type { Report } from '../../src/model/report.js';
import { agentRoot, type JsonSpan, postSpans, toolSpan, traceIdOf } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { eventually, startNextHop } from './next-hop.js';
import { startReportingAdapter } from './reporting-adapter.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

const CHAT = {
  id: 'chat',
  scope: 'conversation',
  tools: { required: ['get_order', 'issue_refund'] },
  order: { before: [{ before: 'get_order', after: 'issue_refund' }] },
};

/** Never idle: a "crashed" adapter left running must not judge anything more. */
const NEVER = 1e12;

interface Running {
  adapter: TraceAdapter;
  url: string;
  stop(): Promise<void>;
  /** What a crash leaves: the receiver gone, nothing flushed or judged on the way out. */
  crash(): Promise<void>;
}

function start(
  dir: string,
  options: { idleMs?: number; maxConversations?: number } & Partial<AdapterOptions> = {},
  storage = {},
): Promise<Running> {
  const { idleMs = NEVER, maxConversations = 100, ...rest } = options;
  return startReportingAdapter({
    dir,
    options: {
      scenarios: [CHAT],
      decision: { waitMs: 1e9, waitAfterRootMs: 10 },
      conversations: { idleMs, maxConversations, maxCalls: 1000 },
      sweepIntervalMs: 20,
      ...rest,
    },
    storage,
    // Marks appended just before go out with the log's next batch, as they would have.
    crashAfterMs: 50,
    cleanup: (stop) => cleanup.push(stop),
  });
}

function reports(dir: string): Report[] {
  return readFileSync(join(dir, 'reports.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Report);
}

const finals = (dir: string, conversationId: string) =>
  reports(dir).filter((report) => report.final === true && report.conversationId === conversationId);

/** Trace `n` of conversation `conversationId`: an agent run with one call. */
function chatTrace(n: number, conversationId: string, tool: 'get_order' | 'issue_refund'): JsonSpan[] {
  const root = agentRoot(n);
  return [
    { ...root, attributes: { ...root.attributes, 'gen_ai.conversation.id': conversationId } },
    toolSpan(n, 1, tool, '{"orderId":"A1"}'),
  ];
}

/** Posts a trace and waits until it is judged (its provisional report written). */
async function send(running: Running, dir: string, trace: JsonSpan[]): Promise<void> {
  expect((await postSpans(running.url, trace)).status).toBe(200);
  const traceId = trace[0]?.traceId;
  await eventually(
    () => reports(dir).some((report) => report.traceId === traceId),
    `trace ${traceId} judged`,
  );
}

function lastSegment(dir: string): string {
  const storage = join(dir, 'storage');
  return join(
    storage,
    readdirSync(storage)
      .filter((name) => name.endsWith('.log'))
      .sort()
      .at(-1) as string,
  );
}

/** The frames of a segment file: offset and length of each. */
function frames(file: string): { offset: number; bytes: number; type: number }[] {
  const data = readFileSync(file);
  const out: { offset: number; bytes: number; type: number }[] = [];
  for (let at = 8; at + 8 <= data.length; ) {
    const length = data.readUInt32LE(at);
    out.push({ offset: at, bytes: 8 + length, type: data[at + 8] as number });
    at += 8 + length;
  }
  return out;
}

const MEMBER = 4;
const FINAL = 5;

describe('durable mode, conversations', () => {
  it.each([
    ['cut short', (file: string, at: number) => truncateSync(file, at + 20), 'cutBytes'],
    [
      // Its length is readable: just it is skipped, the records after it read on.
      'with a byte flipped',
      (file: string, at: number) => {
        const data = readFileSync(file);
        data[at + 30] = (data[at + 30] as number) ^ 0xff;
        writeFileSync(file, data);
      },
      'skippedBytes',
    ],
  ] as const)(
    'detects and counts a member record %s by a crash, and still judges the conversation final once on both traces',
    async (_how, damage, counted) => {
      const dir = temporaryDir('toolpath-durable-conversations-');
      const first = await start(dir);
      await send(first, dir, chatTrace(0, 'c1', 'get_order'));
      await send(first, dir, chatTrace(1, 'c1', 'issue_refund'));
      await first.crash();
      // The last member record (the refund's) and what follows it are torn.
      const file = lastSegment(dir);
      const member = frames(file)
        .filter((frame) => frame.type === MEMBER)
        .at(-1);
      expect(member).toBeDefined();
      damage(file, member?.offset as number);

      const second = await start(dir, { idleMs: 300 });
      const stats = second.adapter.stats().storage;
      expect(stats).toMatchObject({
        cutSegments: counted === 'cutBytes' ? 1 : 0,
        skippedRecords: counted === 'skippedBytes' ? 1 : 0,
        replayedConversations: 1,
        replayedConversationTraces: 1,
      });
      expect(stats?.[counted]).toBeGreaterThan(0);
      // The refund's trace has its report line: judged again for its output, and joined again.
      expect(stats?.replayedReported).toBe(1);
      await eventually(() => finals(dir, 'c1').length === 1, 'the final report');
      await second.stop();
      expect(finals(dir, 'c1')).toHaveLength(1);
      expect(finals(dir, 'c1')[0]).toMatchObject({ verdict: 'pass', traceIds: [traceIdOf(0), traceIdOf(1)] });
      expect(reports(dir).filter((report) => report.traceId === traceIdOf(1) && !report.final)).toHaveLength(
        1,
      );
    },
  );

  it('writes a final once when its records were lost after its report line', async () => {
    const dir = temporaryDir('toolpath-durable-conversations-');
    const first = await start(dir, { idleMs: 200 });
    await send(first, dir, chatTrace(0, 'c2', 'get_order'));
    await send(first, dir, chatTrace(1, 'c2', 'issue_refund'));
    await eventually(() => finals(dir, 'c2').length === 1, 'the final report');
    await first.crash();
    const file = lastSegment(dir);
    const final = frames(file).find((frame) => frame.type === FINAL);
    expect(final).toBeDefined();
    truncateSync(file, final?.offset as number);

    const second = await start(dir, { idleMs: 200 });
    expect(second.adapter.stats().storage).toMatchObject({ cutSegments: 0, conversationsJudgedAgain: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await second.stop();
    expect(finals(dir, 'c2')).toHaveLength(1);
    // And done now.
    const third = await start(dir);
    expect(third.adapter.stats().storage).toMatchObject({
      replayedConversations: 0,
      conversationsJudgedAgain: 0,
    });
  });

  it('sends a final whose next hop was down after the restart, with its report line written once', async () => {
    const dir = temporaryDir('toolpath-durable-conversations-');
    const probe = await startNextHop();
    const port = probe.port;
    await probe.close();
    const exporter = () =>
      new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces`, timeoutMillis: 1_000 });
    const first = await start(dir, { idleMs: 200, exporter: exporter() });
    await send(first, dir, chatTrace(0, 'c3', 'get_order'));
    await send(first, dir, chatTrace(1, 'c3', 'issue_refund'));
    await eventually(() => finals(dir, 'c3').length === 1, 'the final report');
    await first.stop();

    const hop = await startNextHop(port);
    cleanup.push(() => hop.close());
    const second = await start(dir, { idleMs: 200, exporter: exporter() });
    expect(second.adapter.stats().storage).toMatchObject({ conversationsJudgedAgain: 1, replayedTraces: 2 });
    const finalSpans = () =>
      hop.spans.filter(
        (span) =>
          span.name === EVALUATION_SPAN_NAME && span.attributes['toolpath.conversation.final'] === true,
      );
    await eventually(() => finalSpans().length > 0, 'the final evaluation span at the next hop');
    await second.stop();
    expect(finalSpans()).toHaveLength(1);
    expect(finalSpans()[0]?.traceId).toBe(traceIdOf(1));
    expect(finals(dir, 'c3')).toHaveLength(1);
    // Re-judged for their output, the traces did not join a conversation again: no second final.
    expect(reports(dir).filter((report) => report.final === true)).toHaveLength(1);
    const third = await start(dir);
    expect(third.adapter.stats().storage).toMatchObject({ replayedTraces: 0, replayedConversations: 0 });
  });

  it('lets conversation traces go at storage.maxBytes, counted, and judges their conversation inconclusive after a restart', async () => {
    const dir = temporaryDir('toolpath-durable-conversations-');
    const storage = { maxBytes: 48 * 1024, segmentBytes: 4 * 1024 };
    const first = await start(dir, { maxConversations: 10_000 }, storage);
    await send(first, dir, chatTrace(0, 'c4', 'get_order'));
    // Other conversations, held too, fill the log.
    for (let n = 1; n < 200; n++)
      expect((await postSpans(first.url, chatTrace(n, `other-${n}`, 'get_order'))).status).toBe(200);
    await eventually(() => reports(dir).length === 200, 'every trace judged');
    // Let the last marks be written, then admit one more request at the cap.
    expect((await postSpans(first.url, chatTrace(200, 'other-200', 'get_order'))).status).toBe(200);
    const stats = first.adapter.stats().storage;
    expect(stats?.forgottenTraces).toBeGreaterThan(0);
    expect(stats?.bytes).toBeLessThan(storage.maxBytes + storage.segmentBytes);
    await first.crash();

    const second = await start(dir, { maxConversations: 10_000 }, storage);
    expect(second.adapter.stats().storage?.missingConversationTraces).toBeGreaterThan(0);
    await send(second, dir, chatTrace(201, 'c4', 'issue_refund'));
    const after = reports(dir).find((report) => report.traceId === traceIdOf(201));
    // Without its lookup the refund would fail order.before: the verdict says it cannot tell.
    expect(after?.verdict).toBe('inconclusive');
    const truncated = after?.findings.find((finding) => finding.rule === 'conversation.truncated');
    expect(truncated?.message).toMatch(/not in storage after a restart \(forced out at storage\.maxBytes\)/);
  });

  it('remembers across a restart that a conversation was closed at maxConversations', async () => {
    const dir = temporaryDir('toolpath-durable-conversations-');
    const first = await start(dir, { maxConversations: 1 });
    await send(first, dir, chatTrace(0, 'c5', 'get_order'));
    // Another conversation takes its place: c5 is judged final early.
    await send(first, dir, chatTrace(1, 'c6', 'get_order'));
    await eventually(() => finals(dir, 'c5').length === 1, 'the early final');
    await first.crash();

    const second = await start(dir, { maxConversations: 1 });
    await send(second, dir, chatTrace(2, 'c5', 'issue_refund'));
    const after = reports(dir).find((report) => report.traceId === traceIdOf(2));
    expect(after?.verdict).toBe('inconclusive');
    expect(after?.findings.find((finding) => finding.rule === 'conversation.truncated')?.message).toMatch(
      /judged final early to make room for another conversation/,
    );
  });

  it('keeps conversations at a graceful stop, and holds them again at the next start', async () => {
    const dir = temporaryDir('toolpath-durable-conversations-');
    const first = await start(dir);
    await send(first, dir, chatTrace(0, 'c7', 'get_order'));
    await first.stop();
    expect(first.adapter.stats().storage?.keptConversations).toBe(1);
    expect(finals(dir, 'c7')).toHaveLength(0);

    const second = await start(dir, { idleMs: 300 });
    expect(second.adapter.stats().storage).toMatchObject({ replayedConversations: 1, replayedTraces: 0 });
    await send(second, dir, chatTrace(1, 'c7', 'issue_refund'));
    await eventually(() => finals(dir, 'c7').length === 1, 'the final report');
    expect(finals(dir, 'c7')[0]).toMatchObject({ verdict: 'pass', traceIds: [traceIdOf(0), traceIdOf(1)] });
    await second.stop();
  });
});
