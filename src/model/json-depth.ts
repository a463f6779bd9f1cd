/**
 * How deep a value toolpath reads may nest. Values enter through a few doors (JSON text the
 * normalizers parse, OTLP AnyValues the decoders read, typed-event files), and one bound at
 * those doors keeps every walker behind them (matching, canonical JSON, redaction, encoding,
 * the view) within a depth no call stack can overflow. A value past it is not guessed at: it
 * stands as {@link TOO_DEEP_TEXT}, and the rules that need it are inconclusive.
 */

/** Containers nested deeper than this are too deep to read (the OTLP decoders' bound as well). */
export const MAX_JSON_DEPTH = 64;

/**
 * What stands for a value nested deeper than {@link MAX_JSON_DEPTH}: in a call's arguments or
 * result, and as the attribute value the OTLP decoders keep for an AnyValue past the bound. Not
 * JSON, so no producer's real value reads as it.
 */
export const TOO_DEEP_TEXT = `[nested deeper than ${MAX_JSON_DEPTH} levels]`;

/**
 * Whether `value` nests arrays or objects more than `max` levels deep (`[]` is one level, `1`
 * none). Level by level, with no recursion; stops at the first level past `max`. Byte arrays
 * (attribute bytes) are leaves.
 */
export function nestedDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (!isContainer(value)) return false;
  if (max < 1) return true;
  // Arrays are made only for levels that hold containers: most arguments are one or two deep.
  let level = containersIn(value, undefined);
  for (let depth = 2; level !== undefined; depth++) {
    if (depth > max) return true;
    let next: object[] | undefined;
    for (let index = 0; index < level.length; index++) next = containersIn(level[index] as object, next);
    level = next;
  }
  return false;
}

/** The containers among `container`'s members, added to `into` (made when the first is found). */
function containersIn(container: object, into: object[] | undefined): object[] | undefined {
  let found = into;
  if (Array.isArray(container)) {
    for (let at = 0; at < container.length; at++) {
      const item: unknown = container[at];
      if (!isContainer(item)) continue;
      if (found === undefined) found = [];
      found.push(item);
    }
    return found;
  }
  // `for...in` over own keys: what Object.keys lists, without allocating the list.
  for (const key in container) {
    if (!Object.hasOwn(container, key)) continue;
    const item: unknown = (container as Record<string, unknown>)[key];
    if (!isContainer(item)) continue;
    if (found === undefined) found = [];
    found.push(item);
  }
  return found;
}

/** An array or object to look into; byte arrays (attribute bytes) are leaves. */
function isContainer(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !ArrayBuffer.isView(value);
}
