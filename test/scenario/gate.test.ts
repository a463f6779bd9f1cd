import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { scenarioJsonSchema } from '../../src/cli/schema-command.js';
import { parseScenario, parseScenarioText } from '../../src/scenario/scenario.js';
import { errorOf, textErrorOf } from '../helpers/scenario-errors.js';

const SEED_001 = { allowed_tools: ['get_order', 'issue_refund'] };
const NATIVE = { tools: { allowed: ['get_order', 'issue_refund'] } };

describe("seed 001's min_pass_rate", () => {
  it('is read verbatim as the scenario gate', () => {
    const scenario = parseScenario({ ...SEED_001, min_pass_rate: 0.9 }, 'refund.json');
    expect(scenario.gate).toEqual({ minPassRate: 0.9 });
    expect(scenario.rules.tools).toEqual({ allowed: ['get_order', 'issue_refund'] });
    expect(parseScenario(SEED_001, 'refund.json').gate).toBeUndefined();
    expect(parseScenario({ ...SEED_001, min_pass_rate: 0 }, 'r.json').gate).toEqual({ minPassRate: 0 });
    expect(parseScenario({ ...SEED_001, min_pass_rate: 1 }, 'r.json').gate).toEqual({ minPassRate: 1 });
  });

  it('refuses a percentage, saying the rate it most likely means', () => {
    expect(errorOf({ ...SEED_001, min_pass_rate: 90 })).toBe(
      'scenario refund.yaml: min_pass_rate: expected a rate between 0 and 1; got 90 (did you mean 0.9?)',
    );
    expect(errorOf({ ...SEED_001, min_pass_rate: 100 })).toContain('got 100 (did you mean 1?)');
    expect(errorOf({ ...SEED_001, min_pass_rate: 150 })).toBe(
      'scenario refund.yaml: min_pass_rate: expected a rate between 0 and 1; got 150',
    );
    expect(errorOf({ ...SEED_001, min_pass_rate: -0.1 })).toContain('got -0.1');
  });

  it('refuses what is not a number, and a gate with nothing to gate', () => {
    expect(errorOf({ ...SEED_001, min_pass_rate: '90%' })).toBe(
      'scenario refund.yaml: min_pass_rate: expected a number; got "90%"',
    );
    expect(textErrorOf('allowed_tools: [a]\nmin_pass_rate: .inf\n')).toContain(
      'min_pass_rate: expected a number',
    );
    expect(errorOf({ min_pass_rate: 0.9 })).toBe(
      'scenario refund.yaml: no assertions: expected at least one of tool_call_args, expected_tool_sequence, allowed_tools, expected_tool_calls, answer_contains, answer_matches; a min_pass_rate alone gates nothing',
    );
  });

  it('suggests the key for a misspelling', () => {
    expect(errorOf({ ...SEED_001, min_pass_rat: 0.9 })).toContain(
      'unknown key "min_pass_rat" (did you mean min_pass_rate?)',
    );
  });
});

describe('the native gate', () => {
  it('reads minPassRate, passK and trialsBy', () => {
    const gate = { minPassRate: 0.8, passK: { k: 4, min: 0.5 }, trialsBy: { attribute: 'task.id' } };
    expect(parseScenario({ ...NATIVE, gate }, 'r.yaml').gate).toEqual(gate);
    const yaml = 'tools: {allowed: [a]}\ngate:\n  passK: {k: 2, min: 0.25}\n';
    expect(parseScenarioText(yaml, 'r.yaml').gate).toEqual({ passK: { k: 2, min: 0.25 } });
  });

  it('refuses a percentage in minPassRate and in passK.min', () => {
    expect(errorOf({ ...NATIVE, gate: { minPassRate: 90 } })).toBe(
      'scenario refund.yaml: gate.minPassRate: expected a rate between 0 and 1; got 90 (did you mean 0.9?)',
    );
    expect(errorOf({ ...NATIVE, gate: { passK: { k: 4, min: 25 } } })).toBe(
      'scenario refund.yaml: gate.passK.min: expected a rate between 0 and 1; got 25 (did you mean 0.25?)',
    );
  });

  it('refuses k below 1 or not an integer, and a passK without min', () => {
    expect(errorOf({ ...NATIVE, gate: { passK: { k: 0, min: 0.5 } } })).toBe(
      'scenario refund.yaml: gate.passK.k: expected an integer >= 1; got 0',
    );
    expect(errorOf({ ...NATIVE, gate: { passK: { k: 1.5, min: 0.5 } } })).toContain(
      'gate.passK.k: expected an integer',
    );
    expect(errorOf({ ...NATIVE, gate: { passK: { k: 2 } } })).toBe(
      'scenario refund.yaml: gate.passK.min: expected a number; the key is missing',
    );
  });

  it('refuses an empty gate, and trialsBy without passK', () => {
    expect(errorOf({ ...NATIVE, gate: {} })).toBe(
      'scenario refund.yaml: gate: a gate needs minPassRate or passK (or both); without a gate every evaluation must pass',
    );
    expect(errorOf({ ...NATIVE, gate: { minPassRate: 0.5, trialsBy: { attribute: 'task.id' } } })).toBe(
      'scenario refund.yaml: gate.trialsBy: trialsBy groups trials for passK; give passK: {k, min} too, or remove trialsBy',
    );
    expect(errorOf({ ...NATIVE, gate: { passK: { k: 2, min: 0.5 }, trialsBy: { attribute: '' } } })).toBe(
      'scenario refund.yaml: gate.trialsBy.attribute: expected a non-empty string; got ""',
    );
  });

  it('suggests gate keys for a misspelling', () => {
    expect(errorOf({ ...NATIVE, gate: { minPasRate: 0.5 } })).toContain(
      'gate: unknown key "minPasRate" (did you mean minPassRate?)',
    );
    expect(
      errorOf({ ...NATIVE, gate: { passK: { k: 2, min: 0.5 }, trialBy: { attribute: 'a' } } }),
    ).toContain('gate: unknown key "trialBy" (did you mean trialsBy?)');
  });

  it("says which spelling to use when a gate is written in the other format's", () => {
    expect(errorOf({ ...NATIVE, min_pass_rate: 0.9 })).toBe(
      'scenario refund.yaml: min_pass_rate is the key of the trajectory-assertion JSON; in the native format write gate: {minPassRate: …}',
    );
    expect(errorOf({ ...SEED_001, gate: { minPassRate: 0.9 } })).toBe(
      'scenario refund.yaml: gate is the key of the native format; in the trajectory-assertion JSON write min_pass_rate: … (a pass^k gate needs the native format)',
    );
    // More than the gate mixed: the general message, with the keys of each.
    expect(errorOf({ ...NATIVE, allowed_tools: ['a'], min_pass_rate: 0.9 })).toContain(
      'mixes scenario formats',
    );
  });

  it('is in the JSON Schema, with its bounds', () => {
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, strictRequired: false });
    const validate = ajv.compile(scenarioJsonSchema());
    expect(validate({ ...NATIVE, gate: { minPassRate: 0.9, passK: { k: 4, min: 0.5 } } })).toBe(true);
    expect(validate({ ...NATIVE, gate: { minPassRate: 90 } })).toBe(false);
    expect(validate({ ...NATIVE, gate: { passK: { k: 0, min: 0.5 } } })).toBe(false);
    expect(validate({ ...NATIVE, gate: { minPassRate: 0.9, extra: 1 } })).toBe(false);
  });
});
