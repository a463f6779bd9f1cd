import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { installToolpathMatchers } from '../../src/vitest.js';
import { fakeJudge, slow, throwing } from '../helpers/fake-judges.js';

installToolpathMatchers();

const otlp = (name: string) =>
  readFileSync(new URL(`../spans/demo-agent-${name}.otlp.json`, import.meta.url), 'utf8');
const scenario = { id: 'demo.answer', answer: { severity: 'hard', grounded: true } };

describe('toHaveJudgement', () => {
  it('passes when the named judge returns the label asked for, after the deterministic verdict', async () => {
    await expect(otlp('made-up-confirmation')).toHaveJudgement('answer-quality', {
      scenario,
      judges: [fakeJudge],
      label: 'answered',
      minScore: 1,
    });
    // The deterministic verdict stands beside it.
    expect(otlp('made-up-confirmation')).toFailScenario(scenario);
  });

  it('fails, saying why, when the judge threw, timed out, or gave another label', async () => {
    await expect(
      expect(otlp('good-refund')).toHaveJudgement('broken', { scenario, judges: [throwing] }),
    ).rejects.toThrow(/broken failed: threw: rubric missing/);
    await expect(
      expect(otlp('good-refund')).toHaveJudgement('slow', { scenario, judges: [slow] }),
    ).rejects.toThrow(/slow failed: threw: timed out after 20 ms/);
    await expect(
      expect(otlp('good-refund')).toHaveJudgement('answer-quality', {
        scenario,
        judges: [fakeJudge],
        label: 'great',
      }),
    ).rejects.toThrow(/answer-quality returned \{"score":1,"label":"answered"/);
  });
});
