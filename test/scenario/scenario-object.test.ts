import { describe, expect, it } from 'vitest';
import { EXPECTED_FIELDS, expectedCheckName } from '../../src/scenario/expected-fields.js';
import { parseScenario, parseScenarioText } from '../../src/scenario/scenario.js';
import { errorOf as errorOfDocument } from '../helpers/scenario-errors.js';

/** Seed 000's tutorial scenario, verbatim. */
const TUTORIAL = {
  allowedTools: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
  requiredTools: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
  orderRules: [
    { before: 'get_order', after: 'issue_refund' },
    { before: 'get_refund_policy', after: 'issue_refund' },
    { before: 'issue_refund', after: 'send_confirmation' },
  ],
  maxCalls: 4,
  terminalTools: ['send_confirmation'],
  expected: { orderId: 'O-17', customerEmail: 'sam@example.test' },
};

const errorOf = (value: unknown, source = 'refund.json') => errorOfDocument(value, source);

describe("seed 000's Scenario object is read verbatim into the native rules", () => {
  it('maps every key of the tutorial scenario', () => {
    const scenario = parseScenario(TUTORIAL, 'scenarios/tutorial.json');
    expect(scenario.id).toBe('tutorial');
    expect(scenario.rules).toEqual({
      tools: { allowed: TUTORIAL.allowedTools, required: TUTORIAL.requiredTools },
      order: {
        before: [
          { before: ['get_order'], after: ['issue_refund'] },
          { before: ['get_refund_policy'], after: ['issue_refund'] },
          { before: ['issue_refund'], after: ['send_confirmation'] },
        ],
        terminal: ['send_confirmation'],
      },
      // The seed's efficiency warnings: the budget and repeated identical calls.
      efficiency: { maxCalls: 4, repeats: { max: 0 } },
      // Every call with an orderId argument must carry this one: the tenant gate.
      safety: { tenant: { path: 'orderId', value: 'O-17' } },
      arguments: [
        {
          tool: 'send_confirmation',
          call: 1,
          match: { mode: 'superset', args: { email: 'sam@example.test' } },
          name: expectedCheckName('customerEmail'),
        },
      ],
    });
    // The seed reports the budget as a warning, whatever the efficiency family's defaults.
    expect(scenario.severity).toEqual({ efficiency: 'warning' });
  });

  it('keeps id, version (as a string) and description', () => {
    const scenario = parseScenario(
      { id: 'support.refund', version: 2, description: 'refunds', allowedTools: ['get_order'] },
      'x.yaml',
    );
    expect(scenario).toMatchObject({ id: 'support.refund', version: '2', description: 'refunds' });
    expect(scenario.rules).toEqual({ tools: { allowed: ['get_order'] } });
  });

  it('reads a YAML document the same way', () => {
    const yaml = [
      'allowedTools: [get_order, issue_refund]',
      'orderRules:',
      '  - { before: get_order, after: issue_refund }',
      'maxCalls: 3',
    ].join('\n');
    expect(parseScenarioText(yaml, 'r.yaml').rules).toEqual({
      tools: { allowed: ['get_order', 'issue_refund'] },
      order: { before: [{ before: ['get_order'], after: ['issue_refund'] }] },
      efficiency: { maxCalls: 3, repeats: { max: 0 } },
    });
  });

  it('leaves out empty lists, and keeps an empty allowlist (it allows nothing)', () => {
    const scenario = parseScenario(
      { allowedTools: [], requiredTools: [], orderRules: [], terminalTools: [] },
      'x.json',
    );
    expect(scenario.rules).toEqual({ tools: { allowed: [] } });
  });

  it('reads every expected field through the table, by its kind, naming no tool in the parser', () => {
    for (const [field, check] of Object.entries(EXPECTED_FIELDS)) {
      const tool = check.kind === 'firstCallOf' ? check.tool : 'any_tool';
      const scenario = parseScenario({ requiredTools: [tool], expected: { [field]: 'v-1' } }, 'x.json');
      if (check.kind === 'everyCall')
        expect(scenario.rules.safety).toEqual({ tenant: { path: check.argument, value: 'v-1' } });
      else
        expect(scenario.rules.arguments).toEqual([
          {
            tool: check.tool,
            call: 1,
            match: { mode: 'superset', args: { [check.argument]: 'v-1' } },
            name: `expected.${field}`,
          },
        ]);
    }
  });

  it('accepts a numeric orderId as the tenant value', () => {
    const scenario = parseScenario({ requiredTools: ['get_order'], expected: { orderId: 17 } }, 'x.json');
    expect(scenario.rules.safety).toEqual({ tenant: { path: 'orderId', value: 17 } });
  });

  it('drops customerEmail when the allowlist forbids send_confirmation: it could never decide anything', () => {
    const scenario = parseScenario(
      { allowedTools: ['search'], expected: { orderId: 'x', customerEmail: 'y@example.test' } },
      'x.json',
    );
    expect(scenario.rules.arguments).toBeUndefined();
    expect(scenario.rules.safety).toEqual({ tenant: { path: 'orderId', value: 'x' } });
  });
});

describe('a seed-000 document that cannot be read says where and why', () => {
  it('rejects customerEmail when send_confirmation may be called but is not required', () => {
    expect(errorOf({ requiredTools: ['get_order'], expected: { customerEmail: 'sam@example.test' } })).toBe(
      'scenario refund.json: expected.customerEmail: the scenario object checks it on the first send_confirmation call only when there is one, which toolpath cannot say without requiring the call; add send_confirmation to requiredTools, or remove customerEmail',
    );
  });

  it('names a tool a rule uses that the allowlist leaves out', () => {
    const message = errorOf({
      allowedTools: ['get_order', 'issue_refund'],
      requiredTools: ['get_order'],
      orderRules: [{ before: 'get_order', after: 'isue_refund' }],
      terminalTools: ['send_confirmation'],
    });
    expect(message).toBe(
      [
        'scenario refund.json: orderRules[0].after: unknown tool "isue_refund"; allowedTools: get_order, issue_refund',
        'scenario refund.json: terminalTools[0]: unknown tool "send_confirmation"; allowedTools: get_order, issue_refund',
      ].join('\n'),
    );
  });

  it('says what type was expected and what was there', () => {
    expect(errorOf({ maxCalls: 'four' })).toBe(
      'scenario refund.json: maxCalls: expected a number; got "four"',
    );
    expect(errorOf({ maxCalls: -1 })).toBe(
      'scenario refund.json: maxCalls: expected an integer >= 0; got -1',
    );
    expect(errorOf({ orderRules: [{ before: 'a' }] })).toBe(
      'scenario refund.json: orderRules[0].after: expected a string; the key is missing',
    );
  });

  it('suggests the key meant, inside the document and at the top level', () => {
    expect(errorOf({ maxCalls: 4, expected: { orderID: 'O-17' } })).toBe(
      'scenario refund.json: expected: unknown key "orderID" (did you mean orderId?)',
    );
    expect(errorOf({ maxCalls: 4, allowedTool: ['a'] })).toBe(
      'scenario refund.json: unknown key "allowedTool" (did you mean allowedTools?)',
    );
  });

  it('a document with only a misspelled seed-000 key is told the seed-000 key', () => {
    expect(errorOf({ requiredTool: ['a'] })).toBe(
      'scenario refund.json: unknown key "requiredTool" (did you mean requiredTools?)',
    );
  });

  it('rejects a document with nothing to check', () => {
    expect(errorOf({ requiredTools: [], expected: {} })).toBe(
      'scenario refund.json: no rules: expected at least one of allowedTools, requiredTools, orderRules, maxCalls, terminalTools, expected with something to check; got only empty requiredTools, empty expected',
    );
  });
});

describe('mixing formats is an error that names the keys of each', () => {
  it('seed 000 with native sections', () => {
    expect(errorOf({ allowedTools: ['a'], maxCalls: 3, tools: { required: ['a'] }, appliesTo: {} })).toBe(
      'scenario refund.json: mixes scenario formats (native: tools, appliesTo; scenario object: allowedTools, maxCalls); write each scenario in one format',
    );
  });

  it('seed 000 with seed 001', () => {
    expect(errorOf({ allowedTools: ['a'], allowed_tools: ['a'] })).toBe(
      'scenario refund.json: mixes scenario formats (trajectory-assertion JSON: allowed_tools; scenario object: allowedTools); write each scenario in one format',
    );
  });

  it('seed 001 with native sections', () => {
    expect(errorOf({ expected_tool_sequence: [{ tool: 'a' }], order: { terminal: ['a'] } })).toBe(
      'scenario refund.json: mixes scenario formats (native: order; trajectory-assertion JSON: expected_tool_sequence); write each scenario in one format',
    );
  });

  it('the shared keys (id, version, description) mark no format', () => {
    expect(parseScenario({ id: 's', version: '1', description: 'd', maxCalls: 2 }, 'x.json').rules).toEqual({
      efficiency: { maxCalls: 2, repeats: { max: 0 } },
    });
  });
});
