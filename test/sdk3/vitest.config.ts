/**
 * The processor tests (and its conversation tests) on the OTel JS 3.x SDK line (run by test/sdk3/run.sh with the Node 22 binary that
 * test/sdk3/node_modules brings; the root `vitest run` runs them on the 2.x line).
 *
 * How an `@opentelemetry/*` import gets the 3.x package:
 * - Tests and src/ are transformed by Vite, whose resolver runs the plugin below: each `@opentelemetry/*`
 *   package that test/sdk3/package.json lists resolves as if imported from test/sdk3.
 * - A package that Vite resolves from test/sdk3/node_modules is then loaded by Node itself (Vitest
 *   externalizes node_modules), and Node resolves that package's own imports from test/sdk3/node_modules:
 *   the whole 3.x graph, with one `@opentelemetry/api` (1.10, which the 3.x packages require).
 * - A package from the root node_modules is loaded by Node too, so its imports would get the root's 2.x
 *   packages, past the plugin. The ones that import OTel are listed in `server.deps.inline`, so Vite
 *   transforms them and the plugin applies to their imports as well: `@ai-sdk/otel` (imports the API),
 *   and `@opentelemetry/sdk-trace-base` (no 3.x release: its 2.12.1 ESM build is the thin
 *   BasicTracerProvider / positional-processor shim over `@opentelemetry/sdk-trace`, here the 3.x one).
 * sdk-line.test.ts proves each of these.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const manifest = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
/** The OTel packages of the 3.x line, as test/sdk3/package.json pins them. */
const sdk3Packages = new Set(
  Object.keys(manifest.dependencies).filter((name) => name.startsWith('@opentelemetry/')),
);

/**
 * `@opentelemetry/sdk-trace-base` has no 3.x release. Its 2.12.1 ESM build (the root's) is a thin shim over
 * `@opentelemetry/sdk-trace`; inlined, its imports get the 3.x packages. Vite would pick its `main` (the
 * CommonJS build, whose `require` calls Vite does not resolve), hence the explicit `module` entry.
 */
const sdkTraceBaseDir = join(repoRoot, 'node_modules/@opentelemetry/sdk-trace-base');
const sdkTraceBaseEsm = join(
  sdkTraceBaseDir,
  (JSON.parse(readFileSync(join(sdkTraceBaseDir, 'package.json'), 'utf8')) as { module: string }).module,
);

/**
 * For sdk-line.test.ts: a module, served by the plugin (no such file), that imports each package as a test in
 * test/processor does (a file in test/sdk3 would find test/sdk3/node_modules by plain Node resolution).
 */
const probeId = join(repoRoot, 'test/processor/sdk3-probe.virtual.ts');

/** `@opentelemetry/api` and `@opentelemetry/api/experimental` are both the package `@opentelemetry/api`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/**
 * Resolves the 3.x line's package names as if the importer were in test/sdk3, with Vite's own package
 * resolution (exports, subpaths, the ESM entry for `import`). A plain alias to a package folder is not
 * enough: Vite resolves a folder by its `main` field, which is the CommonJS build of these dual packages,
 * and the 3.x packages' own ESM imports of each other would then load a second copy of each.
 */
const sdk3Resolution: Plugin = {
  name: 'toolpath-sdk3-resolution',
  enforce: 'pre',
  resolveId(source, _importer, options) {
    if (source === probeId) return probeId;
    if (source === '@opentelemetry/sdk-trace-base') return sdkTraceBaseEsm;
    if (!sdk3Packages.has(packageName(source))) return null;
    return this.resolve(source, join(here, 'package.json'), { ...options, skipSelf: true });
  },
  load(id) {
    if (id !== probeId) return null;
    const names = [...sdk3Packages, '@opentelemetry/sdk-trace-base', '@ai-sdk/otel'];
    const imports = names.map((name, i) => `import * as m${i} from '${name}';`);
    const entries = names.map((name, i) => `'${name}': m${i}`);
    return `${imports.join('\n')}\nexport default { ${entries.join(', ')} };\n`;
  },
};

export default defineConfig({
  root: repoRoot,
  // Vite's and Vitest's caches beside the 3.x install, not in the root's node_modules/.vite.
  cacheDir: join(here, 'node_modules/.vite'),
  plugins: [sdk3Resolution],
  test: {
    include: [
      'test/processor/**/*.test.ts',
      // The processor judging conversations, on the app's thread and on a worker.
      'test/conversations/processor-conversations.test.ts',
      'test/conversations/worker-conversations.test.ts',
      'test/sdk3/**/*.test.ts',
    ],
    testTimeout: 30_000,
    server: {
      deps: {
        inline: ['@ai-sdk/otel', '@opentelemetry/sdk-trace-base'],
      },
    },
  },
});
