/**
 * Two copies of `@opentelemetry/api` in one process, with a real second copy (test/helpers/second-api-copy.ts):
 * reading the versions, the API's own compatibility rule, finding a project's copies on disk, and the
 * processor's warning. Runs on both SDK lines (the second copy is whichever the line did not load).
 */
import { cpSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type ProxyTracerProvider, trace } from '@opentelemetry/api';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  copyReadsRegistry,
  installedApiCopies,
  loadedApiVersion,
  registryApiVersion,
} from '../../src/processor/api-copies.js';
import { secondApiCopy, setRegistryAside } from '../helpers/second-api-copy.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const second = secondApiCopy();
const loaded = loadedApiVersion();
const SCENARIO = { id: 'copies', tools: { forbidden: ['delete_everything'] } };

let putBack: () => void;
beforeEach(() => {
  putBack = setRegistryAside();
});
afterEach(() => {
  putBack();
  vi.restoreAllMocks();
});

/** The process warnings emitted while `run` runs (they are emitted on a later tick). */
async function warningsDuring(run: () => Promise<void> | void): Promise<Error[]> {
  const warnings: Error[] = [];
  const listen = (warning: Error) => warnings.push(warning);
  process.on('warning', listen);
  try {
    await run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listen);
  }
  return warnings;
}

/** The processor module graph afresh, so its once-per-process warning has not been given yet. */
async function freshProcessorModule() {
  vi.resetModules();
  return import('../../src/processor/trajectory-processor.js');
}

describe('reading which copy is which', () => {
  it('loadedApiVersion reads the copy toolpath imports without disturbing a registry another copy made', async () => {
    const theirs = new TracerProvider();
    second.api.trace.setGlobalTracerProvider(theirs);
    const registry = (globalThis as unknown as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')];
    vi.resetModules();
    const fresh = await import('../../src/processor/api-copies.js');
    expect(fresh.loadedApiVersion()).toBe(loaded);
    expect((globalThis as unknown as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')]).toBe(
      registry,
    );
    expect(fresh.registryApiVersion()).toBe(second.version);
    expect((second.api.trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).toBe(theirs);
  });

  it('loadedApiVersion is the version a registry made by toolpath’s copy carries, and differs from the second copy', () => {
    expect(registryApiVersion()).toBeUndefined();
    trace.setGlobalTracerProvider(new TracerProvider());
    expect(registryApiVersion()).toBe(loaded);
    expect(second.version).not.toBe(loaded);
  });

  it('copyReadsRegistry says what the API itself does, in both directions', () => {
    const theirs = new TracerProvider();
    second.api.trace.setGlobalTracerProvider(theirs);
    const oursSeesTheirs = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() === theirs;
    expect(oursSeesTheirs).toBe(copyReadsRegistry(loaded, second.version));

    setRegistryAside();
    const ours = new TracerProvider();
    trace.setGlobalTracerProvider(ours);
    const theirsSeeOurs =
      (second.api.trace.getTracerProvider() as ProxyTracerProvider).getDelegate() === ours;
    expect(theirsSeeOurs).toBe(copyReadsRegistry(second.version, loaded));
    // 1.9 and 1.10: the older minor reads the newer one's registry, not the other way round.
    expect(oursSeesTheirs).not.toBe(theirsSeeOurs);
  });

  it('copyReadsRegistry: same major, at most the registry’s minor; 0.x needs the same minor; prereleases only exactly', () => {
    expect(copyReadsRegistry('1.9.1', '1.9.0')).toBe(true);
    expect(copyReadsRegistry('1.3.0', '1.10.0')).toBe(true);
    expect(copyReadsRegistry('1.10.0', '1.9.1')).toBe(false);
    expect(copyReadsRegistry('2.0.0', '1.9.0')).toBe(false);
    expect(copyReadsRegistry('0.5.1', '0.5.3')).toBe(true);
    expect(copyReadsRegistry('0.5.3', '0.5.1')).toBe(false);
    expect(copyReadsRegistry('0.5.1', '0.6.1')).toBe(false);
    expect(copyReadsRegistry('1.10.0-rc.1', '1.10.0')).toBe(false);
    expect(copyReadsRegistry('1.10.0-rc.1', '1.10.0-rc.1')).toBe(true);
  });
});

describe('installedApiCopies', () => {
  it('finds the copy Node resolves, nested copies and pnpm’s store, each once', () => {
    const project = temporaryDir('toolpath-api-copies-');
    const modules = join(project, 'node_modules');
    const root = join(modules, '@opentelemetry/api');
    const nested = join(modules, 'agent-lib/node_modules/@opentelemetry/api');
    const pnpm = join(modules, `.pnpm/@opentelemetry+api@${second.version}/node_modules/@opentelemetry/api`);
    cpSync(second.dir, nested, { recursive: true });
    cpSync(second.dir, pnpm, { recursive: true });
    mkdirSync(dirname(root), { recursive: true });
    symlinkSync(pnpm, root);
    mkdirSync(join(modules, 'unrelated/node_modules/other'), { recursive: true });

    const copies = installedApiCopies(project);
    expect(copies.map(({ path }) => path).sort()).toEqual([realpathSync(nested), realpathSync(pnpm)].sort());
    expect(new Set(copies.map(({ version }) => version))).toEqual(new Set([second.version]));
  });

  it('is empty where there is no project, and does not throw', () => {
    expect(installedApiCopies(join(temporaryDir('toolpath-api-copies-'), 'missing'))).toEqual([]);
  });
});

describe('the processor and a second copy', () => {
  it('warns once, with both versions and the fix, when another copy made the globals before it was created', async () => {
    second.api.trace.setGlobalTracerProvider(new TracerProvider());
    const { trajectoryProcessor } = await freshProcessorModule();
    const processors: { shutdown(): Promise<void> }[] = [];
    const warnings = await warningsDuring(() => {
      processors.push(trajectoryProcessor({ scenarios: [SCENARIO] }));
      processors.push(trajectoryProcessor({ scenarios: [SCENARIO] }));
    });
    await Promise.all(processors.map((processor) => processor.shutdown()));
    expect(warnings).toHaveLength(1);
    const [warning] = warnings as [Error & { code?: string }];
    expect(warning.code).toBe('TOOLPATH_OTEL_API_COPIES');
    expect(warning.message).toContain(
      `two copies of @opentelemetry/api are loaded: the OpenTelemetry globals belong to ${second.version}, toolpath uses ${loaded}`,
    );
    expect(warning.message).toContain(
      copyReadsRegistry(loaded, second.version)
        ? 'its copy cannot register any'
        : 'without the meterProvider option its metrics go nowhere',
    );
    expect(warning.message).toContain('`npm ls @opentelemetry/api`');
  });

  it('looks again at its first span: the app registered its provider with another copy after making the processor', async () => {
    const { trajectoryProcessor } = await freshProcessorModule();
    const processor = trajectoryProcessor({ scenarios: [SCENARIO] });
    const provider = new TracerProvider({ spanProcessors: [processor] });
    const beforeSpans = await warningsDuring(() => {});
    const warnings = await warningsDuring(() => {
      second.api.trace.setGlobalTracerProvider(provider);
      provider.getTracer('app').startSpan('GET /orders').end();
      provider.getTracer('app').startSpan('GET /orders').end();
    });
    await provider.shutdown();
    expect(beforeSpans).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/^toolpath: two copies of @opentelemetry\/api are loaded/);
  });

  it('says nothing when the globals are its own copy’s', async () => {
    const { trajectoryProcessor } = await freshProcessorModule();
    const processor = trajectoryProcessor({ scenarios: [SCENARIO] });
    const provider = new TracerProvider({ spanProcessors: [processor] });
    const warnings = await warningsDuring(() => {
      trace.setGlobalTracerProvider(provider);
      provider.getTracer('app').startSpan('GET /orders').end();
    });
    await provider.shutdown();
    expect(warnings).toEqual([]);
  });
});
