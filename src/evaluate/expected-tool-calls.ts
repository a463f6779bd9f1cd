/**
 * `expected_tool_calls`: the presence-only check that predates the trajectory assertions -
 * was each tool called at any point? One result per tool, `expected_tool_calls:<tool>`.
 */
import type { Trajectory } from '../model/trajectory.js';
import { type AssertionOutcome, capList, failed, passed } from './outcome.js';
import { distinctTools } from './tool-set.js';
import { callsOfTool } from './trajectory-index.js';

/** The result name for one expected tool. */
export function expectedToolCallName(tool: string): string {
  return `expected_tool_calls:${tool}`;
}

/** Evaluates `expected_tool_calls`; a tool listed twice gives one result. */
export function checkExpectedToolCalls(trajectory: Trajectory, tools: readonly string[]): AssertionOutcome[] {
  const outcomes: AssertionOutcome[] = [];
  if (tools.length === 0) return outcomes;
  for (const tool of distinctTools(tools)) {
    const calls = callsOfTool(trajectory, tool);
    if (calls.length > 0) {
      outcomes.push(passed(expectedToolCallName(tool), calls));
      continue;
    }
    const calledTools = [...new Set(trajectory.calls.map((call) => call.tool))];
    const seen = calledTools.length === 0 ? 'no tool was called' : `tools called: ${capList(calledTools)}`;
    outcomes.push(failed(expectedToolCallName(tool), `${tool} was never called; ${seen}`, []));
  }
  return outcomes;
}
