/**
 * A conversation's happens-before is the one the time chain of docs/causal-order.md gives: the
 * oracle is one CausalGraph over every trace's calls, with a start and an end node per trace and
 * time points chained between them, built the way the document says. Checked on random traces
 * (random DAGs inside, random times, overlapping or not, ms or ns clocks, open roots, call ids
 * reused across traces), for every pair and for "after any of these".
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CausalGraph } from '../../src/model/causal-order.js';
import { joinConversation } from '../../src/model/conversation.js';
import { type ToolCall, Trajectory } from '../../src/model/trajectory.js';

interface TraceRecipe {
  calls: number;
  edges: [number, number][];
  start: number;
  length: number;
  open: boolean;
}

const MS = 1_000_000n;

const traceArb: fc.Arbitrary<TraceRecipe> = fc
  .record({
    calls: fc.integer({ min: 0, max: 5 }),
    edges: fc.array(fc.tuple(fc.nat(4), fc.nat(4)), { maxLength: 6 }),
    start: fc.integer({ min: 0, max: 40 }),
    length: fc.integer({ min: 0, max: 20 }),
    open: fc.boolean(),
  })
  .map((recipe) => ({
    ...recipe,
    // Forward edges between existing calls: each trace's graph is a DAG.
    edges: recipe.edges
      .map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as [number, number])
      .filter(([a, b]) => a !== b && b < recipe.calls),
  }));

function call(id: string): ToolCall {
  return {
    id,
    tool: `tool_${id}`,
    args: { captured: false },
    result: { captured: false },
    outcome: { status: 'ok' },
    convention: 'test',
  };
}

/** The times of a recipe on the chosen clock: whole ms, or ms plus some nanoseconds. */
function times(recipe: TraceRecipe, ns: boolean, index: number): { start: bigint; end: bigint } {
  const start = BigInt(recipe.start) * MS + (ns ? BigInt(index * 7 + 3) : 0n);
  // With an ns clock, an end may fall inside the millisecond a later trace starts in.
  return { start, end: start + BigInt(recipe.length) * (ns ? 250_000n : MS) + (ns ? 1n : 0n) };
}

function trajectoryOf(recipe: TraceRecipe, index: number, ns: boolean): Trajectory {
  const graph = new CausalGraph();
  const calls = Array.from({ length: recipe.calls }, (_, k) => call(`c${k}`));
  for (const [k, c] of calls.entries()) graph.addNode(c.id, BigInt(k), true);
  for (const [a, b] of recipe.edges) graph.addEdge(`c${a}`, `c${b}`);
  const { start, end } = times(recipe, ns, index);
  return new Trajectory({
    traceId: `trace${index}`,
    calls,
    order: graph,
    root: { name: 'root', startTimeUnixNano: start, ...(!recipe.open && { endTimeUnixNano: end }) },
  });
}

/** The document's construction: one graph, a start and end node per trace, a time chain between. */
function oracleOf(recipes: readonly TraceRecipe[], ns: boolean): CausalGraph {
  const graph = new CausalGraph();
  const resolution = ns || recipes.length < 2 ? 1n : MS;
  const ends = new Map<bigint, number[]>();
  const starts: { node: number; time: bigint }[] = [];
  for (const [t, recipe] of recipes.entries()) {
    const { start, end } = times(recipe, ns, t);
    const first = graph.addLabelledNode(`start${t}`, start);
    const last = graph.addLabelledNode(`end${t}`, end);
    const nodes = Array.from({ length: recipe.calls }, (_, k) => graph.addNode(`${t}:c${k}`, start, true));
    for (const node of nodes) {
      graph.addEdgeBetween(first, node);
      graph.addEdgeBetween(node, last);
    }
    for (const [a, b] of recipe.edges) graph.addEdgeBetween(nodes[a] as number, nodes[b] as number);
    starts.push({ node: first, time: start });
    if (recipe.open) continue;
    const rounded = end - (end % resolution);
    const effective = rounded > start ? rounded : start + 1n;
    ends.set(effective, [...(ends.get(effective) ?? []), last]);
  }
  const points = [...ends.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const pointNodes = points.map((time) => graph.addLabelledNode(`time${time}`, time));
  points.forEach((time, i) => {
    for (const end of ends.get(time) ?? []) graph.addEdgeBetween(end, pointNodes[i] as number);
    if (i > 0) graph.addEdgeBetween(pointNodes[i - 1] as number, pointNodes[i] as number);
  });
  for (const { node, time } of starts) {
    let at = -1;
    for (let i = 0; i < points.length; i++) if ((points[i] as bigint) <= time) at = i;
    if (at !== -1) graph.addEdgeBetween(pointNodes[at] as number, node);
  }
  return graph;
}

/** The oracle's key of a joined call: its trace's position and its id in that trace. */
function oracleKey(joined: Trajectory, c: ToolCall): string {
  const trace = joined.traceIdOf(c).replace('trace', '');
  return `${trace}:${c.id.slice(c.id.indexOf('/') + 1)}`;
}

describe('joining traces into a conversation', () => {
  it('orders calls across traces as one graph with a time chain would', () => {
    fc.assert(
      fc.property(
        fc.array(traceArb, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 4 }),
        (recipes, ns, picks) => {
          const traces = recipes.map((recipe, t) => trajectoryOf(recipe, t, ns));
          const joined = joinConversation('conv', traces);
          const oracle = oracleOf(recipes, ns);
          expect(joined.calls).toHaveLength(recipes.reduce((sum, recipe) => sum + recipe.calls, 0));
          for (const a of joined.calls)
            for (const b of joined.calls)
              expect(joined.happensBefore(a, b), `${oracleKey(joined, a)} -> ${oracleKey(joined, b)}`).toBe(
                oracle.happensBefore(oracleKey(joined, a), oracleKey(joined, b)),
              );
          // The listing never puts an effect before its cause.
          joined.calls.forEach((later, j) => {
            for (const earlier of joined.calls.slice(j + 1))
              expect(joined.happensBefore(earlier, later)).toBe(false);
          });
          const chosen = picks.flatMap((pick) =>
            joined.calls.length === 0 ? [] : [joined.calls[pick % joined.calls.length] as ToolCall],
          );
          const after = joined.afterAny(chosen);
          for (const c of joined.calls) expect(after(c)).toBe(chosen.some((a) => joined.happensBefore(a, c)));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('keeps every call id apart: ids two traces share are prefixed with their trace', () => {
    const recipe: TraceRecipe = { calls: 2, edges: [[0, 1]], start: 0, length: 2, open: false };
    const later = { ...recipe, start: 10 };
    const joined = joinConversation('conv', [trajectoryOf(later, 1, false), trajectoryOf(recipe, 0, false)]);
    expect(joined.calls.map((c) => c.id)).toEqual(['trace0/c0', 'trace0/c1', 'trace1/c0', 'trace1/c1']);
    expect(joined.traceIds).toEqual(['trace0', 'trace1']);
    expect(joined.traceId).toBe('trace1');
    expect(joined.conversationId).toBe('conv');
    expect(joined.calls.map((c) => joined.traceIdOf(c))).toEqual(['trace0', 'trace0', 'trace1', 'trace1']);
    expect(joined.happensBefore(joined.calls[1] as ToolCall, joined.calls[2] as ToolCall)).toBe(true);
  });

  it('refuses to join nothing', () => {
    expect(() => joinConversation('conv', [])).toThrow('conversation conv: no traces to join');
  });
});
