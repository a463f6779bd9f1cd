/**
 * `no_unexpected_tool` (the trajectory-assertion JSON's `allowed_tools`): deny by default. Every call whose tool is
 * not on the list fails the assertion, and the reason names each forbidden tool with its calls.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import { type AssertionOutcome, callIds, capList, failed, passed } from './outcome.js';
import { toolSet } from './tool-set.js';

/** The trajectory-assertion JSON's result name of the allowlist assertion. */
export const NO_UNEXPECTED_TOOL = 'no_unexpected_tool';

/**
 * Evaluates an allowlist (native `tools.allowed`, the trajectory-assertion JSON's `allowed_tools`: the reason names
 * neither, as both read it) against the trajectory. An empty list allows no tool at all.
 */
export function checkAllowedTools(trajectory: Trajectory, allowed: readonly string[]): AssertionOutcome {
  const allowedSet = toolSet(allowed);
  // Map keeps first-call order, so the reason lists forbidden tools in the order they were used.
  // Made at the first forbidden call: most traces have none.
  let forbidden: Map<string, ToolCall[]> | undefined;
  for (const call of trajectory.calls) {
    if (allowedSet.has(call.tool)) continue;
    forbidden ??= new Map();
    const calls = forbidden.get(call.tool);
    if (calls) calls.push(call);
    else forbidden.set(call.tool, [call]);
  }
  if (forbidden === undefined) return passed(NO_UNEXPECTED_TOOL);
  const listed = capList([...forbidden].map(([tool, calls]) => `${tool} (${callIds(calls)})`));
  const allowedText = allowed.length === 0 ? 'none' : allowed.join(', ');
  const reason = `called tools not on the allowed list: ${listed}; allowed: ${allowedText}`;
  return failed(NO_UNEXPECTED_TOOL, reason, [...forbidden.values()].flat());
}
