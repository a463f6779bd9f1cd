import { describe, expect, it, vi } from 'vitest';
import { fail } from '../../src/evaluate/rule.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { buildTrajectory } from '../helpers/trajectory.js';

// A family written without the shared results list: it returns a list of its own.
vi.mock('../../src/evaluate/families.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/evaluate/families.js')>();
  return {
    FAMILIES: {
      ...original.FAMILIES,
      tools: () => [fail('tools.own_list', 'structure', 'own_list', 'reported from its own list', [])],
    },
  };
});

describe('evaluate with a family that returns its own list', () => {
  it('reports that list beside the results families add to the shared one', async () => {
    const { evaluate } = await import('../../src/evaluate/evaluate.js');
    const scenario = parseScenario(
      { id: 's', tools: { allowed: ['a'] }, order: { terminal: ['a'] } },
      'inline',
    );
    const report = evaluate(buildTrajectory([{ tool: 'a', args: {} }]), scenario);
    expect(report.assertions.map((assertion) => assertion.name)).toContain('own_list');
    expect(report.assertions.length).toBeGreaterThan(1);
    expect(report.findings.map((finding) => finding.rule)).toEqual(['tools.own_list']);
    expect(report.scores.structure).toBe(0);
  });
});
