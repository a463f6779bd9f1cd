/**
 * The node a causal graph gave a call object, carried on the object itself: a happens-before
 * question about two calls then needs no lookup of their ids, two hash lookups per question in a
 * table that no longer fits in cache on long trajectories. Carried as private fields, stamped
 * onto the normalizer's call objects (a base constructor that returns the object it is given
 * lets a subclass add its private fields to that object): invisible to equality, JSON, spreading
 * and structured cloning. A call object from anywhere else (a literal, a copy) has none and is
 * looked up by id, as is one whose stamp another graph overwrote.
 */

/** Returns the object it is given, for {@link NodeStamp} to add its fields to. */
class Given {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: how private fields are added to an object made elsewhere
    return target;
  }
}

class NodeStamp extends Given {
  #graph: object | undefined = undefined;
  #node = -1;

  static stamp(call: object, graph: object, node: number): void {
    if (!(#graph in call)) new NodeStamp(call);
    const stamped = call as NodeStamp;
    stamped.#graph = graph;
    stamped.#node = node;
  }

  static nodeIn(graph: object, call: object): number {
    return #graph in call && (call as NodeStamp).#graph === graph ? (call as NodeStamp).#node : -1;
  }
}

/** Records on `call` that it is node `node` of `graph` (replacing what another graph recorded). */
export function stampNode(call: object, graph: object, node: number): void {
  NodeStamp.stamp(call, graph, node);
}

/** The node `graph` stamped on `call`, or -1. */
export function stampedNode(graph: object, call: object): number {
  return NodeStamp.nodeIn(graph, call);
}
