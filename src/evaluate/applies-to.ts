/**
 * Which traces a scenario evaluates. `appliesTo` matches the trace's root: the root agent's name,
 * the root span's name, the root span's attributes; every condition given must hold, and a
 * scenario without `appliesTo` (or with an empty one) applies to every trace.
 *
 * The agent is the *root* agent (the agent of the root span, else the outermost agent run), not
 * any agent in the trace: a scenario describes one agent's whole job, and a trace where that
 * agent only runs as another agent's sub-agent is a different job, judged by that agent's scenario.
 */
import type { AttributeValue } from '../model/span-record.js';
import type { Trajectory } from '../model/trajectory.js';
import type { Scenario } from '../scenario/scenario.js';

/** Whether `scenario` applies to `trajectory`. Pure; never throws on a trace without a root. */
export function appliesTo(scenario: Pick<Scenario, 'appliesTo'>, trajectory: Trajectory): boolean {
  const conditions = scenario.appliesTo;
  if (conditions === undefined) return true;
  const { root } = trajectory;
  if (conditions.agent !== undefined) {
    if (root?.agentName === undefined || !conditions.agent.includes(root.agentName)) return false;
  }
  if (conditions.rootSpan !== undefined) {
    if (root === undefined || !conditions.rootSpan.includes(root.name)) return false;
  }
  if (!conditions.attributes) return true;
  for (const [key, expected] of Object.entries(conditions.attributes)) {
    const attributes = root?.attributes;
    if (attributes === undefined || !Object.hasOwn(attributes, key)) return false;
    if (!sameValue(attributes[key], expected)) return false;
  }
  return true;
}

/**
 * Strict equality of a scalar: `42` does not match `"42"`, `true` does not match `"true"`. A
 * 64-bit integer too large for a JS number is kept as its decimal string by the span readers,
 * so such an attribute is matched by writing it as a string in the scenario.
 */
function sameValue(actual: AttributeValue | undefined, expected: string | number | boolean): boolean {
  return actual === expected;
}
