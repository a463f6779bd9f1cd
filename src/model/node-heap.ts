/** The nodes of a causal graph that are ready to be listed, earliest first. */

/**
 * Whether node x comes before node y among ready nodes: the earlier time, then the lower number.
 * A total order, so the order nodes come out in does not depend on the order they went in.
 */
export function earlier(time: readonly bigint[], x: number, y: number): boolean {
  const tx = time[x] ?? 0n;
  const ty = time[y] ?? 0n;
  return tx === ty ? x < y : tx < ty;
}

/**
 * A binary heap of node numbers, the {@link earlier} one first. Its array is made for `capacity`
 * nodes (a topological sort holds each node at most once); more are taken all the same.
 */
export class NodeHeap {
  readonly #items: number[];
  #size = 0;

  constructor(
    private readonly time: readonly bigint[],
    capacity: number,
  ) {
    this.#items = new Array(capacity);
  }

  push(node: number): void {
    const items = this.#items;
    let i = this.#size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = items[parent] as number;
      if (!earlier(this.time, node, above)) break;
      items[i] = above;
      i = parent;
    }
    items[i] = node;
  }

  pop(): number | undefined {
    if (this.#size === 0) return undefined;
    const items = this.#items;
    const top = items[0] as number;
    const size = --this.#size;
    const last = items[size] as number;
    // The last node goes down from the root to where it is no later than its children.
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const r = l + 1;
      const child = r < size && earlier(this.time, items[r] as number, items[l] as number) ? r : l;
      if (!earlier(this.time, items[child] as number, last)) break;
      items[i] = items[child] as number;
      i = child;
    }
    if (size > 0) items[i] = last;
    return top;
  }
}
