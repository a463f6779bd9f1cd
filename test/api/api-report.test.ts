/**
 * The public API is locked: each entry point's export surface (api-surface.ts) must equal the
 * report checked in under api/. A change to the API changes the report in the same commit, where
 * a reviewer sees it. To write the reports anew: `UPDATE_API_REPORT=1 npx vitest run test/api`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { apiProgram, apiSurface } from './api-surface.js';

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const ENTRIES = [
  { name: "'toolpath'", entry: root('src/index.ts'), report: root('api/toolpath.api.txt') },
  { name: "'toolpath/vitest'", entry: root('src/vitest.ts'), report: root('api/toolpath-vitest.api.txt') },
];

describe('the public API', () => {
  const program = apiProgram(
    ENTRIES.map(({ entry }) => entry),
    root('tsconfig.json'),
  );

  it.each(ENTRIES)('of $name is the checked-in report', ({ entry, report }) => {
    const surface = apiSurface(program, entry);
    if (process.env.UPDATE_API_REPORT === '1') writeFileSync(report, surface);
    const checkedIn = readFileSync(report, 'utf8');
    expect(surface, `the API changed: if meant, run UPDATE_API_REPORT=1 npx vitest run test/api`).toBe(
      checkedIn,
    );
  });

  it("exports no CLI helper and no internals: nothing from src/cli, src/collector's service, or the test helpers", () => {
    const surface = ENTRIES.map(({ entry }) => apiSurface(program, entry)).join('\n');
    for (const leaked of ['runExitStatus', 'formatInputError', 'CONVENTIONS', 'startService', 'withDefaults'])
      expect(surface).not.toMatch(new RegExp(`^\\S+ ${leaked}\\b`, 'm'));
  });
});
