/**
 * How a project finds toolpath's types and code, as README "Add toolpath to your project" states it:
 * the built package (tsc of src/ into a scratch node_modules/toolpath, with this package.json) and
 * TypeScript's own resolution in CommonJS and ESM projects, for each moduleResolution; then
 * `require('toolpath')` and `require('toolpath/vitest')` from a CommonJS file on this Node.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { temporaryDir } from '../helpers/temporary-dir.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
let modules: string;

beforeAll(() => {
  modules = join(temporaryDir('toolpath-type-resolution-'), 'node_modules');
  const toolpath = join(modules, 'toolpath');
  mkdirSync(toolpath, { recursive: true });
  execFileSync(process.execPath, [
    TSC,
    '-p',
    join(ROOT, 'tsconfig.build.json'),
    '--outDir',
    join(toolpath, 'dist'),
  ]);
  copyFileSync(join(ROOT, 'package.json'), join(toolpath, 'package.json'));
  // toolpath's own dependencies and peers, as an install would put them beside it.
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === 'toolpath' || entry.startsWith('.')) continue;
    symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry));
  }
}, 180_000);

/** A project of `type` whose index.ts imports both entry points; tsc's errors (empty when it compiles). */
function compile(type: 'commonjs' | 'module', module: string, moduleResolution: string): string {
  const project = join(modules, '..', `${type}-${moduleResolution}`);
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type }));
  writeFileSync(
    join(project, 'index.ts'),
    "import { parseScenario } from 'toolpath';\nimport { captureSpans } from 'toolpath/vitest';\nexport const used = [parseScenario, captureSpans];\n",
  );
  const config = {
    compilerOptions: { module, moduleResolution, strict: true, skipLibCheck: true, noEmit: true, types: [] },
  };
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(config));
  const run = spawnSync(process.execPath, [TSC, '-p', project], { cwd: project, encoding: 'utf8' });
  return run.stdout.replaceAll(project, '.').trim();
}

describe("toolpath's types, by moduleResolution", () => {
  it.each([
    ['module', 'node16', 'node16'],
    ['module', 'nodenext', 'nodenext'],
    ['module', 'esnext', 'bundler'],
    ['commonjs', 'nodenext', 'nodenext'],
    ['commonjs', 'commonjs', 'node10'],
    ['commonjs', 'esnext', 'bundler'],
  ] as const)(
    'a %s project, module %s, moduleResolution %s: resolves both entry points',
    (type, module, resolution) => {
      expect(compile(type, module, resolution)).toBe('');
    },
    60_000,
  );

  it('a CommonJS project on node16 cannot require an ES module: TS1479, as the README says', () => {
    expect(compile('commonjs', 'node16', 'node16')).toContain('TS1479');
  }, 60_000);
});

describe('require() from CommonJS', () => {
  it(`loads both entry points on Node ${process.versions.node} (require of an ES module, Node 20.19 and later)`, () => {
    const file = join(modules, '..', 'require.cjs');
    writeFileSync(
      file,
      "const { parseScenario } = require('toolpath');\nconst { captureSpans } = require('toolpath/vitest');\nconsole.log(typeof parseScenario, typeof captureSpans);\n",
    );
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8' });
    expect(run.stderr.replace(/^.*ExperimentalWarning.*\n?|^\(Use `node --trace-warnings.*\n?/gm, '')).toBe(
      '',
    );
    expect(run.stdout.trim()).toBe('function function');
  });
});
