/**
 * Where arguments came from: `grounding` rules for an argument that, in every call of its tool
 * in every good run, equalled a field of a successful result of a call causally before it (the
 * same field of the same tool each time).
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import { scalarKey } from '../scenario/json-path.js';
import { type LeafTally, leavesOf } from './leaves.js';
import type { SuggestedRule, Supported } from './rules.js';
import { compareText } from './runs.js';

type GroundingRule = Extract<SuggestedRule, { kind: 'grounding' }>;

/** One field of a result, ready to be matched. */
interface Held {
  call: ToolCall;
  source: string;
}

/**
 * The grounding rules every call of every run bears out. Support: the runs that called the tool.
 * Sorted by tool, path, source tool, source path.
 */
export function mineGrounding(
  trajectories: readonly Trajectory[],
  tally: LeafTally,
): Supported<GroundingRule>[] {
  // Per tool and argument path, the sources every call so far had (null: a call lacked the
  // path); per tool, the runs that called it.
  const sources = new Map<string, Map<string, Set<string> | null>>();
  const support = new Map<string, number>();
  for (const trajectory of trajectories) {
    const held = resultIndex(trajectory, tally);
    const seen = new Set<string>();
    for (const call of trajectory.calls) {
      if (!seen.has(call.tool)) {
        seen.add(call.tool);
        support.set(call.tool, (support.get(call.tool) ?? 0) + 1);
      }
      const found = new Map<string, Set<string>>();
      for (const leaf of leavesOf(call.args, tally)) {
        const holders = held.get(scalarKey(leaf.value) as string) ?? [];
        const from = new Set<string>();
        for (const holder of holders)
          if (trajectory.happensBefore(holder.call, call)) from.add(holder.source);
        found.set(leaf.path, from);
      }
      const paths = sources.get(call.tool);
      if (paths) narrow(paths, found);
      else sources.set(call.tool, found);
    }
  }
  const rules: Supported<GroundingRule>[] = [];
  for (const [tool, paths] of sources)
    for (const [path, from] of paths) {
      if (!from) continue;
      for (const source of sameNamed(path, from)) {
        const [fromTool, fromPath] = source.split('\u0000') as [string, string];
        rules.push({
          rule: { kind: 'grounding', tool, path, from: { tool: fromTool, path: fromPath } },
          support: support.get(tool) ?? 0,
        });
      }
    }
  return rules.sort((a, b) => compareText(ruleKey(a.rule), ruleKey(b.rule)));
}

/**
 * The sources whose field has the argument's name (`amount` from `amount`), when some has: a
 * field of another name that held the same value (a `maxAmount` of 40) is most often chance.
 */
function sameNamed(path: string, sources: ReadonlySet<string>): string[] {
  const name = lastSegment(path);
  const named = [...sources].filter((source) => lastSegment(source.split('\u0000')[1] as string) === name);
  return named.length > 0 ? named : [...sources];
}

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1);
}

/**
 * Keeps, per argument path of a tool, the sources this call had too; a path this call lacks, or
 * that an earlier call lacked, is dropped for good (null).
 */
function narrow(paths: Map<string, Set<string> | null>, found: ReadonlyMap<string, Set<string>>): void {
  for (const [path, from] of paths) {
    if (!from) continue;
    const now = found.get(path);
    if (!now) paths.set(path, null);
    else for (const source of from) if (!now.has(source)) from.delete(source);
  }
  for (const path of found.keys()) if (!paths.has(path)) paths.set(path, null);
}

/** The string and number fields of every successful result, by value. */
function resultIndex(trajectory: Trajectory, tally: LeafTally): Map<string, Held[]> {
  const index = new Map<string, Held[]>();
  for (const call of trajectory.calls) {
    if (call.outcome.status !== 'ok') continue;
    for (const leaf of leavesOf(call.result, tally)) {
      const key = scalarKey(leaf.value) as string;
      const entry = { call, source: `${call.tool}\u0000${leaf.path}` };
      const list = index.get(key);
      if (list) list.push(entry);
      else index.set(key, [entry]);
    }
  }
  return index;
}

function ruleKey(rule: GroundingRule): string {
  return [rule.tool, rule.path, rule.from.tool, rule.from.path].join('\u0000');
}
