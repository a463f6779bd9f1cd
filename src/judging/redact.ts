/**
 * Redaction before anything leaves the process: finding messages quote argument and result
 * values ("refundId "R-7731" appears in no earlier result"), so every value the trajectory
 * captured is found in the text and replaced, unless its field is allowlisted (kept) or listed
 * for hashing (replaced by a keyed hash, the same for the same value, so "the id it was given"
 * and "the id it sent" still visibly differ or match).
 *
 * Token first: the texts to scrub are few and short, the captured values many. So the texts'
 * quoted literals, bare tokens and phrases are read first, and only the captured values they can
 * name are rendered and looked up (redact-walk.ts); the result is what replacing every captured
 * value would give.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { AssertionResult, Report } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import {
  type AnswerCache,
  type Collected,
  collect,
  type Fields,
  PHRASE_ANCHOR,
  QUOTED_REDACTED,
  REDACTED,
  type Wanted,
} from './redact-walk.js';

export { REDACTED };

/** How argument and result values appear in what toolpath emits. */
export interface RedactionOptions {
  /** Field names whose values are kept as they are (e.g. `orderId`). */
  keepFields?: readonly string[];
  /** Field names whose values are replaced by a keyed hash (`#1f3a9c0b2e4d`) instead of `[redacted]`. */
  hashFields?: readonly string[];
  /** HMAC key for hashing; default: random per process, so hashes cannot be reversed by guessing. */
  hashKey?: string | Uint8Array;
}

/** `false` emits values as captured: only when the configuration says raw values may leave. */
export type RedactionSetting = RedactionOptions | false;

const QUOTED = /"(?:[^"\\\n]|\\.)*(?:"|…)/g;
const BARE_TOKEN = /[\p{L}\p{N}_\-.@+]+/gu;
/** Multi-word values looked for in each message at most (the longest): bounded work per finding. */
const MAX_PHRASES = 2_000;
const QUOTE = 0x22;
const FULL_STOP = 0x2e;
const CUT = '…';
/** The word inside `[redacted]`: a token the bare pass meets in text it already redacted. */
const REDACTED_WORD = REDACTED.slice(1, -1);
const NOTHING: ReadonlySet<string> = new Set();
const NONE: ReadonlyMap<string, string> = new Map();
// biome-ignore lint/suspicious/noControlCharactersInRegex: what JSON.stringify escapes
const PLAIN_LITERAL = /^"[^"\\\u0000-\u001f\ud800-\udfff]*"$/;
const CUT_REDACTED = `"${REDACTED}…`;

/** Redacts reports for one configuration; reuse it (it holds the hash key). */
export class Redactor {
  private readonly fields: Fields;

  constructor(readonly setting: RedactionSetting = {}) {
    const options = setting === false ? {} : setting;
    const key = options.hashKey ?? randomBytes(32);
    this.fields = {
      keep: new Set(options.keepFields ?? []),
      hash: new Set(options.hashFields ?? []),
      hashOf: (value) => hashWith(key, value),
    };
  }

  /**
   * A copy of `report` whose finding messages and assertion reasons quote no captured value of
   * `trajectory` except allowlisted ones. The report is returned as is when there is nothing to redact.
   */
  redact(report: Report, trajectory: Trajectory): Report {
    if (this.setting === false) return report;
    if (report.findings.length === 0 && !hasReason(report.assertions)) return report;
    // An assertion's reason is its finding's message: scrub each distinct text once.
    const texts = distinctTexts(report);
    const answers = this.answersOf(trajectory);
    let wanted = wantedIn(texts, true);
    let found = collect(trajectory, wanted, this.fields, answers);
    if (!found.any) return report;
    // More multi-word values than the cap: which are looked for depends on all of them.
    if (found.phraseBound > MAX_PHRASES) {
      wanted = { ...wanted, allPhrases: true };
      found = collect(trajectory, wanted, this.fields, answers);
    }
    const phrases = phrasesOf(found);
    const afterPhrases = texts.map((text) => scrubPhrases(text, phrases, found.map));
    let { map } = found;
    if (afterPhrases.some((text, i) => text !== texts[i])) {
      // A replaced phrase leaves other literals and tokens: look for those.
      wanted = wantedIn(afterPhrases, false);
      map = collect(trajectory, wanted, this.fields, answers).map;
    }
    const joined = { any: false };
    const quotedDone = afterPhrases.map((text) => scrubQuoted(text, map, joined));
    // A replacement can join what follows it into a new token (a hash's digits): look for those too.
    const missing = new Set<string>();
    if (joined.any)
      for (const text of quotedDone)
        eachToken(text, (token) => !wanted.tokens.has(token) && missing.add(token));
    if (missing.size > 0) {
      const more = {
        literals: NOTHING,
        contents: NONE,
        prefixes: [],
        heads: [],
        tokens: missing,
        phraseAnchors: [],
      };
      for (const [text, replacement] of collect(trajectory, more, this.fields, answers).map)
        if (!map.has(text)) map.set(text, replacement);
    }
    const scrubbed = new Map<string, string>();
    // No token of the texts names a captured value: the bare pass would change nothing.
    const bare = missing.size > 0 || someIn(wanted.tokens, map);
    let changed = false;
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i] as string;
      const done = bare ? scrubBare(quotedDone[i] as string, map) : (quotedDone[i] as string);
      if (done !== text) changed = true;
      scrubbed.set(text, done);
    }
    // Nothing quoted a captured value: the report as it is, not a copy of it.
    if (!changed) return report;
    return {
      ...report,
      findings: report.findings.map((finding) => ({
        ...finding,
        message: scrubbed.get(finding.message) as string,
      })),
      assertions: report.assertions.map((assertion) =>
        assertion.reason === ''
          ? assertion
          : { ...assertion, reason: scrubbed.get(assertion.reason) as string },
      ),
    };
  }

  /** The keyed hash a value of a hashed field reads as. */
  hashOf(value: string): string {
    return this.fields.hashOf(value);
  }

  /**
   * Every scenario's report on one trajectory reads the same answers: scan them once. One slot,
   * not a WeakMap keyed by trajectory (an entry keyed by a short-lived object costs the collector
   * more than the lookup saves); {@link release} lets it go.
   */
  private scanned: { trajectory: Trajectory; answers: AnswerCache } | undefined;

  /** Forgets what was read of the last trajectory: call when done with it. */
  release(): void {
    this.scanned = undefined;
  }

  private answersOf(trajectory: Trajectory): AnswerCache {
    if (this.scanned?.trajectory !== trajectory) this.scanned = { trajectory, answers: new Map() };
    return this.scanned.answers;
  }
}

function hashWith(key: string | Uint8Array, value: string): string {
  return `#${createHmac('sha256', key).update(value).digest('hex').slice(0, 12)}`;
}

function someIn(keys: ReadonlySet<string>, map: ReadonlyMap<string, string>): boolean {
  for (const key of keys) if (map.has(key)) return true;
  return false;
}

function hasReason(assertions: readonly AssertionResult[]): boolean {
  for (const assertion of assertions) if (assertion.reason !== '') return true;
  return false;
}

function distinctTexts(report: Report): string[] {
  const texts = new Set<string>();
  for (const finding of report.findings) texts.add(finding.message);
  for (const assertion of report.assertions) if (assertion.reason !== '') texts.add(assertion.reason);
  return [...texts];
}

/** The keys `texts` can look up: their quoted literals (whole and cut off) and bare tokens. */
function wantedIn(texts: readonly string[], phrases: boolean): Wanted {
  const literals = new Set<string>();
  const contents = new Map<string, string>();
  const prefixes: string[] = [];
  const heads: string[] = [];
  const tokens = new Set<string>();
  const phraseAnchors: string[] = [];
  for (const text of texts) {
    if (phrases) {
      PHRASE_ANCHOR.lastIndex = 0;
      for (let anchor = PHRASE_ANCHOR.exec(text); anchor !== null; anchor = PHRASE_ANCHOR.exec(text))
        phraseAnchors.push(anchor[0]);
    }
    QUOTED.lastIndex = 0;
    for (let match = QUOTED.exec(text); match !== null; match = QUOTED.exec(text)) {
      const literal = match[0];
      literals.add(literal);
      if (literal.endsWith(CUT)) {
        const prefix = literal.slice(0, -1);
        const backslash = prefix.indexOf('\\');
        prefixes.push(prefix);
        heads.push(prefix.slice(1, backslash < 0 ? undefined : backslash));
      } else {
        const content = contentOf(literal);
        if (content !== undefined) contents.set(content, literal);
      }
    }
    eachToken(text, (token) => tokens.add(token));
  }
  return {
    literals,
    contents,
    prefixes,
    heads,
    tokens,
    phraseAnchors,
    phraseTexts: phrases ? texts : undefined,
  };
}

/** The string whose JSON rendering is `literal`, if there is one. */
function contentOf(literal: string): string | undefined {
  // Nothing JSON.stringify escapes: the text between the quotes is the string.
  if (PLAIN_LITERAL.test(literal)) return literal.slice(1, -1);
  try {
    const content = JSON.parse(literal) as unknown;
    return typeof content === 'string' && JSON.stringify(content) === literal ? content : undefined;
  } catch {
    return undefined;
  }
}

/** Each bare token of `text` the bare pass looks up, and the same without its full stops. */
function eachToken(text: string, use: (token: string) => unknown): void {
  BARE_TOKEN.lastIndex = 0;
  for (let match = BARE_TOKEN.exec(text); match !== null; match = BARE_TOKEN.exec(text)) {
    const token = match[0];
    if (token === REDACTED_WORD) continue;
    use(token);
    if (token.charCodeAt(token.length - 1) === FULL_STOP) use(trimPunctuation(token));
  }
}

/** The wanted multi-word values, longest first (ties in the order captured), at most the cap. */
function phrasesOf(found: Collected): string[] {
  if (found.phrases.size === 0) return [];
  let phrases: string[] = [];
  for (const text of found.map.keys()) if (found.phrases.has(text)) phrases.push(text);
  if (phrases.length > 1) phrases.sort((a, b) => b.length - a.length);
  if (phrases.length > MAX_PHRASES) phrases = phrases.slice(0, MAX_PHRASES);
  return phrases;
}

function scrubPhrases(
  text: string,
  phrases: readonly string[],
  replacements: ReadonlyMap<string, string>,
): string {
  let out = text;
  for (const phrase of phrases) {
    if (!out.includes(phrase)) continue;
    out = out.split(phrase).join(replacements.get(phrase) as string);
  }
  return out;
}

/**
 * Replaces quoted JSON strings that are captured values (or a cut-off start of one, as rules
 * render long values with `…`); `joined` is set when a replacement may run into a neighbouring
 * token (a hash's digits: `[redacted]` and its quoted forms start and end with punctuation).
 */
function scrubQuoted(
  text: string,
  replacements: ReadonlyMap<string, string>,
  joined: { any: boolean },
): string {
  return text.replace(QUOTED, (literal) => {
    let replacement = replacements.get(literal);
    if (replacement === undefined && literal.endsWith(CUT))
      replacement = truncatedReplacement(literal, replacements);
    if (replacement === undefined) return literal;
    if (replacement !== QUOTED_REDACTED && replacement !== REDACTED && replacement !== CUT_REDACTED)
      joined.any = true;
    return replacement;
  });
}

/** Replaces bare tokens that are captured values. */
function scrubBare(text: string, replacements: ReadonlyMap<string, string>): string {
  return text.replace(BARE_TOKEN, (token) => {
    if (token === REDACTED_WORD) return token;
    let replacement = replacements.get(token);
    // Only a token ending in a full stop can read differently trimmed.
    if (replacement === undefined && token.charCodeAt(token.length - 1) === FULL_STOP)
      replacement = replacements.get(trimPunctuation(token));
    if (replacement === undefined) return token;
    // Bare occurrences get the bare form of the replacement.
    return replacement.charCodeAt(0) === QUOTE ? (JSON.parse(replacement) as string) : replacement;
  });
}

/** A literal like `"a long val…` is redacted when some captured string starts with its text. */
function truncatedReplacement(literal: string, replacements: ReadonlyMap<string, string>): string {
  const prefix = literal.slice(0, -1);
  for (const [text, replacement] of replacements) {
    if (text.startsWith('"') && text.startsWith(prefix)) return replacement;
  }
  // A cut inside an object or array rendering is not a string of its own: still redact it, as we
  // cannot tell which value it was.
  return CUT_REDACTED;
}

/** A token at the end of a sentence carries its full stop or colon. */
function trimPunctuation(token: string): string {
  return token.replace(/\.+$/, '');
}
