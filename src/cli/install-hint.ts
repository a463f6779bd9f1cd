/**
 * The install commands `toolpath init` prints, in the project's package manager (npm, pnpm or
 * yarn), matching how toolpath is installed: the spec the
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

/** The package managers whose commands init prints. */
export type PackageManager = 'npm' | 'pnpm' | 'yarn';

/** How each one adds a package (by the section's flag) and makes a package.json. */
const MANAGERS: Record<PackageManager, { add: string; init: string }> = {
  npm: { add: 'npm i', init: 'npm init -y' },
  pnpm: { add: 'pnpm add', init: 'pnpm init' },
  yarn: { add: 'yarn add', init: 'yarn init -y' },
};

const LOCKFILES: readonly [string, PackageManager][] = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
];

/**
 * The package manager of the project at `projectDir`: its package.json's `packageManager`, else its
 * lock file, else the one running this command (`npm_config_user_agent`, which npm, pnpm and yarn
 * all set), else npm. The project's own marks come first: `npx toolpath init` in a pnpm project runs
 * under npm, and npm's install in a pnpm node_modules fails.
 */
export function detectPackageManager(
  projectDir: string,
  userAgent: string | undefined = process.env.npm_config_user_agent,
): PackageManager {
  const declared = readManifest(join(projectDir, 'package.json'))?.packageManager;
  const named = typeof declared === 'string' ? /^(npm|pnpm|yarn)@/.exec(declared)?.[1] : undefined;
  if (named) return named as PackageManager;
  for (const [file, manager] of LOCKFILES) if (existsSync(join(projectDir, file))) return manager;
  const running = /^(npm|pnpm|yarn)\//.exec(userAgent ?? '')?.[1];
  return (running as PackageManager | undefined) ?? 'npm';
}

/**
 * The commands, one per line, that install toolpath and vitest into the project at `projectDir`,
 * with toolpath running from `toolpathRoot`, in the project's package manager. Nothing for what
 * the project's package.json lists already, except toolpath itself: its install command is printed
 * with the spec the project has.
 */
export function installCommands(
  projectDir: string,
  toolpathRoot = TOOLPATH_ROOT,
  manager: PackageManager = detectPackageManager(projectDir),
): string[] {
  const { add, init } = MANAGERS[manager];
  const project = readManifest(join(projectDir, 'package.json'));
  const commands: string[] = [];
  if (!project) commands.push(init);
  const listedToolpath = listed(project, 'toolpath');
  const toolpathManifest = readManifest(join(toolpathRoot, 'package.json'));
  const peers = (toolpathManifest?.peerDependencies ?? {}) as Record<string, string>;
  // npm resolves a new package to fit the peer ranges of what is installed; pnpm and yarn take the
  // latest (vitest 5 needs Node 22.12), so they get toolpath's range.
  const vitestWord =
    manager === 'npm' || peers.vitest === undefined ? 'vitest' : shellWord(`vitest@${peers.vitest}`);
  const vitest = listed(project, 'vitest') ? '' : ` ${vitestWord}`;
  // yarn 1 installs no peer dependency: the OTel API and SDK pieces toolpath needs, where missing.
  if (manager === 'yarn') {
    const optional = (toolpathManifest?.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
    const missing = Object.entries(peers).filter(
      ([name]) =>
        optional[name]?.optional !== true &&
        !existsSync(join(projectDir, 'node_modules', name, 'package.json')),
    );
    const line = sdkLine(projectDir);
    const words = missing.map(([name, range]) => shellWord(`${name}@${onLine(range, line)}`));
    if (missing.length > 0) commands.push(`${add} ${words.join(' ')}`);
  }
  const toolpathWord = (spec: string) => shellWord(packageWord(manager, spec));
  if (listedToolpath) {
    const toolpath = `${add} ${listedToolpath.flag}${toolpathWord(listedToolpath.spec)}`;
    if (listedToolpath.flag === '-D ') commands.push(`${toolpath}${vitest}`);
    else commands.push(toolpath, ...(vitest ? [`${add} -D${vitest}`] : []));
    return commands;
  }
  const installedWith = installerSpec(toolpathRoot);
  if (installedWith) {
    commands.push(`${add} -D ${toolpathWord(installedWith)}${vitest}`);
    return commands;
  }
  const tarball = `toolpath-${toolpathManifest?.version ?? 'VERSION'}.tgz`;
  if (existsSync(join(toolpathRoot, '.git'))) {
    commands.push(`(cd ${shellWord(toolpathRoot.replace(/\/$/, ''))} && npm pack)`);
    commands.push(`${add} -D ${shellWord(join(toolpathRoot, tarball))}${vitest}`);
  } else {
    commands.push(
      `${add} -D ./${tarball}${vitest}   # the tarball \`npm pack\` makes in a toolpath checkout (README: "Add toolpath to your project")`,
    );
  }
  return commands;
}

/** The major version of the OTel SDK the project has (its `@opentelemetry/core`), if any. */
function sdkLine(projectDir: string): string | undefined {
  const version = readManifest(join(projectDir, 'node_modules/@opentelemetry/core/package.json'))?.version;
  return typeof version === 'string' ? version.split('.')[0] : undefined;
}

/**
 * Of a range over both SDK lines (`^2.0.0 || ^3.0.0`), the part of the project's line, else the
 * first: yarn takes the highest version a range allows, whatever Node it needs.
 */
function onLine(range: string, line: string | undefined): string {
  const parts = range.split('||').map((part) => part.trim());
  if (parts.length === 1) return range;
  return parts.find((part) => part.replace(/^[\^~>=]*/, '').split('.')[0] === line) ?? (parts[0] as string);
}

/**
 * toolpath with `spec` as the package manager takes it: npm and yarn `toolpath@SPEC`; pnpm a
 * tarball by its path, the form its documentation gives.
 */
function packageWord(manager: PackageManager, spec: string): string {
  if (manager === 'pnpm' && spec.startsWith('file:')) return spec.slice('file:'.length);
  return `toolpath@${spec}`;
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
