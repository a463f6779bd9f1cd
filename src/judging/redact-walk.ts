/**
 * The walk over a trajectory's captured values that redaction makes, token first: it knows the
 * keys the texts to scrub can look up ({@link Wanted}: their quoted literals, bare tokens and
 * multi-word phrases) and builds the text -> replacement map for those keys only, with the same
 * values and in the same relative order as the map of every captured value would have them (the
 * same insertions, in the same order, skipped for keys no text can ask for). So a string that
 * cannot match is tested, never JSON-stringified or hashed, and an answer's values are scanned
 * only when one of them could occur in a text.
 */
import { type AnswerValue, answerValues } from '../evaluate/answer-values.js';
import type { JsonValue } from '../model/json.js';
import type { Trajectory } from '../model/trajectory.js';

/** What a redacted value reads as. */
export const REDACTED = '[redacted]';
export const QUOTED_REDACTED = JSON.stringify(REDACTED);

/** Strings shorter than this are left alone outside quotes: too short to carry data, too likely to hit words. */
const MIN_BARE_STRING = 3;
/** Numbers whose text is shorter than this are left alone: a `0` or `2` also names indexes and counts. */
const MIN_NUMBER_TEXT = 2;
/** Values nested deeper than this are not looked at: rules render only the first levels anyway. */
const MAX_DEPTH = 32;
/** Multi-word values shorter than this are left to the token pass. */
export const MIN_PHRASE = 6;
const NOT_ONE_TOKEN = /[^\p{L}\p{N}_\-.@+]/u;
const QUOTE = 0x22;
/** What a phrase replacement inserts (`[redacted]`, `#` and a hash) may join with text into a phrase. */
const INSERTED_PUNCTUATION = /[[\]#]/;
const HASH_DIGIT = /^[0-9a-f]/;
/** Every answer value holds a digit or an `@`, or is a URL. */
const VALUE_ANCHOR = /[0-9@]|^http/;
/**
 * What every answer value that is more than one token holds (answer-values.ts's shapes): a URL's
 * `://`, an email's `%`, an amount's currency sign or the space between its code and number, a
 * number's thousands comma. Ids, dates and other emails and numbers are one token.
 */
export const PHRASE_ANCHOR = /:\/\/|%|[$€£¥₹]|\d,\d|\d\s[A-Z]|[A-Z]\s\d/g;

/** The keys the texts to scrub can look up. */
export interface Wanted {
  /** Every quoted literal of the texts, as written (a bare captured string may read so too). */
  literals: ReadonlySet<string>;
  /** The strings whose JSON rendering is one of the literals -> that literal. */
  contents: ReadonlyMap<string, string>;
  /** Cut-off literals (`"a long val…`) without the `…`: every key starting so is wanted. */
  prefixes: readonly string[];
  /** Each prefix's text before its first escape, without the quote: what a string it renders must start with. */
  heads: readonly string[];
  /** Bare tokens, and the same without a trailing full stop. */
  tokens: ReadonlySet<string>;
  /** The texts multi-word values are looked for in; undefined: no phrase is wanted. */
  phraseTexts?: readonly string[];
  /** The texts' {@link PHRASE_ANCHOR}s: a multi-word answer value in a text holds one. */
  phraseAnchors: readonly string[];
  /** Every multi-word value is wanted (there are more than the cap, which ranks all of them). */
  allPhrases?: boolean;
}

/** How values read in output: which fields are kept, which hashed and how. */
export interface Fields {
  keep: ReadonlySet<string>;
  hash: ReadonlySet<string>;
  hashOf: (value: string) => string;
}

/** What one walk found. */
export interface Collected {
  /** Wanted key -> what it reads as, in the order the full map would hold them. */
  map: Map<string, string>;
  /** The wanted multi-word values (a subset of the map's keys). */
  phrases: Set<string>;
  /** Whether the trajectory captured any value at all (the full map is not empty). */
  any: boolean;
  /** At least as many multi-word values as the full map holds. */
  phraseBound: number;
}

/** Answer values per turn of one trajectory: scanned at most once per trajectory. */
export type AnswerCache = Map<number, AnswerValue[]>;

/** Walks `trajectory` as the full map is built (calls' arguments, results, errors; then answers). */
export function collect(
  trajectory: Trajectory,
  wanted: Wanted,
  fields: Fields,
  answers: AnswerCache,
): Collected {
  const walk = new Walk(wanted, fields);
  for (const call of trajectory.calls) {
    if (call.args.captured) walk.visit(call.args.value, undefined, 0);
    if (call.result.captured) walk.visit(call.result.value, undefined, 0);
    // A tool's error message is part of its result ("no record for Ana Lima").
    if (call.outcome.status === 'error' && call.outcome.message)
      walk.visit(call.outcome.message, undefined, 0);
  }
  // The values an answer states, redacted like the others; a partial stand-in (calls alone) has no turns.
  const turns = trajectory.turns ?? [];
  for (let index = 0; index < turns.length; index++) {
    const answer = turns[index]?.answer;
    if (answer === undefined) continue;
    const scan = !walk.collected.any || walk.mayHoldWanted(answer);
    if (!scan) {
      walk.collected.phraseBound += Math.floor(answer.length / MIN_PHRASE);
      continue;
    }
    let values = answers.get(index);
    if (values === undefined) {
      values = answerValues(answer);
      answers.set(index, values);
    }
    for (const value of values) walk.answer(value.text);
  }
  return walk.collected;
}

class Walk {
  readonly collected: Collected = { map: new Map(), phrases: new Set(), any: false, phraseBound: 0 };
  private readonly keepAny: boolean;
  private readonly hashAny: boolean;
  private readonly wantsNumbers: boolean;
  /** The numbers whose text (`String(n)`) is a wanted token, at least {@link MIN_NUMBER_TEXT} long. */
  private readonly numbers: ReadonlySet<number>;

  constructor(
    private readonly wanted: Wanted,
    private readonly fields: Fields,
  ) {
    this.keepAny = fields.keep.size > 0;
    this.hashAny = fields.hash.size > 0;
    this.wantsNumbers = wanted.tokens.size > 0;
    this.numbers = numbersNamed(wanted.tokens);
  }

  visit(value: JsonValue, field: string | undefined, depth: number): void {
    if (field !== undefined && this.keepAny && this.fields.keep.has(field)) return;
    if (typeof value === 'string') {
      this.collected.any = true;
      const hashed = field !== undefined && this.hashAny && this.fields.hash.has(field);
      // Quoted first: a hashed value inside a JSON rendering stays a JSON string.
      if (this.wantsQuoted(value)) {
        const quoted = hashed ? JSON.stringify(this.fields.hashOf(value)) : QUOTED_REDACTED;
        this.collected.map.set(JSON.stringify(value), quoted);
      }
      if (value.length >= MIN_BARE_STRING && this.wantsBare(value) && !this.collected.map.has(value))
        this.collected.map.set(value, hashed ? this.fields.hashOf(value) : REDACTED);
    } else if (typeof value === 'number') {
      if (!this.wantsNumbers && this.collected.any) return;
      // The integers 0 to 9, the numbers whose text is one character.
      if (value >= 0 && value <= 9 && Number.isInteger(value)) return;
      this.collected.any = true;
      // Rendered only when some token reads as it: rendering a number costs more than the lookup.
      if (this.numbers.has(value)) this.collected.map.set(String(value), REDACTED);
    } else if (Array.isArray(value)) {
      if (depth < MAX_DEPTH) for (const item of value) this.visit(item, field, depth + 1);
    } else if (value !== null && typeof value === 'object') {
      // `for...in` over own keys: what Object.keys lists, without allocating the list.
      if (depth < MAX_DEPTH)
        for (const key in value)
          if (Object.hasOwn(value, key)) this.visit(value[key] as JsonValue, key, depth + 1);
    }
  }

  /** One value an answer states: its quoted and bare forms, unless a call's value put them there first. */
  answer(text: string): void {
    this.collected.any = true;
    const map = this.collected.map;
    if (this.wantsQuoted(text)) {
      const quoted = JSON.stringify(text);
      if (!map.has(quoted)) map.set(quoted, QUOTED_REDACTED);
    }
    if (this.wantsBare(text) && !map.has(text)) map.set(text, REDACTED);
  }

  /** Whether `value`'s JSON rendering is a wanted key. */
  private wantsQuoted(value: string): boolean {
    if (this.wanted.contents.has(value)) return true;
    const { prefixes, heads } = this.wanted;
    for (let i = 0; i < prefixes.length; i++) {
      if (value.startsWith(heads[i] as string) && JSON.stringify(value).startsWith(prefixes[i] as string))
        return true;
    }
    return false;
  }

  /** Whether `value` itself is a wanted key (a token, a literal, a phrase); counts the phrases. */
  private wantsBare(value: string): boolean {
    const wanted = this.wanted;
    if (wanted.tokens.has(value)) return true;
    if (value.charCodeAt(0) === QUOTE) {
      if (wanted.literals.has(value)) return true;
      for (const prefix of wanted.prefixes) if (value.startsWith(prefix)) return true;
      return false;
    }
    if (value.length < MIN_PHRASE) return false;
    this.collected.phraseBound++;
    if (wanted.phraseTexts === undefined) return false;
    if (!wanted.allPhrases && !this.mayBePhrase(value, wanted.phraseTexts)) return false;
    if (!NOT_ONE_TOKEN.test(value)) return false;
    this.collected.phrases.add(value);
    return true;
  }

  /**
   * Whether a phrase pass could find `value`: it is in a text, or it could run into what an
   * earlier phrase's replacement put there (a `[redacted]`'s brackets, a hash's `#` or digits).
   */
  private mayBePhrase(value: string, texts: readonly string[]): boolean {
    for (const text of texts) if (text.includes(value)) return true;
    return INSERTED_PUNCTUATION.test(value) || (this.hashAny && HASH_DIGIT.test(value));
  }

  /** Whether some value of `answer` could be a wanted key (each is a substring of the answer). */
  mayHoldWanted(answer: string): boolean {
    const wanted = this.wanted;
    if (wanted.prefixes.length > 0) {
      for (const head of wanted.heads) if (answer.includes(head)) return true;
    }
    // An answer's value only adds a key a call's value did not: one already there is not looked for.
    const map = this.collected.map;
    for (const [content, literal] of wanted.contents)
      if (content !== '' && !map.has(literal) && answer.includes(content)) return true;
    for (const token of wanted.tokens)
      if (!map.has(token) && VALUE_ANCHOR.test(token) && answer.includes(token)) return true;
    const texts = wanted.phraseTexts;
    if (texts === undefined) return false;
    if (wanted.allPhrases || this.hashAny || INSERTED_PUNCTUATION.test(answer)) return true;
    for (const anchor of wanted.phraseAnchors) if (answer.includes(anchor)) return true;
    return false;
  }
}

const NO_NUMBERS: ReadonlySet<number> = new Set();

/**
 * The numbers `n` with `String(n)` among the tokens: those tokens `t` with `String(Number(t)) === t`
 * (then `String(n) === t` exactly when `n` is `Number(t)`). Most tokens are words, told apart by
 * their first character.
 */
function numbersNamed(tokens: ReadonlySet<string>): ReadonlySet<number> {
  let numbers: Set<number> | undefined;
  for (const token of tokens) {
    if (token.length < MIN_NUMBER_TEXT) continue;
    const first = token.charCodeAt(0);
    // A number's text starts with a digit or a minus sign (or reads `Infinity` or `NaN`).
    if (!((first >= 0x30 && first <= 0x39) || first === 0x2d || first === 0x49 || first === 0x4e)) continue;
    const number = Number(token);
    if (String(number) !== token) continue;
    numbers ??= new Set();
    numbers.add(number);
  }
  return numbers ?? NO_NUMBERS;
}
