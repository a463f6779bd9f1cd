/**
 * The packed toolpath with npm, pnpm and yarn, each into its own fresh app holding its own
 * OpenTelemetry API and SDK: the install exits 0 (pnpm exits 1 on a dependency's unapproved
 * build script, so toolpath's install must have none), `toolpath init` prints that manager's
 * command, running it works, the generated test passes, and once the scenario is broken the
 * failure shows toolpath's message (not a reporter crash: the vitest peer range keeps to versions
 * that run on this Node). pnpm and yarn come from the npm registry into a temporary folder; runs on
 * the Node running the tests (test/install/node-versions.sh runs it on the lowest supported and on 22).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packToolpath, type Ran, sh, shOk } from '../helpers/packed-install.js';

const MINUTES = 60_000;
const MANAGERS = {
  npm: { add: 'npm i', exec: 'npx', lock: 'package-lock.json' },
  pnpm: { add: 'pnpm add', exec: 'pnpm exec', lock: 'pnpm-lock.yaml' },
  yarn: { add: 'yarn add', exec: 'yarn run --silent', lock: 'yarn.lock' },
} as const;
type Manager = keyof typeof MANAGERS;

/** Folders made here: removed after the tests, with time for three apps' node_modules. */
const made: string[] = [];
function temporaryDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}, 5 * MINUTES);

let tarball: string;
let tools: string;

beforeAll(async () => {
  tools = temporaryDir('toolpath-package-managers-');
  await shOk('npm init -y && npm install --loglevel=error pnpm@10 yarn@1', tools);
  tarball = await packToolpath();
  made.push(dirname(tarball));
}, 10 * MINUTES);

/** `command` in `cwd` with pnpm and yarn on PATH. */
function run(command: string, cwd: string): Promise<Ran> {
  return sh(`PATH=${join(tools, 'node_modules/.bin')}${delimiter}$PATH; ${command}`, cwd);
}

async function runOk(command: string, cwd: string): Promise<Ran> {
  const ran = await run(command, cwd);
  if (ran.code !== 0) throw new Error(`${command} exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

describe.each(Object.keys(MANAGERS) as Manager[])(
  `the packed toolpath with %s, on Node ${process.versions.node}`,
  (manager) => {
    const { add, exec, lock } = MANAGERS[manager];
    let app: string;
    let init: string;

    it(
      'installs into a fresh app, exit 0',
      async () => {
        app = temporaryDir(`toolpath-${manager}-app-`);
        await shOk('npm init -y', app);
        await runOk(`${add} @opentelemetry/api@1.9.1 '@opentelemetry/sdk-trace-base@2'`, app);
        const installed = await run(`${add} -D ${tarball}`, app);
        expect(`${installed.stdout}${installed.stderr}`).not.toContain('ERR_PNPM_IGNORED_BUILDS');
        expect(installed.code).toBe(0);
        expect(readFileSync(join(app, lock), 'utf8').length).toBeGreaterThan(0);
      },
      10 * MINUTES,
    );

    it(
      `toolpath init prints the ${manager} command, and it works`,
      async () => {
        init = (await runOk(`${exec} toolpath init`, app)).stdout;
        const next = init.slice(init.indexOf('\nnext:\n')).split('\n');
        const commands = next
          .slice(
            0,
            next.findIndex((line) => line.trim().startsWith('npx vitest run')),
          )
          .map((line) => line.trim())
          .filter((line) => line.startsWith(`${add} `));
        const command = commands.find((line) => line.startsWith(`${add} -D `));
        expect(command, init).toBeDefined();
        // vitest in toolpath's peer range where the manager would take the latest.
        expect(command).toMatch(manager === 'npm' ? / vitest$/ : / 'vitest@>=3 <5'$/);
        for (const line of commands) await runOk(line, app);
      },
      10 * MINUTES,
    );

    it(
      'the test init wrote passes, and a broken scenario fails with toolpath’s message',
      async () => {
        const passed = await run(`${exec} vitest run test/toolpath.test.ts`, app);
        expect(`${passed.stdout}${passed.stderr}`).toMatch(/Tests\s+1 passed/);
        expect(passed.code).toBe(0);
        const scenario = join(app, 'toolpath/scenario.yaml');
        writeFileSync(
          scenario,
          readFileSync(scenario, 'utf8').replace(/^tools:\n/m, 'tools:\n  forbidden: [issue_refund]\n'),
        );
        const failed = await run(`${exec} vitest run test/toolpath.test.ts`, app);
        const output = `${failed.stdout}${failed.stderr}`;
        expect(output).toMatch(/Tests\s+1 failed/);
        expect(output).toContain('tools.forbidden');
        expect(output).not.toMatch(/is not a function|Unhandled/);
        expect(failed.code).toBe(1);
      },
      5 * MINUTES,
    );
  },
);
