/**
 * toolpath as a user gets it: `npm pack` of this checkout, installed from the npm registry's real
 * packages into a fresh project that has its own OpenTelemetry API and SDK, then `npx toolpath init`,
 * the install command it prints, and the test it wrote. npm runs on the Node running the tests (its
 * folder first on PATH), so the test/sdk3 run does all this on Node 22. Installs use the npm cache
 * first (`prefer-offline`); everything lives in temporary folders removed after the tests.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);
export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The folders made here; the suite removes them (a project's node_modules takes longer than a default hook). */
const made: string[] = [];
function temporaryDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** What a command printed, and how it exited. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a user's shell: this Node first on PATH, none of the npm_* and Vitest variables
 * `npm test` and Vitest set (a child npm would take them as its own config), the npm cache first.
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(npm_|VITEST|INIT_CWD$|NODE_ENV$|NODE_OPTIONS$|TEST$)/i.test(key)) env[key] = value;
  }
  env.PATH = [dirname(process.execPath), env.PATH].filter(Boolean).join(delimiter);
  env.npm_config_prefer_offline = 'true';
  env.npm_config_audit = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_update_notifier = 'false';
  env.NO_COLOR = '1';
  return env;
}

/** Runs `command` through the shell in `cwd`, as a user would type it. */
export async function sh(command: string, cwd: string): Promise<Ran> {
  try {
    const { stdout, stderr } = await exec('/bin/sh', ['-c', command], {
      cwd,
      env: userEnv(),
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Like {@link sh}, but a non-zero exit is an error carrying what the command printed. */
export async function shOk(command: string, cwd: string): Promise<Ran> {
  const ran = await sh(command, cwd);
  if (ran.code !== 0)
    throw new Error(`${command} (in ${cwd}) exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

/** `npm pack` of this checkout (its `prepare` builds dist/) into a temporary folder; the tarball's path. */
export async function packToolpath(): Promise<string> {
  const into = temporaryDir('toolpath-pack-');
  const packed = await shOk(`npm pack --pack-destination ${into} --json`, REPO);
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [
    { filename: string },
  ];
  return join(into, filename);
}

/** A fresh project (`npm init -y`) with `packages` installed, in a temporary folder. */
export async function freshProject(packages: readonly string[]): Promise<string> {
  const dir = temporaryDir('toolpath-fresh-project-');
  await shOk('npm init -y', dir);
  await shOk(`npm install ${packages.join(' ')}`, dir);
  return dir;
}

/** Every installed copy of `@opentelemetry/api` under `dir`/node_modules: its folder and version. */
export function apiCopiesUnder(dir: string): { path: string; version: string }[] {
  const copies: { path: string; version: string }[] = [];
  const walk = (modules: string) => {
    for (const name of safeReaddir(modules)) {
      const packages = name.startsWith('@')
        ? safeReaddir(join(modules, name)).map((inner) => join(modules, name, inner))
        : [join(modules, name)];
      for (const packageDir of packages) {
        if (packageDir.endsWith('@opentelemetry/api')) {
          const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
            version: string;
          };
          copies.push({ path: packageDir, version });
        }
        walk(join(packageDir, 'node_modules'));
      }
    }
  };
  walk(join(dir, 'node_modules'));
  return copies;
}

/** Every installed package under `dir`/node_modules, nested ones too: its name and version. */
export function packageCopiesUnder(dir: string): { name: string; version: string }[] {
  const copies: { name: string; version: string }[] = [];
  const stack = [join(dir, 'node_modules')];
  while (stack.length > 0) {
    const modules = stack.pop() as string;
    for (const entry of safeReaddir(modules)) {
      const folders = entry.startsWith('@')
        ? safeReaddir(join(modules, entry)).map((inner) => join(modules, entry, inner))
        : [join(modules, entry)];
      for (const folder of folders) {
        try {
          const { name, version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as {
            name: string;
            version: string;
          };
          copies.push({ name, version });
        } catch {}
        stack.push(join(folder, 'node_modules'));
      }
    }
  }
  return copies;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => !name.startsWith('.'));
  } catch {
    return [];
  }
}

/** The install commands among the next steps `toolpath init` printed (the lines before `npx vitest run`). */
export function printedInstallCommands(initOutput: string): string[] {
  const next = initOutput.slice(initOutput.indexOf('\nnext:\n') + '\nnext:\n'.length);
  const lines = next.split('\n').map((line) => line.trim());
  return lines
    .slice(
      0,
      lines.findIndex((line) => line.startsWith('npx vitest run')),
    )
    .filter((line) => line.startsWith('npm ') || line.startsWith('('));
}

/** toolpath's OpenTelemetry peer dependencies (package.json), by their names in the @opentelemetry scope. */
const PEERS = ['api', 'context-async-hooks', 'resources', 'sdk-trace'];

/** What a fresh project brings of its own, and which API version it must end up with. */
export interface PackedInstallCase {
  /** What the project installs before toolpath (its own API and SDK). */
  packages: readonly string[];
  /** The one `@opentelemetry/api` version node_modules must hold afterwards. */
  apiVersion: string;
}

/**
 * The user's way in, step by step (Vitest runs a file's tests in order): install the packed toolpath
 * into the fresh project, `npx toolpath init`, the install command it printed, the generated test, the demo.
 */
export function packedInstallSuite(
  { describe, it, expect, beforeAll, afterAll }: typeof import('vitest'),
  { packages, apiVersion }: PackedInstallCase,
): void {
  const MINUTES = 60_000;
  describe(`the packed toolpath in a fresh project with ${packages.join(' ')}, on Node ${process.versions.node}`, () => {
    let tarball: string;
    let project: string;
    let initOutput: string;

    beforeAll(async () => {
      [tarball, project] = await Promise.all([packToolpath(), freshProject(packages)]);
    }, 10 * MINUTES);
    afterAll(async () => {
      await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    }, 5 * MINUTES);

    it(
      'installs without an engine warning, and node_modules keeps one @opentelemetry/api: the project’s',
      async () => {
        const before = new Set(packageCopiesUnder(project).map(({ name }) => name));
        const installed = await shOk(`npm install -D ${tarball}`, project);
        expect(`${installed.stdout}${installed.stderr}`).not.toContain('EBADENGINE');
        expect(apiCopiesUnder(project).map(({ version }) => version)).toEqual([apiVersion]);
        // toolpath's peers are the project's own packages, not copies of its own.
        const nested = safeReaddir(join(project, 'node_modules/toolpath/node_modules/@opentelemetry'));
        expect(nested.filter((name) => PEERS.includes(name))).toEqual([]);
        // One copy of each @opentelemetry package the project did not have (serve's are optional
        // peers, not installed). On the 3.x line, otlp-transformer (the demo's) nests 2.x copies of
        // core, resources and sdk-trace, which the project has on 3.x: docs/packaging.md.
        const copies = packageCopiesUnder(project).filter(({ name }) => name.startsWith('@opentelemetry/'));
        const names = copies.map(({ name }) => name);
        const added = names.filter((name) => !before.has(name));
        expect(added.filter((name, index) => added.indexOf(name) !== index)).toEqual([]);
        for (const serveOnly of [
          '@opentelemetry/exporter-prometheus',
          '@opentelemetry/exporter-trace-otlp-grpc',
        ])
          expect(names).not.toContain(serveOnly);
        expect(packageCopiesUnder(project).map(({ name }) => name)).not.toContain('protobufjs');
        // src/ is not shipped: every source map carries the sources it names.
        const maps = readdirSync(join(project, 'node_modules/toolpath/dist'), {
          recursive: true,
          encoding: 'utf8',
        })
          .filter((name) => name.endsWith('.map'))
          .map((name) => JSON.parse(readFileSync(join(project, 'node_modules/toolpath/dist', name), 'utf8')));
        expect(maps.length).toBeGreaterThan(0);
        for (const map of maps as { sources: string[]; sourcesContent?: string[] }[])
          expect(map.sourcesContent?.length).toBe(map.sources.length);
      },
      10 * MINUTES,
    );

    it(
      'npx toolpath init prints the install command with the spec package.json has, and it works',
      async () => {
        const init = await shOk('npx toolpath init', project);
        initOutput = init.stdout;
        const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
          devDependencies: Record<string, string>;
        };
        const spec = manifest.devDependencies.toolpath;
        expect(spec).toMatch(/^file:.*\.tgz$/);
        const commands = printedInstallCommands(initOutput);
        expect(commands).toEqual([`npm i -D toolpath@${spec} vitest`]);
        for (const command of commands) await shOk(command, project);
        expect(apiCopiesUnder(project).map(({ version }) => version)).toEqual([apiVersion]);
      },
      10 * MINUTES,
    );

    it(
      'the test init wrote passes',
      async () => {
        expect(initOutput).toContain('npx vitest run test/toolpath.test.ts');
        const run = await sh('npx vitest run test/toolpath.test.ts', project);
        expect(`${run.stdout}${run.stderr}`).toMatch(/Tests\s+1 passed/);
        expect(run.code).toBe(0);
      },
      5 * MINUTES,
    );

    it(
      'npx toolpath demo runs on the project’s SDK and gives the verdicts it expects',
      async () => {
        // --keep: into the project's folder, removed with it (without it the demo leaves a temporary folder, by design).
        const demo = await sh('npx toolpath demo --keep demo-traces', project);
        expect(demo.stderr).toBe('');
        expect(demo.code).toBe(0);
      },
      5 * MINUTES,
    );
  });
}
