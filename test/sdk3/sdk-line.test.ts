/**
 * Run only by test/sdk3/vitest.config.ts (the root config leaves test/sdk3 out): fails unless this run has
 * Node 22 and the OTel packages that a test in test/processor imports are the 3.x line's.
 *
 * The imports come from the config's probe module, which sits in test/processor: this file's own imports
 * would find test/sdk3/node_modules by plain Node resolution, config or not.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as AiSdkOtel from '@ai-sdk/otel';
import type * as Api from '@opentelemetry/api';
import type * as AsyncHooks from '@opentelemetry/context-async-hooks';
import type * as Core from '@opentelemetry/core';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, 'node_modules');
const pins = (
  JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
).dependencies;
const otelPins = Object.keys(pins).filter((name) => name.startsWith('@opentelemetry/'));

/** One export that only that package has, to compare by identity. */
const marker: Record<string, string> = {
  '@opentelemetry/api': 'trace',
  '@opentelemetry/context-async-hooks': 'AsyncLocalStorageContextManager',
  '@opentelemetry/core': 'W3CTraceContextPropagator',
  '@opentelemetry/otlp-transformer': 'JsonTraceSerializer',
  '@opentelemetry/resources': 'resourceFromAttributes',
  '@opentelemetry/sdk-logs': 'LoggerProvider',
  '@opentelemetry/sdk-metrics': 'MeterProvider',
  '@opentelemetry/sdk-trace': 'TracerProvider',
};

/** The ESM entry of an installed package in test/sdk3/node_modules, from its package.json. */
function esmEntry(name: string): string {
  const manifest = JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as {
    exports?: { '.': { default?: { default: string } } };
    module?: string;
  };
  const entry = manifest.exports?.['.'].default?.default ?? manifest.module;
  if (!entry) throw new Error(`${name}: no ESM entry in its package.json`);
  return join(modules, name, entry);
}

function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as { version: string })
    .version;
}

let imported: Record<string, Record<string, unknown>>;
let api: typeof Api;
let core: typeof Core;
let asyncHooks: typeof AsyncHooks;
let sdkTrace: typeof SdkTrace;
let sdkTraceBase: typeof SdkTraceBase;
let aiSdkOtel: typeof AiSdkOtel;

beforeAll(async () => {
  // Served by the config's plugin: no such file.
  const probe = join(here, '../processor/sdk3-probe.virtual.ts');
  imported = ((await import(/* @vite-ignore */ probe)) as { default: typeof imported }).default;
  api = imported['@opentelemetry/api'] as unknown as typeof Api;
  core = imported['@opentelemetry/core'] as unknown as typeof Core;
  asyncHooks = imported['@opentelemetry/context-async-hooks'] as unknown as typeof AsyncHooks;
  sdkTrace = imported['@opentelemetry/sdk-trace'] as unknown as typeof SdkTrace;
  sdkTraceBase = imported['@opentelemetry/sdk-trace-base'] as unknown as typeof SdkTraceBase;
  aiSdkOtel = imported['@ai-sdk/otel'] as unknown as typeof AiSdkOtel;
});

describe('the 3.x SDK line on Node 22', () => {
  it('runs on Node 22 (at least 22.15, which the 3.x packages need)', () => {
    const [major, minor] = process.versions.node.split('.').map(Number);
    expect(major).toBe(22);
    expect(minor).toBeGreaterThanOrEqual(15);
  });

  it('has the pinned 3.x packages installed in test/sdk3/node_modules', () => {
    expect(otelPins.sort()).toEqual(Object.keys(marker).sort());
    for (const name of otelPins) expect(installedVersion(name), name).toBe(pins[name]);
    expect(installedVersion('@opentelemetry/sdk-trace')).toMatch(/^3\.1\./);
    expect(installedVersion('@opentelemetry/api')).toMatch(/^1\.10\./);
  });

  it.each(Object.keys(marker))(
    'resolves %s for test/processor to its ESM entry in test/sdk3',
    async (name) => {
      const key = marker[name] as string;
      const fromSdk3 = (await import(/* @vite-ignore */ pathToFileURL(esmEntry(name)).href)) as Record<
        string,
        unknown
      >;
      expect(fromSdk3[key]).toBeDefined();
      expect(imported[name]?.[key]).toBe(fromSdk3[key]);
    },
  );

  it('gets the 3.x SDK at run time, not only its files', () => {
    expect(core.SDK_INFO['telemetry.sdk.version']).toMatch(/^3\.1\./);
    // The logs API moved into @opentelemetry/api 1.10 (the 2.x line has it in @opentelemetry/api-logs).
    expect('logs' in api).toBe(true);
    // context-async-hooks 3.x dropped AsyncHooksContextManager.
    expect('AsyncHooksContextManager' in asyncHooks).toBe(false);
  });

  it('registers globals as API 1.10', () => {
    const provider = new sdkTrace.TracerProvider();
    try {
      expect(api.trace.setGlobalTracerProvider(provider)).toBe(true);
      const global = (globalThis as Record<symbol, { version?: string } | undefined>)[
        Symbol.for('opentelemetry.js.api.1')
      ];
      expect(global?.version).toBe(pins['@opentelemetry/api']);
    } finally {
      api.trace.disable();
    }
  });

  it('gives @ai-sdk/otel (inlined) the same @opentelemetry/api', () => {
    const asked: string[] = [];
    const getTracer = api.trace.getTracer;
    api.trace.getTracer = (name, version) => {
      asked.push(name);
      return getTracer.call(api.trace, name, version);
    };
    try {
      new aiSdkOtel.OpenTelemetry();
    } finally {
      api.trace.getTracer = getTracer;
    }
    expect(asked).toEqual(['gen_ai']);
  });

  it("runs sdk-trace-base's 2.x shim over the 3.x sdk-trace (there is no 3.x sdk-trace-base)", () => {
    const exporter = new sdkTrace.InMemorySpanExporter();
    const provider = new sdkTraceBase.BasicTracerProvider({
      spanProcessors: [new sdkTraceBase.SimpleSpanProcessor(exporter)],
    });
    expect(provider).toBeInstanceOf(sdkTrace.TracerProvider);
    expect(sdkTraceBase.InMemorySpanExporter).toBe(sdkTrace.InMemorySpanExporter);
    provider.getTracer('sdk-line').startSpan('probe').end();
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('probe');
    expect(span?.resource.attributes['telemetry.sdk.version']).toMatch(/^3\.1\./);
  });
});
