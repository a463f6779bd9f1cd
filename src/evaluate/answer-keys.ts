/**
 * Where `offeredKeys` (answer-values.ts) puts the keys a result offers: all of them by kind (OfferedKeys, for
 * a finding's nearest values), or only whether each of an answer's values is among them
 * (SoughtKeys, for the verdict: no key sets made).
 */
import type { AnswerValue, AnswerValueKind } from './answer-values.js';

/** Where `offeredKeys` (answer-values.ts) puts the keys it finds. */
export interface KeySink {
  /** `shown`: the value as the result wrote it, when it was found as this kind. */
  add(kind: AnswerValueKind, key: string, shown?: string): void;
  /** Whether keys of this kind are still of use (false: making them can be skipped). */
  wants(kind: AnswerValueKind): boolean;
}

/**
 * Which of an answer's values the keys offered so far hold, without keeping the keys: a stated
 * id of digits alone is held by a number too (`Order 12345` for `{"order": 12345}`).
 */
export class SoughtKeys implements KeySink {
  readonly #values: readonly AnswerValue[];
  readonly #found: boolean[];
  #left: number;
  /** Per kind, how many values not yet found a key of it could hold. */
  readonly #wanted: Record<AnswerValueKind, number> = {
    id: 0,
    amount: 0,
    number: 0,
    email: 0,
    url: 0,
    date: 0,
  };

  constructor(values: readonly AnswerValue[]) {
    this.#values = values;
    this.#found = new Array<boolean>(values.length).fill(false);
    this.#left = values.length;
    for (const value of values) this.#count(value, 1);
  }

  add(kind: AnswerValueKind, key: string): void {
    if (this.#wanted[kind] === 0) return;
    const values = this.#values;
    for (let i = 0; i < values.length; i++) {
      const value = values[i] as AnswerValue;
      if (this.#found[i] || value.key !== key) continue;
      if (value.kind === kind || (kind === 'number' && value.kind === 'id' && DIGITS.test(key))) {
        this.#found[i] = true;
        this.#left--;
        this.#count(value, -1);
      }
    }
  }

  wants(kind: AnswerValueKind): boolean {
    return this.#wanted[kind] > 0;
  }

  #count(value: AnswerValue, by: number): void {
    this.#wanted[value.kind] += by;
    if (value.kind === 'id' && DIGITS.test(value.key)) this.#wanted.number += by;
  }

  /** Whether every value was found: nothing more needs walking. */
  get allFound(): boolean {
    return this.#left === 0;
  }

  /** The values no key held, in the order given. */
  missing(): AnswerValue[] {
    return this.#values.filter((_, i) => !this.#found[i]);
  }
}

const DIGITS = /^\d+$/;

/** Keys by kind, with the values as they were written (for the nearest values a finding names). */
export class OfferedKeys implements KeySink {
  wants(): boolean {
    return true;
  }

  readonly #keys = new Map<AnswerValueKind, Set<string>>();
  /** Values found as a kind (not a whole field read every way), by key: what a finding offers as nearest. */
  readonly #shown = new Map<AnswerValueKind, Map<string, string>>();

  /** `shown`: the value as the result wrote it, when it was found as this kind. */
  add(kind: AnswerValueKind, key: string, shown?: string): void {
    let keys = this.#keys.get(kind);
    if (!keys) {
      keys = new Set();
      this.#keys.set(kind, keys);
    }
    keys.add(key);
    if (shown === undefined) return;
    let values = this.#shown.get(kind);
    if (!values) {
      values = new Map();
      this.#shown.set(kind, values);
    }
    if (!values.has(key)) values.set(key, shown);
  }

  /** The values of one kind the sources were found to hold, by key, as written there. */
  shown(kind: AnswerValueKind): ReadonlyMap<string, string> {
    return this.#shown.get(kind) ?? new Map();
  }

  has(kind: AnswerValueKind, key: string): boolean {
    return this.#keys.get(kind)?.has(key) === true;
  }
}
