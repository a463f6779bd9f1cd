import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../src/model/json.js';
import { type Captured, isReadable, tooDeep, unreadable } from '../../src/model/trajectory.js';

describe('isReadable', () => {
  const cases: [string, Captured<JsonValue>, boolean][] = [
    ['a captured JSON value', { captured: true, value: { amount: 40 } }, true],
    ['a captured null', { captured: true, value: null }, true],
    ['a value never captured', { captured: false }, false],
    [
      'a string that is not JSON',
      { captured: true, value: '{"amount":', parseError: 'Unexpected end' },
      false,
    ],
    ['a value nested too deep', tooDeep(), false],
  ];
  it.each(cases)('%s', (_, value, readable) => {
    expect(isReadable(value)).toBe(readable);
    // The guard and the phrase rules give agree: a captured value is unreadable exactly when a phrase says why.
    if (value.captured) expect(unreadable(value) === undefined).toBe(readable);
  });
});
