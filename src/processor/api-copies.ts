/**
 * Two copies of `@opentelemetry/api` in one process, and how toolpath notices.
 *
 * The API keeps its globals (tracer, meter and logger providers, the context manager, diag) in one
 * registry object on `globalThis`, stamped with the version of the copy that created it. A copy
 * registers there only when it is of exactly that version, and reads there only when the registry's
 * version has its major and at least its minor; otherwise it falls back to no-ops, silently. So a
 * second copy makes spans vanish (a capture finds none) or toolpath's metrics go nowhere, with no
 * error anywhere. docs/packaging.md says how a second copy comes about.
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { propagation, type TextMapPropagator } from '@opentelemetry/api';

/** The key the API (major version 1) keeps its registry under. */
const REGISTRY_KEY = Symbol.for('opentelemetry.js.api.1');

/** The fix, said the same way wherever a second copy is found. */
export const ONE_API_COPY_FIX =
  'keep one copy of @opentelemetry/api: `npm ls @opentelemetry/api` shows where each comes from; toolpath takes any ^1.9.0 as a peer dependency, so `npm dedupe` (or an npm `overrides` entry pinning one version) leaves one. A folder install (`npm install ../toolpath`) links the checkout with its own node_modules and its own copy: install the tarball `npm pack` makes instead';

const NOOP_PROPAGATOR: TextMapPropagator = {
  inject() {},
  extract: (context) => context,
  fields: () => [],
};

let loadedVersion: string | undefined;

/**
 * The version of the `@opentelemetry/api` copy toolpath's own modules loaded. Read from the API itself
 * (which stamps its version on a registry it creates), not from a package.json that Node's resolution
 * would find: a bundler or a test runner may load another copy than the one beside toolpath.
 */
export function loadedApiVersion(): string {
  if (loadedVersion !== undefined) return loadedVersion;
  const globals = globalThis as unknown as Record<symbol, unknown>;
  const registry = globals[REGISTRY_KEY];
  // Synchronous, so nothing else sees the registry missing: set aside, probed with a throwaway one, put back.
  delete globals[REGISTRY_KEY];
  try {
    propagation.setGlobalPropagator(NOOP_PROPAGATOR);
    loadedVersion = stampedVersion(globals[REGISTRY_KEY]) ?? 'unknown';
  } finally {
    if (registry === undefined) delete globals[REGISTRY_KEY];
    else globals[REGISTRY_KEY] = registry;
  }
  return loadedVersion;
}

/** The version stamped on the process's OpenTelemetry registry; undefined while no copy registered anything. */
export function registryApiVersion(): string | undefined {
  return stampedVersion((globalThis as unknown as Record<symbol, unknown>)[REGISTRY_KEY]);
}

function stampedVersion(registry: unknown): string | undefined {
  const version = (registry as { version?: unknown } | undefined)?.version;
  return typeof version === 'string' ? version : undefined;
}

/** Whether a copy of version `own` reads a registry stamped `registry`: the API's own rule (internal/semver). */
export function copyReadsRegistry(own: string, registry: string): boolean {
  if (own === registry) return true;
  const mine = /^(\d+)\.(\d+)\.(\d+)$/.exec(own);
  const theirs = /^(\d+)\.(\d+)\.(\d+)$/.exec(registry);
  if (!mine || !theirs || mine[1] !== theirs[1]) return false;
  if (mine[1] === '0') return mine[2] === theirs[2] && Number(mine[3]) <= Number(theirs[3]);
  return Number(mine[2]) <= Number(theirs[2]);
}

/** An installed copy of `@opentelemetry/api`. */
export interface InstalledApiCopy {
  /** Its folder, symbolic links resolved. */
  path: string;
  version: string;
}

/** Where toolpath's copy is on disk, as Node resolves it from this module; undefined when it cannot say. */
export function toolpathApiCopy(): InstalledApiCopy | undefined {
  return resolvedCopy(import.meta.url);
}

function resolvedCopy(from: string): InstalledApiCopy | undefined {
  try {
    let dir = dirname(createRequire(from).resolve('@opentelemetry/api'));
    for (let up = 0; up < 4; up++, dir = dirname(dir)) {
      const copy = copyAt(dir);
      if (copy) return copy;
    }
  } catch {
    // Not resolvable from there.
  }
  return undefined;
}

function copyAt(dir: string): InstalledApiCopy | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name?: unknown;
      version?: unknown;
    };
    if (manifest.name !== '@opentelemetry/api' || typeof manifest.version !== 'string') return undefined;
    return { path: realpathSync(dir), version: manifest.version };
  } catch {
    return undefined;
  }
}

/** How far {@link installedApiCopies} looks: nested node_modules levels, and folders read in all. */
const SCAN_DEPTH = 6;
const SCAN_FOLDERS = 20_000;

/**
 * The copies of `@opentelemetry/api` a project has: the one Node resolves from `projectDir`, and every
 * `@opentelemetry/api` folder under its node_modules (nested ones too, pnpm's store included), looked
 * for at most {@link SCAN_DEPTH} levels deep and in at most {@link SCAN_FOLDERS} folders.
 */
export function installedApiCopies(projectDir: string): InstalledApiCopy[] {
  const found = new Map<string, InstalledApiCopy>();
  const add = (copy: InstalledApiCopy | undefined) => {
    if (copy && !found.has(copy.path)) found.set(copy.path, copy);
  };
  add(resolvedCopy(pathToFileURL(join(projectDir, 'package.json')).href));
  let budget = SCAN_FOLDERS;
  const pending: { dir: string; depth: number }[] = [{ dir: join(projectDir, 'node_modules'), depth: 0 }];
  for (let next = pending.pop(); next && budget-- > 0; next = pending.pop()) {
    const { dir, depth } = next;
    const visitPackage = (packageDir: string) => {
      if (packageDir.endsWith(join('@opentelemetry', 'api'))) add(copyAt(packageDir));
      if (depth < SCAN_DEPTH) pending.push({ dir: join(packageDir, 'node_modules'), depth: depth + 1 });
    };
    for (const name of folderNames(dir)) {
      if (name === '.bin') continue;
      if (name === '.pnpm') {
        // pnpm's store holds each package at .pnpm/<name@version>/node_modules/<name>.
        for (const entry of folderNames(join(dir, name))) {
          pending.push({ dir: join(dir, name, entry, 'node_modules'), depth: depth + 1 });
        }
      } else if (name.startsWith('@')) {
        for (const inner of folderNames(join(dir, name))) visitPackage(join(dir, name, inner));
      } else {
        visitPackage(join(dir, name));
      }
    }
  }
  return [...found.values()];
}

function folderNames(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** The copies, one per line, toolpath's marked. */
export function describeCopies(copies: readonly InstalledApiCopy[], toolpath?: InstalledApiCopy): string {
  return copies
    .map(
      (copy) =>
        `  ${copy.version} at ${copy.path}${copy.path === toolpath?.path ? ' (toolpath uses this one)' : ''}`,
    )
    .join('\n');
}

let warned = false;

/**
 * For the processor: warns once per process (a Node process warning, code TOOLPATH_OTEL_API_COPIES,
 * and diag) when the process's OpenTelemetry registry was made by another copy of the API than
 * toolpath's. Returns whether there was a registry to compare with.
 */
export function warnOfSecondApiCopy(): boolean {
  try {
    const registry = registryApiVersion();
    if (registry === undefined) return false;
    const loaded = loadedApiVersion();
    if (registry !== loaded && !warned) {
      warned = true;
      process.emitWarning(secondCopyWarning(loaded, registry), { code: 'TOOLPATH_OTEL_API_COPIES' });
    }
  } catch {
    // A diagnostic must not break the app's tracing.
  }
  return true;
}

function secondCopyWarning(loaded: string, registry: string): string {
  const where = toolpathApiCopy();
  const effect = copyReadsRegistry(loaded, registry)
    ? 'toolpath can read the global providers, but its copy cannot register any'
    : 'toolpath cannot read the global providers: without the meterProvider option its metrics go nowhere, and its diag messages are lost';
  return `toolpath: two copies of @opentelemetry/api are loaded: the OpenTelemetry globals belong to ${registry}, toolpath uses ${loaded}${where ? ` (${where.path})` : ''}; ${effect}. Fix: ${ONE_API_COPY_FIX}`;
}
