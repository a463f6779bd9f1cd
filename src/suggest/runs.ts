/**
 * The good (or bad) runs `toolpath suggest` mines, grouped by the agent they are runs of: one
 * scenario is suggested per group, applying to that group's traces only.
 */
import type { Trajectory } from '../model/trajectory.js';
import type { AppliesTo } from '../scenario/native.js';

/** One trace read from an input. */
export interface SuggestRun {
  /** The input it was read from (a path, or `-`). */
  source: string;
  trajectory: Trajectory;
  /** Read from a typed-event list: its root is named after its file, which says nothing of the agent. */
  typedEvents?: boolean;
}

/** The runs of one agent and the `appliesTo` that picks them out. */
export interface AgentGroup {
  /** The root agent's name, else `span:` and the root span's name, else empty. */
  key: string;
  /** Undefined for traces that name neither a root agent nor a root span. */
  appliesTo?: AppliesTo;
  runs: SuggestRun[];
}

/**
 * Groups runs by root agent (else root span name; typed-event lists, which name neither, go
 * together with no `appliesTo`), sorted by key so the output never depends on input order. */
export function groupByAgent(runs: readonly SuggestRun[]): AgentGroup[] {
  const groups = new Map<string, AgentGroup>();
  for (const run of runs) {
    const { key, appliesTo } = run.typedEvents ? { key: '', appliesTo: undefined } : agentOf(run.trajectory);
    let group = groups.get(key);
    if (!group) {
      group = { key, ...(appliesTo && { appliesTo }), runs: [] };
      groups.set(key, group);
    }
    group.runs.push(run);
  }
  return [...groups.values()].sort((a, b) => compareText(a.key, b.key));
}

function agentOf(trajectory: Trajectory): { key: string; appliesTo?: AppliesTo } {
  const root = trajectory.root;
  if (root?.agentName !== undefined) return { key: root.agentName, appliesTo: { agent: [root.agentName] } };
  if (root !== undefined) return { key: `span:${root.name}`, appliesTo: { rootSpan: [root.name] } };
  return { key: '' };
}

/** Code-unit order: the same on every machine and locale, unlike localeCompare. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
