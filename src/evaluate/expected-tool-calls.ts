/**
 * `expected_tool_calls`: the presence-only check that predates the trajectory assertions -
 * was each tool called at any point? One result per tool, `expected_tool_calls:<tool>`.
 */
import type { Trajectory } from '../model/trajectory.js';
import { type AssertionOutcome, capList, failed, passed } from './outcome.js';

/** The result name for one expected tool. */
export function expectedToolCallName(tool: string): string {
  return `expected_tool_calls:${tool}`;
}

/** Evaluates `expected_tool_calls`; a tool listed twice gives one result. */
export function checkExpectedToolCalls(trajectory: Trajectory, tools: readonly string[]): AssertionOutcome[] {
  const calledTools = [...new Set(trajectory.calls.map((call) => call.tool))];
  return [...new Set(tools)].map((tool) => {
    const calls = trajectory.callsOf(tool);
    if (calls.length > 0) return passed(expectedToolCallName(tool), calls);
    const seen = calledTools.length === 0 ? 'no tool was called' : `tools called: ${capList(calledTools)}`;
    return failed(expectedToolCallName(tool), `${tool} was never called; ${seen}`, []);
  });
}
