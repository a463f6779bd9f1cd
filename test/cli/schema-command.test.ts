import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CONFIG_SCHEMA_ID, SCENARIO_SCHEMA_ID, scenarioJsonSchema } from '../../src/cli/schema-command.js';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { nativeScenarioSchema, rulesSchema } from '../../src/scenario/native.js';
import { parseScenario, parseScenarioText } from '../../src/scenario/scenario.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** A native scenario using every section, as a user would write it. */
const GOOD = {
  id: 'support.refund',
  version: 3,
  description: 'A refund, end to end.',
  appliesTo: { agent: 'support-agent', attributes: { 'deployment.environment': 'production' } },
  severity: { efficiency: 'warning', 'order.before': 'hard' },
  tools: {
    allowed: ['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation'],
    required: ['issue_refund'],
    forbidden: ['admin_reset', { tool: 'delete_user', outcome: 'ok' }],
    counts: { issue_refund: { max: 1, outcome: 'ok' } },
  },
  order: {
    before: [{ before: ['get_order', 'get_refund_policy'], after: 'issue_refund' }],
    terminal: ['send_confirmation'],
    together: [['get_order', 'get_refund_policy']],
    sequence: { steps: [{ tool: 'get_refund_policy' }, { tool: 'issue_refund', outcome: 'ok' }] },
  },
  reference: {
    mode: 'superset',
    ignore: ['requestId'],
    turns: [[{ tool: 'get_order', args: { orderId: 'O-17' }, outcome: 'ok' }]],
  },
  arguments: [
    { tool: 'issue_refund', call: 1, match: { args: { orderId: 'O-17', amount: 40 } }, outcome: 'ok' },
    {
      tool: 'send_confirmation',
      match: {
        mode: 'exact',
        oneOf: { channel: ['e-mail', 'sms', ''], 'to.kind': ['customer'] },
        normalize: true,
      },
    },
  ],
  grounding: [{ tool: 'issue_refund', path: 'amount', from: { tool: 'get_order', path: 'amount' } }],
  safety: {
    irreversible: ['issue_refund'],
    tenant: { path: 'orderId', value: 'O-17' },
    approval: [{ tool: 'issue_refund', by: ['confirm_with_user'] }, { tool: 'delete_account' }],
  },
  efficiency: { maxCalls: 6, maxCallsPerTurn: 3, repeats: { max: 0, outcome: 'ok' } },
  milestones: {
    define: { refunded: { tool: 'issue_refund' }, escalated: { tool: 'escalate' } },
    end: ['refunded'],
    never: ['escalated'],
  },
  outcome: [{ name: 'ledger', command: 'node check-ledger.mjs', timeoutMs: 5000 }, { name: 'outbox' }],
};

/**
 * ajv in strict mode, less two style rules the schema breaks on purpose: `type: [string, number]`
 * (union types) and `anyOf: [{required: [tools]}, …]` ("at least one section", whose branches
 * name properties declared beside them, not inside).
 */
function compile() {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, strictRequired: false });
  const schema = scenarioJsonSchema();
  expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
  return ajv.compile(schema);
}

describe('toolpath schema', () => {
  it('prints the JSON Schema of the native format, with $schema, $id and title', async () => {
    const run = await runCli(['schema']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const schema = JSON.parse(run.stdout);
    expect(Object.keys(schema).slice(0, 4)).toEqual(['$schema', '$id', 'title', 'description']);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe(SCENARIO_SCHEMA_ID);
    expect(schema.title).toBe('toolpath scenario');
    expect(schema).toEqual(scenarioJsonSchema());
  });

  it('writes it to a file with --out, and rejects unknown options with the usage', async () => {
    const dir = temporaryDir('toolpath-schema-');
    const out = join(dir, 'scenario.schema.json');
    const run = await runCli(['schema', '--out', out]);
    expect(run).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual(scenarioJsonSchema());

    const bad = await runCli(['schema', '--pretty']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('toolpath schema: unknown option --pretty; its options: --out');
    expect(bad.stderr).toContain('usage: toolpath schema [--config] [--out FILE]');
  });

  it('is listed in the top-level usage and has its own --help', async () => {
    expect((await runCli(['--help'])).stdout).toContain('schema  print the JSON Schema');
    expect((await runCli(['schema', '--help'])).stdout).toContain('usage: toolpath schema');
  });
});

describe('the generated schema', () => {
  it('compiles with ajv (draft 2020-12, strict) and accepts a scenario using every section', () => {
    const validate = compile();
    expect(validate(GOOD), JSON.stringify(validate.errors)).toBe(true);
    // The same document loads: the schema and the loader agree on it.
    expect(parseScenario(GOOD, 'good.yaml').id).toBe('support.refund');
  });

  it('accepts a tool name where a list is accepted, and omitted defaults', () => {
    const validate = compile();
    expect(validate({ appliesTo: { agent: 'a', rootSpan: ['x', 'y'] }, order: { terminal: ['t'] } })).toBe(
      true,
    );
    expect(validate({ arguments: [{ tool: 't', match: { args: {} } }] })).toBe(true);
  });

  it('rejects what loading rejects: unknown keys, wrong types, bad enums, no rule at all', () => {
    const validate = compile();
    const rejected = (document: unknown) => {
      const valid = validate(document);
      let loads = true;
      try {
        parseScenario(document, 'bad.yaml');
      } catch {
        loads = false;
      }
      return { valid, loads };
    };
    for (const document of [
      { tools: { allowed: ['a'] }, tool: {} },
      { tools: { allowed: 'a' } },
      { tools: { alowed: ['a'] } },
      { order: { sequence: { mode: 'sometimes', steps: [{ tool: 'a' }] } } },
      { efficiency: { maxCalls: -1 } },
      { efficiency: { maxCalls: 1.5 } },
      { efficiency: { maxCallsPerTurn: 0 } },
      { order: { together: [['a']] } },
      { order: { together: ['a', 'b'] } },
      { safety: { approval: [{ tool: 'a', by: [] }] } },
      { safety: { approval: [{ tool: 'a', approvedBy: 'b' }] } },
      { arguments: [{ tool: 'a', call: 0, match: { args: {} } }] },
      { appliesTo: { agent: [] }, tools: { allowed: [] } },
      { severity: { efficiency: 'fatal' }, tools: { allowed: [] } },
      { outcome: [{ command: 'true' }] },
      { outcome: [{ name: 'ledger', timeoutMs: 0 }] },
      { outcome: [{ name: 'ledger', run: 'true' }] },
      { outcome: { name: 'ledger' } },
      { tools: { counts: { a: { max: 1, outcome: 'okay' } } } },
      { tools: { forbidden: [{ tool: 'a', outcom: 'ok' }] } },
      { reference: { mode: 'superset', ignore: 'requestId', turns: [] } },
      { arguments: [{ tool: 'a', match: { oneOf: { unit: [] } } }] },
      { arguments: [{ tool: 'a', match: { oneOf: { unit: ['cm'] }, normalize: 'yes' } }] },
      { id: 'no-rules' },
      {},
      [],
      'tools: {}',
    ]) {
      expect(rejected(document), JSON.stringify(document)).toEqual({ valid: false, loads: false });
    }
  });

  it('documents every section (and every key of the document) with a description', () => {
    const schema = scenarioJsonSchema();
    const properties = schema.properties as Record<string, { description?: string }>;
    expect(Object.keys(properties).sort()).toEqual(Object.keys(nativeScenarioSchema.shape).sort());
    for (const section of Object.keys(rulesSchema.shape)) expect(properties[section]).toBeDefined();
    for (const [key, property] of Object.entries(properties)) {
      expect(property.description, key).toMatch(/\w.{10,}/);
    }
    expect(schema.description).toMatch(/at least one rule section/);
  });
});

describe('the native scenario examples of the README and docs/scenarios.md', () => {
  it('the reference example loads, and validates against the generated schema', async () => {
    const reference = await readFile(new URL('../../docs/scenarios.md', import.meta.url), 'utf8');
    const section = reference.slice(reference.indexOf('## The native format'));
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    if (yaml === undefined) throw new Error('no YAML example under "## The native format"');
    const scenario = parseScenarioText(yaml, 'docs/scenarios.md');
    expect(scenario).toMatchObject({ id: 'support.refund', version: '3' });
    expect(Object.keys(scenario.rules).sort()).toEqual(
      ['arguments', 'efficiency', 'grounding', 'milestones', 'order', 'safety', 'tools'].sort(),
    );
    const validate = compile();
    expect(validate(parseYaml(yaml)), JSON.stringify(validate.errors)).toBe(true);
  });

  it("the README's example validates against the generated schema too", async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const yaml = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    if (yaml === undefined) throw new Error('no YAML example in the README');
    expect(parseScenarioText(yaml, 'README.md').id).toBe('support.refund');
    const validate = compile();
    expect(validate(parseYaml(yaml)), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe('toolpath schema --config', () => {
  it("prints the JSON Schema of serve's configuration, which accepts what serve accepts and refuses a bad key", async () => {
    const run = await runCli(['schema', '--config']);
    expect(run.code).toBe(0);
    const schema = JSON.parse(run.stdout);
    expect(schema).toMatchObject({ $id: CONFIG_SCHEMA_ID, title: 'toolpath serve configuration' });
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(schema);
    const good = { decision: { wait: '30s' }, conversations: { idleTimeout: 300_000 }, logLevel: 'debug' };
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true);
    parseAdapterConfig(good, 'good.yaml', {});
    expect(validate({ decision: { wiat: '30s' } })).toBe(false);
    expect(() => parseAdapterConfig({ decision: { wiat: '30s' } }, 'bad.yaml', {})).toThrow(
      /unknown key "wiat"/,
    );
    // A default computed from this machine's heap is given in words, not as this machine's number.
    expect(JSON.stringify(schema.properties.limits)).toContain('half the V8 heap limit');
  });
});
