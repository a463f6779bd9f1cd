/**
 * What a buffered span costs the adapter's heap, estimated, for `limits.maxBufferedBytes`. A
 * count of spans does not bound memory once spans carry chat histories: one span can hold a
 * hundred kilobytes. The estimate is on the safe side: two bytes per character (V8 keeps text
 * with any character past U+00FF at two bytes each), and a fixed cost per record and value. A
 * value noted to extend an earlier one (model/text-extensions.ts) costs only its new part: the
 * rest is the earlier value's text, already counted.
 */
import type { Attributes, AttributeValue, SpanRecord } from '../model/span-record.js';
import { MIN_EXTENDED_LENGTH, noteOf } from '../model/text-extensions.js';

/**
 * A span record besides its values: ids, times, status, the objects holding them. Set so that the
 * estimate is above what bench/collector measures per buffered span (1.4-2.1 KB against 2.2 KB).
 */
const SPAN_BYTES = 800;
/** An event or link record besides its values. */
const ENTRY_BYTES = 80;
/** An attribute besides its value's text: its slot, a number, a boolean. */
const VALUE_BYTES = 16;
const BYTES_PER_CHAR = 2;

/** The heap a buffered span holds of its own, estimated (see the module comment). */
export function heldBytes(span: SpanRecord): number {
  let bytes = SPAN_BYTES + BYTES_PER_CHAR * span.name.length + attributesBytes(span.attributes);
  for (const event of span.events)
    bytes += ENTRY_BYTES + BYTES_PER_CHAR * event.name.length + attributesBytes(event.attributes);
  for (const link of span.links) bytes += ENTRY_BYTES + attributesBytes(link.attributes);
  return bytes;
}

function attributesBytes(attributes: Attributes): number {
  let bytes = 0;
  for (const key of Object.keys(attributes)) {
    const value = attributes[key] as AttributeValue;
    if (typeof value === 'string' && value.length >= MIN_EXTENDED_LENGTH) {
      const added = noteOf(attributes, key)?.extension?.added;
      bytes += VALUE_BYTES + BYTES_PER_CHAR * (added ?? value).length;
    } else bytes += valueBytes(value);
  }
  return bytes;
}

function valueBytes(value: AttributeValue): number {
  if (typeof value === 'string') return VALUE_BYTES + BYTES_PER_CHAR * value.length;
  if (value instanceof Uint8Array) return VALUE_BYTES + value.length;
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + valueBytes(item), VALUE_BYTES);
  if (value !== null && typeof value === 'object') {
    let bytes = VALUE_BYTES;
    for (const [key, inner] of Object.entries(value))
      bytes += BYTES_PER_CHAR * key.length + valueBytes(inner);
    return bytes;
  }
  return VALUE_BYTES;
}
