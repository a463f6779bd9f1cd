/**
 * Happens-before on the causal graph is the same as it was with one bitset per node (the old
 * implementation, kept in test/helpers/bitset-causal-graph.ts as the oracle), on random DAGs of
 * every shape agents make: long chains of turns, wide parallel groups, sub-agents nested in
 * calls, turnless calls ordered by the clock, traces joined into a conversation, and any DAG at
 * all (cycles included), through the interval lists and through their fallback.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CausalGraph } from '../../src/model/causal-order.js';
import { BitsetCausalGraph } from '../helpers/bitset-causal-graph.js';

/** A graph as the calls that build it: nodes in the order added, edges between their positions. */
interface Recipe {
  nodes: { key: string; time: bigint; call: boolean; labelled: boolean }[];
  edges: [number, number][];
}

/**
 * Builds recipes from a tape of random numbers (what fast-check shrinks), the way the normalizer
 * builds a trace's graph: run start and end nodes, turns, calls, consumption and nesting edges,
 * time points for what no turn orders.
 */
class RecipeBuilder {
  readonly recipe: Recipe = { nodes: [], edges: [] };
  #next = 0;

  constructor(private readonly tape: readonly number[]) {}

  /** The next number on the tape, below `below`. */
  pick(below: number): number {
    const value = this.tape.length === 0 ? 0 : (this.tape[this.#next++ % this.tape.length] as number);
    return below <= 1 ? 0 : value % below;
  }

  node(time: number, call: boolean, labelled = !call): number {
    const at = this.recipe.nodes.length;
    this.recipe.nodes.push({ key: `${call ? 'c' : 'n'}${at}`, time: BigInt(time), call, labelled });
    return at;
  }

  edge(from: number, to: number): void {
    this.recipe.edges.push([from, to]);
  }

  /**
   * One agent run from `time`: `turns` turns in a chain, each issuing up to `width` calls whose
   * results a later turn consumes (or none: a call that never reported back); with `depth` left,
   * some calls start a sub-agent run between their issuing turn and their consumer.
   */
  run(
    time: number,
    turns: number,
    width: number,
    depth: number,
  ): { start: number; end: number; until: number } {
    const start = this.node(time, false);
    const turnNodes: number[] = [];
    let t = time;
    for (let k = 0; k < turns; k++) {
      const turn = this.node(t, false);
      turnNodes.push(turn);
      this.edge(start, turn);
      if (k > 0) this.edge(turnNodes[k - 1] as number, turn);
      t += 10 + width;
    }
    const pending: { call: number; turn: number; lag: number; sub?: { start: number; end: number } }[] = [];
    turnNodes.forEach((turn, k) => {
      const count = 1 + this.pick(width);
      for (let i = 0; i < count; i++) {
        const call = this.node(time + k * (10 + width) + 1 + i, true);
        this.edge(start, call);
        this.edge(turn, call);
        const lag = [1, 1, 1, 2, 0][this.pick(5)] as number;
        const entry: (typeof pending)[number] = { call, turn, lag };
        // Nodes kept to a few hundred: every pair is asked of both graphs.
        if (depth > 0 && this.pick(4) === 0 && this.recipe.nodes.length < 400) {
          const sub = this.run(time + k * (10 + width) + 2, 1 + this.pick(3), 1 + this.pick(3), depth - 1);
          this.edge(turn, sub.start);
          entry.sub = sub;
        }
        pending.push(entry);
      }
    });
    const end = this.node(t, false);
    for (const turn of turnNodes) this.edge(turn, end);
    for (const { call, turn, lag, sub } of pending) {
      this.edge(call, end);
      const consumer = lag === 0 ? undefined : turnNodes[turnNodes.indexOf(turn) + lag];
      if (consumer === undefined) continue;
      this.edge(call, consumer);
      if (sub) this.edge(sub.end, consumer);
    }
    return { start, end, until: t };
  }

  /**
   * Items on one clock with no turns to order them (turnless calls, handoffs, traces of a
   * conversation): `a -> b` when a ended before b started, through time points chained in order.
   */
  timeChain(items: readonly { start: number; end: number; first: number; last: number }[]): void {
    const points = [...new Set(items.map((item) => item.end))].sort((a, b) => a - b);
    const pointNodes = points.map((time) => this.node(time, false));
    pointNodes.forEach((point, i) => {
      if (i > 0) this.edge(pointNodes[i - 1] as number, point);
    });
    for (const item of items) {
      this.edge(item.last, pointNodes[points.indexOf(item.end)] as number);
      let at = -1;
      points.forEach((time, i) => {
        if (time <= item.start) at = i;
      });
      if (at !== -1) this.edge(pointNodes[at] as number, item.first);
    }
  }
}

const tape = fc.array(fc.nat({ max: 1_000 }), { minLength: 1, maxLength: 400 });

/** Every shape, as a recipe. */
const shapes = {
  'a long chain of turns': fc
    .tuple(fc.integer({ min: 12, max: 120 }), tape)
    .map(([turns, numbers]) => chainRecipe(numbers, turns, 3, 0)),
  'wide parallel groups': fc
    .tuple(fc.integer({ min: 2, max: 8 }), fc.integer({ min: 20, max: 80 }), tape)
    .map(([turns, width, numbers]) => chainRecipe(numbers, turns, width, 0)),
  'sub-agents nested in calls': fc
    .tuple(fc.integer({ min: 6, max: 30 }), fc.integer({ min: 1, max: 4 }), tape)
    .map(([turns, depth, numbers]) => chainRecipe(numbers, turns, 4, depth)),
  'turnless calls on one clock': fc
    .tuple(fc.integer({ min: 33, max: 150 }), tape)
    .map(([calls, numbers]) => turnlessRecipe(numbers, calls)),
  'traces joined into a conversation': fc
    .tuple(fc.integer({ min: 2, max: 8 }), tape)
    .map(([traces, numbers]) => conversationRecipe(numbers, traces)),
  'any DAG, cycles included': fc
    .tuple(fc.integer({ min: 33, max: 120 }), fc.integer({ min: 1, max: 6 }), tape)
    .map(([nodes, degree, numbers]) => anyGraphRecipe(numbers, nodes, degree)),
};

function chainRecipe(numbers: readonly number[], turns: number, width: number, depth: number): Recipe {
  const builder = new RecipeBuilder(numbers);
  builder.run(0, turns, width, depth);
  return shuffledEdges(builder, numbers);
}

function turnlessRecipe(numbers: readonly number[], calls: number): Recipe {
  const builder = new RecipeBuilder(numbers);
  const items = Array.from({ length: calls }, () => {
    const start = builder.pick(500);
    const call = builder.node(start, true);
    return { start, end: start + 1 + builder.pick(60), first: call, last: call };
  });
  builder.timeChain(items);
  return shuffledEdges(builder, numbers);
}

function conversationRecipe(numbers: readonly number[], traces: number): Recipe {
  const builder = new RecipeBuilder(numbers);
  const items: { start: number; end: number; first: number; last: number }[] = [];
  let time = 0;
  for (let i = 0; i < traces; i++) {
    // Mostly one after another; now and then a trace that starts before the last one ended.
    const start = builder.pick(3) === 0 ? Math.max(0, time - builder.pick(200)) : time + builder.pick(20);
    const run = builder.run(start, 2 + builder.pick(10), 1 + builder.pick(4), builder.pick(2));
    items.push({ start, end: run.until, first: run.start, last: run.end });
    time = Math.max(time, run.until);
  }
  builder.timeChain(items);
  return shuffledEdges(builder, numbers);
}

function anyGraphRecipe(numbers: readonly number[], nodes: number, degree: number): Recipe {
  const builder = new RecipeBuilder(numbers);
  for (let i = 0; i < nodes; i++)
    builder.node(builder.pick(nodes), builder.pick(3) !== 0, builder.pick(2) === 0);
  // Mostly forward in time, now and then backward (a cycle to break) or twice the same edge.
  for (let from = 0; from < nodes; from++) {
    for (let k = builder.pick(degree + 1); k > 0; k--) builder.edge(from, builder.pick(nodes));
  }
  return builder.recipe;
}

/** The same edges in another order: the graph must not depend on the order they came in. */
function shuffledEdges(builder: RecipeBuilder, numbers: readonly number[]): Recipe {
  const { edges } = builder.recipe;
  const keyed = edges.map((edge, i) => ({ edge, key: numbers[i % numbers.length] as number }));
  keyed.sort((a, b) => a.key - b.key);
  return { nodes: builder.recipe.nodes, edges: keyed.map(({ edge }) => edge) };
}

/** Builds a graph by the recipe, through addNode, addLabelledNode and addEdgeBetween as the normalizer does. */
function build<G extends CausalGraph | BitsetCausalGraph>(graph: G, recipe: Recipe): G {
  nodeNumbers(graph, recipe);
  return graph;
}

/**
 * Adds the recipe's nodes and edges to the graph; each node's number, by its place in the recipe.
 * The recipes' keys are all different: some go in unindexed, as the normalizer adds calls.
 */
function nodeNumbers(graph: CausalGraph | BitsetCausalGraph, recipe: Recipe): number[] {
  const numbers = recipe.nodes.map((node, i) => {
    if (node.labelled) return graph.addLabelledNode(node.key, node.time);
    if (graph instanceof CausalGraph && i % 3 === 0)
      return graph.addUnindexedNode(node.key, node.time, node.call);
    return graph.addNode(node.key, node.time, node.call);
  });
  for (const [from, to] of recipe.edges) graph.addEdgeBetween(numbers[from] as number, numbers[to] as number);
  return numbers;
}

/** Every answer both graphs give: happens-before and order of every pair of calls, afterAny of some sets, dropped edges. */
function expectSameAnswers(
  recipe: Recipe,
  intervalBudget: number | undefined,
  numbers: readonly number[],
): void {
  const fast = new CausalGraph(undefined, intervalBudget === undefined ? {} : { intervalBudget });
  const fastNumbers = nodeNumbers(fast, recipe);
  const oracle = build(new BitsetCausalGraph(), recipe);
  const keys = recipe.nodes.filter((node) => !node.labelled).map((node) => node.key);
  const calls = recipe.nodes.filter((node) => node.call && !node.labelled).map((node) => node.key);
  // Call objects as the normalizer makes them, every other one numbered by the graph (the rest
  // are looked up by id).
  const objects = new Map<string, { id: string }>();
  recipe.nodes.forEach((node, i) => {
    if (node.labelled) return;
    const object = { id: node.key };
    objects.set(node.key, i % 2 === 0 ? fast.numberCall(object, fastNumbers[i] as number) : object);
  });
  const objectOf = (key: string) => objects.get(key) ?? { id: key };
  expect(fast.droppedEdges()).toEqual(oracle.droppedEdges());
  for (const a of keys) {
    for (const b of calls) {
      const expected = oracle.happensBefore(a, b);
      if (
        fast.happensBefore(a, b) !== expected ||
        fast.happensBeforeCall(objectOf(a), objectOf(b)) !== expected
      )
        throw new Error(`happensBefore(${a}, ${b}) differs from the oracle's ${expected}`);
    }
  }
  for (const a of calls) {
    for (const b of calls) {
      if (Math.sign(fast.compare(a, b)) !== Math.sign(oracle.compare(a, b)))
        throw new Error(`compare(${a}, ${b}) differs from the oracle`);
    }
  }
  // Sets of every size: one node, a few (a sorted union), most (one flag per call), all of them.
  const sets = [0, 1, 2, 3].map((set) =>
    keys.filter((_, i) => (numbers[(i + set * 7) % numbers.length] as number) % (2 + set * 3) === 0),
  );
  sets.push([keys[(numbers[0] as number) % keys.length] as string], [...keys, 'not a node']);
  for (const ids of sets) {
    const fastAfter = fast.afterAny(ids);
    const fastAfterCall = fast.afterAnyCall(ids.map(objectOf));
    const oracleAfter = oracle.afterAny(ids);
    for (const b of [...keys, 'not a node']) {
      const expected = oracleAfter(b);
      if (fastAfter(b) !== expected || fastAfterCall(objectOf(b)) !== expected)
        throw new Error(`afterAny([${ids}])(${b}) differs from the oracle`);
    }
  }
}

describe('a call object numbered by a graph', () => {
  it('looks like any other object: equality, JSON, keys and spreading do not see its node', () => {
    const graph = new CausalGraph();
    const node = graph.addNode('c1', 0n, true);
    const call = graph.numberCall({ id: 'c1', tool: 'search' }, node);
    expect(call).toStrictEqual({ id: 'c1', tool: 'search' });
    expect(JSON.stringify(call)).toBe('{"id":"c1","tool":"search"}');
    expect(Reflect.ownKeys(call)).toEqual(['id', 'tool']);
    expect(structuredClone(call)).toStrictEqual({ id: 'c1', tool: 'search' });
  });

  it('is looked up by id in another graph, also once that graph numbered it too', () => {
    const first = new CausalGraph();
    const second = new CausalGraph();
    const a = { id: 'a' };
    const b = { id: 'b' };
    for (const graph of [first, second]) {
      graph.addNode('b', 1n, true);
      graph.addNode('a', 0n, true);
    }
    first.addEdge('a', 'b');
    second.addEdge('b', 'a');
    // Node numbers of `first`: b is 0, a is 1. Stamped with them, then with `second`'s.
    first.numberCall(a, 1);
    first.numberCall(b, 0);
    expect(second.happensBeforeCall(b, a)).toBe(true);
    second.numberCall(a, 1);
    second.numberCall(b, 0);
    expect([first.happensBeforeCall(a, b), first.happensBeforeCall(b, a)]).toEqual([true, false]);
    expect([second.happensBeforeCall(a, b), second.happensBeforeCall(b, a)]).toEqual([false, true]);
  });
});

describe('happens-before is the same as with one bitset per node', () => {
  for (const [shape, recipes] of Object.entries(shapes)) {
    it(`on ${shape}`, () => {
      fc.assert(
        fc.property(recipes, tape, (recipe, numbers) => expectSameAnswers(recipe, undefined, numbers)),
        { numRuns: 60 },
      );
    });
  }

  it('when the interval lists outgrow their budget and fall back to bitsets', () => {
    const any = fc.oneof(...Object.values(shapes));
    fc.assert(
      fc.property(any, fc.constantFrom(0, 10, 100), tape, (recipe, budget, numbers) =>
        expectSameAnswers(recipe, budget, numbers),
      ),
      { numRuns: 60 },
    );
  });

  it('with at most 32 calls (one bit mask per node)', () => {
    const small = fc
      .tuple(fc.integer({ min: 1, max: 8 }), tape)
      .map(([turns, numbers]) => chainRecipe(numbers, turns, 3, 1));
    fc.assert(
      fc.property(small, tape, (recipe, numbers) => expectSameAnswers(recipe, undefined, numbers)),
      { numRuns: 100 },
    );
  });
});
