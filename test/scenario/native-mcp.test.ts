/** The `mcp` section of a native scenario: what it accepts, and the errors bad input gets. */
import { describe, expect, it } from 'vitest';
import { parseScenario, parseScenarioText } from '../../src/scenario/scenario.js';
import { errorOf, textErrorOf } from '../helpers/scenario-errors.js';

describe('the mcp section', () => {
  it('reads servers and annotations, with by as a name or a list', () => {
    const scenario = parseScenarioText(
      [
        'mcp:',
        '  servers: { allowed: [repo-tools, "mcp.internal:8080"], forbidden: [shell-tools] }',
        '  annotations:',
        '    destructive: requireApproval',
        '    by: confirm_with_user',
        '    tools: { delete_repo: { destructiveHint: true }, list_repos: { readOnlyHint: true, title: List } }',
      ].join('\n'),
      'repo.yaml',
    );
    expect(scenario.rules.mcp).toEqual({
      servers: { allowed: ['repo-tools', 'mcp.internal:8080'], forbidden: ['shell-tools'] },
      annotations: {
        destructive: 'requireApproval',
        by: ['confirm_with_user'],
        tools: { delete_repo: { destructiveHint: true }, list_repos: { readOnlyHint: true, title: 'List' } },
      },
    });
  });

  it('is a rule section on its own', () => {
    expect(parseScenario({ mcp: { servers: { forbidden: ['x'] } } }, 'a.yaml').rules.mcp).toBeDefined();
  });

  it('an unknown key is named where it is', () => {
    expect(errorOf({ mcp: { server: { allowed: ['a'] } } })).toMatch(/mcp: unknown key "server"/);
    expect(errorOf({ mcp: { servers: { allow: ['a'] } } })).toBe(
      'scenario refund.yaml: mcp.servers: unknown key "allow"\n' +
        'scenario refund.yaml: mcp.servers: give `allowed` (deny by default) or `forbidden` servers, or both',
    );
    expect(
      errorOf({
        mcp: { annotations: { destructive: 'requireApproval', tools: { x: { destructive: true } } } },
      }),
    ).toMatch(/mcp\.annotations\.tools\.x: unknown key "destructive"/);
  });

  it('a wrong type says what was expected', () => {
    expect(errorOf({ mcp: { servers: { allowed: 'repo-tools' } } })).toBe(
      'scenario refund.yaml: mcp.servers.allowed: expected a list; got "repo-tools"',
    );
    expect(
      errorOf({
        mcp: { annotations: { destructive: 'requireApproval', tools: { x: { destructiveHint: 'yes' } } } },
      }),
    ).toContain('mcp.annotations.tools.x.destructiveHint: expected true or false; got "yes"');
    expect(errorOf({ mcp: { annotations: { destructive: 'ask' } } })).toMatch(
      /mcp\.annotations\.destructive.*requireApproval/,
    );
    expect(errorOf({ mcp: { servers: { forbidden: [''] } } })).toBe(
      'scenario refund.yaml: mcp.servers.forbidden[0]: expected a non-empty string; got ""',
    );
  });

  it('refuses an empty section, servers with neither list, and a server both allowed and forbidden', () => {
    expect(errorOf({ mcp: {} })).toContain('give `servers` or `annotations` (or both)');
    expect(errorOf({ mcp: { servers: {} } })).toContain(
      'give `allowed` (deny by default) or `forbidden` servers',
    );
    expect(errorOf({ mcp: { servers: { allowed: ['a', 'b'], forbidden: ['b'] } } })).toMatch(
      /mcp\.servers\.forbidden\[0\]: b is both allowed and forbidden/,
    );
    expect(errorOf({ mcp: { annotations: { by: ['confirm'] } } })).toMatch(/mcp\.annotations\.destructive/);
  });

  it('YAML with a bad mcp key fails with the line, nothing else lost', () => {
    expect(textErrorOf('tools: { allowed: [a] }\nmcp:\n  servers: { forbiden: [x] }\n')).toMatch(/forbiden/);
  });
});
