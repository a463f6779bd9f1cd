/** The message of the ScenarioError a bad scenario raises; fails the test when none is raised. */
import { expect } from 'vitest';
import { parseScenario, parseScenarioText, ScenarioError } from '../../src/scenario/scenario.js';

function messageOf(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioError);
    return (error as Error).message;
  }
  throw new Error('expected a ScenarioError');
}

/** The error of a parsed document. */
export function errorOf(value: unknown, source = 'refund.yaml'): string {
  return messageOf(() => parseScenario(value, source));
}

/** The error of scenario text (JSON or YAML). */
export function textErrorOf(text: string, source = 'refund.yaml'): string {
  return messageOf(() => parseScenarioText(text, source));
}
