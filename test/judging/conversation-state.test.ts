/** What the conversation state holds of a judged trace: its calls and turns, never a turn's answer text. */
import { describe, expect, it } from 'vitest';
import { CONVERSATION_DEFAULTS, ConversationState } from '../../src/judging/conversation-state.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';

describe('the conversation state', () => {
  it("holds a trace's turns without their answer text, and leaves the trace as it was", () => {
    const trajectory = trajectoryOf(fixture('demo-agent-good-refund'));
    const answered = trajectory.turns.filter((turn) => turn.answer !== undefined);
    expect(answered.length).toBeGreaterThan(0);
    const state = new ConversationState(CONVERSATION_DEFAULTS, () => true);
    const { held } = state.add('chat-1', trajectory, undefined, 0);
    const [stored] = held.traces;
    expect(stored?.turns).toHaveLength(trajectory.turns.length);
    expect(stored?.turns.filter((turn) => turn.answer !== undefined)).toEqual([]);
    expect(stored?.turns.map(({ id, runId }) => ({ id, runId }))).toEqual(
      trajectory.turns.map(({ id, runId }) => ({ id, runId })),
    );
    expect(trajectory.turns.filter((turn) => turn.answer !== undefined)).toEqual(answered);
  });
});
