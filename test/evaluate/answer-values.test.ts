import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OfferedKeys, SoughtKeys } from '../../src/evaluate/answer-keys.js';
import { type AnswerValueKind, answerValues, offeredKeys } from '../../src/evaluate/answer-values.js';

/** A token the generator knows the truth of: its text, and the value it is (or none, for a word). */
interface Token {
  text: string;
  value?: { kind: AnswerValueKind; key: string };
}

const grouped = (n: number) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const word = fc
  .constantFrom('refund', 'your', 'is', 'on', 'its', 'way', 'order', 'thanks')
  .map((text): Token => ({ text }));
const smallNumber = fc.integer({ min: 0, max: 9999 });
const amount = fc
  .tuple(smallNumber, fc.constantFrom('$', '€', ''), fc.boolean(), fc.boolean())
  .map(([n, sign, cents, group]): Token => {
    const digits = group ? grouped(n) : String(n);
    const written = `${digits}${cents ? '.00' : ''}`;
    return sign === ''
      ? { text: `${written} EUR`, value: { kind: 'amount', key: String(n) } }
      : { text: `${sign}${written}`, value: { kind: 'amount', key: String(n) } };
  });
const number = fc.tuple(smallNumber, fc.boolean()).map(
  ([n, group]): Token => ({
    text: group ? grouped(n) : String(n),
    value: n >= 10_000 ? { kind: 'id', key: String(n) } : { kind: 'number', key: String(n) },
  }),
);
const prefixedId = fc
  .tuple(
    fc.constantFrom('R', 'ord', 'cus', 'TKT'),
    fc.constantFrom('-', '_'),
    fc.integer({ min: 1, max: 99_999 }),
  )
  .map(([prefix, sep, n]): Token => {
    const text = `${prefix}${sep}${n}`;
    return { text, value: { kind: 'id', key: text.toLowerCase() } };
  });
const digitRun = fc
  .integer({ min: 10_000, max: 99_999_999 })
  .map((n): Token => ({ text: String(n), value: { kind: 'id', key: String(n) } }));
const uuid = fc.uuid().map((text): Token => ({ text, value: { kind: 'id', key: text.toLowerCase() } }));
const email = fc
  .tuple(fc.constantFrom('sam', 'ana.lima', 'ops+1'), fc.constantFrom('example.test', 'shop.example.com'))
  .map(([local, domain]): Token => {
    const text = `${local}@${domain}`;
    return { text, value: { kind: 'email', key: text } };
  });
const date = fc
  .tuple(
    fc.integer({ min: 2000, max: 2099 }),
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 28 }),
  )
  .map(([y, m, d]): Token => {
    const text = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
    return { text, value: { kind: 'date', key: text } };
  });
const url = fc
  .constantFrom('https://shop.example/r/1', 'http://x.example/a?b=1')
  .map((text): Token => ({ text, value: { kind: 'url', key: text } }));
const token = fc.oneof(word, word, amount, number, prefixedId, digitRun, uuid, email, date, url);
/** Tokens separated by a space, some followed by a comma or a full stop, as prose is. */
const sentence = fc.array(fc.tuple(token, fc.constantFrom(' ', ', ', '. ')), { maxLength: 12 });
const textOf = (tokens: [Token, string][]) => tokens.map(([t, sep]) => `${t.text}${sep}`).join('');

describe('answerValues', () => {
  it('finds exactly the values a sentence was made of, each of its kind, normalized', () => {
    fc.assert(
      fc.property(sentence, (tokens) => {
        const expected = tokens.flatMap(([t]) => (t.value ? [t.value] : []));
        const found = answerValues(textOf(tokens)).map(({ kind, key }) => ({ kind, key }));
        expect(found).toEqual(expected);
        // Past 512 characters the scan runs on re2js instead of V8's engine: the same values.
        const long = answerValues(`${'-'.repeat(600)} ${textOf(tokens)}`).map(({ kind, key }) => ({
          kind,
          key,
        }));
        expect(long).toEqual(expected);
      }),
    );
  });

  it('reads the shapes the docs list', () => {
    const found = (text: string) => answerValues(text).map(({ text: t, kind, key }) => [t, kind, key]);
    expect(found('Refund $4,000.00 to ana@example.com on 2026-03-01: https://x.example/r/1.')).toEqual([
      ['$4,000.00', 'amount', '4000'],
      ['ana@example.com', 'email', 'ana@example.com'],
      ['2026-03-01', 'date', '2026-03-01'],
      ['https://x.example/r/1', 'url', 'https://x.example/r/1'],
    ]);
    expect(found('deadbeef1 cafe R2D2 v1.5.2 abc12345xyz 3 items')).toEqual([
      ['deadbeef1', 'id', 'deadbeef1'],
      ['3', 'number', '3'],
    ]);
  });
});

/** The brute-force oracle of grounding: every way a result value may be written in an answer. */
function writtenForms(value: number | string): Set<string> {
  const forms = new Set<string>();
  if (typeof value === 'number') {
    for (const digits of [String(value), grouped(value)])
      for (const cents of ['', '.00'])
        for (const [before, after] of [
          ['', ''],
          ['$', ''],
          ['€', ''],
          ['USD ', ''],
          ['', ' EUR'],
        ])
          forms.add(`${before}${digits}${cents}${after}`);
  } else {
    forms.add(value);
    forms.add(value.toLowerCase());
    forms.add(value.toUpperCase());
  }
  return forms;
}

describe('offeredKeys against the brute-force oracle', () => {
  const resultValue = fc.oneof(
    smallNumber,
    prefixedId.map((t) => t.text),
  );
  it('a value the answer states is offered by a result exactly when one of the ways of writing a result value is it', () => {
    fc.assert(
      fc.property(
        fc.array(resultValue, { maxLength: 6 }),
        fc.oneof(amount, prefixedId, number),
        (values, stated) => {
          const keys = new OfferedKeys();
          offeredKeys({ fields: values }, keys);
          const [found] = answerValues(stated.text);
          if (!found) throw new Error(`no value in ${stated.text}`);
          const oracle = values.some((value) => writtenForms(value).has(stated.text));
          expect(
            keys.has(found.kind, found.key) || (found.kind === 'id' && keys.has('number', found.key)),
          ).toBe(oracle);
        },
      ),
    );
  });

  it('SoughtKeys finds just the stated values the offered keys hold (an id of digits held by a number too)', () => {
    const token = fc.oneof(amount, prefixedId, number, digitRun, email, date, url, uuid);
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            resultValue,
            token.map((t) => t.text),
          ),
          { maxLength: 6 },
        ),
        fc.array(token, { maxLength: 5 }),
        (values, tokens) => {
          const stated = answerValues(tokens.map((t) => t.text).join(' and '));
          const keys = new OfferedKeys();
          offeredKeys({ fields: values }, keys);
          const sought = new SoughtKeys(stated);
          offeredKeys({ fields: values }, sought);
          const oracle = stated.filter(
            (value) =>
              !keys.has(value.kind, value.key) &&
              !(value.kind === 'id' && /^\d+$/.test(value.key) && keys.has('number', value.key)),
          );
          expect(sought.missing()).toEqual(oracle);
          expect(sought.allFound).toBe(oracle.length === 0);
        },
      ),
    );
  });
});
