/**
 * The install commands `toolpath init` prints, matching how toolpath is installed: the spec the
 * project's package.json already has for it; else the one the folder toolpath runs from was
 * installed with (npx keeps a package.json beside its node_modules); else the tarball form, made by
 * `npm pack` in a toolpath checkout (toolpath is not in the npm registry yet).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the running toolpath package (src/cli and dist/cli sit at the same depth). */
export const TOOLPATH_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const SECTIONS = [
  ['devDependencies', '-D '],
  ['dependencies', ''],
  ['optionalDependencies', '-O '],
] as const;

interface Listed {
  spec: string;
  flag: string;
}

/**
 * The commands, one per line, that install toolpath and vitest into the project at `projectDir`,
 * with toolpath running from `toolpathRoot`. Nothing for what the project's package.json lists already,
 * except toolpath itself: its install command is printed with the spec the project has.
 */
export function installCommands(projectDir: string, toolpathRoot = TOOLPATH_ROOT): string[] {
  const project = readManifest(join(projectDir, 'package.json'));
  const commands: string[] = [];
  if (!project) commands.push('npm init -y');
  const listedToolpath = listed(project, 'toolpath');
  const vitest = listed(project, 'vitest') ? '' : ' vitest';
  if (listedToolpath) {
    const toolpath = `npm i ${listedToolpath.flag}${shellWord(`toolpath@${listedToolpath.spec}`)}`;
    if (listedToolpath.flag === '-D ') commands.push(`${toolpath}${vitest}`);
    else commands.push(toolpath, ...(vitest ? [`npm i -D${vitest}`] : []));
    return commands;
  }
  const installedWith = installerSpec(toolpathRoot);
  if (installedWith) {
    commands.push(`npm i -D ${shellWord(`toolpath@${installedWith}`)}${vitest}`);
    return commands;
  }
  const tarball = `toolpath-${readManifest(join(toolpathRoot, 'package.json'))?.version ?? 'VERSION'}.tgz`;
  if (existsSync(join(toolpathRoot, '.git'))) {
    commands.push(`(cd ${shellWord(toolpathRoot.replace(/\/$/, ''))} && npm pack)`);
    commands.push(`npm i -D ${shellWord(join(toolpathRoot, tarball))}${vitest}`);
  } else {
    commands.push(
      `npm i -D ./${tarball}${vitest}   # the tarball \`npm pack\` makes in a toolpath checkout (README: "Add toolpath to your project")`,
    );
  }
  return commands;
}

/**
 * The spec toolpath was installed with when it runs from `<dir>/node_modules/toolpath` and `<dir>`'s
 * package.json lists it (npx's cache, a parent project), a relative `file:` path made absolute.
 */
function installerSpec(toolpathRoot: string): string | undefined {
  const modules = dirname(resolve(toolpathRoot));
  if (basename(modules) !== 'node_modules') return undefined;
  const installer = dirname(modules);
  const spec = listed(readManifest(join(installer, 'package.json')), 'toolpath')?.spec;
  if (!spec?.startsWith('file:')) return spec;
  const path = spec.slice('file:'.length);
  return isAbsolute(path) ? spec : `file:${resolve(installer, path)}`;
}

/** `word` as one shell word: quoted when it holds anything a shell would read otherwise. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

interface Manifest {
  version?: string;
  [section: string]: unknown;
}

function readManifest(path: string): Manifest | undefined {
  try {
    const manifest: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return typeof manifest === 'object' && manifest !== null ? (manifest as Manifest) : undefined;
  } catch {
    return undefined;
  }
}

function listed(manifest: Manifest | undefined, name: string): Listed | undefined {
  for (const [section, flag] of SECTIONS) {
    const spec = (manifest?.[section] as Record<string, unknown> | undefined)?.[name];
    if (typeof spec === 'string') return { spec, flag };
  }
  return undefined;
}
