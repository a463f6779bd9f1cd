/**
 * Which tools an agent's good runs used, and how much: `tools.allowed` (every tool seen),
 * `tools.required` (the tools every run called), per-tool `tools.counts` maxima and
 * `efficiency.maxCalls`, each at the most seen plus the margin the user gives.
 */
import type { Trajectory } from '../model/trajectory.js';
import type { SuggestedRule, Supported } from './rules.js';
import { compareText } from './runs.js';

/** Per tool, how many calls each run made (runs in the order given). */
export function callCounts(trajectories: readonly Trajectory[]): Map<string, number[]> {
  const counts = new Map<string, number[]>();
  trajectories.forEach((trajectory, index) => {
    for (const call of trajectory.calls) {
      let perRun = counts.get(call.tool);
      if (!perRun) {
        perRun = new Array<number>(trajectories.length).fill(0);
        counts.set(call.tool, perRun);
      }
      perRun[index] = (perRun[index] as number) + 1;
    }
  });
  return new Map([...counts].sort(([a], [b]) => compareText(a, b)));
}

/** A limit at the most seen, raised by `marginPercent` percent (rounded up). */
export function withMargin(most: number, marginPercent: number): number {
  return most + Math.ceil((most * marginPercent) / 100);
}

/** The tools rules: allowed, required, per-tool maxima and the call budget. */
export function mineTools(
  trajectories: readonly Trajectory[],
  marginPercent: number,
): Supported<SuggestedRule>[] {
  const runs = trajectories.length;
  const counts = callCounts(trajectories);
  const rules: Supported<SuggestedRule>[] = [];
  if (counts.size > 0)
    rules.push({ rule: { kind: 'tools.allowed', tools: [...counts.keys()] }, support: runs });
  for (const [tool, perRun] of counts)
    if (perRun.every((count) => count > 0))
      rules.push({ rule: { kind: 'tools.required', tool }, support: runs });
  for (const [tool, perRun] of counts) {
    const support = perRun.filter((count) => count > 0).length;
    rules.push({
      rule: { kind: 'tools.counts', tool, max: withMargin(Math.max(...perRun), marginPercent) },
      support,
    });
  }
  if (runs > 0) {
    const most = Math.max(...trajectories.map((trajectory) => trajectory.calls.length));
    rules.push({
      rule: { kind: 'efficiency.maxCalls', max: withMargin(most, marginPercent) },
      support: runs,
    });
  }
  return rules;
}
