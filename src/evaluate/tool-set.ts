/**
 * A scenario's tool lists as sets, made once per list rather than once per evaluation: a
 * scenario is parsed once and evaluated against every trace. A parsed scenario is a plain object
 * a caller could still change, so a cached set is used only while its list holds the same tools.
 */

const sets = new WeakMap<readonly string[], { tools: string[]; set: ReadonlySet<string> }>();

/** The tools of `list` as a set, cached by the list. */
export function toolSetOf(list: readonly string[]): ReadonlySet<string> {
  const cached = sets.get(list);
  if (cached && sameTools(cached.tools, list)) return cached.set;
  const set = new Set(list);
  sets.set(list, { tools: [...list], set });
  return set;
}

function sameTools(known: readonly string[], list: readonly string[]): boolean {
  if (known.length !== list.length) return false;
  for (let i = 0; i < list.length; i++) if (known[i] !== list[i]) return false;
  return true;
}
