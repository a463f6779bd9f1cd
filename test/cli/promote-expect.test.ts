/**
 * A promoted fixture is a regression test: promoting the same trace again writes the same bytes
 * (no random key), and `toolpath eval --expect` reads `NAME.expected.json` back, passing a
 * fixture of a failure while it still fails the same way.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { captureDemoTraces } from '../../src/demo/capture.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
let scenarioPath: string;
const traces: Record<string, string> = {};

beforeAll(async () => {
  dir = temporaryDir('toolpath-promote-expect-');
  scenarioPath = join(dir, 'scenario.json');
  await writeFile(scenarioPath, JSON.stringify(DEMO_SCENARIO));
  for (const trace of await captureDemoTraces()) {
    const path = join(dir, `${trace.conversation.name}.otlp.json`);
    await writeFile(path, trace.otlpJson);
    traces[trace.conversation.name] = path;
  }
});

describe('promote, then eval --expect', () => {
  it('writes the same fixture and expectations byte for byte when the trace is promoted again', async () => {
    const source = traces['made-up-confirmation'] as string;
    const first = join(dir, 'first.json');
    const second = join(dir, 'second.json');
    expect((await runCli(['promote', source, '-s', scenarioPath, '-o', first])).code).toBe(0);
    expect((await runCli(['promote', source, '-s', scenarioPath, '-o', second])).code).toBe(0);
    const text = await readFile(first, 'utf8');
    expect(text).toMatch(/id_[0-9a-f]{10}/);
    expect(await readFile(second, 'utf8')).toBe(text);
    expect(await readFile(join(dir, 'second.expected.json'), 'utf8')).toBe(
      await readFile(join(dir, 'first.expected.json'), 'utf8'),
    );
    // Another trace with the same identifiers gets other tokens: the key is the trace's own.
    const other = join(dir, 'other.json');
    expect(
      (await runCli(['promote', traces['good-refund'] as string, '-s', scenarioPath, '-o', other])).code,
    ).toBe(0);
    const tokens = (t: string) => new Set(t.match(/id_[0-9a-f]{10}/g));
    const shared = [...tokens(await readFile(other, 'utf8'))].filter((token) => tokens(text).has(token));
    expect(shared).toEqual([]);
  });

  it('eval --expect passes fixtures that reproduce their expectations, failing verdicts included', async () => {
    const fixtures = join(dir, 'fixtures');
    for (const name of ['made-up-confirmation', 'refund-before-policy', 'good-refund'])
      expect(
        (
          await runCli([
            'promote',
            traces[name] as string,
            '-s',
            scenarioPath,
            '-o',
            join(fixtures, `${name}.json`),
          ])
        ).code,
      ).toBe(0);
    const inputs = ['made-up-confirmation', 'refund-before-policy', 'good-refund'].flatMap((name) => [
      join(fixtures, `${name}.json`),
      join(fixtures, `${name}.expected.json`),
    ]);
    const plain = await runCli([
      'eval',
      '-s',
      scenarioPath,
      ...inputs.filter((p) => !p.endsWith('.expected.json')),
    ]);
    expect(plain.code).toBe(1);
    const run = await runCli(['eval', '-s', scenarioPath, '--expect', ...inputs]);
    expect(run.stderr).toContain('toolpath eval: expectations: 3 of 3 inputs reproduced');
    expect(run.code).toBe(0);
  });

  it('eval --expect exits 1 saying what differs, and names a missing expectations file', async () => {
    const fixture = join(dir, 'drift.json');
    expect(
      (await runCli(['promote', traces['good-refund'] as string, '-s', scenarioPath, '-o', fixture])).code,
    ).toBe(0);
    const expectedPath = join(dir, 'drift.expected.json');
    const expected = JSON.parse(await readFile(expectedPath, 'utf8'));
    await writeFile(
      expectedPath,
      JSON.stringify({
        ...expected,
        verdict: 'fail',
        findings: [{ rule: 'order.before', severity: 'hard', calls: [] }],
      }),
    );
    const drifted = await runCli(['eval', '-s', scenarioPath, '--expect', fixture]);
    expect(drifted.code).toBe(1);
    expect(drifted.stderr).toContain(
      `toolpath eval: ${fixture} does not give what ${expectedPath} says:\n  verdict: expected fail, got pass\n  missing finding order.before [hard]\n`,
    );
    const lone = join(dir, 'lone.json');
    await writeFile(lone, await readFile(fixture, 'utf8'));
    const missing = await runCli(['eval', '-s', scenarioPath, '--expect', lone]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no such file: ${join(dir, 'lone.expected.json')}`);
    expect(missing.stderr).toContain('toolpath promote writes it beside the fixture');
  });
});
