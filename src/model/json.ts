/** A value that survives JSON: what arguments and results are once parsed. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * JSON with object keys sorted at every depth: equal values give equal strings whatever the
 * key order, so arguments can be compared and hashed.
 */
export function canonicalJson(value: JsonValue): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isJsonObject(value)) return value;
  const sorted: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value).sort()) {
    // defineProperty keeps `__proto__` an ordinary key instead of setting the prototype.
    Object.defineProperty(sorted, key, {
      value: sortKeys(value[key] as JsonValue),
      enumerable: true,
      writable: true,
    });
  }
  return sorted;
}
