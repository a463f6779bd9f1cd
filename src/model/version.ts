/**
 * The version of toolpath itself, read once from its package.json: reports carry it so a verdict
 * can be traced to the evaluator that gave it (with the scenario's id and version).
 */
import { readFileSync } from 'node:fs';

/** The package's `version`; `unknown` if the package's manifest cannot be read (a bundler left it behind). */
export const TOOLPATH_VERSION: string = readVersion();

function readVersion(): string {
  try {
    // src/model/ and dist/model/ both sit two levels below the package root.
    const manifest = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    const { version } = JSON.parse(manifest) as { version?: unknown };
    return typeof version === 'string' && version !== '' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}
