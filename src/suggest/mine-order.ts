/**
 * The order an agent's good runs kept, on happens-before (the trajectory's causal order, never
 * start times: calls asked for in one turn are not ordered): `order.before` pairs that held in
 * every run, reduced to a minimal set, and the terminal tools every run ended with.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import type { SuggestedRule, Supported } from './rules.js';
import { compareText } from './runs.js';

type BeforeRule = Extract<SuggestedRule, { kind: 'order.before' }>;

/**
 * Every pair (A, B) of distinct tools such that, in every run, each call of B had a call of A
 * causally before it; support: the runs that called B (in the others the pair says nothing).
 * Pairs with no support are left out. Sorted by (before, after).
 */
export function mineBefore(trajectories: readonly Trajectory[]): Supported<BeforeRule>[] {
  const support = new Map<string, number>();
  const broken = new Set<string>();
  const tools = new Set<string>();
  for (const trajectory of trajectories) {
    const byTool = callsByTool(trajectory);
    for (const tool of byTool.keys()) tools.add(tool);
    for (const [before, beforeCalls] of byTool) {
      // Built once per tool: one pass over the calls instead of one per pair of calls.
      const afterOne = trajectory.afterAny(beforeCalls);
      for (const [after, afterCalls] of byTool) {
        if (after === before) continue;
        const pair = key(before, after);
        if (afterCalls.every(afterOne)) support.set(pair, (support.get(pair) ?? 0) + 1);
        else broken.add(pair);
      }
    }
  }
  const sorted = [...tools].sort(compareText);
  const pairs: Supported<BeforeRule>[] = [];
  for (const before of sorted)
    for (const after of sorted) {
      const pair = key(before, after);
      const count = support.get(pair) ?? 0;
      if (before !== after && count > 0 && !broken.has(pair) && calledEverywhere(trajectories, before, after))
        pairs.push({ rule: { kind: 'order.before', before, after }, support: count });
    }
  return pairs;
}

/** Every run that called `after` called `before` too: a run with no `before` call at all breaks the pair. */
function calledEverywhere(trajectories: readonly Trajectory[], before: string, after: string): boolean {
  return trajectories.every(
    (trajectory) =>
      !trajectory.calls.some((call) => call.tool === after) ||
      trajectory.calls.some((call) => call.tool === before),
  );
}

/** A run's calls by tool, in causal order. */
function callsByTool(trajectory: Trajectory): Map<string, ToolCall[]> {
  const byTool = new Map<string, ToolCall[]>();
  for (const call of trajectory.calls) {
    const calls = byTool.get(call.tool);
    if (calls) calls.push(call);
    else byTool.set(call.tool, [call]);
  }
  return byTool;
}

/**
 * The pairs no two others imply: (A, C) goes when (A, B) and (B, C) are there, for (A, B) says
 * every B has an A before it and (B, C) every C a B, so every C has an A before it. Pairs that
 * held in every run form a strict partial order (a cycle would need an infinite regress of
 * calls), so this is its transitive reduction.
 */
export function reduceBefore<P extends Supported<BeforeRule>>(pairs: readonly P[]): P[] {
  const has = new Set(pairs.map(({ rule }) => key(rule.before, rule.after)));
  const middles = [...new Set(pairs.flatMap(({ rule }) => [rule.before, rule.after]))];
  return pairs.filter(
    ({ rule }) =>
      !middles.some(
        (middle) =>
          middle !== rule.before &&
          middle !== rule.after &&
          has.has(key(rule.before, middle)) &&
          has.has(key(middle, rule.after)),
      ),
  );
}

function key(before: string, after: string): string {
  return JSON.stringify([before, after]);
}

/**
 * The tools every run called and after whose calls nothing came causally: `order.terminal`.
 * Support: every run.
 */
export function mineTerminal(trajectories: readonly Trajectory[]): Supported<SuggestedRule>[] {
  if (trajectories.length === 0) return [];
  const [first, ...rest] = trajectories.map(terminalTools);
  const common = [...(first ?? [])]
    .filter((tool) => rest.every((tools) => tools.has(tool)))
    .sort(compareText);
  return common.map((tool) => ({ rule: { kind: 'order.terminal', tool }, support: trajectories.length }));
}

/** The tools of a run none of whose calls anything happened after. */
function terminalTools(trajectory: Trajectory): Set<string> {
  const terminal = new Set<string>();
  for (const [tool, calls] of callsByTool(trajectory)) {
    const afterOne = trajectory.afterAny(calls);
    if (!trajectory.calls.some(afterOne)) terminal.add(tool);
  }
  return terminal;
}
