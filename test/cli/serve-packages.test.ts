/**
 * serve's packages (gRPC, protobuf, the exporters, the metrics SDK) are optional peers: the
 * in-process entry points and every other command never load them, serve loads them lazily, and
 * without them it says what to install. The import graph is esbuild's, from the real sources.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { loadServeModule, servePackages } from '../../src/cli/serve-packages.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const serveNames = servePackages(ROOT).map((spec) => spec.slice(0, spec.lastIndexOf('@')));

async function metafile(entry: string): Promise<Metafile> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    write: false,
    metafile: true,
    logLevel: 'silent',
    outdir: '/tmp/unused',
  });
  return result.metafile;
}

/** The bare packages `entry` loads through static imports only (a dynamic import is not followed). */
async function staticPackages(entry: string): Promise<Set<string>> {
  const { inputs } = await metafile(entry);
  const packages = new Set<string>();
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of inputs[file]?.imports ?? []) {
      if (imported.kind !== 'import-statement') continue;
      if (imported.external) packages.add(imported.path.replace(/^((?:@[^/]+\/)?[^/]+).*$/, '$1'));
      else stack.push(imported.path);
    }
  }
  return packages;
}

describe("serve's packages", () => {
  it('are optional peers, not dependencies', () => {
    expect(serveNames).toEqual(
      expect.arrayContaining([
        '@grpc/grpc-js',
        'protobufjs',
        '@opentelemetry/sdk-metrics',
        '@opentelemetry/exporter-prometheus',
      ]),
    );
    for (const name of serveNames) {
      expect(manifest.dependencies[name], name).toBeUndefined();
      expect(manifest.peerDependencies[name], name).toBeDefined();
    }
  });

  it('are all that serve loads beyond the dependencies and required peers', async () => {
    const loaded = await staticPackages('src/collector/serve.ts');
    const provided = new Set([
      ...Object.keys(manifest.dependencies),
      ...Object.keys(manifest.peerDependencies),
    ]);
    for (const name of loaded) if (!name.startsWith('node:')) expect(provided.has(name), name).toBe(true);
    for (const name of ['@grpc/grpc-js', 'protobufjs', '@opentelemetry/sdk-metrics'])
      expect(loaded).toContain(name);
  }, 60_000);

  it('are never loaded by toolpath, toolpath/vitest, or the CLI before serve runs', async () => {
    for (const entry of ['src/index.ts', 'src/vitest.ts', 'src/cli/bin.ts']) {
      const loaded = await staticPackages(entry);
      expect(
        serveNames.filter((name) => loaded.has(name)),
        entry,
      ).toEqual([]);
    }
  }, 60_000);

  it('missing: serve names the one it lacked and prints the command that installs them all', async () => {
    const message = await loadServeModule(
      () =>
        import(['@grpc', 'grpc-js-not-installed'].join('/')) as Promise<
          typeof import('../../src/collector/serve.js')
        >,
    );
    expect(typeof message).toBe('string');
    expect(message).toMatch(
      /^toolpath serve: @grpc\/grpc-js-not-installed is not installed: serve needs packages/,
    );
    expect(message).toContain("  npm i '@grpc/grpc-js@^1.14.7' ");
    expect(message).toContain("'@opentelemetry/exporter-prometheus@>=0.223.0 <0.300.0'");
    // Installed (this checkout), it is the module itself.
    expect(typeof (await loadServeModule())).toBe('object');
  });
});
