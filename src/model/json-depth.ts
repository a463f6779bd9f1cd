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
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return false;
  let level: object[] = [value];
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > max) return true;
    const next: object[] = [];
    for (let index = 0; index < level.length; index++) {
      const container = level[index] as object;
      if (Array.isArray(container)) {
        for (let at = 0; at < container.length; at++) addContainer(next, container[at]);
        continue;
      }
      // `for...in` over own keys: what Object.keys lists, without allocating the list.
      for (const key in container) {
        if (Object.hasOwn(container, key)) addContainer(next, (container as Record<string, unknown>)[key]);
      }
    }
    level = next;
  }
  return false;
}

function addContainer(into: object[], value: unknown): void {
  if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value)) into.push(value);
}
