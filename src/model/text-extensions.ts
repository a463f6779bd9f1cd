/**
 * Attribute values known to extend an earlier value. A chat span's input history is the previous
 * turn's history plus what happened since. The OTLP decoders (and the worker's span pack) build
 * such a history from the earlier text and the new part alone (a pointer pair in V8, not a copy)
 * and note it here, and a reader that has read the earlier text reads only what was added.
 * Reading the whole text instead, even one character of it, would make V8 copy it into one
 * piece: the copy the decoder saved, made again. A note is a fact about the text, never a guess:
 * a reader that cannot use it reads the text itself and gets the same result.
 */
import type { Attributes } from './span-record.js';

/**
 * Stands for one long value, so that readers match texts by it and never by comparing strings:
 * V8 compares two different strings of one length character by character, and copies a joined
 * one into one piece to do it.
 */
export type TextRef = Readonly<Record<string, never>>;

/** The value is the text `earlier` stands for, without its last character, then `added` (`[a,b]`, `[a,b,c]`: `,c]`). */
export interface TextExtension {
  earlier: TextRef;
  added: string;
}

/** What is known of a long value: what stands for it, and how it extends an earlier one, if it does. */
export interface TextNote {
  ref: TextRef;
  extension?: TextExtension;
}

/** A new {@link TextRef}. */
export function newTextRef(): TextRef {
  return {};
}

/** A note as kept: for which key and which text. */
interface Entry extends TextNote {
  key: string;
  text: string;
}

/**
 * Per attributes object (a span's), the notes of its long values, gone with the span: one entry
 * (a span has one history, usually), else a list.
 */
const notes = new WeakMap<Attributes, Entry | Entry[]>();

/** Notes what is known of `text`, the value of `attributes[key]`. */
export function noteText(attributes: Attributes, key: string, text: string, note: TextNote): void {
  const entry: Entry = { key, text, ref: note.ref, extension: note.extension };
  const known = notes.get(attributes);
  if (known === undefined || (!Array.isArray(known) && known.key === key)) notes.set(attributes, entry);
  else if (!Array.isArray(known)) notes.set(attributes, [known, entry]);
  else {
    const at = known.findIndex((other) => other.key === key);
    if (at === -1) known.push(entry);
    else known[at] = entry;
  }
}

/**
 * What was noted of `attributes[key]`, if anything. Only while the value is the text noted (the
 * same string, normally, so the comparison is of two pointers): a key set again leaves no stale note.
 */
export function noteOf(attributes: Attributes, key: string): TextNote | undefined {
  const known = notes.get(attributes);
  const entry = Array.isArray(known) ? known.find((other) => other.key === key) : known;
  return entry !== undefined && entry.key === key && attributes[key] === entry.text ? entry : undefined;
}

/** A noted value: its key, its text and what is known of it. */
export interface NotedText extends TextNote {
  readonly key: string;
  readonly text: string;
}

/** The notes of `attributes`' long values that still hold (a list of its own, so noting again while going through it is safe). */
export function notesIn(attributes: Attributes): NotedText[] | undefined {
  const known = notes.get(attributes);
  if (known === undefined) return undefined;
  const list = Array.isArray(known) ? known : [known];
  return list.filter((entry) => attributes[entry.key] === entry.text);
}

/** How `attributes[key]` extends an earlier value, if that was noted. */
export function extensionOf(attributes: Attributes, key: string): TextExtension | undefined {
  return noteOf(attributes, key)?.extension;
}

/** Shorter strings are never shared: comparing them would cost more than it saves. */
export const MIN_EXTENDED_LENGTH = 1024;
/**
 * The strings remembered: one per conversation in flight (a string that extends one takes its
 * place), and the latest others.
 */
const SLOTS = 8;
/** Characters compared before the whole: the last ones of the shared part. */
const END_CHARS = 16;

/** Which earlier string a string extends: its number, and how many characters they share. */
export interface Extended {
  id: number;
  shared: number;
}

/**
 * The recent long strings of a stream (a request, a span pack), numbered from 0 in the order
 * read; which one a new string extends (starts with all of it but its last character).
 */
export class RecentStrings {
  readonly #wholes: string[] = [];
  readonly #ids: number[] = [];
  #next = 0;
  #count = 0;

  /**
   * Numbers `text` (when long) and remembers it; the earlier string it extends, if one of the
   * recent ones. Strings must be flat (as parsed or made by the app): a cons string would be
   * copied into one piece by the comparison.
   */
  extends(text: string): Extended | undefined {
    if (text.length < MIN_EXTENDED_LENGTH) return undefined;
    const id = this.#count++;
    const wholes = this.#wholes;
    for (let slot = 0; slot < wholes.length; slot++) {
      const whole = wholes[slot] as string;
      const shared = whole.length - 1;
      if (shared >= text.length || !endsAlike(whole, text, shared)) continue;
      // Substring equality: V8 compares flat strings a block at a time, startsWith a character at a time.
      if (text.substring(0, shared) !== whole.substring(0, shared)) continue;
      const extended = { id: this.#ids[slot] as number, shared };
      this.#remember(slot, text, id);
      return extended;
    }
    this.#remember(wholes.length < SLOTS ? wholes.length : this.#nextSlot(), text, id);
    return undefined;
  }

  #nextSlot(): number {
    const slot = this.#next;
    this.#next = (slot + 1) % SLOTS;
    return slot;
  }

  #remember(slot: number, whole: string, id: number): void {
    this.#wholes[slot] = whole;
    this.#ids[slot] = id;
  }
}

/**
 * Whether the last characters of the shared part agree. Conversations in flight together often
 * share a long start (their system prompt) and differ near the end, so most misses stop here.
 */
function endsAlike(earlier: string, text: string, shared: number): boolean {
  for (let i = Math.max(shared - END_CHARS, 0); i < shared; i++)
    if (earlier.charCodeAt(i) !== text.charCodeAt(i)) return false;
  return true;
}
