/**
 * Temporary directories for a test file, removed once its tests are done, so test runs do not
 * leave a directory each in the OS temp folder. The `afterAll` below is registered in each test
 * file that imports this (Vitest isolates test files, so each gets its own copy of this module).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory under the OS temp folder, named `prefix` and a random suffix. */
export function temporaryDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
