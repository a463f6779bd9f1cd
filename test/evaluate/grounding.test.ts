import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groundingFamily } from '../../src/evaluate/grounding.js';
import type { RuleResult } from '../../src/evaluate/rule.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { JsonValue } from '../../src/model/json.js';
import type { Captured, Trajectory } from '../../src/model/trajectory.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { pathMatches, readPath, walkJson } from '../../src/scenario/json-path.js';
import { type GroundingRule, rulesSchema } from '../../src/scenario/native.js';
import { buildTrajectory, NOT_CAPTURED, type StepSpec } from '../helpers/trajectory.js';

/** A grounding rule as a scenario would write it, with the schema's defaults applied. */
const rule = (input: Record<string, unknown>): GroundingRule =>
  rulesSchema.parse({ grounding: [input] }).grounding?.[0] as GroundingRule;

/**
 * buildTrajectory records no results: set them on the built calls, by call id. NOT_CAPTURED
 * leaves one unrecorded; a `{raw, parseError}` entry records an unparsable result.
 */
function withResults(
  trajectory: Trajectory,
  results: Record<string, JsonValue | typeof NOT_CAPTURED | { raw: string; parseError: string }>,
): Trajectory {
  for (const [id, result] of Object.entries(results)) {
    const call = trajectory.call(id);
    if (!call) throw new Error(`no call ${id}`);
    let captured: Captured<JsonValue> = { captured: true, value: result as JsonValue };
    if (result === NOT_CAPTURED) captured = { captured: false };
    else if (typeof result === 'object' && result !== null && 'parseError' in result && 'raw' in result)
      captured = { captured: true, value: result.raw as string, parseError: result.parseError as string };
    call.result = captured;
  }
  return trajectory;
}

const check = (trajectory: Trajectory, input: Record<string, unknown>): RuleResult => {
  const [result] = groundingFamily(trajectory, [rule(input)]);
  if (!result) throw new Error('no result');
  return result;
};
const ids = (result: RuleResult) => result.calls.map((call) => call.id);

/** Seed 000's refund run: the two reads in parallel, then the refund, then the confirmation. */
function refundRun(
  options: { refundId?: string; amount?: JsonValue; returned?: string; steps?: StepSpec[] } = {},
): Trajectory {
  const steps: StepSpec[] = options.steps ?? [
    [
      { tool: 'get_order', args: { orderId: 'O-17' } },
      { tool: 'get_refund_policy', args: { orderId: 'O-17' } },
    ],
    { tool: 'issue_refund', args: { orderId: 'O-17', amount: options.amount ?? 40 } },
    { tool: 'send_confirmation', args: { email: 'sam@example.test', refundId: options.refundId ?? 'R-9' } },
  ];
  return withResults(buildTrajectory(steps), {
    c1: { amount: 40, currency: 'USD' },
    c2: { eligible: true, maxAmount: 40 },
    c3: { refundId: options.returned ?? 'R-9' },
    c4: { delivered: true },
  });
}

const confirmationRule = {
  tool: 'send_confirmation',
  path: 'refundId',
  from: { tool: 'issue_refund', path: 'refundId' },
};

describe('grounding.source (seed 000 refund run)', () => {
  it('passes the real refund id, reported under grounding:<tool>.<path>', () => {
    const result = check(refundRun(), confirmationRule);
    expect(result).toMatchObject({
      rule: 'grounding.source',
      dimension: 'grounding',
      name: 'grounding:send_confirmation.refundId',
      status: 'pass',
      reason: '',
    });
    expect(result.severity).toBeUndefined();
    expect(ids(result)).toEqual(['c4']);
  });

  it('fails a made-up refund id, saying what the refund really returned', () => {
    const result = check(refundRun({ refundId: 'R-7731', returned: 'R-1001' }), confirmationRule);
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'refundId "R-7731" of send_confirmation (call c4) appears in no earlier result of issue_refund; ' +
        'issue_refund (call c3) returned refundId "R-1001"',
    );
    expect(ids(result)).toEqual(['c4', 'c3']);
  });

  it('passes a refund amount copied from the order, and fails one that is not there', () => {
    const amountRule = { tool: 'issue_refund', path: 'amount', from: { tool: 'get_order', path: 'amount' } };
    expect(check(refundRun(), amountRule).status).toBe('pass');
    expect(check(refundRun({ amount: 40.0 }), amountRule).status).toBe('pass');
    expect(check(refundRun({ amount: 45 }), amountRule).reason).toBe(
      'amount 45 of issue_refund (call c3) appears in no earlier result of get_order; get_order (call c1) returned amount 40',
    );
  });

  it('does not ground a number in the same number written as a string', () => {
    const result = check(refundRun({ amount: '40' }), {
      tool: 'issue_refund',
      path: 'amount',
      from: { tool: 'get_order', path: 'amount' },
    });
    expect(result.reason).toBe(
      'amount "40" of issue_refund (call c3) appears in no earlier result of get_order; get_order (call c1) returned amount 40',
    );
  });

  it('does not ground a value produced in the same turn, even when it is right', () => {
    const trajectory = refundRun({
      steps: [
        [
          { tool: 'get_order', args: { orderId: 'O-17' } },
          { tool: 'get_refund_policy', args: { orderId: 'O-17' } },
        ],
        [
          { tool: 'issue_refund', args: { orderId: 'O-17', amount: 40 } },
          { tool: 'send_confirmation', args: { refundId: 'R-9' } },
        ],
      ],
    });
    const result = check(trajectory, confirmationRule);
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'refundId "R-9" of send_confirmation (call c4) is in the result of issue_refund (call c3), ' +
        'but that call was made in the same turn, not before',
    );
    expect(ids(result)).toEqual(['c4', 'c3']);
  });

  it('does not ground a value a call made later produced', () => {
    const trajectory = withResults(
      buildTrajectory([
        { tool: 'send_confirmation', args: { refundId: 'R-9' } },
        { tool: 'issue_refund', args: { amount: 40 } },
      ]),
      { c1: { delivered: true }, c2: { refundId: 'R-9' } },
    );
    expect(check(trajectory, confirmationRule).reason).toBe(
      'refundId "R-9" of send_confirmation (call c1) is in the result of issue_refund (call c2), but that call was made after it',
    );
  });

  it('does not ground a value from a call that failed', () => {
    const trajectory = withResults(
      buildTrajectory([
        {
          tool: 'issue_refund',
          args: { amount: 40 },
          outcome: { status: 'error', errorType: 'GatewayTimeout', message: 'no answer' },
        },
        { tool: 'send_confirmation', args: { refundId: 'R-9' } },
      ]),
      { c1: { refundId: 'R-9', status: 'pending' }, c2: { delivered: true } },
    );
    expect(check(trajectory, confirmationRule).reason).toBe(
      'refundId "R-9" of send_confirmation (call c2) is in the result of issue_refund (call c1), ' +
        'but that call failed (GatewayTimeout: no answer)',
    );
  });

  it('says when the source tool was not called before, or did not succeed', () => {
    const never = withResults(
      buildTrajectory([{ tool: 'send_confirmation', args: { refundId: 'R-9' } }]),
      {},
    );
    expect(check(never, confirmationRule).reason).toBe(
      'refundId "R-9" of send_confirmation (call c1) appears in no earlier result of issue_refund; ' +
        'issue_refund was not called before it',
    );
    const failed = buildTrajectory([
      { tool: 'issue_refund', outcome: { status: 'error' } },
      { tool: 'send_confirmation', args: { refundId: 'R-9' } },
    ]);
    expect(check(failed, confirmationRule).reason).toBe(
      'refundId "R-9" of send_confirmation (call c2) appears in no earlier result of issue_refund; ' +
        'the earlier call of issue_refund (call c1) did not succeed',
    );
  });
});

describe('grounding.source: where the value may come from', () => {
  it('finds a value at any depth of the source when `from` has no path', () => {
    const trajectory = withResults(
      buildTrajectory([
        { tool: 'get_order', args: { orderId: 'O-17' } },
        { tool: 'issue_refund', args: { sku: 'KTL-2200' } },
      ]),
      { c1: { items: [{ sku: 'KTL-2200', quantity: 1 }] } },
    );
    expect(check(trajectory, { tool: 'issue_refund', path: 'sku', from: { tool: 'get_order' } }).status).toBe(
      'pass',
    );
    const wrong = withResults(
      buildTrajectory([{ tool: 'get_order' }, { tool: 'issue_refund', args: { sku: 'KTL-9' } }]),
      { c1: { items: [{ sku: 'KTL-2200' }] } },
    );
    expect(check(wrong, { tool: 'issue_refund', path: 'sku', from: { tool: 'get_order' } }).reason).toBe(
      'sku "KTL-9" of issue_refund (call c2) appears in no earlier result of get_order; ' +
        'get_order (call c1) returned {"items":[{"sku":"KTL-2200"}]}',
    );
  });

  it("accepts any earlier successful result with from: 'any'", () => {
    const trajectory = refundRun();
    expect(check(trajectory, { tool: 'issue_refund', path: 'amount', from: 'any' }).status).toBe('pass');
    const madeUp = refundRun({ refundId: 'R-7731' });
    expect(check(madeUp, { tool: 'send_confirmation', path: 'refundId', from: 'any' }).reason).toBe(
      'refundId "R-7731" of send_confirmation (call c4) appears in no earlier result; ' +
        'earlier successful results: calls c1, c2, c3',
    );
  });

  it('contains: a substring of a string field, or an element of an array field', () => {
    const trajectory = withResults(
      buildTrajectory([
        'lookup',
        [
          { tool: 'notify', args: { ref: 'R-9' } },
          { tool: 'tag', args: { label: 'gold' } },
        ],
      ]),
      { c1: { note: 'refund R-9 issued', labels: ['gold', 'vip'] } },
    );
    const from = { tool: 'lookup', path: 'note' };
    expect(check(trajectory, { tool: 'notify', path: 'ref', from, relation: 'contains' }).status).toBe(
      'pass',
    );
    expect(check(trajectory, { tool: 'notify', path: 'ref', from }).reason).toBe(
      'ref "R-9" of notify (call c2) appears in no earlier result of lookup; lookup (call c1) returned note "refund R-9 issued"',
    );
    const labels = { tool: 'lookup', path: 'labels' };
    expect(check(trajectory, { tool: 'tag', path: 'label', from: labels, relation: 'contains' }).status).toBe(
      'pass',
    );
    expect(check(trajectory, { tool: 'tag', path: 'label', from: labels }).status).toBe('fail');
  });

  it('checks every value a wildcard path reaches, naming the concrete path', () => {
    const trajectory = withResults(
      buildTrajectory([
        'get_order',
        { tool: 'issue_refund', args: { items: [{ sku: 'A-100' }, { sku: 'B-200' }, { sku: 'Z-999' }] } },
      ]),
      { c1: { lines: [{ sku: 'A-100' }, { sku: 'B-200' }] } },
    );
    const result = check(trajectory, {
      tool: 'issue_refund',
      path: 'items.*.sku',
      from: { tool: 'get_order', path: 'lines.*.sku' },
    });
    expect(result.name).toBe('grounding:issue_refund.items.*.sku');
    expect(result.reason).toBe(
      'items.2.sku "Z-999" of issue_refund (call c2) appears in no earlier result of get_order; ' +
        'get_order (call c1) returned lines.0.sku "A-100", lines.1.sku "B-200"',
    );
  });
});

describe('grounding.source: which calls, and what cannot be decided', () => {
  it('checks only the Nth call with `call`, and fails when that call is missing', () => {
    const trajectory = withResults(
      buildTrajectory([
        'issue_refund',
        { tool: 'send_confirmation', args: { refundId: 'R-7731' } },
        { tool: 'send_confirmation', args: { refundId: 'R-9' } },
      ]),
      { c1: { refundId: 'R-9' } },
    );
    const second = check(trajectory, { ...confirmationRule, call: 2 });
    expect(second).toMatchObject({ name: 'grounding:send_confirmation#2.refundId', status: 'pass' });
    expect(check(trajectory, { ...confirmationRule, call: 1 }).status).toBe('fail');
    expect(check(trajectory, { ...confirmationRule, call: 3 }).reason).toBe(
      'send_confirmation was called 2 times; the check asks for call #3',
    );
  });

  it('passes when the tool was never called, and reports under a given name', () => {
    const result = check(buildTrajectory(['get_order']), { ...confirmationRule, name: 'refund id is real' });
    expect(result).toMatchObject({ name: 'refund id is real', status: 'pass', reason: '' });
  });

  it('fails a call that has no value at the path', () => {
    const trajectory = withResults(
      buildTrajectory(['issue_refund', { tool: 'send_confirmation', args: { email: 'sam@example.test' } }]),
      { c1: { refundId: 'R-9' } },
    );
    expect(check(trajectory, confirmationRule).reason).toBe(
      'send_confirmation (call c2) has no argument at refundId',
    );
  });

  it('is inconclusive when the arguments were not captured or are not valid JSON', () => {
    const trajectory = withResults(
      buildTrajectory([
        'issue_refund',
        [
          { tool: 'send_confirmation', args: NOT_CAPTURED },
          { tool: 'send_confirmation', args: '{"refundId": "R-', parseError: 'Unexpected end of JSON input' },
        ],
      ]),
      { c1: { refundId: 'R-9' } },
    );
    const result = check(trajectory, confirmationRule);
    expect(result.status).toBe('inconclusive');
    expect(result.reason).toBe(
      'the arguments of send_confirmation (call c2) were not captured; ' +
        'the arguments of send_confirmation (call c3) are not valid JSON (Unexpected end of JSON input)',
    );
  });

  it('is inconclusive when an earlier result it would need was not captured, and a failure still wins', () => {
    const trajectory = withResults(
      buildTrajectory([
        ['issue_refund', 'issue_refund'],
        { tool: 'send_confirmation', args: { refundId: 'R-9' } },
        { tool: 'send_confirmation', args: NOT_CAPTURED },
      ]),
      { c1: NOT_CAPTURED, c2: { raw: '{"refundId":', parseError: 'Unexpected end of JSON input' } },
    );
    const result = check(trajectory, confirmationRule);
    expect(result.status).toBe('inconclusive');
    expect(result.reason).toBe(
      'refundId "R-9" of send_confirmation (call c3) appears in no captured earlier result of issue_refund; ' +
        'the result of issue_refund (call c1) was not captured, ' +
        'the result of issue_refund (call c2) is not valid JSON (Unexpected end of JSON input); ' +
        'the arguments of send_confirmation (call c4) were not captured',
    );
    expect(ids(result)).toEqual(['c3', 'c1', 'c2', 'c4']);

    const withFailure = withResults(
      buildTrajectory([
        'issue_refund',
        [
          { tool: 'send_confirmation', args: NOT_CAPTURED },
          { tool: 'send_confirmation', args: { refundId: 'R-7731' } },
        ],
      ]),
      { c1: { refundId: 'R-9' } },
    );
    expect(check(withFailure, confirmationRule)).toMatchObject({
      status: 'fail',
      reason:
        'refundId "R-7731" of send_confirmation (call c3) appears in no earlier result of issue_refund; ' +
        'issue_refund (call c1) returned refundId "R-9"',
    });
  });

  it('gives one result per rule, in order', () => {
    const results = groundingFamily(refundRun(), [
      rule(confirmationRule),
      rule({ tool: 'issue_refund', path: 'amount', from: { tool: 'get_order', path: 'amount' } }),
    ]);
    expect(results.map((result) => [result.name, result.status])).toEqual([
      ['grounding:send_confirmation.refundId', 'pass'],
      ['grounding:issue_refund.amount', 'pass'],
    ]);
  });
});

describe('grounding.source on a captured trace (OTel GenAI SDK refund run)', () => {
  const file = 'sdk-genai-refund.otlp.json';
  const text = readFileSync(new URL(`../spans/${file}`, import.meta.url), 'utf8');
  const read = readStoredTraces(text, file).input;
  const [trajectory] = normalizeSpans(read?.format === 'otlp-json' ? read.spans : []);
  if (!trajectory) throw new Error(`${file}: no trajectory`);

  it('grounds the confirmation in the refund that succeeded, the amount in the order, the email anywhere', () => {
    const results = groundingFamily(trajectory, [
      rule({
        tool: 'send_confirmation',
        path: 'refund_id',
        from: { tool: 'issue_refund', path: 'refund_id' },
      }),
      rule({ tool: 'issue_refund', path: 'amount', from: { tool: 'get_order', path: 'total' } }),
      rule({ tool: 'send_confirmation', path: 'email', from: 'any' }),
      rule({ tool: 'get_refund_policy', path: 'category', from: { tool: 'get_order' } }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['pass', 'pass', 'pass', 'pass']);
    expect(ids(results[0] as RuleResult)).toEqual(['call_conf_06']);
  });

  it('does not ground the customer lookup in the customer record it returned itself', () => {
    const result = check(trajectory, {
      tool: 'issue_refund',
      path: 'order_id',
      from: { tool: 'get_customer' },
    });
    expect(result.reason).toBe(
      'order_id "ORD-20417" of issue_refund (call call_ref_04) appears in no earlier result of get_customer; ' +
        'get_customer (call call_cus_03) returned {"customer_id":"CUS-5531","email":"maria.lopez@example.test","tier":"gold","open_disputes":0}; ' +
        'order_id "ORD-20417" of issue_refund (call call_ref_05) appears in no earlier result of get_customer; ' +
        'get_customer (call call_cus_03) returned {"customer_id":"CUS-5531","email":"maria.lopez@example.test","tier":"gold","open_disputes":0}',
    );
  });
});

describe('grounding.source: causality (property)', () => {
  // Values the filler calls' results can never hold, so only the producer can ground them.
  const value = fc
    .jsonValue()
    .filter((candidate) => candidate !== null)
    .map((candidate) => candidate as JsonValue);
  const layout = fc.record({
    before: fc.nat({ max: 3 }),
    between: fc.nat({ max: 3 }),
    nested: fc.boolean(),
  });

  const run = (
    copied: JsonValue,
    shape: { before: number; between: number; nested: boolean },
    concurrent: boolean,
  ) => {
    const fillers = (count: number, prefix: string): StepSpec[] =>
      Array.from({ length: count }, (_, index) => ({ tool: 'filler', id: `${prefix}${index}` }));
    const producer = { tool: 'producer', id: 'p' };
    const consumer = { tool: 'consumer', id: 'k', args: { value: copied } };
    const steps: StepSpec[] = concurrent
      ? [...fillers(shape.before, 'f'), [producer, consumer], ...fillers(shape.between, 'g')]
      : [...fillers(shape.before, 'f'), producer, ...fillers(shape.between, 'g'), consumer];
    const trajectory = buildTrajectory(steps);
    for (const call of trajectory.calls) call.result = { captured: true, value: null };
    const produced: JsonValue = shape.nested ? { data: { list: [copied] } } : { field: copied };
    withResults(trajectory, { p: produced });
    return trajectory;
  };

  it('a value copied from an earlier successful result is always grounded', () => {
    fc.assert(
      fc.property(value, layout, (copied, shape) => {
        const trajectory = run(copied, shape, false);
        for (const from of [{ tool: 'producer' }, 'any'] as const) {
          expect(check(trajectory, { tool: 'consumer', path: 'value', from }).status).toBe('pass');
        }
      }),
    );
  });

  it('the same value is never grounded when the producing call is made concurrently', () => {
    fc.assert(
      fc.property(value, layout, (copied, shape) => {
        const trajectory = run(copied, shape, true);
        for (const from of [{ tool: 'producer' }, 'any'] as const) {
          const result = check(trajectory, { tool: 'consumer', path: 'value', from });
          expect(result.status).toBe('fail');
          expect(result.reason).toContain(
            'is in the result of producer (call p), but that call was made in the same turn',
          );
        }
      }),
    );
  });
});

describe('json-path (the dot paths grounding reads)', () => {
  const order = JSON.parse(
    '{"id":"O-17","items":[{"sku":"A"},{"sku":"B","tags":["x"]}],"__proto__":{"polluted":true},"0":"zero"}',
  ) as JsonValue;

  it('reads keys, array indexes and * segments, with the concrete path of each value', () => {
    expect(readPath(order, 'id')).toEqual([{ path: 'id', value: 'O-17' }]);
    expect(readPath(order, 'items.1.sku')).toEqual([{ path: 'items.1.sku', value: 'B' }]);
    expect(readPath(order, 'items.*.sku')).toEqual([
      { path: 'items.0.sku', value: 'A' },
      { path: 'items.1.sku', value: 'B' },
    ]);
    expect(readPath(order, '0')).toEqual([{ path: '0', value: 'zero' }]);
  });

  it('finds nothing on absent keys, indexes past the end, non-index segments on arrays, or the prototype', () => {
    for (const path of ['missing', 'items.2.sku', 'items.01.sku', 'items.first', 'id.length', 'toString']) {
      expect(readPath(order, path)).toEqual([]);
    }
    expect(readPath(order, '__proto__.polluted')).toEqual([{ path: '__proto__.polluted', value: true }]);
  });

  it('walks every value at any depth, the document first, in document order', () => {
    expect(walkJson({ a: [1, { b: 'c' }], d: null }).map((hit) => hit.path)).toEqual([
      '',
      'a',
      'a.0',
      'a.1',
      'a.1.b',
      'd',
    ]);
  });

  it('matches concrete paths against patterns segment by segment', () => {
    expect(pathMatches('items.*.sku', 'items.3.sku')).toBe(true);
    expect(pathMatches('items.*.sku', 'items.3.name')).toBe(false);
    expect(pathMatches('items.*', 'items.3.sku')).toBe(false);
  });
});
