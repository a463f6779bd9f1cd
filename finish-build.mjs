/**
 * The build's last step, after tsc (`npm run build`):
 * - the `toolpath` executable as a few ES modules in dist/bin/. Started from tsc's output, one
 *   command loads some 250 modules one file at a time, and that loading was most of what one
 *   `toolpath eval` cost (docs/performance.md). Code splitting keeps each command's code in its
 *   own chunk, loaded when the command runs, as the unbundled CLI does.
 * - no file left in dist/ from an older build (a module since removed from src/, a chunk since
 *   renamed): `npm pack` ships all of dist/.
 *
 * In the bundle, the peers and every `@opentelemetry/*` package stay imports of the project's own
 * copies: one OpenTelemetry API per process, and optional peers may be missing. What
 * `createRequire` loads (ajv, tinyglobby, the YAML parser of scenario files) comes from
 * node_modules when needed. The bundle sits two levels below package.json, as tsc's
 * dist/cli/bin.js does, so the paths it reads relative to itself (package.json, the package's
 * root) hold. No command starts the processor's worker thread, whose entry is found beside
 * judge-worker.js: the build fails if one does.
 *
 * Nothing is deleted before writing: two builds at once (the install tests pack in parallel)
 * write the same files, and each prunes only what neither makes.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const manifest = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const BUNDLE = 'dist/bin';

const { metafile } = await build({
  entryPoints: { toolpath: 'dist/cli/bin.js' },
  outdir: BUNDLE,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external: ['@opentelemetry/*', ...Object.keys(manifest.peerDependencies ?? {})],
  // CommonJS code in the bundle asks for node's own modules with `require`, which ES modules lack.
  banner: {
    js: "import { createRequire as __toolpathCreateRequire } from 'node:module'; const require = __toolpathCreateRequire(import.meta.url);",
  },
  // Back to src/, through tsc's maps: a stack trace from the bundle names the TypeScript line.
  sourcemap: true,
  logLevel: 'warning',
  metafile: true,
});
if (Object.keys(metafile.inputs).some((input) => input.endsWith('processor/judge-worker.js')))
  throw new Error(
    'finish-build.mjs: the CLI now reaches the judge worker; bundle judge-worker-thread.js beside it',
  );

const written = new Set(Object.keys(metafile.outputs).map((path) => join(path)));
for (const name of readdirSync(BUNDLE)) {
  const path = join(BUNDLE, name);
  if (!written.has(path)) rmSync(path);
}
// tsc's output: X.js, X.js.map, X.d.ts and X.d.ts.map come from src/X.ts.
for (const name of readdirSync('dist', { recursive: true, encoding: 'utf8' })) {
  const path = join('dist', name);
  if (path.startsWith(`${join(BUNDLE)}/`) || path === join(BUNDLE)) continue;
  const source = /^(.*?)(?:\.d)?\.js(?:\.map)?$|^(.*?)\.d\.ts(?:\.map)?$/.exec(name);
  if (!source) continue;
  const stem = source[1] ?? source[2];
  if (!existsSync(join('src', `${stem}.ts`))) rmSync(path);
}
