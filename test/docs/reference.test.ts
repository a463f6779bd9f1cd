/** docs/reference.md is what the schema and the metric definitions say (test/docs/reference.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { referencePage } from './reference.js';

const PAGE = new URL('../../docs/reference.md', import.meta.url);

describe('docs/reference.md', () => {
  it('is generated from the schema and the metric definitions', () => {
    const page = referencePage();
    if (process.env.UPDATE_REFERENCE === '1') writeFileSync(PAGE, page);
    expect(page, 'stale: UPDATE_REFERENCE=1 npx vitest run test/docs').toBe(readFileSync(PAGE, 'utf8'));
  });

  it('names every option with a default, and the metrics', () => {
    const page = referencePage();
    for (const key of [
      '`decision.wait`',
      '`conversations.idleTimeout`',
      '`limits.traceTimeout`',
      '`logLevel`',
    ])
      expect(page).toContain(key);
    expect(page).toMatch(/\| `limits\.traceTimeout` +\| duration +\| `5m` +\|/);
    expect(page).toMatch(/\| `toolpath\.evaluations` +\| counter +\|/);
    expect(page).toContain('256 MiB, or a quarter of the V8 heap limit');
  });
});
