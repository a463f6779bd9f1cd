/**
 * Long strings of one request that extend a string read before them share its text. A chat
 * span's input history is the previous turn's history plus what happened since, so the histories
 * of a conversation's turns are ever longer texts with a common start: decoded each on its own,
 * a request's history bytes cost UTF-8 decoding and buffer memory by the square of a
 * conversation's length. Here a string whose bytes start with an earlier string's (all but its
 * closing character) is that earlier text joined to the new bytes alone, which V8 keeps as a
 * pointer pair (a cons string): decoding and memory grow with the new bytes only. The text is
 * exactly what decoding all the bytes gives (a property test holds it to `utf8Slice`). How it
 * extends the earlier one is kept for the decoder to note (model/text-extensions.ts), so that
 * judging reads only the new part too, and never makes V8 join the pieces into one copy.
 */
import {
  MIN_EXTENDED_LENGTH,
  newTextRef,
  RecentStrings,
  type TextNote,
  type TextRef,
} from '../model/text-extensions.js';

/** Shorter strings are decoded whole: comparing them would cost more than it saves. */
const MIN_EXTENDED_BYTES = 1024;
/**
 * The strings remembered: one per conversation in flight in a request (a string that extends
 * one takes its place), and the latest others.
 */
const SLOTS = 8;
const ASCII_END = 0x80;

/** Bytes compared before the whole: the last ones of the shared part. */
const END_BYTES = 16;

/**
 * Whether the last bytes of the shared part agree. Conversations in flight together often share
 * a long start (their system prompt) and differ near the end, so most misses stop here, before
 * comparing all of it.
 */
function endsAlike(buf: Buffer, earlierStart: number, start: number, shared: number): boolean {
  for (let i = Math.max(shared - END_BYTES, 0); i < shared; i++)
    if (buf[earlierStart + i] !== buf[start + i]) return false;
  return true;
}

/**
 * The long values held for one trace from earlier requests, which a value of this request may
 * continue (the adapter's, continued-texts.ts).
 */
export interface HeldTexts {
  /** The held value under `key` that the UTF-8 bytes `buf[start, end)` start with, if any. */
  continuedBytes(key: string, buf: Buffer, start: number, end: number): HeldPrefix | undefined;
}

/** A held value the bytes of a request's value start with: its text, what stands for it, and where its bytes end. */
export interface HeldPrefix {
  /** The value but its last character, as held (never read: it may be joined from pieces). */
  open: string;
  ref: TextRef;
  at: number;
}

/**
 * The recent long strings of one request body, by their bytes' place in it; and, where the
 * decoder says which trace and attribute key a string is the value of, the long values that
 * trace holds from earlier requests (continued-texts.ts): a history continuing one received
 * before is then decoded from its new bytes alone too.
 */
export class ExtendingTexts {
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];
  /** Each remembered string but its last character (an ASCII one), and what stands for it. */
  readonly #opens: string[] = [];
  readonly #refs: TextRef[] = [];
  #next = 0;
  /** What is known of the string last read, when it was long; for the decoder to note. */
  note: TextNote | undefined;
  /** The texts held for the trace of the span being read, if the adapter holds it. */
  held: HeldTexts | undefined;
  /** The key of the span attribute being read; '' for any other string. */
  key = '';

  /** The string the UTF-8 bytes `buf[start, end)` hold. */
  read(buf: Buffer & { utf8Slice(start: number, end: number): string }, start: number, end: number): string {
    this.note = undefined;
    const length = end - start;
    if (length < MIN_EXTENDED_BYTES) return buf.utf8Slice(start, end);
    const ref = newTextRef();
    // Ends in two ASCII bytes (`}]`): the last character is the last byte alone, and the bytes
    // before it end a character, so a later string can share them.
    const openable = (buf[end - 1] as number) < ASCII_END && (buf[end - 2] as number) < ASCII_END;
    const starts = this.#starts;
    for (let slot = 0; slot < starts.length; slot++) {
      const earlierStart = starts[slot] as number;
      const shared = (this.#ends[slot] as number) - earlierStart - 1;
      if (
        shared >= length ||
        !endsAlike(buf, earlierStart, start, shared) ||
        buf.compare(buf, earlierStart, earlierStart + shared, start, start + shared) !== 0
      )
        continue;
      // The shared bytes end in an ASCII byte, which ends any UTF-8 sequence before it: decoding
      // them, then the rest, gives what decoding all of them does.
      const added = buf.utf8Slice(start + shared, end);
      const open = this.#opens[slot] as string;
      this.note = { ref, extension: { earlier: this.#refs[slot] as TextRef, added } };
      if (openable) this.#remember(slot, start, end, open + added.slice(0, -1), ref);
      return open + added;
    }
    const held = this.#heldPrefix(buf, start, end);
    if (held !== undefined) {
      // The bytes before `held.at` encode the held text, so they end a character, as above.
      const { open, at } = held;
      const added = buf.utf8Slice(at, end);
      this.note = { ref, extension: { earlier: held.ref, added } };
      if (openable) this.#remember(this.#nextSlot(), start, end, open + added.slice(0, -1), ref);
      return open + added;
    }
    const value = buf.utf8Slice(start, end);
    this.note = { ref };
    if (openable) this.#remember(this.#nextSlot(), start, end, value.slice(0, -1), ref);
    return value;
  }

  /** The held value the bytes start with; none when that cannot be told (a shortcut never costs a request). */
  #heldPrefix(buf: Buffer, start: number, end: number): HeldPrefix | undefined {
    if (this.key === '' || this.held === undefined) return undefined;
    try {
      return this.held.continuedBytes(this.key, buf, start, end);
    } catch {
      return undefined;
    }
  }

  /** Where a new string goes: a free slot while there is one, then the oldest in turn. */
  #nextSlot(): number {
    if (this.#starts.length < SLOTS) return this.#starts.length;
    const slot = this.#next;
    this.#next = (slot + 1) % SLOTS;
    return slot;
  }

  #remember(slot: number, start: number, end: number, open: string, ref: TextRef): void {
    this.#starts[slot] = start;
    this.#ends[slot] = end;
    this.#opens[slot] = open;
    this.#refs[slot] = ref;
  }
}

/**
 * The same for strings already decoded (OTLP JSON, after `JSON.parse`): a long string that
 * starts with an earlier one (all but its closing character) becomes that earlier text joined to
 * a copy of its new part, and the whole string parsed from the body is left to the garbage
 * collector while it is young. Buffered memory grows with the new parts only, and judging reads
 * only them (model/text-extensions.ts).
 */
export class ExtendingStrings {
  readonly #recent = new RecentStrings();
  /** By number (see {@link RecentStrings}): each long string but its last character, and what stands for it. */
  readonly #opens: string[] = [];
  readonly #refs: TextRef[] = [];
  /** What is known of the string last read, when it was long; for the decoder to note. */
  note: TextNote | undefined;

  /** `text` itself, or the same text sharing an earlier string's. */
  read(text: string): string {
    this.note = undefined;
    if (text.length < MIN_EXTENDED_LENGTH) return text;
    const ref = newTextRef();
    this.#refs.push(ref);
    const extended = this.#recent.extends(text);
    if (extended === undefined) {
      this.#opens.push(text.slice(0, -1));
      this.note = { ref };
      return text;
    }
    const added = copyOf(text.substring(extended.shared));
    const open = this.#opens[extended.id] as string;
    this.note = { ref, extension: { earlier: this.#refs[extended.id] as TextRef, added } };
    this.#opens.push(open + added.slice(0, -1));
    return open + added;
  }
}

/**
 * A string of its own with the characters of `part`. V8 makes a long substring a view that
 * keeps its whole parent alive; joining a character to it and slicing it off makes V8 copy the
 * characters out (the joined string is made flat first), and the view left points into the copy.
 */
export function copyOf(part: string): string {
  return ` ${part}`.slice(1);
}
