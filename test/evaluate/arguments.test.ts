import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { Report } from '../../src/model/report.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { buildTrajectory, NOT_CAPTURED } from '../helpers/trajectory.js';

/** Evaluates a native `arguments` section (plus any other keys) against a trajectory. */
function run(trajectory: Trajectory, rules: unknown[], extra: Record<string, unknown> = {}): Report {
  return evaluate(trajectory, parseScenario({ arguments: rules, ...extra }, 'args.yaml'));
}

/** The first finding, for tests about one rule. */
function onlyFinding(report: Report) {
  expect(report.findings).toHaveLength(1);
  return report.findings[0];
}

const refundSchema = {
  type: 'object',
  required: ['order_id', 'amount'],
  properties: { order_id: { type: 'string' }, amount: { type: 'number', maximum: 100 } },
};

describe('arguments: any call', () => {
  it('passes when one call of the tool matches, and scores the arguments dimension', () => {
    const trajectory = buildTrajectory([
      { tool: 'issue_refund', args: { order_id: 'ord_1', amount: 400 } },
      { tool: 'issue_refund', args: { order_id: 'ord_1', amount: 40 } },
    ]);
    const report = run(trajectory, [
      { tool: 'issue_refund', match: { mode: 'schema', schema: refundSchema } },
    ]);
    expect(report.verdict).toBe('pass');
    expect(report.assertions).toEqual([{ name: 'tool_call_args:issue_refund', status: 'pass', reason: '' }]);
    expect(report.scores).toEqual({ arguments: 1 });
    expect(report.findings).toEqual([]);
  });

  it('fails with a hard finding that names every call and says what each had', () => {
    const trajectory = buildTrajectory([
      'lookup',
      { tool: 'issue_refund', args: { order_id: 'ord_1', amount: 400 } },
      { tool: 'issue_refund', args: { amount: '40' } },
    ]);
    const report = run(trajectory, [
      { tool: 'issue_refund', match: { mode: 'schema', schema: refundSchema } },
    ]);
    expect(report.verdict).toBe('fail');
    expect(report.scores).toEqual({ arguments: 0 });
    expect(onlyFinding(report)).toEqual({
      rule: 'arguments.match',
      severity: 'hard',
      message:
        // The schema is cut at 120 characters: a reason stays readable whatever the scenario holds.
        'no call to issue_refund matched the JSON Schema {"type":"object","required":["order_id","amount"],' +
        '"properties":{"order_id":{"type":"string"},"amount":{"type":"number",…; saw 2 calls: ' +
        '#1 (call c2) amount: must be <= 100 (saw 400); ' +
        '#2 (call c3) must have required property \'order_id\', amount: must be number (saw "40")',
      calls: ['c2', 'c3'],
      spans: ['s2', 's3'],
      assertion: 'tool_call_args:issue_refund',
    });
  });

  it('fails when the tool was never called', () => {
    const report = run(buildTrajectory(['lookup']), [{ tool: 'issue_refund', match: { args: { a: 1 } } }]);
    expect(onlyFinding(report)).toMatchObject({ message: 'issue_refund was never called', calls: [] });
  });

  it('is inconclusive when no captured call matches and another was not captured', () => {
    const trajectory = buildTrajectory([
      { tool: 'search', args: { q: 'shipping' } },
      { tool: 'search', args: NOT_CAPTURED },
    ]);
    const report = run(trajectory, [{ tool: 'search', match: { mode: 'regex', pattern: 'refund' } }]);
    expect(report.verdict).toBe('inconclusive');
    expect(onlyFinding(report)).toEqual({
      rule: 'arguments.match',
      severity: 'hard',
      message:
        'could not decide whether search was called with the pattern /refund/; saw 2 calls: ' +
        '#1 (call c1) /refund/ did not match {"q":"shipping"}; #2 (call c2) arguments were not captured',
      calls: ['c1', 'c2'],
      spans: ['s1', 's2'],
      assertion: 'tool_call_args:search',
      inconclusive: true,
    });
  });

  it('passes on a captured match even when other calls were not captured', () => {
    const trajectory = buildTrajectory([
      { tool: 'search', args: NOT_CAPTURED },
      { tool: 'search', args: { q: 'refund policy' } },
    ]);
    const report = run(trajectory, [{ tool: 'search', match: { mode: 'regex', pattern: 'refund' } }]);
    expect(report.verdict).toBe('pass');
  });
});

describe('arguments: the Nth call', () => {
  const secondSearch = {
    tool: 'search',
    call: 2,
    match: { mode: 'exact', args: { q: 'refund', page: 1 }, ignore: ['request_id'], defaults: { page: 1 } },
  };

  it('judges the Nth call in causal order, not the order the spans were written', () => {
    // Issued together; the second written completes first, so it is #1 in causal order.
    const trajectory = buildTrajectory([
      [
        { tool: 'search', id: 'slow', args: { q: 'refund', request_id: 'r9' }, completesAtStep: 1 },
        { tool: 'search', id: 'fast', args: { q: 'shipping', request_id: 'r8' } },
      ],
      'lookup',
    ]);
    const report = run(trajectory, [secondSearch]);
    expect(report.assertions).toEqual([{ name: 'tool_call_args:search#2', status: 'pass', reason: '' }]);
  });

  it('fails on the Nth call even when another call matches, with the options in the reason', () => {
    const trajectory = buildTrajectory([
      { tool: 'search', args: { q: 'refund' } },
      { tool: 'search', args: { q: 'refund', page: 3, request_id: 'r2' } },
    ]);
    expect(onlyFinding(run(trajectory, [secondSearch]))).toMatchObject({
      message:
        'search call #2 (call c2) did not match exactly the arguments {"q":"refund","page":1} ' +
        '(ignoring request_id; defaults {"page":1}): page: expected 1, saw 3',
      calls: ['c2'],
      spans: ['s2'],
    });
  });

  it('is inconclusive when the Nth call was not captured, whatever the other calls had', () => {
    const trajectory = buildTrajectory([
      { tool: 'search', args: { q: 'refund' } },
      { tool: 'search', args: NOT_CAPTURED },
    ]);
    const report = run(trajectory, [secondSearch]);
    expect(report.verdict).toBe('inconclusive');
    expect(onlyFinding(report)).toMatchObject({
      message:
        'search call #2 (call c2) could not be checked against exactly the arguments {"q":"refund","page":1} ' +
        '(ignoring request_id; defaults {"page":1}): arguments were not captured',
      inconclusive: true,
    });
  });

  it('is decided by the Nth call alone when an earlier call was not captured', () => {
    const trajectory = buildTrajectory([
      { tool: 'search', args: NOT_CAPTURED },
      { tool: 'search', args: { q: 'refund' } },
    ]);
    expect(run(trajectory, [secondSearch]).verdict).toBe('pass');
  });

  it('fails when the tool was called fewer times than N', () => {
    const report = run(buildTrajectory([{ tool: 'search', args: { q: 'refund' } }]), [secondSearch]);
    expect(onlyFinding(report)).toMatchObject({
      message: 'search was called 1 time; the check asks for call #2',
      calls: ['c1'],
    });
  });
});

describe('arguments: names and severity', () => {
  it('reports under the given name, and a warning does not fail the verdict', () => {
    const report = run(
      buildTrajectory([{ tool: 'search', args: { q: 'x' } }]),
      [{ tool: 'search', name: 'search-is-about-refunds', match: { args: { q: 'refund' } } }],
      { severity: { arguments: 'warning' } },
    );
    expect(report.verdict).toBe('pass');
    expect(onlyFinding(report)).toMatchObject({
      rule: 'arguments.match',
      severity: 'warning',
      assertion: 'search-is-about-refunds',
      message:
        'no call to search matched the expected arguments {"q":"refund"}; saw 1 call: ' +
        '#1 (call c1) q: expected "refund", saw "x"',
    });
  });
});

describe('arguments on a real trace (OTel GenAI SDK refund fixture)', () => {
  const trajectory = trajectoryOf(fixture('sdk-genai-refund'));

  it('passes a schema on every refund and a numeric exact match on the second one', () => {
    const report = run(trajectory, [
      {
        tool: 'issue_refund',
        match: {
          mode: 'schema',
          schema: {
            properties: { amount: { maximum: 100 }, currency: { enum: ['EUR'] } },
            required: ['amount'],
          },
        },
      },
      {
        tool: 'issue_refund',
        call: 2,
        match: {
          mode: 'exact',
          args: { order_id: 'ORD-20417', amount: '89.90', currency: 'EUR' },
          ignore: ['reason'],
          numeric: true,
        },
      },
    ]);
    expect(report.assertions.map((assertion) => assertion.status)).toEqual(['pass', 'pass']);
  });

  it('fails a third refund, naming the two that happened', () => {
    const report = run(trajectory, [{ tool: 'issue_refund', call: 3, match: { args: {} } }]);
    expect(onlyFinding(report)).toMatchObject({
      message: 'issue_refund was called 2 times; the check asks for call #3',
      calls: ['call_ref_04', 'call_ref_05'],
      spans: ['f42c785f00ca336f', '658ab18a1ea15588'],
    });
  });
});

describe('arguments: a bad JSON Schema fails when the scenario loads', () => {
  const load = (schema: unknown) => () =>
    parseScenario({ arguments: [{ tool: 'x', match: { mode: 'schema', schema } }] }, 'bad.yaml');

  it('says where and what, for meta-schema violations, unknown keywords, formats and patterns', () => {
    expect(load({ type: 'strin' })).toThrow(
      'scenario bad.yaml: arguments[0].match.schema.type: not a valid JSON Schema (draft 2020-12): ' +
        'must be one of "array", "boolean", "integer", "null", "number", "object", "string"; got "strin"',
    );
    expect(load({ properties: { amount: { type: 'number', maximun: 100 } } })).toThrow(
      'scenario bad.yaml: arguments[0].match.schema.properties.amount.maximun: unknown keyword "maximun": ' +
        'a misspelt keyword would check nothing, so only JSON Schema keywords are accepted',
    );
    expect(load({ properties: { email: { type: 'string', format: 'email' } } })).toThrow(
      'scenario bad.yaml: arguments[0].match.schema.properties.email.format: format "email" is not supported ' +
        '(no format validators are bundled); use pattern instead',
    );
    expect(load({ properties: { q: { pattern: '(a)\\1' } } })).toThrow(
      'scenario bad.yaml: arguments[0].match.schema.properties.q.pattern: expected a pattern RE2 can run in ' +
        'linear time (no backreferences, no lookaheads); got "(a)\\\\1", which uses a backreference (\\1)',
    );
    expect(load({ $schema: 'http://json-schema.org/draft-04/schema#' })).toThrow(
      'scenario bad.yaml: arguments[0].match.schema.$schema: expected one of ' +
        'https://json-schema.org/draft/2020-12/schema, https://json-schema.org/draft/2019-09/schema, ' +
        'http://json-schema.org/draft-07/schema; got "http://json-schema.org/draft-04/schema#"',
    );
    expect(load({ $ref: '#/$defs/missing' })).toThrow(
      'scenario bad.yaml: arguments[0].match.schema: cannot resolve $ref #/$defs/missing: ' +
        'only references inside the schema itself are supported',
    );
  });

  it('loads a valid schema, and checks schemas in sequence steps too', () => {
    expect(load(refundSchema)).not.toThrow();
    expect(() =>
      parseScenario(
        {
          order: {
            sequence: { steps: [{ tool: 'x', match: { mode: 'schema', schema: { type: 'strin' } } }] },
          },
        },
        'seq.yaml',
      ),
    ).toThrow(/order\.sequence\.steps\[0\]\.match\.schema\.type: not a valid JSON Schema/);
  });
});
