import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RiskSampler, type SampledTrace, stamped, traceIdFraction } from '../../src/judging/risk-sampler.js';
import type { Report } from '../../src/model/report.js';

const hex32 = fc.stringMatching(/^[0-9a-f]{32}$/);

function report(hard: boolean, version = '1'): Report {
  return {
    traceId: 't',
    scenario: { id: 's', version },
    toolpathVersion: '0.1.0',
    verdict: hard ? 'fail' : 'pass',
    pass: !hard,
    scores: {},
    findings: hard ? [{ rule: 'order.before', severity: 'hard', message: '', calls: [], spans: [] }] : [],
    assertions: [],
    stats: { calls: 0, turns: 0, errors: 0, durationMs: 0 },
  };
}

function traceOf(traceId: string, overrides: Partial<SampledTrace> = {}): SampledTrace {
  return {
    traceId,
    reports: [report(false)],
    hasError: false,
    tools: ['get_order'],
    spanAttributes: () => [],
    ...overrides,
  };
}

/** A sampler that has already seen get_order and scenario s@1, so nothing is "new". */
function warmed(
  options: ConstructorParameters<typeof RiskSampler>[0],
  irreversible: string[] = [],
): RiskSampler {
  const sampler = new RiskSampler(options, irreversible);
  sampler.decide(traceOf('0'.repeat(32)));
  return sampler;
}

describe('RiskSampler', () => {
  it('decides the same for the same trace id on every instance (consistent across adapters and replays)', () => {
    fc.assert(
      fc.property(hex32, fc.double({ min: 0, max: 1, noNaN: true }), (traceId, ratio) => {
        const a = warmed({ ratio }).decide(traceOf(traceId));
        const b = warmed({ ratio }).decide(traceOf(traceId));
        expect(a).toEqual(b);
      }),
    );
  });

  it('keeps by ratio exactly the ids whose random bits fall under it, with adjusted count 1/ratio', () => {
    fc.assert(
      fc.property(hex32, fc.double({ min: 0.01, max: 0.99, noNaN: true }), (traceId, ratio) => {
        const decision = warmed({ ratio }).decide(traceOf(traceId));
        expect(decision.reason).toBe('ratio');
        expect(decision.keep).toBe(traceIdFraction(traceId) < ratio);
        if (decision.keep) expect(decision.adjustedCount).toBeCloseTo(1 / ratio);
      }),
    );
  });

  it('a kept id stays kept when the ratio grows (nested samples)', () => {
    fc.assert(
      fc.property(
        hex32,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (id, x, y) => {
          const [low, high] = x < y ? [x, y] : [y, x];
          if (warmed({ ratio: low }).decide(traceOf(id)).keep)
            expect(warmed({ ratio: high }).decide(traceOf(id)).keep).toBe(true);
        },
      ),
    );
  });

  it('always keeps risk, in a fixed order of reasons, at ratio 0', () => {
    const sampler = warmed({ ratio: 0, keepAttributes: { 'app.tier': 'gold' } }, ['issue_refund']);
    const id = 'f'.repeat(32);
    expect(sampler.decide(traceOf(id, { reports: [report(true)], hasError: true })).reason).toBe(
      'hard_finding',
    );
    expect(sampler.decide(traceOf(id, { hasError: true })).reason).toBe('error');
    expect(sampler.decide(traceOf(id, { tools: ['issue_refund'] })).reason).toBe('irreversible_tool');
    expect(sampler.decide(traceOf(id, { tools: ['brand_new_tool'] })).reason).toBe('new_tool');
    expect(sampler.decide(traceOf(id, { tools: ['brand_new_tool'] })).keep).toBe(false);
    expect(sampler.decide(traceOf(id, { reports: [report(false, '2')] })).reason).toBe(
      'new_scenario_version',
    );
    expect(sampler.decide(traceOf(id, { spanAttributes: () => [{ 'app.tier': 'gold' }] })).reason).toBe(
      'attribute',
    );
    expect(sampler.decide(traceOf(id, { spanAttributes: () => [{ 'app.tier': 'silver' }] })).keep).toBe(
      false,
    );
  });

  it('rejects a ratio outside 0..1', () => {
    expect(() => new RiskSampler({ ratio: 1.5 })).toThrow(/between 0 and 1, got 1.5/);
    expect(() => new RiskSampler({ ratio: Number.NaN })).toThrow(/between 0 and 1/);
  });

  it('stamps a span view with the sampling attributes, keeping a __proto__ attribute as data', () => {
    const decision = { keep: true, reason: 'ratio' as const, adjustedCount: 4 };
    const attributes = JSON.parse('{"app.tier":"gold","__proto__":"x"}');
    const span = { name: 'chat', attributes } as unknown as ReadableSpan;
    const view = stamped(span, decision);
    expect(view.name).toBe('chat');
    expect(Object.getPrototypeOf(view.attributes)).toBe(Object.prototype);
    expect(Object.entries(view.attributes)).toEqual([
      ['app.tier', 'gold'],
      ['__proto__', 'x'],
      ['toolpath.sampling.reason', 'ratio'],
      ['toolpath.sampling.adjusted_count', 4],
    ]);
    expect(span.attributes).toBe(attributes);
  });
});
