/**
 * Token-first redaction (src/judging/redact.ts) against the algorithm it replaced, kept here as a
 * brute-force oracle: every captured value rendered into one map (quoted and bare), the answers'
 * values scanned, phrases ranked, then the texts scrubbed. Over generated trajectories (nested
 * arguments and results, strings with quotes, escapes, spaces, unicode, `__proto__` keys, tool
 * errors, answers stating ids, amounts, emails, dates) and messages quoting some of those values
 * whole, bare and cut off, the two must give equal reports, and the same report object back when
 * nothing is redacted.
 */

import { createHmac, randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerValues } from '../../src/evaluate/answer-values.js';
import { REDACTED, type RedactionSetting, Redactor } from '../../src/judging/redact.js';
import type { JsonValue } from '../../src/model/json.js';
import type { AssertionResult, Report } from '../../src/model/report.js';
import type { Trajectory } from '../../src/model/trajectory.js';

// ---- The oracle: src/judging/redact.ts's algorithm before token-first, unchanged. ----

/** Strings shorter than this are left alone outside quotes: too short to carry data, too likely to hit words. */
const MIN_BARE_STRING = 3;
/** Numbers whose text is shorter than this are left alone: a `0` or `2` also names indexes and counts. */
const MIN_NUMBER_TEXT = 2;
const QUOTED = /"(?:[^"\\\n]|\\.)*(?:"|…)/g;
const BARE_TOKEN = /[\p{L}\p{N}_\-.@+]+/gu;

/** Redaction as it was before token-first: every captured value into a map, then the scrub passes. */
class BaselineRedactor {
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

// ---- The property. ----

const FIELDS = ['orderId', 'refundId', 'email', 'note', '__proto__', 'constructor', 'x y', 'amount'];
/** Pieces strings are made of: quotes, escapes, spaces, unicode, what replacements insert, value shapes. */
const PIECES = [
  'R-1001',
  'A-7',
  'ord_42',
  '$40.00',
  '40 EUR',
  '4,000',
  'ana@example.com',
  '2024-05-01',
  'https://x.io/a#b',
  '12345',
  'deadbeef1',
  'Ana',
  'Lima',
  'Ana Lima',
  'refund',
  ' ',
  '  ',
  '.',
  '..',
  ':',
  '"',
  '\\',
  '\\"',
  '\n',
  '\t',
  '…',
  'é',
  'ß',
  '日本',
  '😀',
  '\ud800',
  '\u0000',
  '[redacted]',
  'redacted',
  '[',
  ']',
  '#',
  '#1f3a',
  'a1',
  'x',
];
const piece = fc.constantFrom(...PIECES);
const text = fc.oneof(
  fc.array(piece, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('')),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);
const number = fc.oneof(
  fc.integer({ min: -100, max: 100_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(10.5, 1e21, -0, 7),
);

/** Objects whose keys may be `__proto__` (own, as JSON.parse makes them). */
function objectOf(entries: [string, JsonValue][]): JsonValue {
  const out: Record<string, JsonValue> = {};
  for (const [key, value] of entries)
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

const { json } = fc.letrec<{ json: JsonValue }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    number,
    fc.constantFrom(true, false, null),
    fc.array(tie('json'), { maxLength: 3 }),
    fc.array(fc.tuple(fc.constantFrom(...FIELDS), tie('json')), { maxLength: 3 }).map(objectOf),
  ),
}));

/** Sometimes a value nested around the depth bound. */
const captured = fc.oneof(
  { weight: 5, arbitrary: json },
  {
    weight: 1,
    arbitrary: fc
      .tuple(json, fc.integer({ min: 29, max: 35 }), fc.constantFrom(...FIELDS))
      .map(([inner, depth, field]) => {
        let value = inner;
        for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : objectOf([[field, value]]);
        return value;
      }),
  },
);

interface Call {
  args: { captured: true; value: JsonValue } | { captured: false };
  result: { captured: true; value: JsonValue } | { captured: false };
  outcome: { status: 'ok' } | { status: 'error'; message?: string };
}
const slot = fc.oneof(
  { weight: 4, arbitrary: captured.map((value) => ({ captured: true as const, value })) },
  { weight: 1, arbitrary: fc.constant({ captured: false as const }) },
);
const call: fc.Arbitrary<Call> = fc.record({
  args: slot,
  result: slot,
  outcome: fc.oneof(
    fc.constant({ status: 'ok' as const }),
    fc.option(text, { nil: undefined }).map((message) => ({ status: 'error' as const, message })),
  ),
});
const answer = fc
  .array(fc.oneof(piece, text, fc.constantFrom(' ', ', ', '. ')), { maxLength: 8 })
  .map((parts) => parts.join(' '));
const trajectory = fc.record({
  calls: fc.array(call, { maxLength: 4 }),
  turns: fc.option(fc.array(fc.record({ answer: fc.option(answer, { nil: undefined }) }), { maxLength: 3 }), {
    nil: undefined,
  }),
});

/** Every string and number a generated trajectory holds, as a message may quote it. */
function valuesIn(input: { calls: Call[]; turns?: { answer?: string }[] }): (string | number)[] {
  const out: (string | number)[] = [];
  const stack: JsonValue[] = [];
  for (const c of input.calls) {
    if (c.args.captured) stack.push(c.args.value);
    if (c.result.captured) stack.push(c.result.value);
    if (c.outcome.status === 'error' && c.outcome.message) out.push(c.outcome.message);
  }
  while (stack.length > 0) {
    const value = stack.pop() as JsonValue;
    if (typeof value === 'string' || typeof value === 'number') out.push(value);
    else if (Array.isArray(value)) stack.push(...value);
    else if (value !== null && typeof value === 'object') stack.push(...Object.values(value));
  }
  for (const turn of input.turns ?? [])
    if (turn.answer) out.push(...answerValues(turn.answer).map((v) => v.text));
  return out;
}

/** A message quoting some of `values`: whole, bare, cut off, amid other text. */
function messageOf(values: (string | number)[]): fc.Arbitrary<string> {
  const quote = values.length === 0 ? [] : [fc.constantFrom(...values)];
  const part = fc.oneof(
    ...quote.map((value) => value.map((v) => JSON.stringify(v))),
    ...quote.map((value) => value.map((v) => String(v))),
    ...quote.map((value) =>
      fc.tuple(value, fc.nat(12)).map(([v, cut]) => `${JSON.stringify(v).slice(0, cut + 1)}…`),
    ),
    ...quote.map((value) => value.map((v) => `${String(v)}.`)),
    piece,
    text,
  );
  return fc
    .array(fc.tuple(part, fc.constantFrom(' ', '', ': ', '. ', ' of ', '; ', '"')), { maxLength: 6 })
    .map((parts) => parts.map(([p, s]) => p + s).join(''));
}

const options: fc.Arbitrary<RedactionSetting> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(false as const) },
  {
    weight: 6,
    arbitrary: fc.record({
      keepFields: fc.option(fc.subarray(FIELDS, { maxLength: 2 }), { nil: undefined }),
      hashFields: fc.option(fc.subarray(FIELDS, { maxLength: 3 }), { nil: undefined }),
      hashKey: fc.constant('test-key'),
    }),
  },
);

function reportOf(messages: string[], reasons: string[]): Report {
  const findings = messages.map((message, i) => ({ ruleId: `rule.${i}`, severity: 'error', message }));
  const assertions = reasons.map((reason, i) => ({
    name: `a.${i}`,
    status: reason === '' ? 'pass' : 'fail',
    reason,
  }));
  return { scenarioId: 's', traceId: 't', findings, assertions } as unknown as Report;
}

const input = trajectory.chain((t) =>
  fc.record({
    trajectory: fc.constant(t),
    messages: fc.array(messageOf(valuesIn(t)), { maxLength: 3 }),
    reasons: fc.array(fc.oneof(fc.constant(''), messageOf(valuesIn(t))), { maxLength: 3 }),
    setting: options,
  }),
);

describe('Redactor (token first) against the full-map algorithm', () => {
  it('gives the same report for every trajectory, message and configuration', () => {
    fc.assert(
      fc.property(input, ({ trajectory: t, messages, reasons, setting }) => {
        const report = reportOf(messages, [...reasons, ...messages.slice(0, 1)]);
        const traj = t as unknown as Trajectory;
        const ours = new Redactor(setting).redact(report, traj);
        const theirs = new BaselineRedactor(setting).redact(report, traj);
        expect(ours).toStrictEqual(theirs);
        // The report itself exactly when redaction changes nothing in it.
        expect(ours === report).toBe(isDeepStrictEqual(theirs, report));
      }),
      { numRuns: 3_000 },
    );
  });

  it('gives the same report past the phrase cap (more than 2,000 multi-word values)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_990, max: 2_100 }),
        fc.array(fc.nat(2_200), { maxLength: 4 }),
        (count, picks) => {
          // Lengths vary so the cap cuts by length, and ties rank by the order captured.
          const values = Array.from({ length: count }, (_, i) => `v ${i} ${'x'.repeat(i % 7)}`);
          const traj = {
            calls: [
              {
                args: { captured: true, value: values },
                result: { captured: false },
                outcome: { status: 'ok' },
              },
            ],
          };
          const message = picks
            .map((i) => `saw ${values[i % count]} and "${values[(i * 7) % count]}"`)
            .join('; ');
          const report = reportOf([message], [message]);
          const ours = new Redactor({}).redact(report, traj as unknown as Trajectory);
          const theirs = new BaselineRedactor({}).redact(report, traj as unknown as Trajectory);
          expect(ours).toStrictEqual(theirs);
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('Redactor (token first) where a replacement makes new text to match', () => {
  const key = { hashKey: 'test-key' };
  const hashOf = (value: string) => new Redactor(key).hashOf(value);
  const same = (setting: RedactionSetting, values: JsonValue, message: string) => {
    const traj = {
      calls: [
        { args: { captured: true, value: values }, result: { captured: false }, outcome: { status: 'ok' } },
      ],
    };
    const report = reportOf([message], [message]);
    const ours = new Redactor(setting).redact(report, traj as unknown as Trajectory);
    const theirs = new BaselineRedactor(setting).redact(report, traj as unknown as Trajectory);
    expect(ours).toStrictEqual(theirs);
    return ours.findings[0]?.message;
  };

  it('a phrase that runs into an earlier phrase’s [redacted]', () => {
    expect(same({}, ['Ana Lima', 'hello ['], 'hello Ana Lima')).toBe('[redacted]redacted]');
  });

  it('a phrase that starts inside an earlier phrase’s hash', () => {
    // Shorter than `Ana Lima`, so looked for after it is replaced.
    const hash = hashOf('Ana Lima');
    const tail = `${hash.slice(-3)} ta`;
    expect(same({ ...key, hashFields: ['h'] }, [{ h: 'Ana Lima' }, tail], 'Ana Lima ta')).toBe(
      `${hash.slice(0, -3)}[redacted]`,
    );
  });

  it('a token that a quoted value’s hash joins with the text after it', () => {
    const joinedToken = `${hashOf('"ab"').slice(1)}xyz`;
    expect(same({ ...key, hashFields: ['h'] }, [{ h: '"ab"' }, joinedToken], 'saw "ab"xyz')).toBe(
      'saw #[redacted]',
    );
  });
});
