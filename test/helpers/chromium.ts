/**
 * Where the browser test's Chromium is: `CHROMIUM_PATH` when set (and nothing else then, so a wrong
 * setting is said, not worked around), else the first Chromium or Chrome on PATH, else the one
 * playwright-core installs (`npx playwright-core install chromium`). No registry package is used:
 * the ones that ship a Chromium binary are tens of megabytes for one test file (docs/packaging.md).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

/** The names a Chromium or Chrome binary goes by on PATH, in the order they are looked for. */
export const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

/** Where a Chromium was found, or why none was. */
export type ChromiumLookup = { found: true; path: string; via: string } | { found: false; reason: string };

/** The Chromium playwright-core installs, if it did; undefined otherwise. */
function playwrightChromium(): string | undefined {
  try {
    return chromium.executablePath();
  } catch {
    return undefined;
  }
}

/**
 * Looks for a Chromium as the module comment says. `env` gives CHROMIUM_PATH and PATH; `managed`
 * the path of playwright-core's own Chromium (which need not exist).
 */
export function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  managed: () => string | undefined = playwrightChromium,
): ChromiumLookup {
  const configured = env.CHROMIUM_PATH;
  if (configured) {
    const problem = notExecutable(configured);
    return problem
      ? { found: false, reason: `CHROMIUM_PATH=${configured}: ${problem}` }
      : { found: true, path: configured, via: 'CHROMIUM_PATH' };
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of CHROMIUM_NAMES) {
      const path = join(dir, name);
      if (!notExecutable(path)) return { found: true, path, via: 'PATH' };
    }
  }
  const installed = managed();
  if (installed && !notExecutable(installed)) return { found: true, path: installed, via: 'playwright-core' };
  return {
    found: false,
    reason: `no Chromium: CHROMIUM_PATH is not set, none of ${CHROMIUM_NAMES.join(', ')} is on PATH, and playwright-core has not installed one; set CHROMIUM_PATH to a Chromium or Chrome binary, or install one (Debian: apt-get install chromium; anywhere: npx playwright-core install chromium)`,
  };
}

/** Why `path` is not a file this process can run, or undefined when it is. */
function notExecutable(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return 'not a file';
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'no such file';
    if (code === 'EACCES') return 'not executable';
    return code ?? String(error);
  }
}

/** Whether this is a CI run (`CI` set to anything but empty, `false` or `0`), where the browser test must run. */
export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/** Launches the found Chromium headless, as the browser tests drive it (no sandbox: CI runs as root). */
export function launchChromium(path: string): Promise<Browser> {
  return chromium.launch({
    executablePath: path,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
    timeout: 30_000,
  });
}
