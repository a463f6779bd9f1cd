/**
 * captureSpans never hands back an empty capture in silence: a function that ended no spans, and a
 * second copy of `@opentelemetry/api` (a real one, test/helpers/second-api-copy.ts), each get an error
 * that says what happened and what to do.
 */
import { cpSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type ProxyTracerProvider, trace } from '@opentelemetry/api';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadedApiVersion, toolpathApiCopy } from '../../src/processor/api-copies.js';
import { captureSpans } from '../../src/vitest.js';
import { secondApiCopy, setRegistryAside } from '../helpers/second-api-copy.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const second = secondApiCopy();
const loaded = loadedApiVersion();

let putBack: () => void;
beforeEach(() => {
  putBack = setRegistryAside();
});
afterEach(() => {
  putBack();
  vi.restoreAllMocks();
});

describe('captureSpans and what it could not capture', () => {
  it('a function that ends no spans is an error saying why, unless allowEmpty', async () => {
    await expect(captureSpans(async () => 1)).rejects.toThrow(
      'captureSpans: the function ended no spans. Its code is not instrumented, or it sends its spans to a tracer provider of its own',
    );
    await expect(captureSpans(async () => 1)).rejects.toThrow('pass { allowEmpty: true }');
    const allowed = await captureSpans(async () => 1, { allowEmpty: true });
    expect(allowed).toEqual({ result: 1, spans: [], trajectories: [] });
  });

  it('refuses, touching nothing, when another copy made the OpenTelemetry globals', async () => {
    const theirs = new TracerProvider();
    second.api.trace.setGlobalTracerProvider(theirs);
    let ran = false;
    const capture = captureSpans(async (tracer) => {
      ran = true;
      tracer.startSpan('never').end();
    });
    await expect(capture).rejects.toThrow(
      `captureSpans: cannot register its tracer provider: the process's OpenTelemetry globals were made by @opentelemetry/api ${second.version}, and toolpath uses ${loaded}`,
    );
    await expect(capture).rejects.toThrow(
      'Fix: keep one copy of @opentelemetry/api: `npm ls @opentelemetry/api`',
    );
    expect(ran).toBe(false);
    expect((second.api.trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).toBe(theirs);
  });

  it('code that imports a newer copy gets no-op tracers: the error lists the project’s copies', async () => {
    const project = temporaryDir('toolpath-capture-copies-');
    const own = toolpathApiCopy();
    if (!own) throw new Error('toolpath’s copy of the API does not resolve');
    const top = join(project, 'node_modules/@opentelemetry/api');
    const nested = join(project, 'node_modules/agent-framework/node_modules/@opentelemetry/api');
    mkdirSync(dirname(top), { recursive: true });
    symlinkSync(own.path, top);
    cpSync(second.dir, nested, { recursive: true });
    vi.spyOn(process, 'cwd').mockReturnValue(project);

    // The agent framework's own copy (1.10) cannot read the registry toolpath's copy (1.9) made.
    const capture = captureSpans(async () => {
      second.api.trace
        .getTracer('agent-framework')
        .startActiveSpan('invoke_agent support', (span) => span.end());
    });
    await expect(capture).rejects.toThrow(
      `captureSpans: the function ended no spans, and ${project} has 2 copies of @opentelemetry/api:`,
    );
    await expect(capture).rejects.toThrow(`  ${second.version} at ${realpathSync(nested)}`);
    await expect(capture).rejects.toThrow(`  ${loaded} at ${own.path} (toolpath uses this one)`);
    await expect(capture).rejects.toThrow(
      `toolpath registered its provider through ${loaded}; code that imports a copy of a newer minor version gets no-op tracers from it. Fix: keep one copy`,
    );
    // The same code on toolpath's copy is captured.
    const captured = await captureSpans(async () => {
      trace.getTracer('agent-framework').startActiveSpan('invoke_agent support', (span) => span.end());
    });
    expect(captured.spans.map(({ name }) => name)).toEqual(['invoke_agent support']);
  });
});
