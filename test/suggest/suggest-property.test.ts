/**
 * Property: runs drawn from a random generating partial order on tools (each run a random way of
 * keeping it: its calls in turns one after the other, a tool asked for with others that do not
 * depend on it) give a scenario every rule of which holds on every run, whose order pairs the
 * generating order implies, and whose constant arguments are never a per-run id.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { CausalGraph } from '../../src/model/causal-order.js';
import type { JsonValue } from '../../src/model/json.js';
import { type ToolCall, Trajectory } from '../../src/model/trajectory.js';
import { reduceBefore } from '../../src/suggest/mine-order.js';
import type { Supported } from '../../src/suggest/rules.js';
import type { SuggestRun } from '../../src/suggest/runs.js';
import { suggestScenarios } from '../../src/suggest/suggest.js';
import { scenarioOf } from '../../src/suggest/verify.js';

/** A generating order: tools 0..n-1, edges only from lower to higher (so a DAG). */
interface Generator {
  tools: number;
  /** `edges[a][b]`: a must come before b (a < b). */
  edges: boolean[][];
  /** Per edge, whether b's arguments carry a value of a's result. */
  carries: boolean[][];
  /** Per tool, how many calls it makes (1 or 2). */
  calls: number[];
}

const generator: fc.Arbitrary<Generator> = fc.integer({ min: 2, max: 6 }).chain((tools) =>
  fc.record({
    tools: fc.constant(tools),
    edges: fc.array(fc.array(fc.boolean(), { minLength: tools, maxLength: tools }), {
      minLength: tools,
      maxLength: tools,
    }),
    carries: fc.array(fc.array(fc.boolean(), { minLength: tools, maxLength: tools }), {
      minLength: tools,
      maxLength: tools,
    }),
    calls: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: tools, maxLength: tools }),
  }),
);

const edge = (g: Generator, a: number, b: number) => a < b && (g.edges[a]?.[b] ?? false);
const name = (tool: number) => `t${tool}`;

/** The transitive closure of the generating order, by brute force. */
function closure(g: Generator): boolean[][] {
  const reach = Array.from({ length: g.tools }, (_, a) =>
    Array.from({ length: g.tools }, (_, b) => edge(g, a, b)),
  );
  for (let k = 0; k < g.tools; k++)
    for (let a = 0; a < g.tools; a++)
      for (let b = 0; b < g.tools; b++) if (reach[a]?.[k] && reach[k]?.[b]) (reach[a] as boolean[])[b] = true;
  return reach;
}

/**
 * One run: the tools' calls with their happens-before given as `before(callA, callB)`. Results
 * carry a per-run value; arguments a constant, a per-run nonce and, along carrying edges, the
 * first result value of the tool before.
 */
function run(g: Generator, index: number, before: (a: number, b: number) => boolean): SuggestRun {
  const calls: ToolCall[] = [];
  for (let tool = 0; tool < g.tools; tool++)
    for (let k = 0; k < (g.calls[tool] ?? 1); k++) {
      const args: Record<string, JsonValue> = { mode: 'fixed', nonce: `n-${index}-${calls.length}` };
      for (let from = 0; from < tool; from++)
        if (edge(g, from, tool) && g.carries[from]?.[tool]) args[`in${from}`] = `r-${index}-${from}-0`;
      calls.push({
        id: `c${calls.length}`,
        tool: name(tool),
        args: { captured: true, value: args },
        result: { captured: true, value: { value: `r-${index}-${tool}-${k}` } },
        outcome: { status: 'ok' },
        convention: 'test',
      });
    }
  const graph = new CausalGraph();
  calls.forEach((call, position) => {
    graph.addNode(call.id, BigInt(position), true);
  });
  for (let a = 0; a < calls.length; a++)
    for (let b = 0; b < calls.length; b++)
      if (a !== b && before(a, b)) graph.addEdge((calls[a] as ToolCall).id, (calls[b] as ToolCall).id);
  const trajectory = new Trajectory({
    traceId: `trace-${index}`,
    calls,
    order: graph,
    root: { name: 'agent', agentName: 'generated' },
  });
  return { source: `run-${index}`, trajectory };
}

/** The run that keeps exactly the generating order: each call after every call of each tool before its tool. */
function exactRun(g: Generator, index: number): SuggestRun {
  const tools = toolsOfCalls(g);
  return run(g, index, (a, b) => edge(g, tools[a] as number, tools[b] as number));
}

/**
 * A run in turns one after the other: the tools in a topological order (`priority` breaks ties),
 * cut into turns wherever the next tool depends on one in the current turn or `cuts` says so.
 */
function turnRun(g: Generator, index: number, priority: number[], cuts: boolean[]): SuggestRun {
  const reach = closure(g);
  const order: number[] = [];
  const left = new Set(Array.from({ length: g.tools }, (_, tool) => tool));
  while (left.size > 0) {
    const ready = [...left].filter((tool) => ![...left].some((other) => reach[other]?.[tool]));
    ready.sort((a, b) => (priority[a] ?? 0) - (priority[b] ?? 0) || a - b);
    const next = ready[0] as number;
    order.push(next);
    left.delete(next);
  }
  const turnOf: number[] = [];
  let turn = 0;
  let current: number[] = [];
  order.forEach((tool, position) => {
    if (current.some((other) => reach[other]?.[tool]) || (cuts[position] ?? false)) {
      turn++;
      current = [];
    }
    current.push(tool);
    turnOf[tool] = turn;
  });
  const tools = toolsOfCalls(g);
  return run(
    g,
    index,
    (a, b) => (turnOf[tools[a] as number] as number) < (turnOf[tools[b] as number] as number),
  );
}

function toolsOfCalls(g: Generator): number[] {
  return Array.from({ length: g.tools }, (_, tool) => Array<number>(g.calls[tool] ?? 1).fill(tool)).flat();
}

const runs = generator.chain((g) =>
  fc.record({
    g: fc.constant(g),
    shapes: fc.array(
      fc.record({
        priority: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: g.tools, maxLength: g.tools }),
        cuts: fc.array(fc.boolean(), { minLength: g.tools, maxLength: g.tools }),
      }),
      { maxLength: 3 },
    ),
  }),
);

describe('toolpath suggest on runs of a random generating order', () => {
  it('suggests only rules that hold on every run, order pairs the generating order implies, no per-run id', () => {
    fc.assert(
      fc.property(runs, ({ g, shapes }) => {
        const good = [
          exactRun(g, 0),
          ...shapes.map((shape, index) => turnRun(g, index + 1, shape.priority, shape.cuts)),
        ];
        const [agent] = suggestScenarios(good).agents;
        expect(agent).toBeDefined();
        const rules = agent?.rules.map(({ rule }) => rule) ?? [];
        const scenario = scenarioOf({ key: 'generated', appliesTo: { agent: ['generated'] } }, rules);
        for (const { trajectory } of good) {
          const failing = evaluate(trajectory, scenario).assertions.filter((a) => a.status !== 'pass');
          expect(failing).toEqual([]);
        }
        const reach = closure(g);
        for (const rule of rules) {
          if (rule.kind === 'order.before')
            expect(
              reach[Number(rule.before.slice(1))]?.[Number(rule.after.slice(1))],
              JSON.stringify(rule),
            ).toBe(true);
          if (rule.kind === 'arguments' && good.length > 1) expect(rule.key).not.toBe('nonce');
        }
        // Every carried value along a generating edge is suggested as grounding (it held everywhere).
        for (let from = 0; from < g.tools; from++)
          for (let to = 0; to < g.tools; to++)
            if (edge(g, from, to) && g.carries[from]?.[to])
              expect(
                rules.some(
                  (rule) =>
                    rule.kind === 'grounding' &&
                    rule.tool === name(to) &&
                    rule.path === `in${from}` &&
                    rule.from.tool === name(from),
                ),
              ).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

describe('reduceBefore', () => {
  it('keeps exactly the pairs no third tool lies between (brute-force Hasse diagram)', () => {
    fc.assert(
      fc.property(generator, (g) => {
        const reach = closure(g);
        const pairs: Supported<{ kind: 'order.before'; before: string; after: string }>[] = [];
        for (let a = 0; a < g.tools; a++)
          for (let b = 0; b < g.tools; b++)
            if (reach[a]?.[b])
              pairs.push({ rule: { kind: 'order.before', before: name(a), after: name(b) }, support: 1 });
        const kept = new Set(reduceBefore(pairs).map(({ rule }) => `${rule.before}>${rule.after}`));
        for (let a = 0; a < g.tools; a++)
          for (let b = 0; b < g.tools; b++) {
            if (!reach[a]?.[b]) continue;
            const between = Array.from({ length: g.tools }, (_, m) => m).some(
              (m) => reach[a]?.[m] && reach[m]?.[b],
            );
            expect(kept.has(`${name(a)}>${name(b)}`)).toBe(!between);
          }
      }),
      { numRuns: 200 },
    );
  });
});
