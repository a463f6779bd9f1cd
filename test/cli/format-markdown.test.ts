import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { escapeMarkdown, formatMarkdown } from '../../src/cli/format-markdown.js';
import type { EvalRun } from '../../src/cli/run-eval.js';
import type { Report } from '../../src/model/report.js';
import { summarizeRun } from '../../src/run/run-summary.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const TRACE_A = 'a'.repeat(32);
const TRACE_B = 'b'.repeat(32);

function report(traceId: string, overrides: Partial<Report>): Report {
  return {
    traceId,
    scenario: { id: 'support.refund', version: '3' },
    toolpathVersion: '0.1.0',
    verdict: 'pass',
    pass: true,
    scores: {},
    findings: [],
    assertions: [],
    stats: { calls: 4, turns: 3, errors: 0, durationMs: 12 },
    ...overrides,
  };
}

const REPORTS: EvalRun['reports'] = [
  { source: 'good.json', report: report(TRACE_A, { scores: { order: 1, grounding: 1 } }) },
  {
    source: 'bad|name.json',
    report: report(TRACE_B, {
      verdict: 'fail',
      pass: false,
      scores: { order: 0.5, grounding: 1, efficiency: 0.75 },
      findings: [
        {
          rule: 'order.before',
          severity: 'hard',
          message: 'issue_refund (c3) ran before get_refund_policy | expected\nthe policy first',
          calls: ['c3', 'c4'],
          spans: ['s3'],
        },
        {
          rule: 'efficiency.repeats',
          severity: 'warning',
          message: 'get_order called 2 times',
          calls: ['c1'],
          spans: [],
        },
      ],
    }),
  },
];
const RUN: EvalRun = {
  reports: REPORTS,
  errors: [{ source: 'broken.json', location: '[2].ok', message: 'expected boolean, got string' }],
  summary: summarizeRun(2, REPORTS, [{ id: 'support.refund', version: '3' }]),
};

describe('formatMarkdown', () => {
  it('writes totals, a table per scenario, the findings of what failed, and the input errors', () => {
    expect(formatMarkdown(RUN)).toBe(
      [
        '## toolpath: 1 passed, 1 failed, 0 inconclusive',
        '',
        '2 evaluations of 2 traces, 1 input error.',
        '',
        '| Scenario | Unit | Passed | Pass rate | Gate | Decision |',
        '| --- | --- | ---: | ---: | --- | --- |',
        '| support.refund@3 | trace | 1 of 2 | 0.5 | none | **NOT ALL PASSED**: no gate, so every trace must pass: 1 of 2 traces did not |',
        '',
        '### support.refund@3',
        '',
        '| Trace | Source | Verdict | Calls | order | grounding | efficiency |',
        '| --- | --- | --- | ---: | ---: | ---: | ---: |',
        `| ${TRACE_A} | good.json | **PASS** | 4 | 1.00 | 1.00 | - |`,
        `| ${TRACE_B} | bad\\|name.json | **FAIL** | 4 | 0.50 | 1.00 | 0.75 |`,
        '',
        '### Findings',
        '',
        `- **HARD** order.before in support.refund@3, trace ${TRACE_B} (bad\\|name.json): issue_refund (c3) ran before get_refund_policy \\| expected<br>the policy first (calls c3, c4)`,
        `- **WARNING** efficiency.repeats in support.refund@3, trace ${TRACE_B} (bad\\|name.json): get_order called 2 times (calls c1)`,
        '',
        '### Input errors',
        '',
        '- broken.json: [2].ok: expected boolean, got string',
        '',
      ].join('\n'),
    );
  });

  it('says when nothing was evaluated, and lists no findings when all passed', () => {
    const text = formatMarkdown({
      reports: [],
      errors: [],
      summary: { traces: 1, evaluated: 0, passed: 0, failed: 0, inconclusive: 0, scenarios: [] },
    });
    expect(text).toBe(
      '## toolpath: 0 passed, 0 failed, 0 inconclusive\n\n0 evaluations of 1 trace.\n\n' +
        '**NOTHING EVALUATED**: no scenario applies to any of the traces (check `appliesTo`).\n',
    );
    const passing = formatMarkdown({ ...RUN, reports: REPORTS.slice(0, 1), errors: [] });
    expect(passing).not.toContain('### Findings');
  });

  it('escapes what would end a cell or a row, open a code span or be read as HTML', () => {
    expect(escapeMarkdown('a|b')).toBe('a\\|b');
    expect(escapeMarkdown('one\r\ntwo\nthree\rfour')).toBe('one<br>two<br>three<br>four');
    expect(escapeMarkdown('<script> & `x` \\|')).toBe('&lt;script&gt; &amp; \\`x\\` \\\\\\|');
  });
});

describe('toolpath eval --format markdown', () => {
  it('prints the summary for a real run', async () => {
    const dir = temporaryDir('toolpath-markdown-test-');
    const scenario = join(dir, 'scenario.json');
    await writeFile(scenario, JSON.stringify({ id: 'refund', tools: { allowed: ['get_order'] } }));
    const events = join(dir, 'events.json');
    await writeFile(
      events,
      JSON.stringify([
        { kind: 'call', id: 'c1', tool: 'get_order', args: {} },
        { kind: 'call', id: 'c2', tool: 'drop_table', args: {} },
      ]),
    );
    const run = await runCli(['eval', '-s', scenario, '--format', 'markdown', events]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^## toolpath: 0 passed, 1 failed, 0 inconclusive\n/);
    expect(run.stdout).toContain('| typed-events:events.json | ');
    expect(run.stdout).toMatch(
      /- \*\*HARD\*\* tools\.\S+ in refund, trace typed-events:events\.json .*drop_table.*\(calls c2\)/,
    );
  });
});
