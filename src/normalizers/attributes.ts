/** Reading typed values out of span attributes, shared by every convention. */
import type { JsonValue } from '../model/json.js';
import { nestedDeeperThan, TOO_DEEP_TEXT } from '../model/json-depth.js';
import type { Attributes, AttributeValue } from '../model/span-record.js';
import type { Captured } from '../model/trajectory.js';

/** The attribute as a non-empty trimmed string, or undefined. Ids in the wild carry stray spaces. */
export function stringAttribute(attributes: Attributes, key: string): string | undefined {
  const value = attributes[key];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/**
 * Arguments and results: JSON strings on every JS producer seen, structured values on some.
 * Absent means not captured (OTel makes them opt-in); a string that is not JSON is kept as
 * that string with `parseError` set, so a rule can say why it could not compare.
 */
export function jsonAttribute(attributes: Attributes, key: string): Captured<JsonValue> {
  if (!Object.hasOwn(attributes, key)) return { captured: false };
  return capturedJson(attributes[key] as AttributeValue);
}

/** A recorded value as JSON: strings are parsed, a string that is not JSON is kept with `parseError`. */
export function capturedJson(value: AttributeValue | JsonValue): Captured<JsonValue> {
  if (typeof value !== 'string') return { captured: true, value: toJson(value) };
  try {
    return { captured: true, value: JSON.parse(value) as JsonValue };
  } catch (error) {
    return { captured: true, value, parseError: jsonErrorWithoutInput((error as Error).message) };
  }
}

/** A recorded value as JSON, undefined for a string that is not JSON (no {@link Captured} made to be read once). */
export function parsedJson(value: AttributeValue): JsonValue | undefined {
  if (typeof value !== 'string') return toJson(value);
  try {
    return JSON.parse(value) as JsonValue;
  } catch {
    return undefined;
  }
}

/**
 * V8 quotes the start of the bad input in its message (`Unexpected token 'c', "card=41111"... is
 * not valid JSON`): that is raw argument data, which must not reach a finding. Keep the rest.
 */
export function jsonErrorWithoutInput(message: string): string {
  return message.replace(/"(?:[^"\\]|\\.)*"(?:\.\.\.)?/g, '…').replace(/'[^']{1,4}'/g, '…');
}

/**
 * Attribute values as JSON: bytes become base64, everything else is already JSON-shaped. One
 * nested deeper than the decoders allow (a SpanRecord made by hand) is {@link TOO_DEEP_TEXT}.
 */
export function toJson(value: AttributeValue): JsonValue {
  if (value !== null && typeof value === 'object' && nestedDeeperThan(value)) return TOO_DEEP_TEXT;
  return convert(value);
}

function convert(value: AttributeValue): JsonValue {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(convert);
  if (value !== null && typeof value === 'object') {
    const out: { [key: string]: JsonValue } = {};
    // defineProperty: a `__proto__` key stays an own key instead of setting the prototype.
    for (const [key, inner] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: convert(inner),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
