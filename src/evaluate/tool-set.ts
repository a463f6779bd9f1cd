/**
 * A scenario's tool lists as sets, made once per list rather than once per evaluation: a
 * scenario is parsed once and evaluated against every trace, and its lists never change.
 */

const sets = new WeakMap<readonly string[], ReadonlySet<string>>();

/** The tools of `list` as a set, cached by the list. */
export function toolSetOf(list: readonly string[]): ReadonlySet<string> {
  let set = sets.get(list);
  if (!set) {
    set = new Set(list);
    sets.set(list, set);
  }
  return set;
}
