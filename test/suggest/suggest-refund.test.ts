import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { trajectoriesOf } from '../../src/cli/run-eval.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { renderYaml, runNamer } from '../../src/suggest/render.js';
import { ruleLabel } from '../../src/suggest/rules.js';
import type { SuggestRun } from '../../src/suggest/runs.js';
import { suggestScenarios } from '../../src/suggest/suggest.js';
import { BAD_REFUND_FILES, GOOD_REFUND_FILES } from '../helpers/suggest-refund.js';

async function runsOf(files: readonly string[]): Promise<SuggestRun[]> {
  const runs: SuggestRun[] = [];
  for (const source of files) {
    const read = readStoredTraces(await readFile(source, 'utf8'), source);
    if (!read.input) throw new Error(`${source}: ${JSON.stringify(read.errors)}`);
    for (const trajectory of trajectoriesOf(read.input, source)) runs.push({ source, trajectory });
  }
  return runs;
}

let good: SuggestRun[];
let bad: SuggestRun[];
beforeAll(async () => {
  good = await runsOf(GOOD_REFUND_FILES);
  bad = await runsOf(BAD_REFUND_FILES.map(({ file }) => file));
});

const suggestedYaml = (goodRuns: readonly SuggestRun[], badRuns: readonly SuggestRun[]) =>
  renderYaml(suggestScenarios(goodRuns, badRuns), runNamer([...goodRuns, ...badRuns]));

describe('toolpath suggest on the refund agent', () => {
  it('suggests one scenario for the agent, which passes every good run', () => {
    const text = suggestedYaml(good, []);
    const scenario = parseScenario(parse(text), 'suggested.yaml');
    expect(scenario.appliesTo).toEqual({ agent: ['support-agent'] });
    for (const run of good) {
      const report = evaluate(run.trajectory, scenario);
      expect(
        report.assertions.filter((a) => a.status !== 'pass'),
        run.source,
      ).toEqual([]);
      expect(report.verdict, run.source).toBe('pass');
    }
  });

  it('fails each bad run, and names the rule that catches it', () => {
    const suggestions = suggestScenarios(good, bad);
    const [agent] = suggestions.agents;
    expect(suggestions.agents).toHaveLength(1);
    expect(agent?.uncaught).toEqual([]);
    const scenario = parseScenario(parse(suggestedYaml(good, bad)), 'suggested.yaml');
    for (const [index, { file, caughtBy }] of BAD_REFUND_FILES.entries()) {
      const run = bad[index] as SuggestRun;
      expect(run.source).toBe(file);
      expect(evaluate(run.trajectory, scenario).verdict, file).toBe('fail');
      const catching = (agent?.rules ?? [])
        .filter((rule) => rule.catches.some((c) => c.run === run && c.severity === 'hard'))
        .map((rule) => ruleLabel(rule.rule));
      expect(
        catching.some((label) => label.startsWith(caughtBy)),
        `${file}: ${catching.join('; ')}`,
      ).toBe(true);
    }
  });

  it('keeps the order the good runs share on happens-before, reduced, and no order they differ on', () => {
    const rules = suggestScenarios(good).agents[0]?.rules.map(({ rule }) => ruleLabel(rule)) ?? [];
    expect(rules.filter((label) => label.startsWith('order.before'))).toEqual([
      'order.before: get_order before issue_refund',
      'order.before: get_refund_policy before issue_refund',
      'order.before: issue_refund before send_confirmation',
    ]);
    // Sequential reads put the order first, reversed reads list the policy first: neither holds.
    expect(rules).not.toContain('order.before: get_order before get_refund_policy');
    expect(rules).not.toContain('order.before: get_refund_policy before get_order');
    expect(rules).toContain('order.terminal: send_confirmation');
    expect(rules).toContain('grounding: send_confirmation.refundId from issue_refund.refundId');
    expect(rules).toContain('grounding: issue_refund.amount from get_order.amount');
    // The policy's maxAmount was 40 too, in every run: a field of another name is chance.
    expect(rules).not.toContain('grounding: issue_refund.amount from get_refund_policy.maxAmount');
    expect(rules).toContain('arguments: get_order.orderId = "O-17"');
    // The refund id came from a result: a grounding rule, not a constant.
    expect(rules.some((label) => label.startsWith('arguments: send_confirmation.refundId'))).toBe(false);
  });

  it('comments each rule with its support and the bad runs it fails', () => {
    const text = suggestedYaml(good, bad);
    expect(text).toContain('# held in 3 of 3 runs; fails');
    expect(text).toMatch(/- send_confirmation # held in 3 of 3 runs; fails .*09-skips-confirmation/);
    expect(text).toContain('# Every bad run fails a rule above.');
  });

  it('says which bad runs no rule catches', () => {
    // Without the sequential run, nothing says a read must come before the other; a bad run that
    // only differs there from the good ones is caught by nothing.
    const suggestions = suggestScenarios(good.slice(0, 1), good.slice(2));
    expect(suggestions.agents[0]?.uncaught.map((run) => run.source)).toEqual([GOOD_REFUND_FILES[2]]);
    expect(renderYaml(suggestions, runNamer(good))).toContain(
      `# No rule above fails these bad runs (write those rules by hand): ${GOOD_REFUND_FILES[2]}`,
    );
  });

  it('gives the same text byte for byte, whatever the order of the inputs', () => {
    const first = suggestedYaml(good, bad);
    expect(suggestedYaml(good, bad)).toBe(first);
    expect(suggestedYaml([...good].reverse(), bad)).toBe(first);
  });
});
