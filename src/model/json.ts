/** A value that survives JSON: what arguments and results are once parsed. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * JSON with object keys sorted at every depth: equal values give equal strings whatever the
 * key order, so arguments can be compared and hashed. The text JSON.stringify writes for a copy
 * with sorted keys, written in one pass without the copy (repeated-call checks serialize the
 * arguments of every call, and the copy was most of their cost).
 */
export function canonicalJson(value: JsonValue): string {
  // Scalars, and whatever is not JSON (undefined, a function), read as JSON.stringify reads them.
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return containerText(value);
}

function containerText(value: JsonValue[] | { [key: string]: JsonValue }): string {
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) text += ',';
      // JSON.stringify writes what has no JSON form as null inside an array.
      text += memberText(value[index] as JsonValue) ?? 'null';
    }
    return `${text}]`;
  }
  const keys = sortedKeys(value);
  let text = '{';
  let first = true;
  for (const key of keys) {
    const member = memberText(value[key] as JsonValue);
    // ... and leaves such a member out of an object.
    if (member === undefined) continue;
    text += first ? `${JSON.stringify(key)}:${member}` : `,${JSON.stringify(key)}:${member}`;
    first = false;
  }
  return `${text}}`;
}

/**
 * The keys in the order JSON.stringify writes a copy made with sorted keys: array-index keys
 * (`0`, `10`) come first in numeric order in any object, whatever the order they were added in,
 * then the other keys sorted. `Object.keys` already lists the array-index keys first, in order.
 */
function sortedKeys(value: { [key: string]: JsonValue }): string[] {
  const keys = Object.keys(value);
  let indexes = 0;
  while (indexes < keys.length && isArrayIndex(keys[indexes] as string)) indexes++;
  if (indexes === 0) return keys.sort();
  if (indexes === keys.length) return keys;
  return [...keys.slice(0, indexes), ...keys.slice(indexes).sort()];
}

const MAX_ARRAY_INDEX = 4_294_967_294;

/** A canonical decimal integer below 2^32 - 1: what objects keep as an element, ahead of other keys. */
function isArrayIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  if (!(first >= 48 && first <= 57)) return false;
  return /^(0|[1-9]\d*)$/.test(key) && Number(key) <= MAX_ARRAY_INDEX;
}

/** The JSON of a member, or undefined when JSON.stringify would leave it out (undefined, a function, a symbol). */
function memberText(value: JsonValue): string | undefined {
  if (value !== null && typeof value === 'object') return containerText(value);
  return JSON.stringify(value) as string | undefined;
}
