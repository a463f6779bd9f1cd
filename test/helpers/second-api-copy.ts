/**
 * A real second copy of `@opentelemetry/api`, of another version than the one toolpath's modules
 * loaded: on the 2.x line (API 1.9.0) the root's `otel-api-second-copy` (an npm alias of 1.10.0); on the
 * 3.x line (API 1.10, test/sdk3) the root's own 1.9.0. Loaded with Node's `require` by file, so it is a
 * module instance of its own, as a nested copy in a project's node_modules would be.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Api from '@opentelemetry/api';
import { loadedApiVersion } from '../../src/processor/api-copies.js';

const require = createRequire(import.meta.url);
const REGISTRY_KEY = Symbol.for('opentelemetry.js.api.1');

/** The other copy: its module, version and package folder. */
export interface SecondApiCopy {
  api: typeof Api;
  version: string;
  dir: string;
}

/** The installed copy whose version differs from the one toolpath loaded. */
export function secondApiCopy(): SecondApiCopy {
  const loaded = loadedApiVersion();
  for (const name of ['@opentelemetry/api', 'otel-api-second-copy']) {
    const dir = packageDir(require.resolve(name));
    const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
    if (version !== loaded) return { api: require(name) as typeof Api, version, dir };
  }
  throw new Error(`no installed copy of @opentelemetry/api other than ${loaded}: run npm ci`);
}

/** The folder of the package `entry` belongs to: the nearest one up whose package.json is the API's. */
function packageDir(entry: string): string {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === '@opentelemetry/api')
      return dir;
  }
  throw new Error(`${entry}: not inside the @opentelemetry/api package`);
}

/** Takes the process's OpenTelemetry registry away; the returned function puts it back as it was. */
export function setRegistryAside(): () => void {
  const globals = globalThis as unknown as Record<symbol, unknown>;
  const saved = globals[REGISTRY_KEY];
  delete globals[REGISTRY_KEY];
  return () => {
    if (saved === undefined) delete globals[REGISTRY_KEY];
    else globals[REGISTRY_KEY] = saved;
  };
}
