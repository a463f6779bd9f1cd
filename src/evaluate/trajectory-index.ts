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
  /**
   * The calls of each tool, in causal order: for at most {@link FEW_TOOLS} tools, each tool and
   * its calls side by side in one list searched in place (a Map and its growing table were most
   * of what the index of a usual trace allocated); past that, by tool in `byTool`.
   */
  few: (string | ToolCall[])[] | undefined;
  /** How many places of `few` are filled. */
  fewSize: number;
  byTool: Map<string, ToolCall[]> | undefined;
}

const FEW_TOOLS = 8;

let current: TrajectoryIndex | undefined;

function indexOf(trajectory: Trajectory): TrajectoryIndex {
  if (current?.trajectory === trajectory) return current;
  const few: (string | ToolCall[])[] = new Array(2 * FEW_TOOLS);
  let size = 0;
  let byTool: Map<string, ToolCall[]> | undefined;
  for (const call of trajectory.calls) {
    if (byTool !== undefined) {
      addTo(byTool, call);
      continue;
    }
    const at = placeOf(few, size, call.tool);
    if (at !== -1) (few[at + 1] as ToolCall[]).push(call);
    else if (size < 2 * FEW_TOOLS) {
      few[size] = call.tool;
      few[size + 1] = [call];
      size += 2;
    } else {
      byTool = new Map();
      for (let k = 0; k < size; k += 2) byTool.set(few[k] as string, few[k + 1] as ToolCall[]);
      addTo(byTool, call);
    }
  }
  current = byTool
    ? { trajectory, few: undefined, fewSize: 0, byTool }
    : { trajectory, few, fewSize: size, byTool };
  return current;
}

/** Where `tool` stands in the first `size` places of `few`, -1 when it is not there. */
function placeOf(few: readonly (string | ToolCall[])[], size: number, tool: string): number {
  for (let k = 0; k < size; k += 2) if (few[k] === tool) return k;
  return -1;
}

function addTo(byTool: Map<string, ToolCall[]>, call: ToolCall): void {
  const ofTool = byTool.get(call.tool);
  if (ofTool) ofTool.push(call);
  else byTool.set(call.tool, [call]);
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
  const { few, fewSize, byTool } = indexOf(trajectory);
  if (few === undefined) return (byTool as Map<string, ToolCall[]>).get(tool) ?? NO_CALLS;
  const at = placeOf(few, fewSize, tool);
  return at === -1 ? NO_CALLS : (few[at + 1] as ToolCall[]);
}
