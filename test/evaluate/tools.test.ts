import { describe, expect, it } from 'vitest';
import { checkAllowedTools } from '../../src/evaluate/allowed-tools.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { checkExpectedToolCalls } from '../../src/evaluate/expected-tool-calls.js';
import { parseScenarioText } from '../../src/scenario/scenario.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { buildTrajectory } from '../helpers/trajectory.js';

const ids = (calls: readonly { id: string }[]) => calls.map((call) => call.id);

describe('no_unexpected_tool (allowed_tools)', () => {
  const allowed = ['lookup_account', 'run_diagnostics', 'create_ticket', 'kb_query'];

  it('passes when every call is on the allowlist', () => {
    const trajectory = buildTrajectory(['lookup_account', ['run_diagnostics', 'kb_query'], 'create_ticket']);
    expect(checkAllowedTools(trajectory, allowed).result).toEqual({
      name: 'no_unexpected_tool',
      status: 'pass',
      reason: '',
    });
  });

  it('fails naming every forbidden tool and its calls', () => {
    const trajectory = buildTrajectory([
      'lookup_account',
      'transfer_to_human',
      'admin_reset',
      'transfer_to_human',
    ]);
    const { result, calls } = checkAllowedTools(trajectory, allowed);
    expect(result.status).toBe('fail');
    expect(result.reason).toBe(
      'called tools not on the allowed list: transfer_to_human (calls c2, c4), admin_reset (call c3); ' +
        'allowed: lookup_account, run_diagnostics, create_ticket, kb_query',
    );
    expect(ids(calls)).toEqual(['c2', 'c4', 'c3']);
  });

  it('denies every tool when the list is empty, and passes a trajectory with no calls', () => {
    expect(checkAllowedTools(buildTrajectory(['kb_query']), []).result.reason).toBe(
      'called tools not on the allowed list: kb_query (call c1); allowed: none',
    );
    expect(checkAllowedTools(buildTrajectory([]), []).result.status).toBe('pass');
  });
});

describe('expected_tool_calls', () => {
  it('gives one result per tool, passing the ones that were called', () => {
    const trajectory = buildTrajectory(['lookup_account', 'kb_query']);
    const outcomes = checkExpectedToolCalls(trajectory, ['lookup_account', 'issue_refund', 'lookup_account']);
    expect(outcomes.map((outcome) => outcome.result)).toEqual([
      { name: 'expected_tool_calls:lookup_account', status: 'pass', reason: '' },
      {
        name: 'expected_tool_calls:issue_refund',
        status: 'fail',
        reason: 'issue_refund was never called; tools called: lookup_account, kb_query',
      },
    ]);
    expect(ids(outcomes[0]?.calls ?? [])).toEqual(['c1']);
  });

  it('says when no tool was called at all', () => {
    expect(checkExpectedToolCalls(buildTrajectory([]), ['kb_query'])[0]?.result.reason).toBe(
      'kb_query was never called; no tool was called',
    );
  });
});

describe('a scenario changed after it was evaluated', () => {
  it('is evaluated as it is now: tool lists are not served from a stale cache', () => {
    const trajectory = buildTrajectory(['lookup_account', 'admin_reset']);
    const allowed = ['lookup_account'];
    expect(checkAllowedTools(trajectory, allowed).result.status).toBe('fail');
    allowed.push('admin_reset');
    expect(checkAllowedTools(trajectory, allowed).result.status).toBe('pass');
    allowed[1] = 'other';
    expect(checkAllowedTools(trajectory, allowed).result.status).toBe('fail');
  });
});

describe('tools.allowed in a native scenario', () => {
  it('says what was called outside the list without naming seed 001 keys', () => {
    const scenario = parseScenarioText('id: support.refund\ntools:\n  allowed: [get_order]\n', 'refund.yaml');
    const report = evaluate(trajectoryOf(fixture('demo-agent-good-refund')), scenario);
    const [finding] = report.findings.filter((f) => f.rule === 'tools.allowed');
    expect(finding?.message).toMatch(/^called tools not on the allowed list: get_refund_policy \(call /);
    expect(JSON.stringify(report.findings)).not.toContain('allowed_tools');
  });
});
