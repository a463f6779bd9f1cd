/**
 * Long texts that continue a text of the same trace received in an earlier request. The decoders
 * share history text within one export request (extending-texts.ts), but an SDK exports on a
 * timer and a Collector batches by time, so the turns of a long conversation usually arrive in
 * different requests: each would be buffered whole, the trace's memory growing with the square of
 * its length. Here, as a request's spans are buffered, a long value the decoder read whole is
 * compared with its trace's latest long values; one that continues them is rebuilt as that
 * value's text joined to a copy of its new part (a pointer pair in V8), and noted so, and the text
 * the decoder made is left to the garbage collector while it is young. Values the decoder built
 * on a value rebuilt here are rebuilt on the new one, so nothing still holds the old.
 *
 * The held texts are never read: reading even one character of a joined string makes V8 copy it
 * into one piece. Each is compared through the flat pieces it was joined from.
 */
import type { SpanRecord } from '../model/span-record.js';
import { notesIn, noteText, type TextRef } from '../model/text-extensions.js';
import { copyOf, type HeldPrefix, type HeldTexts } from './extending-texts.js';

/** The flat pieces a held text is joined from, the last first. */
interface Pieces {
  readonly piece: string;
  readonly before: Pieces | undefined;
  /** Whether the piece has no lone surrogate, once asked (bytesOfPieces). */
  wellFormed: boolean | undefined;
}

/** A long value that a later one may continue: all of it but its last character. */
interface Tip {
  readonly ref: TextRef;
  /** The trace holding the value. */
  readonly owner: TraceTexts;
  /** The value but its last character, as held: pieces joined, never read. */
  readonly open: string;
  readonly pieces: Pieces;
  /** The last characters of `open` (up to END_CHARS), compared first. */
  readonly end: string;
  /** Whether `open` was joined here, not by the decoder: values the decoder built on it are built again. */
  readonly rebuilt: boolean;
}

/**
 * Long values remembered per trace and key: one per conversation the trace holds (sub-agents have
 * their own), a value that continues one taking its place. By key, so that a turn's long tool
 * results do not push its history out.
 */
const TIPS_PER_KEY = 4;
/** Characters compared before the whole: conversations that share a long start differ near the end. */
const END_CHARS = 16;

/** A buffered trace's latest long values, by attribute key (the adapter's per-trace state). */
export class TraceTexts implements HeldTexts {
  /** Made with the first long value: most traces have none. */
  #byKey: Map<string, Tip[]> | undefined;

  /** The latest value under `key` that `text` continues, if any. */
  continued(key: string, text: string): Tip | undefined {
    const tips = this.#byKey?.get(key);
    if (tips === undefined) return undefined;
    for (let i = tips.length - 1; i >= 0; i--) {
      const tip = tips[i] as Tip;
      const shared = tip.open.length;
      if (shared >= text.length || text.substring(shared - tip.end.length, shared) !== tip.end) continue;
      if (startsWithPieces(text, shared, tip.pieces)) return tip;
    }
    return undefined;
  }

  /**
   * The latest value under `key` whose text the UTF-8 bytes `buf[start, end)` continue, and where
   * in them its text ends: what the protobuf decoder builds a long value on, decoding only the
   * bytes after it ({@link ExtendingTexts}). The held text is compared as its UTF-8 bytes,
   * never decoded from the request's.
   */
  continuedBytes(key: string, buf: Buffer, start: number, end: number): HeldPrefix | undefined {
    const tips = this.#byKey?.get(key);
    if (tips === undefined) return undefined;
    for (let i = tips.length - 1; i >= 0; i--) {
      const tip = tips[i] as Tip;
      // A character is one byte at least: a text as long as the bytes cannot leave any after it.
      if (tip.open.length >= end - start) continue;
      const at = bytesOfPieces(buf, start, end, tip.pieces);
      if (at !== -1 && at < end) return { open: tip.open, ref: tip.ref, at };
    }
    return undefined;
  }

  /** The value under `key` that `ref` stands for, while it is the latest or nearly. */
  tipOf(key: string, ref: TextRef): Tip | undefined {
    const tips = this.#byKey?.get(key);
    if (tips === undefined) return undefined;
    for (const tip of tips) if (tip.ref === ref) return tip;
    return undefined;
  }

  /** Remembers `tip` under `key`, in the place of the one it continues (`earlier`) when that is there. */
  remember(key: string, tip: Tip, earlier: Tip | undefined): void {
    this.#byKey ??= new Map();
    let tips = this.#byKey.get(key);
    if (tips === undefined) {
      tips = [];
      this.#byKey.set(key, tips);
    }
    const at = earlier === undefined ? -1 : tips.indexOf(earlier);
    if (at !== -1) tips.splice(at, 1);
    else if (tips.length >= TIPS_PER_KEY) tips.shift();
    tips.push(tip);
  }
}

/**
 * Whether `text` starts with the `shared` characters the pieces join to. Compared piece by piece
 * from the last: substring equality of flat strings, a block at a time, and the latest piece is
 * where two conversations differ.
 */
function startsWithPieces(text: string, shared: number, pieces: Pieces): boolean {
  let end = shared;
  for (let at: Pieces | undefined = pieces; at !== undefined; at = at.before) {
    const start = end - at.piece.length;
    if (start < 0 || text.substring(start, end) !== at.piece) return false;
    end = start;
  }
  return end === 0;
}

/** Characters encoded and compared at a time; the scratch holds the UTF-8 of any chunk (3 bytes a code unit at most). */
const CHUNK_CHARS = 16 * 1024;
const scratch = Buffer.allocUnsafe(3 * CHUNK_CHARS);

/**
 * Where the UTF-8 of the text the pieces join to ends, if `buf[start, end)` starts with it; -1
 * if not. Sound because UTF-8 is one to one on well-formed text: equal bytes decode to that text,
 * and end on a character. A piece with a lone surrogate (JSON can write one) encodes as U+FFFD
 * does, so it is never compared.
 */
function bytesOfPieces(buf: Buffer, start: number, end: number, pieces: Pieces): number {
  const chain: Pieces[] = [];
  for (let at: Pieces | undefined = pieces; at !== undefined; at = at.before) {
    at.wellFormed ??= (at.piece as WellFormedCheck).isWellFormed();
    if (!at.wellFormed) return -1;
    chain.push(at);
  }
  let at = start;
  for (let i = chain.length - 1; i >= 0 && at !== -1; i--)
    at = bytesOf(buf, at, end, (chain[i] as Pieces).piece);
  return at;
}

/** Where the UTF-8 of `text` ends, if `buf[at, end)` starts with it; -1 if not. A chunk at a time, a surrogate pair never split. */
function bytesOf(buf: Buffer, at: number, end: number, text: string): number {
  let offset = at;
  for (let from = 0; from < text.length; ) {
    let to = Math.min(from + CHUNK_CHARS, text.length);
    if (to < text.length && isHighSurrogate(text.charCodeAt(to - 1))) to--;
    const chunk = from === 0 && to === text.length ? text : text.substring(from, to);
    const written = scratch.write(chunk, 0, scratch.length, 'utf8');
    if (offset + written > end || buf.compare(scratch, 0, written, offset, offset + written) !== 0) return -1;
    offset += written;
    from = to;
  }
  return offset;
}

/** ES2024's String.prototype.isWellFormed, which Node 20 has (the project compiles against ES2022). */
type WellFormedCheck = string & { isWellFormed(): boolean };

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** One request's long values as its spans are buffered, each by what stands for it. */
export class ContinuedTexts {
  readonly #tips = new Map<TextRef, Tip>();

  /**
   * Shares the long values of `span` (a span buffered in `trace`) with the trace's earlier ones.
   * Returns how many of their characters are an earlier value's of the same trace: held once, and
   * counted once (a value of another trace may be let go first, so what is shared with it is not).
   */
  take(span: SpanRecord, trace: TraceTexts): number {
    const noted = notesIn(span.attributes);
    if (noted === undefined) return 0;
    const attributes = span.attributes;
    let sharedInTrace = 0;
    for (const { key, text, ref, extension } of noted) {
      if (extension !== undefined) {
        // The decoder built it on a value of this request: build it on that value as held now.
        const earlier = this.#tips.get(extension.earlier);
        if (earlier === undefined) {
          // Or on a value the trace held already (continuedBytes): built on it as held, nothing to redo.
          const held = trace.tipOf(key, extension.earlier);
          if (held === undefined) continue; // a value not buffered here: left as decoded
          sharedInTrace += text.length - extension.added.length;
          this.#remember(trace, key, continuing(held, extension.added, ref, false, trace), held);
          continue;
        }
        if (earlier.rebuilt) {
          const value = earlier.open + extension.added;
          attributes[key] = value;
          noteText(attributes, key, value, { ref, extension });
        }
        if (earlier.owner === trace) sharedInTrace += text.length - extension.added.length;
        this.#remember(
          trace,
          key,
          continuing(earlier, extension.added, ref, earlier.rebuilt, trace),
          earlier,
        );
        continue;
      }
      const earlier = trace.continued(key, text);
      if (earlier === undefined) {
        this.#remember(trace, key, whole(text, ref, trace), undefined);
        continue;
      }
      const added = copyOf(text.substring(earlier.open.length));
      const value = earlier.open + added;
      attributes[key] = value;
      noteText(attributes, key, value, { ref, extension: { earlier: earlier.ref, added } });
      sharedInTrace += earlier.open.length;
      this.#remember(trace, key, continuing(earlier, added, ref, true, trace), earlier);
    }
    return sharedInTrace;
  }

  #remember(trace: TraceTexts, key: string, tip: Tip, earlier: Tip | undefined): void {
    this.#tips.set(tip.ref, tip);
    trace.remember(key, tip, earlier);
  }
}

/** The tip of a value read whole (a flat string). */
function whole(text: string, ref: TextRef, owner: TraceTexts): Tip {
  const open = text.slice(0, -1);
  return {
    ref,
    owner,
    open,
    pieces: { piece: open, before: undefined, wellFormed: undefined },
    end: endOf(open, ''),
    rebuilt: false,
  };
}

/** The tip of `earlier`'s text but its last character, then `added` (which ends in the new last character). */
function continuing(earlier: Tip, added: string, ref: TextRef, rebuilt: boolean, owner: TraceTexts): Tip {
  const piece = added.slice(0, -1);
  return {
    ref,
    owner,
    open: earlier.open + piece,
    pieces: { piece, before: earlier.pieces, wellFormed: undefined },
    end: endOf(piece, earlier.end),
    rebuilt,
  };
}

/** The last END_CHARS characters of `before` then `piece`, from the pieces alone (`before` is short). */
function endOf(piece: string, before: string): string {
  return piece.length >= END_CHARS ? piece.slice(-END_CHARS) : `${before}${piece}`.slice(-END_CHARS);
}
