/**
 * The one configuration model: the TypeScript constructors parse their options through the
 * schema the YAML uses, fill the same defaults, take durations as text or milliseconds, keep the
 * old names working, and throw a ConfigError naming each bad option.
 */
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { TraceAdapter } from '../../src/collector/adapter.js';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { parseAdapterOptions, parseProcessorOptions } from '../../src/config/options.js';
import { ConfigError } from '../../src/config/values.js';
import { trajectoryProcessor } from '../../src/index.js';

const SCENARIO = { id: 'any', efficiency: { repeats: { max: 2 } } };

function problemsOf(build: () => unknown): readonly string[] {
  try {
    build();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('did not throw');
}

describe('the processor options', () => {
  it('fill every default from the schema, durations in milliseconds', () => {
    const { limits, conversations } = parseProcessorOptions({});
    expect(limits).toMatchObject({
      maxTraces: 1_000,
      maxSpansPerTrace: 10_000,
      maxSpans: 100_000,
      maxOpenTraces: 100_000,
      traceTimeout: 300_000,
      inlineMaxSpans: 256,
      lateWindow: 600_000,
      maxJudgedTraceIds: 1_000_000,
      workerTimeout: 60_000,
    });
    expect(limits.maxBufferedBytes).toBeGreaterThan(0);
    expect(limits.maxBufferedBytes).toBeLessThanOrEqual(256 * 2 ** 20);
    expect(conversations).toEqual({ idleTimeout: 300_000, maxConversations: 10_000, maxCalls: 100_000 });
  });

  it('take durations as text, like the YAML', () => {
    const { limits, conversations } = parseProcessorOptions({
      limits: { traceTimeout: '2m', lateWindow: '500ms' },
      conversations: { idleTimeout: '30s' },
    });
    expect(limits.traceTimeout).toBe(120_000);
    expect(limits.lateWindow).toBe(500);
    expect(conversations).toMatchObject({ idleTimeout: 30_000 });
  });

  it('keep the old names working, moved to the new ones', () => {
    const { limits, conversations } = parseProcessorOptions({
      limits: {
        traceTimeoutMs: 5_000,
        lateWindowMs: 7,
        workerTimeoutMs: 9,
        decisionCacheSize: 11,
        conversationIdleMs: 13,
        maxConversations: 15,
        maxConversationCalls: 17,
      },
    });
    expect(limits).toMatchObject({
      traceTimeout: 5_000,
      lateWindow: 7,
      workerTimeout: 9,
      maxJudgedTraceIds: 11,
    });
    expect(conversations).toEqual({ idleTimeout: 13, maxConversations: 15, maxCalls: 17 });
  });

  it('refuse an old name given beside its new one', () => {
    expect(
      problemsOf(() => parseProcessorOptions({ limits: { traceTimeout: 1, traceTimeoutMs: 2 } })),
    ).toEqual(['limits.traceTimeoutMs: the old name of limits.traceTimeout, given beside it']);
  });

  it('keep `conversations: false`', () => {
    expect(parseProcessorOptions({ conversations: false }).conversations).toBe(false);
  });

  it('throw a ConfigError naming every bad option, from the constructor', () => {
    const build = () =>
      trajectoryProcessor({
        scenarios: [SCENARIO],
        limits: { traceTimeout: 0, maxTraces: 1.5, inlineMaxSpans: -1, maxTarces: 3 } as never,
        conversations: { idleTimeout: 'soon' },
      });
    expect(build).toThrow(ConfigError);
    expect(problemsOf(build)).toEqual([
      'limits.maxTraces: expected an integer; got 1.5',
      'limits.traceTimeout: expected a duration above zero, like 60s',
      'limits.inlineMaxSpans: expected an integer >= 0; got -1',
      'limits: unknown key "maxTarces" (did you mean maxTraces?)',
      'conversations.idleTimeout: expected a duration like 500ms, 30s or 2m; got "soon"',
    ]);
    expect(() => build()).toThrow(/^config trajectoryProcessor: limits\.maxTraces: /);
  });

  it('refuse the zero trace timeout that once made a 1 ms sweep', () => {
    expect(
      problemsOf(() => trajectoryProcessor({ scenarios: [SCENARIO], limits: { traceTimeoutMs: 0 } })),
    ).toEqual(['limits.traceTimeout: expected a duration above zero, like 60s']);
  });

  it('build a working processor from durations given as text', async () => {
    const processor = trajectoryProcessor({
      scenarios: [SCENARIO],
      limits: { traceTimeout: '1m' },
      conversations: false,
    });
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    provider
      .getTracer('t')
      .startSpan('invoke_agent a', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } })
      .end();
    await provider.forceFlush();
    expect(processor.stats().judgedTraces).toBe(1);
    await provider.shutdown();
  });
});

describe('the adapter options', () => {
  it('are the YAML sections, with the same names and defaults', () => {
    const settings = parseAdapterOptions({});
    const yaml = parseAdapterConfig({}, 'test', {});
    expect(settings.decision).toEqual(yaml.decision);
    expect(settings.conversations).toEqual(yaml.conversations);
    const { maxRequestBytes: _, maxConnections: __, ...adapterLimits } = yaml.limits;
    expect(settings.limits).toEqual(adapterLimits);
    expect(settings.forwardSpans).toBe(yaml.forward.spans);
  });

  it('take durations as text and the old millisecond names', () => {
    expect(parseAdapterOptions({ decision: { wait: '1m', waitAfterRoot: 250 } }).decision).toEqual({
      wait: 60_000,
      waitAfterRoot: 250,
      lateWindow: 600_000,
    });
    const old = parseAdapterOptions({
      decision: { waitMs: 1, waitAfterRootMs: 2, lateWindowMs: 3 },
      conversations: { idleMs: 4 },
      sweepIntervalMs: 5,
    });
    expect(old.decision).toEqual({ wait: 1, waitAfterRoot: 2, lateWindow: 3 });
    expect(old.conversations).toMatchObject({ idleTimeout: 4 });
    expect(old.sweepInterval).toBe(5);
  });

  it('throw a ConfigError naming the bad option, from the constructor', () => {
    const build = () =>
      new TraceAdapter({
        scenarios: [SCENARIO],
        decision: { wait: 'forever' },
        limits: { maxSpans: 0 },
        forwardSpans: 'some' as never,
      });
    expect(problemsOf(build)).toEqual([
      'decision.wait: expected a duration like 500ms, 30s or 2m; got "forever"',
      'limits.maxSpans: expected an integer >= 1; got 0',
      'forwardSpans: expected "none" or "sampled" or "all"; got "some"',
    ]);
    expect(build).toThrow(/^config TraceAdapter: decision\.wait: /);
  });
});
