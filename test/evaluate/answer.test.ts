import { beforeAll, describe, expect, it } from 'vitest';
import { runEval } from '../../src/cli/run-eval.js';
import { captureConversations } from '../../src/demo/capture.js';
import { DEMO_STEPS } from '../../src/demo/conversations.js';
import { supportTools } from '../../src/demo/tools.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { Redactor } from '../../src/judging/redact.js';
import type { Report } from '../../src/model/report.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';

const { lookUpBoth, refundTheOrderAmount, confirm, answer } = DEMO_STEPS;

/** The refund agent run for real (OTel SDK, scripted model), ending with each of these answers. */
const ANSWERS: Record<string, string> = {
  'states-refund-id': 'Your refund R-1001 of $40.00 for sam@example.test is on its way.',
  'made-up-id': 'Your refund R-7731 is on its way.',
  'made-up-amount': 'Your refund R-1001 of $45 is on its way.',
  'no-answer': '   ',
};

const SCENARIO = parseScenario(
  {
    id: 'refund.answer',
    severity: { 'answer.grounded': 'hard' },
    answer: {
      contains: ['refund'],
      notContains: ['sorry'],
      matches: { pattern: 'on its way\\.$' },
      grounded: true,
      mentions: [{ tool: 'issue_refund', path: 'refundId' }],
    },
  },
  'refund-answer.json',
);

let reports: Record<string, Report>;
beforeAll(async () => {
  const captured = await captureConversations(
    Object.entries(ANSWERS).map(([name, text]) => ({
      name,
      agent: 'support-agent',
      userMessage: 'Please refund order O-17.',
      tools: supportTools,
      steps: [lookUpBoth, refundTheOrderAmount, confirm(), answer(text)],
    })),
    'toolpath-answer-test',
  );
  const run = runEval(
    captured.map(({ conversation, otlpJson }) => ({ source: conversation.name, text: otlpJson })),
    [SCENARIO],
  );
  expect(run.errors).toEqual([]);
  reports = Object.fromEntries(run.reports.map(({ source, report }) => [source, report]));
}, 60_000);

const status = (report: Report | undefined, name: string) =>
  report?.assertions.find((assertion) => assertion.name === name)?.status;

describe('the answer section on the refund agent', () => {
  it('passes grounded and mentions when the answer states the returned refund id and amount', () => {
    const report = reports['states-refund-id'];
    expect(report?.verdict).toBe('pass');
    expect(report?.scores.answer).toBe(1);
    expect(status(report, 'answer.grounded')).toBe('pass');
    expect(status(report, 'answer.mentions:issue_refund.refundId')).toBe('pass');
  });

  it('fails answer.grounded, hard, on an id no tool returned, naming it and the nearest returned ids', () => {
    const report = reports['made-up-id'] as Report;
    expect(report.verdict).toBe('fail');
    const finding = report.findings.find((f) => f.rule === 'answer.grounded');
    expect(finding).toMatchObject({ severity: 'hard' });
    expect(finding?.message).toMatch(
      /id "R-7731", which appears in no earlier tool result; nearest returned: "R-1001" \(issue_refund/,
    );
    // The answer is reported first: it is what the user saw.
    expect(report.findings[0]?.rule).toBe('answer.grounded');
    // mentions is soft (no severity given): a warning that lowers the answer score.
    expect(report.findings.find((f) => f.rule === 'answer.mentions')).toMatchObject({ severity: 'warning' });
  });

  it('fails on an amount no tool returned, naming the nearest amounts', () => {
    const report = reports['made-up-amount'] as Report;
    expect(report.verdict).toBe('fail');
    const finding = report.findings.find((f) => f.rule === 'answer.grounded');
    expect(finding?.message).toMatch(/amount "\$45".*nearest returned: "40"/);
    expect(status(report, 'answer.mentions:issue_refund.refundId')).toBe('pass');
  });

  it('is inconclusive on every answer check when no answer was recorded, never passed', () => {
    const report = reports['no-answer'] as Report;
    expect(report.verdict).toBe('inconclusive');
    const answerChecks = report.assertions.filter((a) => a.name.startsWith('answer.'));
    expect(answerChecks).toHaveLength(5);
    for (const check of answerChecks) {
      expect(check.status).toBe('inconclusive');
      expect(check.reason).toMatch(/^no answer recorded/);
    }
  });
});

describe('answer checks one by one', () => {
  const trajectory = trajectoryOf(fixture('demo-agent-made-up-confirmation'));
  const judge = (answer: object) => evaluate(trajectory, parseScenario({ id: 'a', answer }, 'a.json'));

  it('contains and notContains are case-insensitive and say what is missing or there', () => {
    const report = judge({ contains: ['YOUR REFUND', 'apolog'], notContains: ['on its WAY'] });
    expect(report.assertions).toEqual([
      { name: 'answer.contains:YOUR REFUND', status: 'pass', reason: '' },
      { name: 'answer.contains:apolog', status: 'fail', reason: 'the answer does not contain "apolog"' },
      { name: 'answer.notContains:on its WAY', status: 'fail', reason: 'the answer contains "on its WAY"' },
    ]);
    // Soft by default: the verdict stands.
    expect(report.verdict).toBe('pass');
    expect(report.scores.answer).toBeCloseTo(1 / 3);
  });

  it('severity: hard on the section makes a failed check fail the verdict', () => {
    expect(judge({ severity: 'hard', contains: ['apolog'] }).verdict).toBe('fail');
  });

  it('matches runs RE2 with flags, and refuses a backtracking pattern at load time', () => {
    expect(judge({ matches: { pattern: '^your refund r-\\d+', flags: 'i' } }).assertions[0]?.status).toBe(
      'pass',
    );
    expect(
      judge({ matches: [{ pattern: 'R-\\d{5}' }, { pattern: 'way' }] }).assertions.map((a) => [
        a.name,
        a.status,
      ]),
    ).toEqual([
      ['answer.matches[0]', 'fail'],
      ['answer.matches[1]', 'pass'],
    ]);
    expect(() => parseScenario({ id: 'a', answer: { matches: { pattern: '(a)\\1' } } }, 'a.json')).toThrow(
      /backreference/,
    );
  });

  it('grounded from arguments accepts a value the agent only sent, not one it was given', () => {
    expect(judge({ grounded: { kinds: ['id'], from: ['results', 'arguments'] } }).assertions[0]?.status).toBe(
      'pass',
    );
    expect(judge({ grounded: { kinds: ['id'] } }).assertions[0]?.status).toBe('fail');
  });

  it('grounded from input is inconclusive for a value in no result: the input is not recorded', () => {
    const report = judge({ grounded: { from: ['results', 'input'] } });
    expect(report.assertions[0]).toMatchObject({ status: 'inconclusive', reason: /input is not recorded/ });
  });

  it('a mention of a tool never called fails, saying so', () => {
    expect(judge({ mentions: [{ tool: 'lookup', path: 'id' }] }).assertions[0]).toMatchObject({
      status: 'fail',
      reason: "the answer cannot state lookup's id: lookup returned nothing before the answer",
    });
  });

  it('redaction scrubs the values an answer states as it does captured values', () => {
    const report = judge({ grounded: true });
    const out = JSON.stringify(new Redactor().redact(report, trajectory));
    expect(JSON.stringify(report)).toContain('R-7731');
    expect(out).not.toContain('R-7731');
    expect(out).not.toContain('R-1001');
    expect(JSON.stringify(new Redactor(false).redact(report, trajectory))).toContain('R-7731');
  });
});

describe('the trajectory-assertion JSON', () => {
  const trajectory = trajectoryOf(fixture('demo-agent-made-up-confirmation'));
  it('answer_contains and answer_matches are assertions named like the others, in the same result shape, hard', () => {
    const scenario = parseScenario(
      {
        allowed_tools: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
        answer_contains: ['on its way', 'R-1001'],
        answer_matches: [{ pattern: '^your refund', flags: 'i' }],
      },
      'refund.json',
    );
    const report = evaluate(trajectory, scenario);
    expect(report.assertions).toEqual([
      { name: 'answer_contains:on its way', status: 'pass', reason: '' },
      { name: 'answer_contains:R-1001', status: 'fail', reason: 'the answer does not contain "R-1001"' },
      { name: 'answer_matches:^your refund', status: 'pass', reason: '' },
      { name: 'no_unexpected_tool', status: 'pass', reason: '' },
    ]);
    expect(report.verdict).toBe('fail');
  });

  it('refuses a pattern RE2 cannot run, naming the field', () => {
    expect(() => parseScenario({ answer_matches: [{ pattern: '(?=x)' }] }, 'bad.json')).toThrow(
      /answer_matches.*lookahead|lookahead/,
    );
  });
});

describe('each: true over a conversation', () => {
  it("judges every outermost run's final answer, saying which turn failed; without it only the last", async () => {
    const { joinConversation } = await import('../../src/model/conversation.js');
    const good = trajectoryOf(fixture('demo-agent-good-refund'));
    const madeUp = trajectoryOf(fixture('demo-agent-made-up-confirmation'));
    const conversation = joinConversation('chat-1', [madeUp, good]);
    const judge = (each: boolean) =>
      evaluate(
        conversation,
        parseScenario({ id: 'c', scope: 'conversation', answer: { each, grounded: true } }, 'c.json'),
      );
    // Without each: the last run's answer alone (the traces are joined in time order).
    const last = conversation.traceIds?.at(-1) === madeUp.traceId ? 'fail' : 'pass';
    expect(judge(false).assertions[0]?.status).toBe(last);
    expect(judge(false).assertions[0]?.reason).not.toMatch(/^the answer of turn/);
    const [all] = judge(true).assertions;
    expect(all?.status).toBe('fail');
    expect(all?.reason).toMatch(/^the answer of turn \S+: the answer states id "R-7731"/);
  });
});
