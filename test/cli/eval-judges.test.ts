import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const trace = fileURLToPath(new URL('../spans/demo-agent-made-up-confirmation.otlp.json', import.meta.url));

/** A judges module as a user writes one: deterministic, no model called. */
const MODULE = `export default [
  {
    name: 'answer-quality', version: '3', type: 'llm', scenarios: ['demo.answer'], when: 'fail',
    judge: async (trajectory, answer) => ({ score: 0.25, label: 'hallucinated', reason: 'states ' + answer }),
  },
  { name: 'broken', type: 'code', scenarios: ['demo.answer'], judge: () => { throw new Error('no rubric'); } },
  { name: 'elsewhere', scenarios: ['other'], judge: () => ({ score: 1, label: 'x', reason: '' }) },
];
`;

function setUp(): { dir: string; scenario: string; module: string } {
  const dir = temporaryDir('toolpath-judges-');
  const scenario = join(dir, 'answer.json');
  writeFileSync(
    scenario,
    JSON.stringify({ id: 'demo.answer', answer: { severity: 'hard', grounded: true } }),
  );
  const module = join(dir, 'judges.mjs');
  writeFileSync(module, MODULE);
  return { dir, scenario, module };
}

describe('toolpath eval --judges', () => {
  it('adds each judge result to the JSON report with its identity; a throwing judge is counted and the verdict stands', async () => {
    const { scenario, module } = setUp();
    const run = await runCli(['eval', '-s', scenario, '--judges', module, '-f', 'json', trace]);
    expect(run.code).toBe(1);
    const [report] = JSON.parse(run.stdout).reports;
    expect(report.verdict).toBe('fail');
    expect(report.findings[0].rule).toBe('answer.grounded');
    expect(report.judges).toEqual([
      {
        name: 'answer-quality',
        version: '3',
        type: 'llm',
        scenario: 'demo.answer',
        result: { score: 0.25, label: 'hallucinated', reason: 'states Your refund R-7731 is on its way.' },
      },
      { name: 'broken', type: 'code', scenario: 'demo.answer', error: 'threw: no rubric' },
    ]);
    expect(run.stderr).toContain('toolpath eval: judge broken (scenario demo.answer): threw: no rubric');
    expect(run.stderr).toContain('1 judge failure; the verdicts stand');
  });

  it('a module that exports no list of judges is a usage error naming it', async () => {
    const { dir, scenario } = setUp();
    const bad = join(dir, 'bad.mjs');
    writeFileSync(bad, 'export default { name: "x" };\n');
    const run = await runCli(['eval', '-s', scenario, '--judges', bad, trace]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--judges: judges module .*bad\.mjs: expected a default \(or judges\) export that is an array/,
    );
  });
});
