/**
 * The values an answer states, by kind, each with a normalized key so a value written differently
 * in the answer and in a tool's result still matches (`$40.00` and `40`, `4,000` and `4000`,
 * `R-1001` and `r-1001`). docs/scenarios.md lists the shapes; test/evaluate/answer-values.test.ts
 * checks them against a brute-force oracle.
 *
 * - `email`: `local@domain.tld`; key lower-cased.
 * - `url`: `http(s)://` up to white space, trailing punctuation dropped; key lower-cased, without
 *   a trailing `/`.
 * - `date`: ISO `YYYY-MM-DD` (a time after it is not part of the value); key the date.
 * - `amount`: a number with a currency sign before it (`$ € £ ¥ ₹`) or a code beside it (`USD 40`,
 *   `40 EUR`); key the number (`$4,000.00` -> `4000`).
 * - `id`: a token mixing letters and digits around `-` or `_` (`R-1001`, `ord_42`), a UUID, a run
 *   of 5 or more hex digits holding a digit and a letter, or a run of 5 or more digits; key
 *   lower-cased.
 * - `number`: any other number (`3`, `4,000`, `12.5`, `-2`); key the number.
 *
 * Each place in the text is one value, of the first kind in that list it fits: an email's digits
 * are not also numbers. Bounded: a text longer than 512 characters is scanned with RE2 (re2js),
 * linear, as scenario patterns are; shorter texts and one-word fields on V8's engine, whose worst
 * case their length bounds.
 */
import { RE2JS } from 're2js';
import type { JsonValue } from '../model/json.js';
import { ANSWER_VALUE_KINDS, type AnswerValueKind } from '../scenario/native-answer.js';
import type { KeySink } from './answer-keys.js';

export { ANSWER_VALUE_KINDS, type AnswerValueKind };

/** One value found in a text: as written, its kind and its normalized key. */
export interface AnswerValue {
  text: string;
  kind: AnswerValueKind;
  /** What two values are compared by: `amount` and `number` keys are numbers as text (`4000`). */
  key: string;
}

const CURRENCY_SIGNS = '$€£¥₹';
const CURRENCY_CODES = 'USD|EUR|GBP|JPY|INR|CAD|AUD|CHF';
const NUMBER = String.raw`-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?`;
const TRAILING_SIGN = `|${NUMBER}\\s?[${CURRENCY_SIGNS}]`;

/**
 * One pattern, its alternatives in the order of precedence: RE2 takes the leftmost match, and
 * at one place the first alternative that matches. Word edges are checked by hand after a match
 * (RE2 has \b, but not on the characters `-` and `_` ids use).
 */
const ALTERNATIVES: readonly [AnswerValueKind, string][] = [
  ['email', String.raw`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`],
  ['url', String.raw`https?://[^\s<>"']+`],
  ['date', String.raw`\d{4}-\d{2}-\d{2}`],
  [
    'amount',
    `(?:[${CURRENCY_SIGNS}]\\s?${NUMBER}|(?:${CURRENCY_CODES})\\s?${NUMBER}|${NUMBER}\\s?(?:${CURRENCY_CODES})${TRAILING_SIGN})`,
  ],
  ['id', '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}'],
  ['id', '[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+'],
  ['id', '[0-9A-Fa-f]{5,}'],
  ['number', NUMBER],
];

const sourceOf = (alternatives: readonly [AnswerValueKind, string][]) =>
  alternatives.map(([, pattern]) => `(${pattern})`).join('|');
const SOURCE = sourceOf(ALTERNATIVES);
/**
 * The same without a sign after the number: `10000 $0` is an id and an amount, not `10000 $`
 * followed by a word. Tried where a match fails its edge check.
 */
const SOURCE_WITHOUT_TRAILING_SIGN = sourceOf(
  ALTERNATIVES.map(([kind, pattern]) => [kind, pattern.replace(TRAILING_SIGN, '')]),
);
/** Compiled for RE2 at the first long text: compiling takes longer than a short command's judging. */
let programs: { all: RE2JS; withoutTrailingSign: RE2JS } | undefined;
const re2Programs = () =>
  (programs ??= {
    all: RE2JS.compile(SOURCE),
    withoutTrailingSign: RE2JS.compile(SOURCE_WITHOUT_TRAILING_SIGN),
  });
const WORD = /[\p{L}\p{N}_]/u;
const DIGIT = /\d/;
const LETTER = /[A-Za-z]/;
const TRAILING_URL_PUNCTUATION = /[.,;:!?)\]}]+$/;
const MAY_HOLD_VALUE = /[0-9@]|:\/\//;
const WHITE_SPACE = /\s/;
/** Fields longer than this are scanned even without white space. */
const MAX_WORD = 64;
const CURRENCY_WORD = /^[$€£¥₹]?(-?[\d,]+(?:\.\d+)?)[$€£¥₹]?$/;

/**
 * The kind of a one-word field, for the nearest values a finding names (its keys are added whole).
 * Native patterns: the word is at most {@link MAX_WORD} characters, so no pattern can run long.
 */
function wordKind(word: string): AnswerValueKind | undefined {
  if (/^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$/.test(word)) return 'email';
  if (/^https?:\/\//.test(word)) return 'url';
  if (/^\d{4}-\d{2}-\d{2}$/.test(word)) return 'date';
  if (/^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+$/.test(word) && DIGIT.test(word)) return 'id';
  if (/^[0-9A-Fa-f]{5,}$/.test(word) && DIGIT.test(word)) return 'id';
  return undefined;
}

/**
 * The last text scanned and what it held: one evaluation reads the same answer for several checks
 * (and redaction once more), and a scan costs tens of microseconds in re2js.
 */
let lastScanned: { text: string; values: AnswerValue[] } | undefined;

/** Every value in `text`, left to right; `kinds` keeps only those kinds. */
export function answerValues(text: string, kinds?: ReadonlySet<AnswerValueKind>): AnswerValue[] {
  if (lastScanned?.text !== text) lastScanned = { text, values: scan(text) };
  const { values } = lastScanned;
  return kinds === undefined ? [...values] : values.filter((value) => kinds.has(value.kind));
}

/** What a scan asks of a matcher: re2js's, or {@link NativeFinder}'s over the same patterns. */
interface Finder {
  find(from: number): boolean;
  start(): number;
  end(): number;
  group(index: number): string | null;
}

/**
 * The same patterns on V8's engine, twenty times faster than re2js here, for texts of at most
 * {@link NATIVE_MAX} characters: a backtracking pattern costs at most the square of that (the
 * email pattern retried from each start), so a text cannot make a scan run long.
 */
const NATIVE_MAX = 512;
class NativeFinder implements Finder {
  #match: RegExpExecArray | null = null;
  constructor(
    private readonly pattern: RegExp,
    private readonly text: string,
  ) {}
  find(from: number): boolean {
    this.pattern.lastIndex = from;
    this.#match = this.pattern.exec(this.text);
    return this.#match !== null;
  }
  start(): number {
    return (this.#match as RegExpExecArray).index;
  }
  end(): number {
    const match = this.#match as RegExpExecArray;
    return match.index + match[0].length;
  }
  group(index: number): string | null {
    return this.#match?.[index] ?? null;
  }
}
const NATIVE = new RegExp(SOURCE, 'g');
const NATIVE_WITHOUT_TRAILING_SIGN = new RegExp(SOURCE_WITHOUT_TRAILING_SIGN, 'g');

function scan(text: string): AnswerValue[] {
  const found: AnswerValue[] = [];
  const native = text.length <= NATIVE_MAX;
  const matcher: Finder = native ? new NativeFinder(NATIVE, text) : re2Programs().all.matcher(text);
  const fallback: Finder = native
    ? new NativeFinder(NATIVE_WITHOUT_TRAILING_SIGN, text)
    : re2Programs().withoutTrailingSign.matcher(text);
  let from = 0;
  while (from <= text.length && matcher.find(from)) {
    const start = matcher.start();
    let match = matchAt(matcher, text, start);
    if (!match.edge) {
      const again =
        fallback.find(start) && fallback.start() === start ? matchAt(fallback, text, start) : undefined;
      // A match inside a word (`abc12345xyz`'s digits) is not a value of its own: skip the word.
      if (!again?.edge) {
        from = wordEnd(text, match.end);
        continue;
      }
      match = again;
    }
    const { kind, written, end } = match;
    from = end;
    const value = classify(written, kind);
    if (value) found.push(value);
  }
  return found;
}

/** The match found at `start`: its kind, its text and whether it stands on its own. */
function matchAt(
  matcher: Finder,
  text: string,
  start: number,
): { kind: AnswerValueKind; written: string; end: number; edge: boolean } {
  let group = 1;
  while (group <= ALTERNATIVES.length && matcher.group(group) === null) group++;
  const kind = (ALTERNATIVES[group - 1] as [AnswerValueKind, string])[0];
  let written = text.slice(start, matcher.end());
  if (kind === 'url') written = written.replace(TRAILING_URL_PUNCTUATION, '');
  const end = start + written.length;
  return { kind, written, end, edge: end > start && atEdge(text, start, end, kind) };
}

/** The value of a match, or none when the shape is not one (an id without a digit is a word). */
function classify(text: string, kind: AnswerValueKind): AnswerValue | undefined {
  switch (kind) {
    case 'email':
    case 'url':
      return { text, kind, key: urlKey(text) };
    case 'date':
      return { text, kind, key: text };
    case 'amount':
      return { text, kind, key: numberKey(/-?[\d,]+(?:\.\d+)?/.exec(text)?.[0] ?? text) };
    case 'number':
      // A bare run of 5 or more digits names something (an order, a ticket): an id.
      if (/^\d{5,}$/.test(text)) return { text, kind: 'id', key: text };
      return { text, kind, key: numberKey(text) };
    case 'id': {
      if (!DIGIT.test(text)) return undefined;
      const hexRun = /^[0-9A-Fa-f]+$/.test(text);
      // A hex run needs a letter too (else it is a digit run), and a digit run 5 digits.
      if (hexRun && !LETTER.test(text) && text.length < 5)
        return { text, kind: 'number', key: numberKey(text) };
      return { text, kind, key: text.toLowerCase() };
    }
  }
}

function urlKey(text: string): string {
  return text.toLowerCase().replace(/\/+$/, '');
}

/** `4,000.50` -> `4000.5`: the number's shortest text. */
export function numberKey(text: string): string {
  return String(Number(text.replace(/,/g, '')));
}

function atEdge(text: string, start: number, end: number, kind: AnswerValueKind): boolean {
  const before = text[start - 1];
  const after = text[end];
  if (before !== undefined && (WORD.test(before) || (kind !== 'url' && /[-@]/.test(before)))) return false;
  if (after === undefined) return true;
  if (WORD.test(after)) return false;
  // `1.5.2`, `40-` or `a@b`: the value goes on past the match.
  if ((after === '.' || after === ',') && DIGIT.test(text[end + 1] ?? '')) return false;
  return !/[-@]/.test(after);
}

function wordEnd(text: string, from: number): number {
  let at = from;
  while (at < text.length && !/\s/.test(text[at] as string)) at++;
  return Math.max(at, from + 1);
}

/**
 * The keys a tool's result (or the arguments) offers for each kind: every string field's values
 * found as in an answer, and every number field as a number, an amount and (its digits) an id.
 * Walks the JSON with a stack, never recursion.
 */
export function offeredKeys(document: JsonValue, into: KeySink): void {
  const stack: JsonValue[] = [document];
  while (stack.length > 0) {
    const value = stack.pop() as JsonValue;
    if (typeof value === 'string') {
      // A whole field is a value of every kind it could be read as (`"R-1001"`, `"40.00"`).
      const whole = value.trim();
      // Each key made only where the sink wants its kind: making them is most of the walk's cost.
      if (whole !== '') {
        if (into.wants('id')) into.add('id', whole.toLowerCase());
        const email = into.wants('email');
        if (email || into.wants('url')) {
          const key = urlKey(whole);
          if (email) into.add('email', key);
          into.add('url', key);
        }
        if (into.wants('date')) into.add('date', whole.slice(0, 10));
        if ((into.wants('number') || into.wants('amount')) && /^-?[\d,]+(?:\.\d+)?$/.test(whole)) {
          const key = numberKey(whole);
          into.add('number', key);
          into.add('amount', key);
        }
      }
      // Every kind holds a digit, an @ or ://: a field without one holds no value to look for, and
      // a native test of that is far cheaper than the RE2 scan.
      if (!MAY_HOLD_VALUE.test(value)) continue;
      // One short word: read whole above, but for an amount's number (`$40.00`, `40 EUR` is two words).
      if (whole.length <= MAX_WORD && !WHITE_SPACE.test(whole)) {
        const amount = CURRENCY_WORD.exec(whole);
        if (amount) {
          into.add('amount', numberKey(amount[1] as string), whole);
          into.add('number', numberKey(amount[1] as string));
        } else {
          const kind = wordKind(whole);
          if (kind !== undefined) into.add(kind, kind === 'id' ? whole.toLowerCase() : urlKey(whole), whole);
        }
        continue;
      }
      for (const found of scan(value)) {
        into.add(found.kind, found.key, found.text);
        // A number is an amount where the answer puts a currency on it, and the reverse.
        if (found.kind === 'number') into.add('amount', found.key);
        if (found.kind === 'amount') into.add('number', found.key);
      }
    } else if (typeof value === 'number') {
      const key = String(value);
      into.add('number', key, key);
      into.add('amount', key, key);
      into.add('id', key, Number.isInteger(value) && key.length >= 5 ? key : undefined);
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (value !== null && typeof value === 'object') {
      for (const key of Object.keys(value)) stack.push(value[key] as JsonValue);
    }
  }
}
