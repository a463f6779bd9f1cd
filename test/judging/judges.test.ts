import { afterEach, describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { type Judge, judgeEvent, runJudges, withJudges } from '../../src/judging/judges.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { fakeJudge, slow, throwing } from '../helpers/fake-judges.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { type Pipeline, pipeline } from '../processor/harness.js';
import { REFUND_SCENARIO, runRefundAgent } from '../processor/vercel-agent.js';

const trajectory = trajectoryOf(fixture('demo-agent-made-up-confirmation'));
const scenario = parseScenario(
  { id: 'demo.answer', answer: { severity: 'hard', grounded: true } },
  'demo.json',
);

describe('runJudges', () => {
  it('adds each result with its identity; a judge that throws or times out is recorded and counted, the verdict stands', async () => {
    const report = evaluate(trajectory, scenario);
    expect(report.verdict).toBe('fail');
    const failures: string[] = [];
    const judged = await withJudges([fakeJudge, throwing, slow], trajectory, report, (record) =>
      failures.push(record.name),
    );
    expect(judged.verdict).toBe('fail');
    expect(judged.findings).toEqual(report.findings);
    expect(judged.judges).toEqual([
      {
        name: 'answer-quality',
        version: '3',
        type: 'llm',
        scenario: 'demo.answer',
        result: { score: 1, label: 'answered', reason: '4 calls; answer given' },
      },
      { name: 'broken', type: 'code', scenario: 'demo.answer', error: 'threw: rubric missing' },
      { name: 'slow', type: 'llm', scenario: 'demo.answer', error: 'threw: timed out after 20 ms' },
    ]);
    expect(failures).toEqual(['broken', 'slow']);
    expect(judgeEvent(judged.judges?.[0] as never, report)).toEqual({
      name: 'gen_ai.evaluation.result',
      attributes: expect.objectContaining({
        'gen_ai.evaluation.evaluator.id': 'answer-quality',
        'gen_ai.evaluation.evaluator.version': '3',
        'gen_ai.evaluation.evaluator.type': 'llm',
        'gen_ai.evaluation.score.value': 1,
        'gen_ai.evaluation.score.label': 'answered',
      }),
    });
  });

  it('runs only on the scenarios a judge names and the verdicts its when says', async () => {
    const report = evaluate(trajectory, scenario);
    expect(await runJudges([{ ...fakeJudge, scenarios: ['other'] }], trajectory, report)).toEqual([]);
    expect(await runJudges([{ ...fakeJudge, when: 'pass' }], trajectory, report)).toEqual([]);
    expect(await runJudges([{ ...fakeJudge, when: 'fail' }], trajectory, report)).toHaveLength(1);
  });

  it('a result that is not {score, label, reason} is a failure', async () => {
    const report = evaluate(trajectory, scenario);
    const odd: Judge = { ...fakeJudge, judge: () => ({ score: Number.NaN, label: 'x', reason: '' }) };
    const [record] = await runJudges([odd], trajectory, report);
    expect(record?.error).toBe('returned a result without a finite score');
  });
});

describe('judges in the processor, with a real NodeTracerProvider', () => {
  let current: Pipeline | undefined;
  afterEach(async () => {
    await current?.shutdown();
    current = undefined;
  });

  it('logs each judge result as a gen_ai.evaluation.result with its identity, counts failures, never throws into the app', async () => {
    const p = pipeline({ scenarios: [REFUND_SCENARIO], judges: [fakeJudge, throwing, slow] });
    current = p;
    await runRefundAgent(p.provider.getTracer('app'), 'good');
    await p.processor.forceFlush();
    const records = p.logs
      .getFinishedLogRecords()
      .filter((log) => log.eventName === 'gen_ai.evaluation.result');
    const byEvaluator = (id: string) =>
      records.find((log) => log.attributes['gen_ai.evaluation.evaluator.id'] === id);
    expect(byEvaluator('support.refund')?.attributes['gen_ai.evaluation.score.label']).toBe('pass');
    expect(byEvaluator('answer-quality')?.attributes).toMatchObject({
      'gen_ai.evaluation.evaluator.version': '3',
      'gen_ai.evaluation.evaluator.type': 'llm',
      'gen_ai.evaluation.score.label': 'answered',
      'toolpath.verdict': 'pass',
    });
    expect(byEvaluator('broken')?.attributes).toMatchObject({ 'error.type': 'toolpath.judge_failed' });
    expect(await p.counter('toolpath.evaluation.errors', { 'toolpath.error.stage': 'judge' })).toBe(2);
    expect(p.errors.filter((e) => e.includes('judge'))).toHaveLength(2);
  });

  it('refuses judges on a worker, which could not run them', () => {
    expect(() => pipeline({ scenarios: [REFUND_SCENARIO], judges: [fakeJudge], worker: true })).toThrow(
      /judges run on the app's thread/,
    );
  });
});
