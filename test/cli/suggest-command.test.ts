import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { BAD_REFUND_FILES, GOOD_REFUND_FILES } from '../helpers/suggest-refund.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const badArgs = BAD_REFUND_FILES.flatMap(({ file }) => ['--bad', file]);

describe('toolpath suggest', () => {
  it('prints a scenario that toolpath eval passes on every good run and fails on every bad one', async () => {
    const run = await runCli(['suggest', ...GOOD_REFUND_FILES, ...badArgs]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('# held in 3 of 3 runs');
    const dir = temporaryDir('toolpath-suggest-');
    const scenario = join(dir, 'suggested.yaml');
    await writeFile(scenario, run.stdout);
    const good = await runCli(['eval', '-s', scenario, ...GOOD_REFUND_FILES]);
    expect(good.code, good.stdout + good.stderr).toBe(0);
    for (const { file } of BAD_REFUND_FILES) {
      const bad = await runCli(['eval', '-s', scenario, file]);
      expect(bad.code, file).toBe(1);
    }
  });

  it('gives the same bytes on every run, and JSON with each rule, its support and the bad runs it fails', async () => {
    const first = await runCli(['suggest', ...GOOD_REFUND_FILES, ...badArgs]);
    const again = await runCli(['suggest', ...[...GOOD_REFUND_FILES].reverse(), ...badArgs]);
    expect(again.stdout).toBe(first.stdout);
    const json = await runCli(['suggest', '--format', 'json', ...GOOD_REFUND_FILES, ...badArgs]);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.agents).toHaveLength(1);
    const terminal = parsed.agents[0].rules.find(
      (rule: { rule: string }) => rule.rule === 'order.terminal: send_confirmation',
    );
    expect(terminal).toEqual({
      rule: 'order.terminal: send_confirmation',
      support: 3,
      fails: [{ run: BAD_REFUND_FILES[5]?.file, severity: 'hard' }],
    });
    expect(parsed.agents[0].uncaught).toEqual([]);
  });

  it('--out writes one scenario file per agent, which toolpath eval loads, and never overwrites one', async () => {
    const other = new URL('../spans/sdk-genai-mcp-two-servers.otlp.json', import.meta.url).pathname;
    const dir = join(temporaryDir('toolpath-suggest-out-'), 'scenarios');
    const run = await runCli(['suggest', '--out', dir, ...GOOD_REFUND_FILES, other]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const written = run.stdout.trim().split('\n');
    expect(written.map((path) => path.slice(dir.length + 1)).sort()).toEqual([
      'repo-agent.scenario.yaml',
      'support-agent.scenario.yaml',
    ]);
    const scenarios = written.flatMap((path) => ['-s', path]);
    const good = await runCli(['eval', ...scenarios, ...GOOD_REFUND_FILES, other]);
    expect(good.code, good.stdout + good.stderr).toBe(0);
    const bad = await runCli(['eval', ...scenarios, BAD_REFUND_FILES[0]?.file as string]);
    expect(bad.code).toBe(1);
    const json = await runCli(['suggest', '--format', 'json', '--out', dir, other]);
    expect(json.code).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'repo-agent.scenario.json'), 'utf8')).appliesTo).toEqual({
      agent: 'repo-agent',
    });
    const again = await runCli(['suggest', '--out', dir, other]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('repo-agent.scenario.yaml exists already (not overwritten');
    // One name taken: nothing is written, not even the other agent's file.
    await rm(join(dir, 'support-agent.scenario.yaml'));
    const partly = await runCli(['suggest', '--out', dir, ...GOOD_REFUND_FILES, other]);
    expect(partly.code).toBe(2);
    expect(existsSync(join(dir, 'support-agent.scenario.yaml'))).toBe(false);
  });

  it('--min-support leaves out what fewer runs showed; --margin raises the limits', async () => {
    const strict = await runCli(['suggest', '--min-support', '4', ...GOOD_REFUND_FILES]);
    expect(strict.code).toBe(0);
    expect(strict.stdout).toContain('no rule held on every one of the 3 good runs of support-agent');
    const margin = await runCli(['suggest', '--margin', '50', ...GOOD_REFUND_FILES]);
    expect(margin.stdout).toMatch(/maxCalls: 6 # held in 3 of 3 runs/);
  });

  it("reads a dataset: its rows' traces are the good runs", async () => {
    const dir = temporaryDir('toolpath-suggest-dataset-');
    const dataset = join(dir, 'runs.jsonl');
    const rows = GOOD_REFUND_FILES.map((file, index) =>
      JSON.stringify({ id: `r${index}`, traces: [file], assertions: { allowed_tools: ['get_order'] } }),
    );
    await writeFile(dataset, `${rows.join('\n')}\n`);
    const fromDataset = await runCli(['suggest', '--dataset', dataset]);
    expect(fromDataset.stderr).toBe('');
    expect(fromDataset.stdout).toBe((await runCli(['suggest', ...GOOD_REFUND_FILES])).stdout);
    const both = await runCli(['suggest', '--dataset', dataset, GOOD_REFUND_FILES[0] as string]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--dataset: its rows name their traces');
  });

  it('says which bad run no rule fails, on stderr', async () => {
    const run = await runCli([
      'suggest',
      GOOD_REFUND_FILES[0] as string,
      '--bad',
      GOOD_REFUND_FILES[2] as string,
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `toolpath suggest: bad run ${GOOD_REFUND_FILES[2]}: no suggested rule fails it; write that rule by hand\n`,
    );
  });

  it('refuses bad input with a clear error and suggests nothing', async () => {
    const none = await runCli(['suggest']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('toolpath suggest: missing INPUT');
    const missing = await runCli(['suggest', GOOD_REFUND_FILES[0] as string, 'no/such/trace.json']);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain('no such file');
    expect(missing.stderr).toContain('nothing suggested');
    const dir = temporaryDir('toolpath-suggest-bad-');
    const garbled = join(dir, 'garbled.json');
    await writeFile(garbled, '{"resourceSpans": [');
    const unreadable = await runCli(['suggest', GOOD_REFUND_FILES[0] as string, '--bad', garbled]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stdout).toBe('');
    expect(unreadable.stderr).toContain(garbled);
    const empty = join(dir, 'empty.json');
    await writeFile(empty, '{"resourceSpans": []}');
    const nothing = await runCli(['suggest', GOOD_REFUND_FILES[0] as string, empty]);
    expect(nothing.code).toBe(2);
    expect(nothing.stdout).toBe('');
    expect(nothing.stderr).toContain(`${empty}: no spans or events found`);
    const plain = join(dir, 'plain.json');
    const span = {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      name: 'GET /health',
      kind: 2,
      startTimeUnixNano: '1700000000000000000',
      endTimeUnixNano: '1700000000100000000',
    };
    await writeFile(
      plain,
      JSON.stringify({
        resourceSpans: [
          { resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'http' }, spans: [span] }] },
        ],
      }),
    );
    const unrecognized = await runCli(['suggest', plain]);
    expect(unrecognized.code).toBe(2);
    expect(unrecognized.stderr).toContain(
      `${plain}: no agent or tool spans recognized; run toolpath inspect ${plain}`,
    );
    const format = await runCli(['suggest', '--format', 'xml', GOOD_REFUND_FILES[0] as string]);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format: expected one of yaml, json; got "xml"');
    const support = await runCli(['suggest', '--min-support', '0', GOOD_REFUND_FILES[0] as string]);
    expect(support.code).toBe(2);
    expect(support.stderr).toContain('--min-support: expected a whole number of at least 1; got "0"');
  });

  it('is listed in toolpath --help and has its own', async () => {
    expect((await runCli(['--help'])).stdout).toContain('suggest write a first scenario');
    const help = await runCli(['suggest', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: toolpath suggest');
  });
});
