/**
 * How the browser test finds its Chromium (test/helpers/chromium.ts), on real files, and what
 * view-browser.test.ts does without one: skipped with the reason on a developer's machine, failed
 * under CI=true. The last two run Vitest on that file as a child process, with CHROMIUM_PATH
 * pointing nowhere.
 */
import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_NAMES, findChromium, isCI } from '../helpers/chromium.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NONE = () => undefined;

/** A file at `dir/name`, executable unless said otherwise. */
function binary(dir: string, name: string, mode = 0o755): string {
  const path = join(dir, name);
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, mode);
  return path;
}

describe('findChromium', () => {
  it('takes CHROMIUM_PATH when set, before anything on PATH', () => {
    const dir = temporaryDir('toolpath-chromium-');
    const configured = binary(dir, 'my-chrome');
    const onPath = temporaryDir('toolpath-chromium-path-');
    binary(onPath, 'chromium');
    expect(findChromium({ CHROMIUM_PATH: configured, PATH: onPath }, NONE)).toEqual({
      found: true,
      path: configured,
      via: 'CHROMIUM_PATH',
    });
  });

  it('says what is wrong with CHROMIUM_PATH instead of looking elsewhere', () => {
    const dir = temporaryDir('toolpath-chromium-');
    const onPath = temporaryDir('toolpath-chromium-path-');
    binary(onPath, 'chromium');
    const missing = join(dir, 'nowhere/chromium');
    expect(findChromium({ CHROMIUM_PATH: missing, PATH: onPath }, NONE)).toEqual({
      found: false,
      reason: `CHROMIUM_PATH=${missing}: no such file`,
    });
    const plain = binary(dir, 'chrome.txt', 0o644);
    expect(findChromium({ CHROMIUM_PATH: plain }, NONE)).toEqual({
      found: false,
      reason: `CHROMIUM_PATH=${plain}: not executable`,
    });
    expect(findChromium({ CHROMIUM_PATH: dir }, NONE)).toEqual({
      found: false,
      reason: `CHROMIUM_PATH=${dir}: not a file`,
    });
  });

  it('finds the first executable Chromium or Chrome on PATH, in PATH order', () => {
    const first = temporaryDir('toolpath-chromium-a-');
    const second = temporaryDir('toolpath-chromium-b-');
    binary(first, 'chromium', 0o644);
    const chrome = binary(first, 'google-chrome');
    binary(second, 'chromium');
    expect(findChromium({ PATH: `${first}:${second}` }, NONE)).toEqual({
      found: true,
      path: chrome,
      via: 'PATH',
    });
  });

  it('falls back to playwright-core’s own Chromium, when it exists', () => {
    const dir = temporaryDir('toolpath-chromium-');
    const managed = binary(dir, 'chrome');
    expect(findChromium({ PATH: '' }, () => managed)).toEqual({
      found: true,
      path: managed,
      via: 'playwright-core',
    });
    expect(findChromium({ PATH: '' }, () => join(dir, 'not-installed')).found).toBe(false);
  });

  it('with an empty PATH and nothing else: not found, saying where it looked and how to get one', () => {
    const lookup = findChromium({ PATH: '' }, NONE);
    expect(lookup.found).toBe(false);
    if (lookup.found) return;
    for (const name of CHROMIUM_NAMES) expect(lookup.reason).toContain(name);
    expect(lookup.reason).toContain('CHROMIUM_PATH is not set');
    expect(lookup.reason).toContain('apt-get install chromium');
  });

  it('isCI: CI set to anything but empty, false or 0', () => {
    expect([undefined, '', 'false', 'FALSE', '0', 'true', '1', 'github'].map((CI) => isCI({ CI }))).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});

describe('view-browser.test.ts without a browser', () => {
  const exec = promisify(execFile);
  const run = (ci: boolean) => {
    const { CI: _ci, ...env } = process.env;
    return exec(
      process.execPath,
      [join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', 'test/cli/view-browser.test.ts'],
      {
        cwd: REPO,
        env: { ...env, ...(ci ? { CI: 'true' } : {}), CHROMIUM_PATH: '/nonexistent/chromium', NO_COLOR: '1' },
      },
    ).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        output: error.stdout + error.stderr,
      }),
    );
  };

  it('is skipped on a developer’s machine, with the reason printed', async () => {
    const { code, output } = await run(false);
    expect(code).toBe(0);
    expect(output).toContain(
      'test/cli/view-browser.test.ts skipped: CHROMIUM_PATH=/nonexistent/chromium: no such file',
    );
    expect(output).toMatch(/Tests\s+5 skipped/);
  }, 120_000);

  it('fails under CI=true, saying the browser test must run', async () => {
    const { code, output } = await run(true);
    expect(code).toBe(1);
    expect(output).toContain(
      'CI=true: the browser test must run, but CHROMIUM_PATH=/nonexistent/chromium: no such file',
    );
  }, 120_000);
});
