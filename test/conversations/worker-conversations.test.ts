/**
 * `worker: true` keeps the conversation state on the worker thread (processor-conversations.test.ts
 * runs the conversation behaviour in both modes). Here: what happens when that worker exits with
 * conversations held. Their state is gone, so none may be judged final as if whole: each is
 * judged final as inconclusive (`conversation.lost`), counted, on its latest trace's evaluation
 * span, and what follows of it on the next worker is judged as truncated.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Report } from '../../src/model/report.js';
import { chatPipeline, finalOf, until } from '../helpers/chat-conversation.js';
import {
  eventsNamed,
  type Pipeline,
  spansOfTrace,
  workerJudgeOf,
  workerReady,
} from '../processor/harness.js';

let open: Pipeline | undefined;
afterEach(async () => {
  await open?.shutdown();
  open = undefined;
});

async function start() {
  const chat = await chatPipeline({ worker: true, limits: { conversationIdleMs: 60_000 } });
  open = chat.pipeline;
  return chat;
}

const rules = (report: Report | undefined) => report?.findings.map((finding) => finding.rule) ?? [];

describe('worker: true, a worker that exits with conversations held', () => {
  it('judges each conversation it held final as lost: inconclusive, counted, on the latest trace', async () => {
    const { pipeline: p, reports, send } = await start();
    const [first] = await send('chat-lost', 'refund');
    // A refund with no lookup before: a failure no later trace can mend.
    expect(first).toMatchObject({ final: false, verdict: 'fail', conversationId: 'chat-lost' });

    await workerJudgeOf(p.processor).worker.terminate();
    await until(() => finalOf(reports).length === 1);
    const [lost] = finalOf(reports);
    expect(lost).toMatchObject({
      conversationId: 'chat-lost',
      traceIds: first?.traceIds,
      final: true,
      verdict: 'inconclusive',
      pass: false,
      incomplete: expect.stringContaining('worker_exit'),
    });
    expect(lost?.findings).toEqual([
      expect.objectContaining({ rule: 'conversation.lost', severity: 'hard', inconclusive: true }),
    ]);
    expect(p.processor.stats()).toMatchObject({ workerRestarts: 1, conversationsLost: 1 });
    expect(
      await p.counter('toolpath.conversations.evicted', { 'toolpath.eviction.reason': 'worker_exit' }),
    ).toBe(1);
    expect(await p.counter('toolpath.evaluations', { 'toolpath.verdict': 'inconclusive' })).toBe(1);
    expect(p.logs.getFinishedLogRecords().map((record) => record.body)).toContain(
      'chat.refund: inconclusive',
    );

    // Its evaluation span, under the latest trace's agent span, as an idle judgement's would be.
    await p.processor.forceFlush();
    const latest = spansOfTrace(p.exporter, lost?.traceId as string);
    const finalSpan = latest.find((span) => span.attributes['toolpath.conversation.final'] === true);
    const agent = latest.find((span) => span.name === 'invoke_agent support-agent');
    expect(finalSpan?.parentSpanContext?.spanId).toBe(agent?.spanContext().spanId);
    expect(eventsNamed(finalSpan as never, 'gen_ai.evaluation.result')[0]).toMatchObject({
      'gen_ai.conversation.id': 'chat-lost',
      'toolpath.verdict': 'inconclusive',
      'toolpath.conversation.final': true,
    });
  });

  it('judges what follows of a lost conversation as truncated: never a pass on the traces since', async () => {
    const { pipeline: p, reports, send } = await start();
    await send('chat-after', 'refund');
    await workerJudgeOf(p.processor).worker.terminate();
    await until(() => finalOf(reports).length === 1);
    await workerReady(p.processor);

    // Judged alone, lookup then refund would pass; with the refund before them, the conversation fails.
    await send('chat-after', 'lookup');
    const [after] = await send('chat-after', 'refund');
    expect(after).toMatchObject({ final: false, verdict: 'inconclusive', conversationId: 'chat-after' });
    expect(after?.traceIds).toHaveLength(2);
    const truncated = after?.findings.find((finding) => finding.rule === 'conversation.truncated');
    expect(truncated?.message).toContain('lost when the judging worker that held them exited');

    await p.processor.shutdown();
    const finals = finalOf(reports);
    expect(finals).toHaveLength(2);
    expect(finals[1]).toMatchObject({ verdict: 'inconclusive', traceIds: after?.traceIds });
    expect(rules(finals[1])).toContain('conversation.truncated');
    expect(p.processor.stats().conversationsLost).toBe(1);
  });

  it('judges a conversation final exactly once when the worker dies during shutdown, and shuts down', async () => {
    const { pipeline: p, reports, send } = await start();
    await send('chat-down', 'lookup');
    const shutting = p.processor.shutdown();
    void workerJudgeOf(p.processor).worker.terminate();
    await shutting;

    // Judged by the worker at shutdown (its answer came first), or lost with it: either way once.
    const finals = finalOf(reports);
    expect(finals).toHaveLength(1);
    const [last] = finals;
    if (last?.verdict === 'inconclusive') expect(rules(last)).toEqual(['conversation.lost']);
    else expect(last).toMatchObject({ verdict: 'fail', incomplete: expect.stringContaining('shutdown') });
    const ended = async (reason: string) =>
      p.counter('toolpath.conversations.evicted', { 'toolpath.eviction.reason': reason });
    expect((await ended('shutdown')) + (await ended('worker_exit'))).toBe(1);
  });
});
