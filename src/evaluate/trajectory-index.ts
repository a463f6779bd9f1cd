/**
 * Lookups every rule family asks of a trajectory (the calls of a tool), built once per evaluation and shared by every family. A Trajectory never
 * changes once built, so the index never goes stale.
 *
 * The index of the one trajectory being evaluated is held in a single slot, not a WeakMap: a
 * WeakMap entry keyed by a short-lived object costs the collector ephemeron work,
 * more than building the index of a usual trace. `evaluate` lets the slot go when it is done, so
 * no trajectory outlives its evaluation here.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import { NO_CALLS } from './rule.js';

interface TrajectoryIndex {
  readonly trajectory: Trajectory;
  /** The calls of each tool, in causal order. */
  byTool: Map<string, ToolCall[]>;
}

let current: TrajectoryIndex | undefined;

function indexOf(trajectory: Trajectory): TrajectoryIndex {
  if (current?.trajectory === trajectory) return current;
  const byTool = new Map<string, ToolCall[]>();
  for (const call of trajectory.calls) {
    const ofTool = byTool.get(call.tool);
    if (ofTool) ofTool.push(call);
    else byTool.set(call.tool, [call]);
  }
  current = { trajectory, byTool };
  return current;
}

/** Lets go of the index of `trajectory` (called when its evaluation is done). */
export function releaseIndex(trajectory: Trajectory): void {
  if (current?.trajectory === trajectory) current = undefined;
}

/**
 * The calls of one tool, in causal order: what `trajectory.callsOf(tool)` returns, shared
 * rather than copied, so never to be changed by the caller.
 */
export function callsOfTool(trajectory: Trajectory, tool: string): readonly ToolCall[] {
  return indexOf(trajectory).byTool.get(tool) ?? NO_CALLS;
}
