/**
 * Attribute values known to extend an earlier value. The protobuf decoder builds a chat history
 * that extends the previous turn's from that one's text and the new bytes alone (a pointer pair
 * in V8, not a copy); it notes so here, and a reader that has read the earlier text reads only
 * what was added. Reading the whole text instead, even one character of it, would make V8 copy
 * it into one piece: the copy the decoder saved, made again. A note is a fact about the text,
 * never a guess: a reader that cannot use it reads the text itself and gets the same result.
 */
import type { Attributes } from './span-record.js';

/** The value is `earlier` without its last character, then `added` (`[a,b]`, `[a,b,c]`: `,c]`). */
export interface TextExtension {
  earlier: string;
  added: string;
}

interface Note {
  text: string;
  extension: TextExtension;
}

/** Per attributes object (a span's), its values' notes by key; gone with the span. */
const notes = new WeakMap<Attributes, Map<string, Note>>();

/** Notes that `text`, the value of `attributes[key]`, is `extension.earlier` but its last character, then `extension.added`. */
export function noteExtension(
  attributes: Attributes,
  key: string,
  text: string,
  extension: TextExtension,
): void {
  let byKey = notes.get(attributes);
  if (byKey === undefined) {
    byKey = new Map();
    notes.set(attributes, byKey);
  }
  byKey.set(key, { text, extension });
}

/**
 * What was noted of `attributes[key]`, if anything. Only while the value is the text noted: a
 * key set again (twice in one span, or by a later change) leaves no stale note.
 */
export function extensionOf(attributes: Attributes, key: string): TextExtension | undefined {
  const note = notes.get(attributes)?.get(key);
  return note !== undefined && attributes[key] === note.text ? note.extension : undefined;
}
