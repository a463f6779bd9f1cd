/**
 * Redaction before anything leaves the process: finding messages quote argument and result
 * values ("refundId "R-7731" appears in no earlier result"), so every value the trajectory
 * captured is found in the text and replaced, unless its field is allowlisted (kept) or listed
 * for hashing (replaced by a keyed hash, the same for the same value, so "the id it was given"
 * and "the id it sent" still visibly differ or match).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { answerValues } from '../evaluate/answer-values.js';
import type { JsonValue } from '../model/json.js';
import type { AssertionResult, Report } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';

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

/** What a redacted value reads as. */
export const REDACTED = '[redacted]';

/** Strings shorter than this are left alone outside quotes: too short to carry data, too likely to hit words. */
const MIN_BARE_STRING = 3;
/** Numbers whose text is shorter than this are left alone: a `0` or `2` also names indexes and counts. */
const MIN_NUMBER_TEXT = 2;
const QUOTED = /"(?:[^"\\\n]|\\.)*(?:"|…)/g;
const BARE_TOKEN = /[\p{L}\p{N}_\-.@+]+/gu;

/** Redacts reports for one configuration; reuse it (it holds the hash key). */
export class Redactor {
  private readonly keep: ReadonlySet<string>;
  private readonly hash: ReadonlySet<string>;
  private readonly key: string | Uint8Array;
  /** Whether any field is kept or hashed: the usual configuration has neither, and skips the lookups. */
  private readonly keepAny: boolean;
  private readonly hashAny: boolean;

  constructor(readonly setting: RedactionSetting = {}) {
    const options = setting === false ? {} : setting;
    this.keep = new Set(options.keepFields ?? []);
    this.hash = new Set(options.hashFields ?? []);
    this.keepAny = this.keep.size > 0;
    this.hashAny = this.hash.size > 0;
    this.key = options.hashKey ?? randomBytes(32);
  }

  /**
   * A copy of `report` whose finding messages and assertion reasons quote no captured value of
   * `trajectory` except allowlisted ones. The report is returned as is when there is nothing to redact.
   */
  redact(report: Report, trajectory: Trajectory): Report {
    if (this.setting === false) return report;
    if (report.findings.length === 0 && !hasReason(report.assertions)) return report;
    const values = this.valuesOf(trajectory);
    if (values.replacements.size === 0) return report;
    // An assertion's reason is its finding's message: scrub each distinct text once.
    const scrubbed = new Map<string, string>();
    return {
      ...report,
      findings: report.findings.map((finding) => ({
        ...finding,
        message: scrubOnce(finding.message, values, scrubbed),
      })),
      assertions: report.assertions.map((assertion) =>
        assertion.reason === ''
          ? assertion
          : { ...assertion, reason: scrubOnce(assertion.reason, values, scrubbed) },
      ),
    };
  }

  /** The keyed hash a value of a hashed field reads as. */
  hashOf(value: string): string {
    return `#${createHmac('sha256', this.key).update(value).digest('hex').slice(0, 12)}`;
  }

  /**
   * Every scenario's report on one trajectory redacts the same values: collect them once. One
   * slot, not a WeakMap keyed by trajectory (an entry keyed by a short-lived object costs the
   * collector more than the lookup saves); {@link release} lets it go.
   */
  private collected: { trajectory: Trajectory; values: CapturedValues } | undefined;

  /** Forgets the values collected for the last trajectory: call when done with it. */
  release(): void {
    this.collected = undefined;
  }

  private valuesOf(trajectory: Trajectory): CapturedValues {
    if (this.collected?.trajectory === trajectory) return this.collected.values;
    const replacements = this.replacementsFor(trajectory);
    // Values with spaces or punctuation are not one token: find them anywhere, longest first.
    let phrases: string[] = [];
    for (const text of replacements.keys()) {
      if (text.length >= MIN_PHRASE && text.charCodeAt(0) !== QUOTE && NOT_ONE_TOKEN.test(text))
        phrases.push(text);
    }
    if (phrases.length > 1) phrases.sort((a, b) => b.length - a.length);
    if (phrases.length > MAX_PHRASES) phrases = phrases.slice(0, MAX_PHRASES);
    const values = { replacements, phrases };
    this.collected = { trajectory, values };
    return values;
  }

  /** Text of every captured value (as quoted JSON and bare) -> what it reads as in output. */
  private replacementsFor(trajectory: Trajectory): Map<string, string> {
    const replacements = new Map<string, string>();
    for (const call of trajectory.calls) {
      if (call.args.captured) this.visit(call.args.value, undefined, 0, replacements);
      if (call.result.captured) this.visit(call.result.value, undefined, 0, replacements);
      // A tool's error message is part of its result ("no record for Ana Lima").
      if (call.outcome.status === 'error' && call.outcome.message)
        this.visit(call.outcome.message, undefined, 0, replacements);
    }
    // The values an answer states (answer checks quote them): redacted like the others, or as
    // the same value of a call is; a value only kept under an allowlisted field is still redacted here.
    // A partial stand-in for a trajectory (calls alone) has no turns.
    for (const turn of trajectory.turns ?? []) {
      if (turn.answer === undefined) continue;
      for (const value of answerValues(turn.answer)) {
        const quoted = JSON.stringify(value.text);
        if (!replacements.has(quoted)) replacements.set(quoted, QUOTED_REDACTED);
        if (!replacements.has(value.text)) replacements.set(value.text, REDACTED);
      }
    }
    return replacements;
  }

  /** Adds the replacements of `value` (found under `field`) and of what it holds. */
  private visit(
    value: JsonValue,
    field: string | undefined,
    depth: number,
    replacements: Map<string, string>,
  ): void {
    if (field !== undefined && this.keepAny && this.keep.has(field)) return;
    if (typeof value === 'string') {
      const hashed = field !== undefined && this.hashAny && this.hash.has(field);
      const replacement = hashed ? this.hashOf(value) : REDACTED;
      // Quoted first: a hashed value inside a JSON rendering stays a JSON string.
      replacements.set(JSON.stringify(value), hashed ? JSON.stringify(replacement) : QUOTED_REDACTED);
      if (value.length >= MIN_BARE_STRING && !replacements.has(value)) replacements.set(value, replacement);
    } else if (typeof value === 'number') {
      const text = String(value);
      if (text.length >= MIN_NUMBER_TEXT) replacements.set(text, REDACTED);
    } else if (Array.isArray(value)) {
      if (depth < MAX_DEPTH) for (const item of value) this.visit(item, field, depth + 1, replacements);
    } else if (value !== null && typeof value === 'object') {
      if (depth < MAX_DEPTH)
        for (const key of Object.keys(value))
          this.visit(value[key] as JsonValue, key, depth + 1, replacements);
    }
  }
}

function hasReason(assertions: readonly AssertionResult[]): boolean {
  for (const assertion of assertions) if (assertion.reason !== '') return true;
  return false;
}

/** A trajectory's captured values: text -> what it reads as, and the multi-word ones, longest first. */
interface CapturedValues {
  replacements: Map<string, string>;
  phrases: string[];
}

/** Values nested deeper than this are not looked at: rules render only the first levels anyway. */
const MAX_DEPTH = 32;
/** Multi-word values shorter than this are left to the token pass. */
const MIN_PHRASE = 6;
/** Multi-word values looked for in each message at most (the longest): bounded work per finding. */
const MAX_PHRASES = 2_000;
const NOT_ONE_TOKEN = /[^\p{L}\p{N}_\-.@+]/u;
const QUOTE = 0x22;
const FULL_STOP = 0x2e;
const QUOTED_REDACTED = JSON.stringify(REDACTED);
/** The word inside `[redacted]`: a token the bare pass meets in text it already redacted. */
const REDACTED_WORD = REDACTED.slice(1, -1);

/** `text` scrubbed, through `done`: the same text in one report is scrubbed once. */
function scrubOnce(text: string, values: CapturedValues, done: Map<string, string>): string {
  let scrubbed = done.get(text);
  if (scrubbed === undefined) {
    scrubbed = scrubText(scrubPhrases(text, values.phrases, values.replacements), values.replacements);
    done.set(text, scrubbed);
  }
  return scrubbed;
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
 * render long values with `…`), then bare tokens that are captured values.
 */
function scrubText(text: string, replacements: ReadonlyMap<string, string>): string {
  const quotedDone = text.replace(QUOTED, (literal) => {
    const whole = replacements.get(literal);
    if (whole !== undefined) return whole;
    if (literal.endsWith('…')) return truncatedReplacement(literal, replacements) ?? literal;
    return literal;
  });
  return quotedDone.replace(BARE_TOKEN, (token) => {
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
function truncatedReplacement(
  literal: string,
  replacements: ReadonlyMap<string, string>,
): string | undefined {
  const prefix = literal.slice(0, -1);
  for (const [text, replacement] of replacements) {
    if (text.startsWith('"') && text.startsWith(prefix)) return replacement;
  }
  // A cut inside an object or array rendering is not a string of its own: still redact it, as we
  // cannot tell which value it was.
  return `"${REDACTED}…`;
}

/** A token at the end of a sentence carries its full stop or colon. */
function trimPunctuation(token: string): string {
  return token.replace(/\.+$/, '');
}
