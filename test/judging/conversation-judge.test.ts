/**
 * The conversation judge as durable mode drives it after a restart: traces held again without
 * being judged, in the order their conversations were last active; a trace judged into its
 * conversation before the restart not added twice when it is judged again for its output; a
 * conversation whose final was written judged again at once; and what a conversation lost (a cap
 * it was closed over) carried to the one that goes on, so its verdict is never a silent pass.
 */
import { describe, expect, it } from 'vitest';
import { ConversationJudge, conversationLimits } from '../../src/judging/conversation-judge.js';
import type { ConversationLimits } from '../../src/judging/conversation-state.js';
import { Redactor } from '../../src/judging/redact.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { spanRecord, toolSpan } from '../helpers/spans.js';

const ONE_REFUND = parseScenario(
  {
    id: 'one-refund',
    scope: 'conversation',
    tools: { required: ['get_order'], counts: { issue_refund: { max: 1 } } },
  },
  'test',
);

/** Trace `traceId` of conversation `conversationId`: an agent run at `at` ms calling `tools`. */
function trace(traceId: string, conversationId: string, at: number, tools: string[]): Trajectory {
  const root = spanRecord({
    traceId,
    name: 'invoke_agent support',
    start: at,
    end: at + 10,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support',
      'gen_ai.conversation.id': conversationId,
    },
  });
  const calls = tools.map((tool, n) =>
    toolSpan(tool, {
      traceId,
      parentSpanId: root.spanId,
      start: at + 1 + n,
      end: at + 2 + n,
      callId: `${traceId}-${n}`,
    }),
  );
  return normalizeTrace(traceId, [root, ...calls]) as Trajectory;
}

function judge(limits: Partial<ConversationLimits> = {}): ConversationJudge {
  return new ConversationJudge(
    [ONE_REFUND],
    new Redactor(),
    conversationLimits({ idleMs: 1_000, ...limits }),
  );
}

describe('the conversation judge after a restart', () => {
  it('holds restored traces without judging them, and judges the next trace on all of them', () => {
    const conversations = judge();
    const first = trace('t1', 'c', 0, ['get_order', 'issue_refund']);
    expect(conversations.restore('c', first, undefined, 0, undefined)).toEqual([]);
    const after = conversations.afterTrace(trace('t2', 'c', 100, ['issue_refund']), undefined, 10);
    // Two refunds across the restart: over the maximum at once.
    expect(after.reports[0]).toMatchObject({ verdict: 'fail', traceIds: ['t1', 't2'], final: false });
  });

  it('does not add a trace judged into its conversation before the restart when it is judged again', () => {
    const conversations = judge();
    const first = trace('t1', 'c', 0, ['get_order']);
    const second = trace('t2', 'c', 100, ['issue_refund']);
    conversations.restore('c', first, undefined, 0, undefined);
    conversations.restore('c', second, undefined, 0, undefined);
    conversations.judgedBefore(['t2']);
    const again = conversations.afterTrace(second, undefined, 10);
    expect(again.reports[0]).toMatchObject({ verdict: 'pass', traceIds: ['t1', 't2'] });
    // Its idle time goes on from before the restart, not from being judged again.
    const [final] = conversations.expire(1_000);
    expect(final).toMatchObject({ conversationId: 'c', traceIds: ['t1', 't2'] });
    expect(final?.reports[0]).toMatchObject({ verdict: 'pass', final: true });
  });

  it('does not judge a trace on a conversation judged final before the restart, nor start a new one', () => {
    const conversations = judge();
    const first = trace('t1', 'c', 0, ['get_order']);
    conversations.restore('c', first, undefined, 0, undefined);
    const final = conversations.closeNow('c');
    expect(final).toMatchObject({ traceIds: ['t1'] });
    conversations.judgedBefore(['t1']);
    expect(conversations.afterTrace(first, undefined, 10)).toEqual({ reports: [], closed: [] });
    expect(conversations.state.size).toBe(0);
  });

  it('restores in the order conversations were last active, so the idle ones go first', () => {
    const conversations = judge();
    conversations.restore('old', trace('t1', 'old', 0, ['get_order']), undefined, -500, undefined);
    conversations.restore('new', trace('t2', 'new', 0, ['get_order']), undefined, 400, undefined);
    expect(conversations.expire(600).map((judged) => judged.conversationId)).toEqual(['old']);
    expect(conversations.expire(1_400).map((judged) => judged.conversationId)).toEqual(['new']);
  });

  it.each([
    ['storage', /not in storage after a restart/],
    ['max_calls', /when it passed 1000 calls/],
  ] as const)(
    'judges a conversation restored with what it lost (%s) inconclusive, saying so',
    (lost, message) => {
      const conversations = judge({ maxCalls: 1000 });
      conversations.restore('c', trace('t2', 'c', 100, ['get_order']), undefined, 0, lost);
      const [final] = conversations.expire(1_000);
      expect(final?.reports[0]?.verdict).toBe('inconclusive');
      const finding = final?.reports[0]?.findings.find((f) => f.rule === 'conversation.truncated');
      expect(finding?.message).toMatch(message);
    },
  );

  it('judges a conversation that goes on after being closed at maxConversations inconclusive, not whole', () => {
    const conversations = judge({ maxConversations: 1 });
    conversations.afterTrace(trace('t1', 'a', 0, ['issue_refund']), undefined, 0);
    const made = conversations.afterTrace(trace('t2', 'b', 50, ['get_order']), undefined, 1);
    expect(made.closed.map((judged) => judged.conversationId)).toEqual(['a']);
    // Judged without its first refund, a's second one would pass.
    const after = conversations.afterTrace(
      trace('t3', 'a', 100, ['get_order', 'issue_refund']),
      undefined,
      2,
    );
    expect(after.reports[0]?.verdict).toBe('inconclusive');
    expect(after.reports[0]?.findings.map((f) => f.rule)).toContain('conversation.truncated');
  });
});
