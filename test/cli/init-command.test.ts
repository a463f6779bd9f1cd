import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { INIT_USAGE, initCommand, initFiles } from '../../src/cli/init-command.js';
import { UsageError } from '../../src/cli/io.js';
import { scenarioJsonSchema } from '../../src/cli/schema-command.js';
import { loadScenarioFile } from '../../src/scenario/scenario.js';
import { captureIO, runCli } from '../helpers/cli.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SPANS = fileURLToPath(new URL('../spans/', import.meta.url));
const TARGETS = [
  'toolpath/scenario.yaml',
  'toolpath/scenario.schema.json',
  'test/toolpath.test.ts',
  'toolpath/tracing.ts',
];

interface InitRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function runInit(args: string[]): Promise<InitRun> {
  const { io, output } = captureIO();
  const code = await initCommand(args, io);
  return { code, ...output };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolpath-init-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toolpath init', () => {
  test('writes the scenario, its schema, the test and the processor wiring into DIR and prints the next steps', async () => {
    const run = await runInit([dir]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    for (const target of TARGETS) {
      expect(existsSync(join(dir, target)), target).toBe(true);
      expect(run.stdout).toContain(`wrote ${join(dir, target)}`);
    }
    expect(run.stdout).toContain(`cd ${dir}`);
    // No package.json in DIR, toolpath run from this checkout: the tarball npm pack makes here.
    const root = REPO.replace(/\/$/, '');
    expect(run.stdout).toContain(
      `cd ${dir}\n  npm init -y\n  (cd ${root} && npm pack)\n  npm i -D ${root}/toolpath-0.1.0.tgz vitest\n`,
    );
    expect(run.stdout).toContain('npx vitest run test/toolpath.test.ts');
    expect(run.stdout).toContain('npx toolpath eval --scenario toolpath/scenario.yaml traces/*.json');
    expect(run.stdout).toContain("import './toolpath/tracing.js' first in your app's entry point");
  });

  test('writes into the current directory when no DIR is given', async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const run = await runInit([]);
      expect(run.code).toBe(0);
      expect(run.stdout).not.toMatch(/^ {2}cd /m);
    } finally {
      process.chdir(cwd);
    }
    for (const target of TARGETS) expect(existsSync(join(dir, target)), target).toBe(true);
  });

  test('the scenario loads and validates against the schema written beside it', async () => {
    await runInit([dir]);
    const path = join(dir, 'toolpath/scenario.yaml');
    const text = await readFile(path, 'utf8');
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./scenario.schema.json');
    expect(text).toMatch(/^# appliesTo:/m);

    const scenario = await loadScenarioFile(path);
    expect(scenario.id).toBe('my-agent.refund');
    expect(scenario.version).toBe('1');
    expect(Object.keys(scenario.rules)).toEqual(
      expect.arrayContaining(['tools', 'order', 'grounding', 'efficiency']),
    );

    const schema = JSON.parse(await readFile(join(dir, 'toolpath/scenario.schema.json'), 'utf8'));
    expect(schema).toEqual(scenarioJsonSchema());
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const document = parseYaml(text) as Record<string, unknown>;
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(Object.keys(document)).toEqual(
      expect.arrayContaining(['id', 'version', 'tools', 'order', 'grounding', 'efficiency']),
    );
  });

  test('the scenario judges real traces: a good refund passes, a refund before the policy fails order.before', async () => {
    await runInit([dir]);
    const scenario = join(dir, 'toolpath/scenario.yaml');
    const good = await runCli([
      'eval',
      '-s',
      scenario,
      '-f',
      'json',
      join(SPANS, 'demo-agent-good-refund.otlp.json'),
    ]);
    expect(good.stderr).toBe('');
    expect(good.code).toBe(0);
    const goodRun = JSON.parse(good.stdout);
    expect(goodRun.errors).toBeUndefined();
    expect(goodRun.summary).toMatchObject({ evaluated: 1, passed: 1 });

    const early = await runCli([
      'eval',
      '-s',
      scenario,
      '-f',
      'json',
      join(SPANS, 'demo-agent-refund-before-policy.otlp.json'),
    ]);
    expect(early.code).toBe(1);
    const rules = JSON.parse(early.stdout).reports[0].findings.map((f: { rule: string }) => f.rule);
    expect(rules).toContain('order.before');
  });

  test('the generated test imports only toolpath/vitest, vitest and @opentelemetry/api, and marks where the agent goes', async () => {
    await runInit([dir]);
    const text = await readFile(join(dir, 'test/toolpath.test.ts'), 'utf8');
    const imports = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
    expect(imports.sort()).toEqual(['@opentelemetry/api', 'toolpath/vitest', 'vitest']);
    expect(text).not.toMatch(/\brequire\(|import\(/);
    expect(text).toContain('installToolpathMatchers();');
    expect(text).toContain('captureSpans(');
    expect(text).toContain(".toPassScenario('toolpath/scenario.yaml')");
    expect(text).toMatch(/REPLACE runAgent\(\.\.\.\) WITH A CALL TO YOUR AGENT/);
    expect(text).toMatch(/STAND-IN AGENT: delete everything below/);
  });

  test('the generated project type-checks and its test passes as written', async () => {
    // A throwaway project outside the repo: node_modules links to the repo's, toolpath/vitest
    // resolves to this checkout's source (an alias for vitest, a path mapping for tsc).
    await runInit([dir]);
    await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const source = join(REPO, 'src/vitest.ts');
    await writeFile(
      join(dir, 'vitest.config.mjs'),
      `export default { resolve: { alias: { 'toolpath/vitest': ${JSON.stringify(source)} } }, test: { include: ['test/**/*.test.ts'] } };\n`,
    );
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          noUnusedLocals: true,
          skipLibCheck: true,
          noEmit: true,
          types: ['node'],
          paths: { 'toolpath/vitest': [source], toolpath: [join(REPO, 'src/index.ts')] },
        },
        include: ['test', 'toolpath'],
      }),
    );
    const exec = promisify(execFile);
    const tsc = await exec(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      cwd: dir,
    }).catch((error: { stdout: string; code: number }) => error);
    expect(tsc.stdout).toBe('');

    const vitest = await exec(
      process.execPath,
      [join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', 'test/toolpath.test.ts'],
      { cwd: dir, env: { ...process.env, CI: 'true', NO_COLOR: '1' } },
    ).catch((error: { stdout: string; stderr: string }) => error);
    expect(`${vitest.stdout}${vitest.stderr}`).toMatch(/Tests\s+1 passed/);
  }, 120_000);

  test('refuses to overwrite: names every existing file and writes nothing', async () => {
    await mkdir(join(dir, 'test'), { recursive: true });
    await writeFile(join(dir, 'test/toolpath.test.ts'), 'mine\n');
    const run = await runInit([dir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${join(dir, 'test/toolpath.test.ts')}: exists (use --force to overwrite it)`,
    );
    expect(run.stderr).toContain('nothing written');
    expect(run.stdout).toBe('');
    expect(existsSync(join(dir, 'toolpath'))).toBe(false);
    expect(await readFile(join(dir, 'test/toolpath.test.ts'), 'utf8')).toBe('mine\n');
  });

  test('--force overwrites existing files', async () => {
    await mkdir(join(dir, 'toolpath'), { recursive: true });
    await writeFile(join(dir, 'toolpath/scenario.yaml'), 'old\n');
    const run = await runInit([dir, '--force']);
    expect(run.code).toBe(0);
    expect(await readFile(join(dir, 'toolpath/scenario.yaml'), 'utf8')).toMatch(/^# yaml-language-server/);
    expect(existsSync(join(dir, 'test/toolpath.test.ts'))).toBe(true);
  });

  test('a target that is a directory is refused even with --force, before anything is written', async () => {
    await mkdir(join(dir, 'toolpath/scenario.schema.json'), { recursive: true });
    const run = await runInit([dir, '-f']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${join(dir, 'toolpath/scenario.schema.json')}: exists and is a directory`);
    expect(existsSync(join(dir, 'toolpath/scenario.yaml'))).toBe(false);
    expect(existsSync(join(dir, 'test'))).toBe(false);
  });

  test('DIR that is a file is refused, naming the targets', async () => {
    const file = join(dir, 'plain');
    await writeFile(file, 'x');
    const run = await runInit([file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${join(file, 'toolpath/scenario.yaml')}: cannot write: a parent directory is a file`,
    );
  });

  test('usage errors: an unknown option, two directories', async () => {
    await expect(runInit(['--overwrite'])).rejects.toThrow(UsageError);
    await expect(runInit([dir, 'other'])).rejects.toThrow(/at most one DIR; got 2/);
    expect(INIT_USAGE).toMatch(/^usage: toolpath init \[DIR\] \[--force\]/);
  });

  test('--help lists every file it writes, the descriptions in one column', () => {
    const listed = INIT_USAGE.split('\n').filter((line) => /^ {4}\S/.test(line));
    expect(listed.map((line) => line.trim().split(/\s+/)[0])).toEqual(initFiles().map(({ path }) => path));
    const columns = listed.map((line) => /^ {4}\S+\s+/.exec(line)?.[0].length);
    expect(new Set(columns).size).toBe(1);
  });
});
