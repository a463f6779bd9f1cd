import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runEval } from '../../src/cli/run-eval.js';
import type { Scenario } from '../../src/scenario/scenario.js';

const fixture = (name: string) => new URL(`../spans/${name}`, import.meta.url);

describe('runEval', () => {
  it('turns an evaluation that throws into an error of that input, and still judges the others', async () => {
    const good = await readFile(fixture('demo-agent-good-refund.otlp.json'), 'utf8');
    // Built by hand, past the loader: its regex was never compiled, so matching throws.
    const broken: Scenario = {
      id: 'broken',
      severity: {},
      rules: { arguments: [{ tool: 'get_order', match: { mode: 'regex', pattern: 'x' } }] },
    };
    const fine: Scenario = { id: 'fine', severity: {}, rules: { tools: { forbidden: ['admin'] } } };
    const run = runEval([{ source: 'good.json', text: good }], [broken, fine]);
    expect(run.reports.map(({ report }) => report.scenario.id)).toEqual(['fine']);
    expect(run.errors).toEqual([
      {
        source: 'good.json',
        message: expect.stringMatching(
          /^could not evaluate trace [0-9a-f]{32} against scenario broken: regex match spec was not compiled$/,
        ),
      },
    ]);
  });
});
