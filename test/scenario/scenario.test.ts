import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadScenarioFile,
  parseScenario,
  parseScenarioText,
  ScenarioError,
} from '../../src/scenario/scenario.js';
import { errorOf, textErrorOf } from '../helpers/scenario-errors.js';

/** The message of the ScenarioError that parsing `value` throws. */

describe('parseScenario accepts the seed-001 assertion JSON verbatim', () => {
  it('reads every family and defaults the id to the base name of the source', () => {
    const scenario = parseScenario(
      {
        tool_call_args: [
          {
            tool: 'issue_refund',
            match: { mode: 'subset', args: { order_id: 'ord_42', amount_cents: 5000 } },
          },
          { tool: 'kb_query', call_index: 2, match: { mode: 'regex', pattern: 'refund policy', flags: 'i' } },
        ],
        expected_tool_sequence: [
          { tool: 'lookup_account' },
          { tool: 'issue_refund', match: { mode: 'subset', args: { amount_cents: 5000 } } },
        ],
        allowed_tools: ['lookup_account', 'check_refund_eligibility', 'issue_refund'],
        expected_tool_calls: ['lookup_account', { tool: 'kb_query' }, { name: 'issue_refund' }],
      },
      'scenarios/refund.json',
    );
    expect(scenario.id).toBe('refund');
    expect(scenario.source).toBe('scenarios/refund.json');
    expect(scenario.version).toBeUndefined();
    expect(scenario.rules.arguments).toHaveLength(2);
    const regex = scenario.rules.arguments?.[1]?.match;
    expect(regex?.mode).toBe('regex');
    if (regex?.mode !== 'regex' || !regex.regex) throw new Error('unreachable');
    expect(regex.regex.program.test('{"q":"Refund Policy"}')).toBe(true);
    // Seed 001's subset (the call has at least these arguments) is the native superset.
    expect(scenario.rules.order?.sequence?.steps[1]?.match?.mode).toBe('superset');
    expect(scenario.rules.tools?.required).toEqual(['lookup_account', 'kb_query', 'issue_refund']);
  });

  it('keeps id, turns a numeric version into a string, and keeps the description', () => {
    const scenario = parseScenario(
      { id: 'support.refund', version: 3, description: 'refunds', allowed_tools: [] },
      'x.yaml',
    );
    expect(scenario).toMatchObject({ id: 'support.refund', version: '3', description: 'refunds' });
    expect(scenario.rules.tools?.allowed).toEqual([]);
  });

  it('keeps a __proto__ key in expected arguments as an ordinary key', () => {
    const document = JSON.parse(
      '{"tool_call_args":[{"tool":"t","match":{"mode":"exact","args":{"__proto__":{"admin":true}}}}]}',
    );
    const match = parseScenario(document, 'p.json').rules.arguments?.[0]?.match;
    if (match?.mode !== 'exact' || !match.args) throw new Error('unreachable');
    expect(Object.keys(match.args)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(match.args)).toBe(Object.prototype);
  });
});

describe('a bad scenario is a ScenarioError that says where, what was expected and what was seen', () => {
  it('names an unknown mode and the modes there are', () => {
    const message = errorOf({
      tool_call_args: [{ tool: 'issue_refund', match: { mode: 'subst', args: {} } }],
    });
    expect(message).toBe(
      'scenario refund.yaml: tool_call_args[0].match.mode: expected one of exact, subset, regex; got "subst" (did you mean subset?)',
    );
  });

  it('suggests the closest known key for a misspelled top-level key', () => {
    expect(errorOf({ allowed_tool: ['a'] })).toBe(
      'scenario refund.yaml: unknown key "allowed_tool" (did you mean allowed_tools?)',
    );
  });

  it('suggests keys inside entries, ignoring case and separators', () => {
    const message = errorOf({
      tool_call_args: [{ tool: 't', callIndex: 2, match: { mode: 'exact', args: {} } }],
    });
    expect(message).toBe(
      'scenario refund.yaml: tool_call_args[0]: unknown key "callIndex" (did you mean call_index?)',
    );
  });

  it('suggests keys of the mode that is written', () => {
    const message = errorOf({ tool_call_args: [{ tool: 't', match: { mode: 'regex', patern: 'x' } }] });
    expect(message).toContain('tool_call_args[0].match: unknown key "patern" (did you mean pattern?)');
    expect(message).toContain('tool_call_args[0].match.pattern: expected a string; the key is missing');
  });

  it('a key dedented out of its section is pointed back into it', () => {
    expect(textErrorOf('id: x\ntools:\n  allowed: [a]\nrequired: [a]\n')).toBe(
      'scenario refund.yaml: unknown key "required" (did you mean tools.required, indented under tools?)',
    );
    expect(textErrorOf('id: x\norder:\n  terminal: [a]\n  together: [[a, b]]\nbefore: []\n')).toBe(
      'scenario refund.yaml: unknown key "before" (did you mean order.before, indented under order?)',
    );
  });

  it('suggests nothing when no key is close', () => {
    expect(errorOf({ allowed_tools: [], zebra: 1 })).toBe('scenario refund.yaml: unknown key "zebra"');
  });

  it('reports a missing mode, a bad call_index and a wrong type with the value seen', () => {
    expect(errorOf({ tool_call_args: [{ tool: 't', match: { args: {} } }] })).toBe(
      'scenario refund.yaml: tool_call_args[0].match.mode: expected one of exact, subset, regex; the key is missing',
    );
    expect(
      errorOf({ tool_call_args: [{ tool: 't', call_index: 0, match: { mode: 'exact', args: {} } }] }),
    ).toBe('scenario refund.yaml: tool_call_args[0].call_index: expected an integer >= 1; got 0');
    expect(
      errorOf({ tool_call_args: [{ tool: 't', call_index: 1.5, match: { mode: 'exact', args: {} } }] }),
    ).toBe('scenario refund.yaml: tool_call_args[0].call_index: expected an integer; got 1.5');
    expect(errorOf({ allowed_tools: 'lookup_account' })).toBe(
      'scenario refund.yaml: allowed_tools: expected a list; got "lookup_account"',
    );
    expect(errorOf({ tool_call_args: [{ tool: 't', match: { mode: 'subset', args: ['a'] } }] })).toBe(
      'scenario refund.yaml: tool_call_args[0].match.args: expected an object of arguments; got a list',
    );
    expect(errorOf({ expected_tool_sequence: [{ tool: '' }] })).toBe(
      'scenario refund.yaml: expected_tool_sequence[0].tool: expected a non-empty string; got ""',
    );
    expect(errorOf({ version: true, allowed_tools: [] })).toBe(
      'scenario refund.yaml: version: expected a string or a number; got true',
    );
  });

  it('reports every problem, one line each', () => {
    const error = (() => {
      try {
        parseScenario({ allowed_tool: [], tool_call_args: [{ match: {} }] }, 'r.json');
      } catch (caught) {
        return caught as ScenarioError;
      }
      throw new Error('expected a ScenarioError');
    })();
    expect(error.problems.length).toBeGreaterThanOrEqual(3);
    expect(error.message.split('\n').every((line) => line.startsWith('scenario r.json: '))).toBe(true);
  });

  it('explains expected_tool_calls entries in each accepted shape', () => {
    expect(errorOf({ expected_tool_calls: [3] })).toBe(
      'scenario refund.yaml: expected_tool_calls[0]: expected a string or an object; got 3',
    );
    expect(errorOf({ expected_tool_calls: [{ tool: 'a', name: 'b' }] })).toBe(
      'scenario refund.yaml: expected_tool_calls[0]: expected a tool name in exactly one of tool or name; got both',
    );
    expect(errorOf({ expected_tool_calls: [{ tol: 'a' }] })).toContain(
      'expected_tool_calls[0]: unknown key "tol" (did you mean tool?)',
    );
  });

  it('rejects a value that is not JSON inside arguments, with its path', () => {
    const message = errorOf({
      tool_call_args: [{ tool: 't', match: { mode: 'exact', args: { n: [1, Infinity] } } }],
    });
    expect(message).toBe(
      'scenario refund.yaml: tool_call_args[0].match.args.n[1]: expected a JSON value; Infinity is not a JSON number',
    );
  });

  it('rejects a document that is not an object', () => {
    expect(errorOf([])).toBe('scenario refund.yaml: expected an object of rules; got an empty list');
    expect(errorOf(null)).toBe('scenario refund.yaml: expected an object of rules; got null');
  });

  it('rejects a scenario with no rules or assertions at all', () => {
    expect(errorOf({ id: 'x' })).toBe(
      'scenario refund.yaml: no rules: expected at least one of tools, order, reference, arguments, grounding, safety, efficiency, milestones, outcome, mcp, answer, agents, handoffs',
    );
    expect(errorOf({ tool_call_args: [], expected_tool_sequence: [] })).toContain(
      'got only empty tool_call_args, expected_tool_sequence',
    );
  });
});

describe('regex patterns are compiled at load time on RE2', () => {
  const regexError = (pattern: string, flags?: string) =>
    errorOf({
      tool_call_args: [
        { tool: 't', match: { mode: 'regex', pattern, ...(flags !== undefined && { flags }) } },
      ],
    });

  it('rejects a backreference, saying RE2 cannot run it', () => {
    expect(regexError('(a)\\1')).toBe(
      'scenario refund.yaml: tool_call_args[0].match.pattern: expected a pattern RE2 can run in linear time ' +
        '(no backreferences, no lookaheads); got "(a)\\\\1", which uses a backreference (\\1)',
    );
    expect(regexError('(?<n>a)\\k<n>')).toContain('which uses a named backreference');
  });

  it('rejects lookaheads', () => {
    expect(regexError('refund(?=ed)')).toContain('which uses a lookahead');
    expect(regexError('refund(?!ed)')).toContain('which uses a negative lookahead');
  });

  it('does not mistake escaped or bracketed text for those constructs', () => {
    expect(() =>
      parseScenario(
        { tool_call_args: [{ tool: 't', match: { mode: 'regex', pattern: '\\(?=x[(?=]\\\\' } }] },
        'r',
      ),
    ).not.toThrow();
  });

  it('reports a syntax error with the engine detail', () => {
    expect(regexError('[a-')).toMatch(
      /match\.pattern: expected a regular expression RE2 can run; got "\[a-": missing closing \]/,
    );
  });

  it('rejects sticky and unknown flags, accepts g, u, d', () => {
    expect(regexError('a', 'iy')).toBe(
      'scenario refund.yaml: tool_call_args[0].match.flags: expected flags among i, m, s, g, u, d; got "iy": flag y (sticky) is not supported; anchor the pattern with ^ instead',
    );
    expect(regexError('a', 'q')).toContain('got "q": "q" is not a regex flag');
    expect(regexError('a', 'ii')).toContain('flag i is given twice');
    expect(() =>
      parseScenario(
        { tool_call_args: [{ tool: 't', match: { mode: 'regex', pattern: 'a', flags: 'gud' } }] },
        'r',
      ),
    ).not.toThrow();
  });
});

describe('parseScenarioText and loadScenarioFile', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpath-scenario-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads YAML and JSON by content, whatever the extension', async () => {
    const yamlPath = join(dir, 'refund.json');
    await writeFile(yamlPath, 'version: 2\nallowed_tools:\n  - lookup_account\n');
    const fromYaml = await loadScenarioFile(yamlPath);
    expect(fromYaml).toMatchObject({
      id: 'refund',
      version: '2',
      rules: { tools: { allowed: ['lookup_account'] } },
    });

    const jsonPath = join(dir, 'handoff.yaml');
    await writeFile(jsonPath, JSON.stringify({ expected_tool_sequence: [{ tool: 'identify_customer' }] }));
    const fromJson = await loadScenarioFile(jsonPath);
    expect(fromJson.id).toBe('handoff');
    expect(fromJson.rules.order?.sequence?.steps).toEqual([{ tool: 'identify_customer' }]);
  });

  it('reads a __proto__ key in YAML arguments as an ordinary key', () => {
    const scenario = parseScenarioText(
      'tool_call_args:\n  - tool: t\n    match:\n      mode: subset\n      args:\n        __proto__: {admin: true}\n',
      'p.yaml',
    );
    const match = scenario.rules.arguments?.[0]?.match;
    if (match?.mode !== 'superset' || !match.args) throw new Error('unreachable');
    expect(Object.hasOwn(match.args, '__proto__')).toBe(true);
  });

  it('says when the file cannot be read', async () => {
    const missing = join(dir, 'missing.yaml');
    await expect(loadScenarioFile(missing)).rejects.toThrow(
      `scenario ${missing}: no such file: ${missing} (check the path and the working directory)`,
    );
    await expect(loadScenarioFile(dir)).rejects.toThrow(
      `scenario ${dir}: ${dir} is a directory; give a file`,
    );
    await expect(loadScenarioFile(missing)).rejects.toBeInstanceOf(ScenarioError);
  });

  it('says when the file is empty', async () => {
    const empty = join(dir, 'empty.yaml');
    await writeFile(empty, '  \n');
    await expect(loadScenarioFile(empty)).rejects.toThrow(
      `scenario ${empty}: the file is empty; expected an object of rules`,
    );
  });

  it('gives the line of invalid YAML or JSON', () => {
    // The [ left open on line 1 is found where the parse gives up, line 2: line 1 is named.
    expect(textErrorOf('allowed_tools: [a, b\nexpected_tool_calls: [a]\n')).toMatch(
      /^scenario refund\.yaml: not valid YAML or JSON: line 1, column 16: Flow sequence .* end with a \]$/,
    );
    expect(textErrorOf('id: x\ntools:\n  allowed: "a\n\n')).toBe(
      'scenario refund.yaml: not valid YAML or JSON: line 3, column 12: Missing closing "quote',
    );
    expect(textErrorOf('{"allowed_tools": ["a"],\n "allowed_tools": ["b"]}')).toBe(
      'scenario refund.yaml: not valid YAML or JSON: line 2, column 2: Map keys must be unique',
    );
    // The key out of place, not the line's first byte.
    expect(textErrorOf('id: x\ntools:\n  allowed: [a]\n   required: [a]\n')).toBe(
      'scenario refund.yaml: not valid YAML or JSON: line 4, column 4: All mapping items must start at the same column',
    );
    expect(textErrorOf('id: x\ntools:\n    allowed: [a]\n  required: [a]\n')).toMatch(
      /^scenario refund\.yaml: not valid YAML or JSON: line 4, column 3: /,
    );
  });

  it('reads JSON with JSON.parse, as the YAML parser would read it, a key given twice still refused', () => {
    const document = {
      id: 'support.refund',
      description: 'a "quoted": colon, {braces} and \\ in a value',
      tools: { allowed: ['lookup_account', 'issue_refund'], forbidden: ['delete_account'] },
    };
    const json = JSON.stringify(document, null, 2);
    const yamlText = `id: support.refund\ndescription: '${document.description}'\ntools:\n  allowed: [lookup_account, issue_refund]\n  forbidden: [delete_account]\n`;
    expect(parseScenarioText(json, 'refund.json')).toEqual(parseScenarioText(yamlText, 'refund.json'));
    // A key twice deep inside, and once beside a string holding `":`: refused where it is.
    expect(
      textErrorOf(
        '{"id": "x", "description": "a\\": b",\n "tools": {"allowed": ["a"],\n  "allowed": ["b"]}}',
      ),
    ).toBe('scenario refund.yaml: not valid YAML or JSON: line 3, column 3: Map keys must be unique');
    // JSON that is not valid: the line and column still named.
    expect(textErrorOf('{"id": "x",\n "tools": {"allowed": ["a"] "forbidden": []}}')).toMatch(
      /^scenario refund\.yaml: not valid YAML or JSON: line 2, column \d+: /,
    );
  });

  it('rejects a document with only comments as null', () => {
    expect(textErrorOf('# nothing yet\n')).toBe(
      'scenario refund.yaml: expected an object of rules; got null',
    );
  });
});
