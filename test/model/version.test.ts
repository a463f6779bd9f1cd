import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TOOLPATH_VERSION } from '../../src/model/version.js';

describe('TOOLPATH_VERSION', () => {
  it('is the version in package.json, which every report carries as toolpathVersion', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(TOOLPATH_VERSION).toBe(manifest.version);
  });
});
