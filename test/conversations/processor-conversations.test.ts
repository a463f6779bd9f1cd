/**
 * The processor judging a chat app's conversation as it happens: a real SDK provider, one trace
 * per user message ended at different times. After each trace the conversation is judged
 * provisionally (`final: false`, what later calls could still mend `pending`); once idle, final,
 * on an evaluation span under the latest trace. Caps and the idle timeout are counted. Each test
 * runs twice: judging on the app's thread, and on a worker thread (`worker: true`), where the
 * conversation state lives on the worker (worker-conversations.test.ts: when the worker exits).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { type ChatPipeline, chatPipeline, finalOf, until } from '../helpers/chat-conversation.js';
import { eventsNamed, type Pipeline } from '../processor/harness.js';

let open: Pipeline | undefined;
afterEach(async () => {
  await open?.shutdown();
  open = undefined;
});

describe.each([
  ['on the app thread', false],
  ['with worker: true', true],
])('the processor %s, scope: conversation', (_mode, worker) => {
  const start = async (limits: Record<string, number> = {}): Promise<ChatPipeline> => {
    const chat = await chatPipeline({ worker, limits });
    open = chat.pipeline;
    return chat;
  };

  it('is pending after the lookup, provisionally passes after the refund, passes finally when idle', async () => {
    const { pipeline: p, reports, send } = await start();
    const [first] = await send('chat-1', 'lookup');
    expect(first).toMatchObject({ final: false, verdict: 'inconclusive', conversationId: 'chat-1' });
    const pending = first?.findings.find((finding) => finding.rule === 'tools.required');
    expect(pending).toMatchObject({ pending: true, severity: 'hard' });
    expect(first?.assertions).toContainEqual(expect.objectContaining({ status: 'pending' }));
    // Provisional reports count for nothing yet.
    expect(await p.counter('toolpath.evaluations')).toBe(0);

    await new Promise((resolve) => setTimeout(resolve, 20));
    const [second] = await send('chat-1', 'refund');
    expect(second).toMatchObject({ final: false, verdict: 'pass' });
    expect(second?.traceIds).toHaveLength(2);

    await until(() => finalOf(reports).length === 1);
    const [final] = finalOf(reports);
    expect(final).toMatchObject({ verdict: 'pass', conversationId: 'chat-1', traceIds: second?.traceIds });
    expect(final?.traceId).toBe(second?.traceIds?.[1]);
    expect(await p.counter('toolpath.evaluations', { 'toolpath.verdict': 'pass' })).toBe(1);
    expect(await p.counter('toolpath.evaluations')).toBe(1);

    // The final findings go on an evaluation span under the latest trace's agent span.
    await p.processor.forceFlush();
    const latest = p.exporter
      .getFinishedSpans()
      .filter((span) => span.spanContext().traceId === final?.traceId);
    const evaluation = latest.filter((span) => span.name === 'toolpath.evaluate');
    const finalSpan = evaluation.find((span) => span.attributes['toolpath.conversation.final'] === true);
    expect(finalSpan).toBeDefined();
    const agent = latest.find((span) => span.name === 'invoke_agent support-agent');
    expect(finalSpan?.parentSpanContext?.spanId).toBe(agent?.spanContext().spanId);
    const [result] = eventsNamed(finalSpan as never, 'gen_ai.evaluation.result');
    expect(result).toMatchObject({
      'gen_ai.conversation.id': 'chat-1',
      'toolpath.conversation.final': true,
      'toolpath.verdict': 'pass',
    });
  });

  it('with conversations: false keeps no state: each trace is judged alone, inconclusive, saying why', async () => {
    const chat = await chatPipeline({ worker, conversations: false });
    open = chat.pipeline;
    const [first] = await chat.send('chat-3', 'lookup');
    expect(first).toMatchObject({ verdict: 'inconclusive' });
    expect(first?.final).toBeUndefined();
    expect(JSON.stringify(first)).toContain('conversations: false');
    const [second] = await chat.send('chat-3', 'refund');
    // Judged alone: the lookup of the trace before is not remembered.
    expect(second?.traceIds).toBeUndefined();
    expect(second).toMatchObject({ verdict: 'inconclusive' });
  });

  it('fails the swapped conversation at once: a refund with no lookup before cannot be undone', async () => {
    const { reports, send } = await start();
    const [first] = await send('chat-2', 'refund');
    expect(first).toMatchObject({ final: false, verdict: 'fail' });
    const broken = first?.findings.find((finding) => finding.rule === 'order.before');
    expect(broken?.pending).toBeUndefined();
    await send('chat-2', 'lookup');
    await until(() => finalOf(reports).length === 1);
    expect(finalOf(reports)[0]).toMatchObject({ verdict: 'fail', conversationId: 'chat-2' });
    expect(finalOf(reports)[0]?.traceIds).toHaveLength(2);
  });

  it('judges a conversation evicted over maxConversations final at once, counted', async () => {
    const { pipeline: p, reports, send } = await start({ maxConversations: 1, conversationIdleMs: 60_000 });
    await send('a', 'lookup');
    await send('b', 'lookup');
    await until(() => finalOf(reports).length === 1);
    expect(finalOf(reports)[0]).toMatchObject({
      conversationId: 'a',
      verdict: 'fail',
      incomplete: expect.stringContaining('max_conversations'),
    });
    expect(
      await p.counter('toolpath.conversations.evicted', { 'toolpath.eviction.reason': 'max_conversations' }),
    ).toBe(1);
    // At shutdown, what is left is judged final too, and counted.
    await p.processor.shutdown();
    expect(finalOf(reports).map((report) => report.conversationId)).toEqual(['a', 'b']);
    expect(
      await p.counter('toolpath.conversations.evicted', { 'toolpath.eviction.reason': 'shutdown' }),
    ).toBe(1);
  });

  it('closes a conversation past maxConversationCalls; what follows is inconclusive, not misjudged', async () => {
    const {
      pipeline: p,
      reports,
      send,
    } = await start({ maxConversationCalls: 1, conversationIdleMs: 60_000 });
    await send('c', 'lookup');
    // Judging the refund's trace first judges the closed conversation final, then the new one.
    const after = (await send('c', 'refund')).find((report) => report.final === false);
    await until(() => finalOf(reports).length === 1);
    expect(finalOf(reports)[0]).toMatchObject({
      conversationId: 'c',
      incomplete: expect.stringContaining('max_calls'),
    });
    expect(
      await p.counter('toolpath.conversations.evicted', { 'toolpath.eviction.reason': 'max_calls' }),
    ).toBe(1);
    // Without its lookup, the refund would fail order.before: the verdict says it cannot tell.
    expect(after).toMatchObject({ verdict: 'inconclusive', final: false });
    expect(after?.findings.map((finding) => finding.rule)).toContain('conversation.truncated');
  });

  it('refuses a conversation id that is not a string: that trace is judged alone, the others as before', async () => {
    const { send } = await start();
    const [alone] = await send(42, 'lookup');
    expect(alone?.conversationId).toBeUndefined();
    expect(alone?.findings.map((finding) => finding.rule)).toContain('trajectory.conversation.invalid_id');
    const [joined] = await send('chat-ok', 'lookup');
    expect(joined).toMatchObject({ conversationId: 'chat-ok', final: false });
  });

  it('coalesces the provisional judgements of a long conversation, counted, and judges another conversation on its own', async () => {
    const { pipeline: p, send } = await start({ conversationIdleMs: 60_000 });
    const coalesced: Report[] = [];
    let last: Report | undefined;
    for (let n = 0; n < 320; n++) {
      const [report] = await send('long', 'lookup');
      if (report?.findings.some((finding) => finding.rule === 'conversation.coalesced'))
        coalesced.push(report);
      else last = report;
    }
    // Past its small start it is judged again only as it grows: the traces between say so.
    expect(coalesced.length).toBeGreaterThan(0);
    expect(coalesced[0]).toMatchObject({ final: false, verdict: 'inconclusive', conversationId: 'long' });
    expect(p.processor.stats().conversationsCoalesced).toBe(coalesced.length);
    // The latest judged one keeps the latest trace ids and counts those it left out.
    expect(last?.traceIds).toHaveLength(64);
    expect((last?.traceIds?.length ?? 0) + (last?.cut?.traceIds ?? 0)).toBeGreaterThan(250);
    const [other] = await send('short', 'lookup');
    expect(other).toMatchObject({ conversationId: 'short', final: false });
    expect(other?.traceIds).toHaveLength(1);
  }, 120_000);
});
