import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runEval } from '../../src/cli/run-eval.js';
import { appliesTo } from '../../src/evaluate/applies-to.js';
import type { TrajectoryRoot } from '../../src/model/trajectory.js';
import { parseScenario, type Scenario } from '../../src/scenario/scenario.js';
import { buildTrajectory } from '../helpers/trajectory.js';

/** A native scenario with this `appliesTo` and one rule. */
function scenarioFor(conditions: unknown, id = 'support.refund'): Scenario {
  return parseScenario({ id, appliesTo: conditions, tools: { required: ['get_order'] } }, `${id}.yaml`);
}

const ROOT: TrajectoryRoot = {
  name: 'invoke_agent support-agent',
  agentName: 'support-agent',
  attributes: {
    'gen_ai.agent.name': 'support-agent',
    'deployment.environment': 'production',
    'tenant.tier': 3,
    'feature.refunds': true,
  },
};
/** A one-call trace with this root; `null`: a trace without a root (no spans). */
const trace = (root: TrajectoryRoot | null = ROOT) =>
  buildTrajectory(['get_order'], root === null ? {} : { root });

describe('appliesTo', () => {
  it('applies to every trace when the scenario has no appliesTo, or an empty one', () => {
    const none = parseScenario({ tools: { required: ['get_order'] } }, 'x.yaml');
    expect(appliesTo(none, trace())).toBe(true);
    expect(appliesTo(none, trace(null))).toBe(true);
    expect(appliesTo(scenarioFor({}), trace())).toBe(true);
  });

  it('matches the root agent by name, or any of a list of names', () => {
    expect(appliesTo(scenarioFor({ agent: 'support-agent' }), trace())).toBe(true);
    expect(appliesTo(scenarioFor({ agent: ['billing-agent', 'support-agent'] }), trace())).toBe(true);
    expect(appliesTo(scenarioFor({ agent: 'billing-agent' }), trace())).toBe(false);
    // Names are exact: no prefix, no case folding.
    expect(appliesTo(scenarioFor({ agent: 'support' }), trace())).toBe(false);
    expect(appliesTo(scenarioFor({ agent: 'Support-Agent' }), trace())).toBe(false);
  });

  it('does not apply an agent condition to a trace whose root has no agent', () => {
    const { agentName: _, ...withoutAgent } = ROOT;
    expect(appliesTo(scenarioFor({ agent: 'support-agent' }), trace(withoutAgent))).toBe(false);
    expect(appliesTo(scenarioFor({ agent: 'support-agent' }), trace(null))).toBe(false);
  });

  it('matches the root span name', () => {
    expect(appliesTo(scenarioFor({ rootSpan: 'invoke_agent support-agent' }), trace())).toBe(true);
    expect(appliesTo(scenarioFor({ rootSpan: ['POST /chat', 'invoke_agent support-agent'] }), trace())).toBe(
      true,
    );
    expect(appliesTo(scenarioFor({ rootSpan: 'POST /chat' }), trace())).toBe(false);
    expect(appliesTo(scenarioFor({ rootSpan: 'POST /chat' }), trace(null))).toBe(false);
  });

  it('matches root attributes by strict value, and needs every one', () => {
    const applies = (attributes: Record<string, unknown>) => appliesTo(scenarioFor({ attributes }), trace());
    expect(applies({ 'deployment.environment': 'production' })).toBe(true);
    expect(
      applies({ 'deployment.environment': 'production', 'tenant.tier': 3, 'feature.refunds': true }),
    ).toBe(true);
    expect(applies({ 'deployment.environment': 'staging' })).toBe(false);
    expect(applies({ 'deployment.environment': 'production', 'tenant.tier': 4 })).toBe(false);
    // No type coercion: 3 is not "3", true is not "true".
    expect(applies({ 'tenant.tier': '3' })).toBe(false);
    expect(applies({ 'feature.refunds': 'true' })).toBe(false);
    expect(applies({ 'not.there': 'x' })).toBe(false);
    expect(appliesTo(scenarioFor({ attributes: { a: 'x' } }), trace({ name: 'r' }))).toBe(false);
  });

  it('needs every condition given: it is the conjunction of each condition alone', () => {
    const agents = fc.constantFrom('support-agent', 'billing-agent');
    const spans = fc.constantFrom('invoke_agent support-agent', 'POST /chat');
    const environments = fc.constantFrom('production', 'staging');
    fc.assert(
      fc.property(
        fc.option(agents, { nil: undefined }),
        fc.option(spans, { nil: undefined }),
        fc.option(environments, { nil: undefined }),
        (agent, rootSpan, environment) => {
          const parts = [
            agent !== undefined && { agent },
            rootSpan !== undefined && { rootSpan },
            environment !== undefined && { attributes: { 'deployment.environment': environment } },
          ].filter((part) => part !== false);
          const all = appliesTo(scenarioFor(Object.assign({}, ...parts)), trace());
          const each = parts.every((part) => appliesTo(scenarioFor(part), trace()));
          expect(all).toBe(each);
        },
      ),
    );
  });
});

describe('runEval evaluates a trace only against the scenarios that apply to it', () => {
  it('skips scenarios for other agents; a trace no scenario applies to is counted, listed, not evaluated', async () => {
    const otlp = await readFile(new URL('../spans/sdk-genai-refund.otlp.json', import.meta.url), 'utf8');
    const events = await readFile(new URL('../spans/typed-events-refund.json', import.meta.url), 'utf8');
    const support = scenarioFor({ agent: 'support-agent' }, 'support.refund');
    const billing = scenarioFor({ agent: 'billing-agent' }, 'billing.invoice');
    const run = runEval(
      [
        { source: 'refund.otlp.json', text: otlp },
        { source: 'events.json', text: events },
      ],
      [support, billing],
    );
    expect(run.errors).toEqual([]);
    expect(run.reports.map(({ source, report }) => [source, report.scenario.id])).toEqual([
      ['refund.otlp.json', 'support.refund'],
    ]);
    // The typed-event file has no agent: neither scenario applies to it.
    expect(run.unmatched).toEqual([{ source: 'events.json', traceId: 'typed-events:events.json' }]);
    expect(run.summary).toMatchObject({ traces: 2, evaluated: 1, passed: 1, failed: 0, inconclusive: 0 });
  });

  it('a scenario without appliesTo still evaluates every trace', async () => {
    const events = await readFile(new URL('../spans/typed-events-refund.json', import.meta.url), 'utf8');
    const everywhere = parseScenario({ tools: { required: ['get_order'] } }, 'any.yaml');
    const run = runEval([{ source: 'events.json', text: events }], [everywhere]);
    expect(run.reports).toHaveLength(1);
    expect(run.unmatched).toEqual([]);
  });
});
