/** JSON generators and helpers shared by the matching properties. */
import fc from 'fast-check';
import type { JsonValue } from '../../src/model/json.js';
import type { JsonObject } from '../../src/scenario/assertions.js';

/** Rebuilds an object with its keys in reverse order (and nested objects too). */
export function reorder(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(reorder);
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(out, key, {
      value: reorder(value[key] as JsonValue),
      enumerable: true,
      writable: true,
    });
  }
  return out;
}

/** JSON values whose objects may carry `__proto__` and `constructor` as ordinary keys, as JSON.parse makes them. */
export const jsonValue: fc.Arbitrary<JsonValue> = fc
  .jsonValue({ maxDepth: 3 })
  .map((value) => JSON.parse(JSON.stringify(value)) as JsonValue);

/** JSON objects over a few keys, `__proto__` and `constructor` among them. */
export const jsonObject: fc.Arbitrary<JsonObject> = fc
  .dictionary(fc.constantFrom('a', 'b', 'c', '__proto__', 'constructor', 'x y'), jsonValue, { maxKeys: 5 })
  .map((value) => JSON.parse(JSON.stringify(value)) as JsonObject);
