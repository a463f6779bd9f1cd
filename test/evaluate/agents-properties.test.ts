/**
 * Property: per-agent rules see exactly the calls the agent's own runs made. Random agent runs
 * with sub-agents nested in calls (test/helpers/genai-run.ts, OTel GenAI spans in any order) are
 * judged with a per-tool count for every agent; a brute-force oracle counts the generated calls
 * of each agent's runs (the call that started a sub-agent is its caller's).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { agentNames, agentView } from '../../src/model/agent-view.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { emitRun, type GenCall, type GenRun, placesOf, TRACE_ID } from '../helpers/genai-run.js';

const TOOLS = ['search', 'lookup', 'pay'] as const;
const AGENTS = ['main', 'researcher', 'billing'] as const;

const genCall = (depth: number): fc.Arbitrary<GenCall> =>
  fc.record({
    tool: fc.constantFrom(...TOOLS),
    fails: fc.boolean(),
    startOffset: fc.integer({ min: 0, max: 20 }),
    duration: fc.integer({ min: 0, max: 20 }),
    subRun: depth > 0 ? fc.option(genRun(depth - 1), { nil: undefined }) : fc.constant(undefined),
  }) as unknown as fc.Arbitrary<GenCall>;

function genRun(depth: number): fc.Arbitrary<GenRun> {
  return fc.record({
    agent: fc.constantFrom(...AGENTS),
    turns: fc.array(fc.array(genCall(depth), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
  });
}

/** Every agent, each tool counted exactly as the oracle says, through `tools.counts`. */
function scenarioFor(expected: Map<string, Map<string, number>>) {
  const agents: Record<string, unknown> = {};
  for (const agent of AGENTS) {
    const counts: Record<string, { min: number; max: number }> = {};
    for (const tool of TOOLS) {
      const n = expected.get(agent)?.get(tool) ?? 0;
      counts[tool] = { min: n, max: n };
    }
    agents[agent] = { tools: { counts } };
  }
  return parseScenario({ id: 'per-agent', agents }, 'per-agent.yaml');
}

describe('property: per-agent attribution agrees with the generated runs', () => {
  it('each agent is judged on its own calls; every call belongs to exactly one agent', () => {
    fc.assert(
      fc.property(genRun(2), fc.infiniteStream(fc.nat()), (run, noise) => {
        const places = placesOf(run);
        places.forEach((place, n) => {
          place.call.id = `call_${n}`;
        });
        const { spans } = emitRun(run, undefined, 0);
        const shuffled = spans
          .map((span) => ({ span, key: noise.next().value }))
          .sort((a, b) => a.key - b.key)
          .map(({ span }) => span);
        const trajectory = normalizeTrace(TRACE_ID, shuffled);
        if (!trajectory) throw new Error('no trajectory');
        // The oracle: a call is the agent's whose run's turn asked for it.
        const expected = new Map<string, Map<string, number>>();
        const owner = new Map<string, string>();
        for (const place of places) {
          const tools = expected.get(place.run.agent) ?? new Map<string, number>();
          tools.set(place.call.tool, (tools.get(place.call.tool) ?? 0) + 1);
          expected.set(place.run.agent, tools);
          owner.set(place.call.id, place.run.agent);
        }
        const report = evaluate(trajectory, scenarioFor(expected));
        const wrong = report.assertions.filter((a) => a.status !== 'pass' && !a.reason.includes('never ran'));
        expect(wrong).toEqual([]);
        // Agents that never ran are the ones with no generated run.
        const ran = new Set<string>();
        const stack = [run];
        for (let next = stack.pop(); next; next = stack.pop()) {
          ran.add(next.agent);
          for (const calls of next.turns) for (const call of calls) if (call.subRun) stack.push(call.subRun);
        }
        expect(new Set(agentNames(trajectory))).toEqual(ran);
        // The views partition the calls: each once, in its owner's.
        const seen = new Map<string, string>();
        for (const name of agentNames(trajectory))
          for (const call of agentView(trajectory, name).calls) {
            expect(seen.has(call.id)).toBe(false);
            seen.set(call.id, name);
          }
        expect(seen).toEqual(owner);
      }),
      { numRuns: 150 },
    );
  });
});
