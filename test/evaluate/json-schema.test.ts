import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { matchArgs } from '../../src/evaluate/match-args.js';
import type { JsonValue } from '../../src/model/json.js';
import type { JsonObject } from '../../src/scenario/assertions.js';
import { compileArgsSchema, validateAgainstSchema } from '../../src/scenario/json-schema.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { buildTrajectory } from '../helpers/trajectory.js';

const captured = (value: JsonValue) => ({ captured: true as const, value });
const bySchema = (schema: JsonObject, value: JsonValue) =>
  matchArgs({ mode: 'schema', schema }, captured(value));

const refundSchema = {
  type: 'object',
  required: ['order_id', 'amount'],
  additionalProperties: false,
  properties: {
    order_id: { type: 'string', pattern: '^ord_[0-9]+$' },
    amount: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
    currency: { enum: ['EUR', 'USD'] },
    items: { type: 'array', items: { type: 'object', properties: { sku: { const: 'a' } } } },
    'odd key': { type: 'string' },
  },
};

describe('schema mode', () => {
  it('passes arguments that satisfy the schema', () => {
    expect(bySchema(refundSchema, { order_id: 'ord_42', amount: 40, currency: 'EUR' })).toEqual({
      status: 'match',
    });
  });

  it("fails with ajv's errors made readable: path, rule, and the value seen", () => {
    expect(bySchema(refundSchema, { order_id: 'ord_42', amount: 150 })).toEqual({
      status: 'mismatch',
      detail: 'amount: must be <= 100 (saw 150)',
    });
    expect(bySchema(refundSchema, { amount: 1, currency: 'GBP', note: 'rush' })).toEqual({
      status: 'mismatch',
      detail:
        'must have required property \'order_id\', must not have the additional property "note", ' +
        'currency: must be one of "EUR", "USD" (saw "GBP")',
    });
    expect(
      validateAgainstSchema(refundSchema, { order_id: 'x', amount: 0, items: [{ sku: 'b' }], 'odd key': 1 }),
    ).toEqual({
      valid: false,
      errors: [
        'order_id: must match pattern "^ord_[0-9]+$" (saw "x")',
        'amount: must be > 0 (saw 0)',
        'items[0].sku: must be "a" (saw "b")',
        '["odd key"]: must be string (saw 1)',
      ],
    });
  });

  it('lists at most three violations and counts the rest', () => {
    const outcome = bySchema(refundSchema, { order_id: 'x', amount: 0, items: [{ sku: 'b' }], 'odd key': 1 });
    expect(outcome).toEqual({
      status: 'mismatch',
      detail:
        'order_id: must match pattern "^ord_[0-9]+$" (saw "x"), amount: must be > 0 (saw 0), ' +
        'items[0].sku: must be "a" (saw "b") and 1 more difference(s)',
    });
  });

  it('reads own properties only: constructor is not present on {}, __proto__ is an ordinary key', () => {
    const schema = JSON.parse(
      '{"required": ["constructor", "__proto__"], "patternProperties": {"^__proto__$": {"type": "object"}}}',
    ) as JsonObject;
    expect(bySchema(schema, {})).toEqual({
      status: 'mismatch',
      detail: "must have required property 'constructor', must have required property '__proto__'",
    });
    expect(bySchema(schema, JSON.parse('{"constructor": 1, "__proto__": {}}'))).toEqual({ status: 'match' });
    expect(bySchema(schema, JSON.parse('{"constructor": 1, "__proto__": 2}'))).toEqual({
      status: 'mismatch',
      detail: '__proto__: must be object (saw 2)',
    });
  });

  it('refuses __proto__ under properties, which ajv would skip without a word', () => {
    const schema = JSON.parse('{"properties": {"__proto__": {"type": "object"}}}') as JsonObject;
    expect(compileArgsSchema(schema)).toEqual({
      ok: false,
      problems: [
        {
          path: ['properties', '__proto__'],
          message:
            'a property named "__proto__" cannot be given here (the validator would skip it); ' +
            'use patternProperties {"^__proto__$": …} instead',
        },
      ],
    });
  });

  it('runs pattern on RE2, so a catastrophic pattern cannot hang', () => {
    const schema = { type: 'string', pattern: '^(a+)+$' };
    const started = performance.now();
    expect(bySchema(schema, `${'a'.repeat(100_000)}!`).status).toBe('mismatch');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('follows $schema: draft-07 and 2019-09 schemas validate by their own rules', () => {
    const draft07 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      definitions: { amount: { type: 'number', maximum: 10 } },
      properties: { amount: { $ref: '#/definitions/amount' } },
    };
    expect(bySchema(draft07, { amount: 5 })).toEqual({ status: 'match' });
    expect(bySchema(draft07, { amount: 50 })).toEqual({
      status: 'mismatch',
      detail: 'amount: must be <= 10 (saw 50)',
    });
    const draft2019 = { $schema: 'https://json-schema.org/draft/2019-09/schema', maxProperties: 1 };
    expect(bySchema(draft2019, { a: 1, b: 2 })).toEqual({
      status: 'mismatch',
      detail: 'must NOT have more than 1 properties',
    });
  });

  it('keeps each schema to itself: an $id in one never answers a $ref in another', () => {
    const defines = { properties: { a: { $id: 'https://example.test/a', type: 'string' } } };
    expect(compileArgsSchema(defines).ok).toBe(true);
    const refers = { properties: { b: { $ref: 'https://example.test/a' } } };
    expect(compileArgsSchema(refers)).toEqual({
      ok: false,
      problems: [
        {
          path: [],
          message:
            'cannot resolve $ref https://example.test/a: only references inside the schema itself are supported',
        },
      ],
    });
  });

  it('is undecided, not thrown, for an unusable schema built in code past the loader', () => {
    expect(bySchema({ type: 'strin' }, {})).toEqual({
      status: 'undecided',
      detail:
        'the JSON Schema cannot be used: not a valid JSON Schema (draft 2020-12): must be one of "array", ' +
        '"boolean", "integer", "null", "number", "object", "string"; got "strin"',
    });
  });

  it('property: the schema {} accepts any captured arguments', () => {
    const anyJson = fc
      .jsonValue({ maxDepth: 3 })
      .map((value) => JSON.parse(JSON.stringify(value)) as JsonValue);
    fc.assert(
      fc.property(anyJson, (value) => {
        expect(bySchema({}, value)).toEqual({ status: 'match' });
      }),
    );
  });
});

describe('compiled once', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('compiles at load and never while evaluating, however many calls and evaluations', () => {
    const core = Object.getPrototypeOf(Ajv2020.prototype) as { compile: (...args: unknown[]) => unknown };
    const compile = vi.spyOn(core, 'compile');
    const scenario = parseScenario(
      {
        arguments: [
          { tool: 'refund', match: { mode: 'schema', schema: { properties: { n: { maximum: 3 } } } } },
        ],
      },
      'once.json',
    );
    expect(compile).toHaveBeenCalledTimes(1);
    const trajectory = buildTrajectory([
      { tool: 'refund', args: { n: 9 } },
      { tool: 'refund', args: { n: 8 } },
      { tool: 'refund', args: { n: 1 } },
    ]);
    expect(evaluate(trajectory, scenario).verdict).toBe('pass');
    expect(evaluate(trajectory, scenario).verdict).toBe('pass');
    expect(compile).toHaveBeenCalledTimes(1);
    const schema = scenario.rules.arguments?.[0]?.match.schema ?? {};
    expect(compileArgsSchema(schema)).toBe(compileArgsSchema(schema));
  });
});
