/**
 * Lookups every rule family asks of a trajectory (the calls of a tool, a call's place in the
 * causal listing), built once per trajectory and shared by every family and every scenario
 * evaluated against it. A Trajectory never changes once built, so the index never goes stale;
 * a WeakMap lets it go with the trajectory.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';

interface TrajectoryIndex {
  /** The calls of each tool, in causal order. */
  byTool: Map<string, ToolCall[]>;
  /** Each call's position in `trajectory.calls` (the causal listing), built on first use. */
  positions?: Map<ToolCall, number>;
}

const indexes = new WeakMap<Trajectory, TrajectoryIndex>();
const NO_CALLS: readonly ToolCall[] = [];

function indexOf(trajectory: Trajectory): TrajectoryIndex {
  let index = indexes.get(trajectory);
  if (index) return index;
  const byTool = new Map<string, ToolCall[]>();
  for (const call of trajectory.calls) {
    const ofTool = byTool.get(call.tool);
    if (ofTool) ofTool.push(call);
    else byTool.set(call.tool, [call]);
  }
  index = { byTool };
  indexes.set(trajectory, index);
  return index;
}

/**
 * The calls of one tool, in causal order: what `trajectory.callsOf(tool)` returns, shared
 * rather than copied, so never to be changed by the caller.
 */
export function callsOfTool(trajectory: Trajectory, tool: string): readonly ToolCall[] {
  return indexOf(trajectory).byTool.get(tool) ?? NO_CALLS;
}

/** Each call's position in the causal listing (`trajectory.calls`). */
export function callPositions(trajectory: Trajectory): ReadonlyMap<ToolCall, number> {
  const index = indexOf(trajectory);
  if (!index.positions) {
    const positions = new Map<ToolCall, number>();
    const { calls } = trajectory;
    for (let position = 0; position < calls.length; position++)
      positions.set(calls[position] as ToolCall, position);
    index.positions = positions;
  }
  return index.positions;
}
