/**
 * The install commands `toolpath init` prints, for each way toolpath can be installed: read from real
 * package.json files in temporary folders laid out as npm lays them out.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectPackageManager, installCommands, TOOLPATH_ROOT } from '../../src/cli/install-hint.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** A folder holding a package.json with these fields (none: no package.json). */
function folder(manifest?: Record<string, unknown>): string {
  const dir = temporaryDir('toolpath-install-hint-');
  if (manifest) writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
  return dir;
}

/** A toolpath package as npm installs it under `installer`/node_modules. */
function installedUnder(installer: string): string {
  const root = join(installer, 'node_modules/toolpath');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'toolpath', version: '0.4.2' }));
  return root;
}

const NOT_A_CHECKOUT = installedUnder(folder());

describe('installCommands', () => {
  it('repeats the spec the project already has for toolpath, and adds vitest when the project lacks it', () => {
    const project = folder({ devDependencies: { toolpath: 'file:../vendor/toolpath-0.1.0.tgz' } });
    expect(installCommands(project, NOT_A_CHECKOUT)).toEqual([
      'npm i -D toolpath@file:../vendor/toolpath-0.1.0.tgz vitest',
    ]);
    const withVitest = folder({
      devDependencies: { toolpath: 'git+file:///srv/git/toolpath.git#v0.1.0', vitest: '^4.1.0' },
    });
    expect(installCommands(withVitest, NOT_A_CHECKOUT)).toEqual([
      "npm i -D 'toolpath@git+file:///srv/git/toolpath.git#v0.1.0'",
    ]);
  });

  it('keeps the section toolpath is listed in, and quotes what a shell would read otherwise', () => {
    const project = folder({ dependencies: { toolpath: '^0.1.0' }, devDependencies: {} });
    expect(installCommands(project, NOT_A_CHECKOUT)).toEqual(["npm i 'toolpath@^0.1.0'", 'npm i -D vitest']);
    const spaced = folder({
      optionalDependencies: { toolpath: "file:../my tools/it's.tgz" },
      dependencies: { vitest: '4' },
    });
    expect(installCommands(spaced, NOT_A_CHECKOUT)).toEqual([
      `npm i -O 'toolpath@file:../my tools/it'\\''s.tgz'`,
    ]);
  });

  it('otherwise takes the spec toolpath itself was installed with (npx keeps one), a relative file: made absolute', () => {
    const npxCache = folder({ dependencies: { toolpath: 'file:../dist/toolpath-0.4.2.tgz' } });
    const project = folder({ devDependencies: { vitest: '^4.1.0' } });
    expect(installCommands(project, installedUnder(npxCache))).toEqual([
      `npm i -D toolpath@file:${join(npxCache, '../dist/toolpath-0.4.2.tgz')}`,
    ]);
    const fromRegistry = folder({ dependencies: { toolpath: '0.4.2' } });
    expect(installCommands(folder({}), installedUnder(fromRegistry))).toEqual([
      'npm i -D toolpath@0.4.2 vitest',
    ]);
  });

  it('from a toolpath checkout: the tarball npm pack makes there', () => {
    const project = folder({ name: 'app' });
    const root = TOOLPATH_ROOT.replace(/\/$/, '');
    expect(installCommands(project)).toEqual([
      `(cd ${root} && npm pack)`,
      `npm i -D ${root}/toolpath-0.1.0.tgz vitest`,
    ]);
  });

  it('with nothing to go by: the tarball form, and npm init where the project has no package.json', () => {
    expect(installCommands(folder(), NOT_A_CHECKOUT)).toEqual([
      'npm init -y',
      'npm i -D ./toolpath-0.4.2.tgz vitest   # the tarball `npm pack` makes in a toolpath checkout (README: "Add toolpath to your project")',
    ]);
  });
});

describe('the package manager init prints commands for', () => {
  const tarball = 'file:../vendor/toolpath-0.1.0.tgz';

  it("is the project's: packageManager, else its lock file, else the one running, else npm", () => {
    const pnpmLocked = folder({ devDependencies: { toolpath: tarball } });
    writeFileSync(join(pnpmLocked, 'pnpm-lock.yaml'), "lockfileVersion: '9.0'\n");
    // Run through npx (npm's user agent) in a pnpm project: still pnpm.
    expect(detectPackageManager(pnpmLocked, 'npm/11.6.0 node/v20.19.0 linux x64')).toBe('pnpm');
    const yarnLocked = folder({});
    writeFileSync(join(yarnLocked, 'yarn.lock'), '');
    expect(detectPackageManager(yarnLocked, undefined)).toBe('yarn');
    const declared = folder({ packageManager: 'yarn@4.9.1' });
    writeFileSync(join(declared, 'package-lock.json'), '{}');
    expect(detectPackageManager(declared, 'npm/11.6.0')).toBe('yarn');
    expect(detectPackageManager(folder({}), 'pnpm/10.18.0 npm/? node/v20.19.0 linux x64')).toBe('pnpm');
    expect(detectPackageManager(folder({}), 'yarn/1.22.22 npm/? node/v20.19.0 linux x64')).toBe('yarn');
    expect(detectPackageManager(folder({}), undefined)).toBe('npm');
  });

  it("prints that manager's commands, with the spec the project has", () => {
    const project = folder({ devDependencies: { toolpath: tarball } });
    expect(installCommands(project, NOT_A_CHECKOUT, 'pnpm')).toEqual([
      'pnpm add -D ../vendor/toolpath-0.1.0.tgz vitest',
    ]);
    expect(installCommands(project, NOT_A_CHECKOUT, 'yarn')).toEqual([
      `yarn add -D toolpath@${tarball} vitest`,
    ]);
    const dependency = folder({ dependencies: { toolpath: '^0.1.0' } });
    expect(installCommands(dependency, NOT_A_CHECKOUT, 'pnpm')).toEqual([
      "pnpm add 'toolpath@^0.1.0'",
      'pnpm add -D vitest',
    ]);
    expect(installCommands(folder(), NOT_A_CHECKOUT, 'yarn')[0]).toBe('yarn init -y');
  });

  it('under yarn 1, which installs no peers: the missing ones, on the SDK line the project has', () => {
    const project = folder({ dependencies: { '@opentelemetry/api': '1.9.1' } });
    for (const [name, version] of [
      ['@opentelemetry/api', '1.9.1'],
      ['@opentelemetry/core', '2.12.1'],
    ]) {
      mkdirSync(join(project, 'node_modules', name as string), { recursive: true });
      writeFileSync(
        join(project, 'node_modules', name as string, 'package.json'),
        JSON.stringify({ name, version }),
      );
    }
    const root = installedUnder(folder());
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({
        name: 'toolpath',
        version: '0.4.2',
        peerDependencies: {
          '@opentelemetry/api': '^1.9.0',
          '@opentelemetry/resources': '^2.0.0 || ^3.0.0',
          '@grpc/grpc-js': '^1.14.7',
          vitest: '>=3 <5',
        },
        peerDependenciesMeta: { '@grpc/grpc-js': { optional: true }, vitest: { optional: true } },
      }),
    );
    expect(installCommands(project, root, 'yarn')).toEqual([
      "yarn add '@opentelemetry/resources@^2.0.0'",
      'yarn add -D ./toolpath-0.4.2.tgz \'vitest@>=3 <5\'   # the tarball `npm pack` makes in a toolpath checkout (README: "Add toolpath to your project")',
    ]);
  });
});
