import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { REFUND_RUN_ASSERTIONS, refundRunFiles } from '../helpers/refund-run.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
let files: string[];
let scenario: string;

beforeAll(async () => {
  dir = temporaryDir('toolpath-view-run-cli-');
  files = await refundRunFiles();
  scenario = join(dir, 'refund.json');
  await writeFile(scenario, JSON.stringify({ ...REFUND_RUN_ASSERTIONS, min_pass_rate: 0.5 }));
});

describe('toolpath view with several inputs', () => {
  it('writes one page for the run, beside the first input by default', async () => {
    const first = join(dir, 'a.otlp.json');
    const second = join(dir, 'b.otlp.json');
    await writeFile(first, await readFile(files[0] as string, 'utf8'));
    await writeFile(second, await readFile(files[9] as string, 'utf8'));
    const run = await runCli(['view', '-s', scenario, first, second]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `toolpath view: run of 2 traces (2 evaluations in 1 scenarios) written to ${join(dir, 'toolpath-run.html')}\n`,
    );
    const page = await readFile(join(dir, 'toolpath-run.html'), 'utf8');
    expect(page).toContain('<span class="rate-value">0.5</span>');
    expect(page).toContain('<span class="badge met">GATE MET</span>');
    expect(page.match(/<tr class="unit"/g)).toHaveLength(2);
    expect(page.match(/<template id="dag-\d+">/g)).toHaveLength(2);
  });

  it('counts units in its title, and names findings as eval prints them', async () => {
    const spans = (name: string) =>
      new URL(`../spans/demo-agent-${name}.otlp.json`, import.meta.url).pathname;
    const policy = join(dir, 'policy-first.json');
    await writeFile(
      policy,
      JSON.stringify({
        id: 'policy-first',
        order: { before: [{ before: 'get_refund_policy', after: 'issue_refund' }] },
      }),
    );
    const lookups = join(dir, 'lookups.json');
    await writeFile(lookups, JSON.stringify({ id: 'lookups', tools: { required: ['get_order'] } }));
    const out = join(dir, 'units.html');
    const run = await runCli([
      'view',
      '-s',
      policy,
      '-s',
      lookups,
      '-o',
      out,
      spans('good-refund'),
      spans('refund-before-policy'),
    ]);
    expect(run.code).toBe(0);
    const page = await readFile(out, 'utf8');
    // Two scenarios on two traces: four rows.
    expect(page.match(/<tr class="unit"/g)).toHaveLength(4);
    expect(page).toContain('<title>toolpath · run of 4 units over 2 traces</title>');
    expect(page).toContain('<h1>toolpath · run of 4 units over 2 traces</h1>');
    // eval prints the assertion, order.before[0], not the rule id order.before.
    const evaluated = await runCli(['eval', '-s', policy, spans('refund-before-policy')]);
    expect(evaluated.stdout).toContain('x order.before[0]: issue_refund');
    expect(page).toContain('order.before[0]: issue_refund');
    expect(page).not.toMatch(/order\.before: issue_refund/);
  });

  it('lists the traces unjudged without a scenario', async () => {
    const out = join(dir, 'unjudged.html');
    const run = await runCli(['view', files[0] as string, files[1] as string, '--out', out]);
    expect(run.code).toBe(0);
    const page = await readFile(out, 'utf8');
    expect(page).toContain('No scenario given: the traces are listed, not judged.');
    expect(page.match(/data-verdict="unjudged"/g)).toHaveLength(2);
  });

  it('still writes the page when an input cannot be read, lists it, and exits 2', async () => {
    const out = join(dir, 'with-error.html');
    const missing = join(dir, 'missing.json');
    const run = await runCli(['view', '-s', scenario, files[0] as string, missing, '--out', out]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`toolpath view: ${missing}: no such file: ${missing}`);
    const page = await readFile(out, 'utf8');
    expect(page).toContain('<h2>Input errors</h2>');
    expect(page).toContain('1 input error');
  });

  it('keeps hostile text as text: no markup from names, arguments or file names', async () => {
    const hostile = join(dir, '<img src=x onerror=alert(1)>.json');
    await writeFile(
      hostile,
      JSON.stringify([
        {
          kind: 'call',
          id: 'c1',
          tool: '<script>alert(1)</script>',
          args: { note: '</template><img src=x>' },
        },
        { kind: 'result', callId: 'c1', ok: true, output: { ok: true } },
      ]),
    );
    const out = join(dir, 'hostile.html');
    const run = await runCli(['view', '-s', scenario, hostile, files[0] as string, '--out', out]);
    expect(run.code).toBe(0);
    const page = await readFile(out, 'utf8');
    expect(page).not.toContain('<img src=x');
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('</template><img');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('refuses --trace with several inputs, and --dataset with inputs', async () => {
    const both = await runCli(['view', files[0] as string, files[1] as string, '--trace', 'abc']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--trace picks a trace of one TRACE');
    const mixed = await runCli(['view', '--dataset', 'd.jsonl', files[0] as string]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('--dataset: its rows name their traces and assertions');
  });
});
