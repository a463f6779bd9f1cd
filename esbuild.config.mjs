/**
 * The `toolpath` executable as a few ES modules (dist/bin/), built after tsc: a command started
 * from tsc's output loads some 250 modules one file at a time, and that loading was most of what
 * one `toolpath eval` cost (docs/performance.md). Code splitting keeps each command's code in its
 * own chunk, loaded when the command runs, as the unbundled CLI does.
 *
 * The peers and every `@opentelemetry/*` package stay imports of the project's own copies: one
 * OpenTelemetry API per process, and optional peers may be missing. What `createRequire` loads
 * (ajv, tinyglobby, the YAML parser of scenario files) is loaded from node_modules when needed.
 * The bundle sits two levels below package.json, as tsc's dist/cli/bin.js does, so the paths it
 * reads relative to itself (package.json, the package's root) hold. No command starts the
 * processor's worker thread, whose entry is found beside judge-worker.js.
 *
 *   node esbuild.config.mjs   (run by `npm run build`)
 */
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const manifest = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

// Chunk names change with their content: last build's would pile up.
rmSync('dist/bin', { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: { toolpath: 'dist/cli/bin.js' },
  outdir: 'dist/bin',
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
// Its entry would not be found beside a chunk here: a command that starts it needs a second entry point.
if (Object.keys(metafile.inputs).some((input) => input.endsWith('processor/judge-worker.js')))
  throw new Error(
    'esbuild.config.mjs: the CLI now reaches the judge worker; bundle judge-worker-thread.js beside it',
  );
