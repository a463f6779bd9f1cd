/**
 * One long conversation through the real adapter behind the real OTLP/HTTP receiver: thousands
 * of traces of one conversation are judged in work that grows linearly with it (provisional
 * judgements coalesced, and counted, once it is long), a trace of no conversation sent after
 * them is judged without waiting for the conversation to be judged final, and every report line
 * stays under its bound however long the conversation grows.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PROVISIONAL_LINE_BYTES } from '../../src/judging/provisional-bounds.js';
import type { Report } from '../../src/model/report.js';
import { agentRoot, type JsonSpan, postSpans, toolSpan } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { eventually } from './next-hop.js';
import { startReportingAdapter } from './reporting-adapter.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** Each trace looks an order up again: past the count's maximum, a finding naming every call. */
const CHAT = {
  id: 'chat',
  scope: 'conversation',
  tools: { required: ['get_order', 'issue_refund'], counts: { get_order: { max: 1 } } },
  order: { before: [{ before: 'get_order', after: 'issue_refund' }] },
};

const NEVER = 1e12;
const START = BigInt(Date.now() - 60_000) * 1_000_000n;

/** Trace `n`: an agent run with two calls, 1 ms after trace n-1 ended; in `conversationId` if given. */
function chatTrace(n: number, conversationId: string | undefined): JsonSpan[] {
  const root = agentRoot(n);
  const end = START + BigInt(n) * 3_000_000n;
  const attributes =
    conversationId === undefined
      ? root.attributes
      : { ...root.attributes, 'gen_ai.conversation.id': conversationId };
  return [
    { ...root, attributes, endTimeUnixNano: end + 2_000_000n },
    { ...toolSpan(n, 1, 'get_order', '{"orderId":"A1"}'), endTimeUnixNano: end },
    { ...toolSpan(n, 2, 'issue_refund', '{"orderId":"A1"}'), endTimeUnixNano: end + 1_000_000n },
  ];
}

async function start(dir: string) {
  const running = await startReportingAdapter({
    dir,
    options: {
      scenarios: [CHAT],
      decision: { waitMs: 1e9, waitAfterRootMs: 10 },
      conversations: { idleMs: NEVER },
      limits: { maxTraces: 100_000 },
      sweepIntervalMs: 20,
    },
    maxRequestBytes: 64 << 20,
    cleanup: (stop) => cleanup.push(stop),
  });
  const text = () => readFileSync(running.reportsPath, 'utf8');
  const lines = () =>
    text()
      .split('\n')
      .filter((line) => line !== '');
  return { ...running, lines, text };
}

const parsed = (lines: readonly string[]) => lines.map((line) => JSON.parse(line) as Report);
const coalesced = (report: Report) =>
  report.findings.some((finding) => finding.rule === 'conversation.coalesced');

/** Sends traces `from`..`to - 1` of conversation `id` in requests of 500 traces. */
async function sendConversation(url: string, id: string, from: number, to: number): Promise<void> {
  for (let first = from; first < to; first += 500) {
    const spans: JsonSpan[] = [];
    for (let n = first; n < Math.min(to, first + 500); n++) spans.push(...chatTrace(n, id));
    expect((await postSpans(url, spans)).status).toBe(200);
  }
}

describe('one long conversation', () => {
  it('is judged in work linear in its calls, and traces of no conversation or another one after it are judged before it ends', async () => {
    const dir = temporaryDir('toolpath-long-');
    const running = await start(dir);
    const traces = 2_000;
    await sendConversation(running.url, 'long', 0, traces);
    const alone = chatTrace(traces, undefined);
    const other = chatTrace(traces + 1, 'short');
    expect((await postSpans(running.url, [...alone, ...other])).status).toBe(200);
    const aloneId = alone[0]?.traceId;
    const otherId = other[0]?.traceId;
    await eventually(
      () => {
        // Read as text: parsing every line each time would slow the adapter under test.
        const text = running.text();
        return [aloneId, otherId].every((id) => text.includes(`"traceId":"${id}"`));
      },
      'the traces of no conversation and of another conversation judged',
      60_000,
    );
    const reports = parsed(running.lines());
    // Judged on its own, while the conversation is still held (it never goes idle here).
    const own = reports.find((report) => report.traceId === aloneId);
    expect(own).toMatchObject({ verdict: 'pass' });
    expect(own?.conversationId).toBeUndefined();
    // The other conversation is judged on its own trace, not coalesced with the long one.
    expect(reports.find((report) => report.traceId === otherId)).toMatchObject({
      conversationId: 'short',
      traceIds: [otherId],
      verdict: 'pass',
      final: false,
    });
    expect(reports.some((report) => report.final === true)).toBe(false);
    const provisional = reports.filter((report) => report.conversationId === 'long');
    // One provisional report per trace of the conversation, each judged or saying it was coalesced.
    expect(provisional).toHaveLength(traces);
    // Work: the calls each judged provisional report was evaluated on. Re-judging every trace
    // before it after each one would be 2,000 * 2,001 calls (1,000 times the 4,000 calls held);
    // coalesced, a few dozen times them (the small start judged after every trace, then
    // judgements at sizes growing by a sixteenth), and twice the traces twice the work, not 4 times.
    const judged = provisional.filter((report) => !coalesced(report));
    const visited = judged.reduce((sum, report) => sum + report.stats.calls, 0);
    expect(visited).toBeLessThan(60 * 2 * traces);
    const firstHalf = judged.filter((report) => report.stats.calls <= traces);
    const visitedInFirstHalf = firstHalf.reduce((sum, report) => sum + report.stats.calls, 0);
    expect(visited / visitedInFirstHalf).toBeLessThan(3);
    // Judged ones come at least every 1/16 of the calls held: the last one is recent.
    expect(judged.length).toBeGreaterThan(16);
    const last = judged[judged.length - 1] as Report;
    expect(last.stats.calls).toBeGreaterThan((2 * traces * 15) / 16);
    const skipped = provisional.filter(coalesced);
    expect(skipped.length).toBe(traces - judged.length);
    for (const report of skipped) expect(report).toMatchObject({ verdict: 'inconclusive', final: false });
    expect(running.adapter.stats()).toMatchObject({
      judgedTraces: traces + 2,
      conversationsCoalesced: skipped.length,
    });
  }, 120_000);

  it('keeps every provisional line under its bound, saying what it left out, and the final line whole', async () => {
    const dir = temporaryDir('toolpath-long-');
    const running = await start(dir);
    const traces = 600;
    await sendConversation(running.url, 'long', 0, traces);
    await eventually(
      () => running.lines().length >= traces,
      'every trace of the conversation judged',
      60_000,
    );
    await running.stop();
    const lines = running.lines();
    const provisional = lines.filter((line) => (JSON.parse(line) as Report).final === false);
    expect(provisional).toHaveLength(traces);
    for (const line of provisional) expect(Buffer.byteLength(line)).toBeLessThan(MAX_PROVISIONAL_LINE_BYTES);
    // A judged one late in the conversation left trace ids and the calls of its count finding out,
    // and says how many.
    const late = parsed(provisional).filter((report) => !coalesced(report) && report.stats.calls > 1_000);
    expect(late.length).toBeGreaterThan(0);
    for (const report of late) {
      expect(report.cut?.traceIds).toBe(report.stats.calls / 2 - (report.traceIds?.length ?? 0));
      const count = report.findings.find((finding) => finding.rule === 'tools.count');
      expect(count).toBeDefined();
      expect(report.cut?.calls).toBeGreaterThan(0);
    }
    // The final judgement (at shutdown here) is not cut: every trace it was judged on.
    const finals = parsed(lines).filter((report) => report.final === true);
    expect(finals).toHaveLength(1);
    expect(finals[0]?.traceIds).toHaveLength(traces);
    expect(finals[0]?.cut).toBeUndefined();
  }, 120_000);
});
