/** Deterministic judges for tests: one that grades, one that throws, one that times out. No model is called. */
import type { Judge } from '../../src/judging/judges.js';

/** A deterministic fake judge: grades by whether the answer names a refund id. No model is called. */
export const fakeJudge: Judge = {
  name: 'answer-quality',
  version: '3',
  type: 'llm',
  scenarios: ['support.refund', 'demo.answer'],
  judge: async (trajectory, answer) => ({
    score: answer === undefined ? 0 : 1,
    label: answer === undefined ? 'no-answer' : 'answered',
    reason: `${trajectory.calls.length} calls; answer ${answer === undefined ? 'missing' : 'given'}`,
  }),
};
export const throwing: Judge = {
  name: 'broken',
  scenarios: ['support.refund', 'demo.answer'],
  type: 'code',
  judge: () => {
    throw new Error('rubric missing');
  },
};
export const slow: Judge = {
  name: 'slow',
  scenarios: ['support.refund', 'demo.answer'],
  timeoutMs: 20,
  judge: () =>
    new Promise((resolve) => setTimeout(() => resolve({ score: 1, label: 'late', reason: '' }), 1_000)),
};
