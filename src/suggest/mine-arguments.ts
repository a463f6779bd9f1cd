/**
 * Arguments that never changed: `arguments` rules for a top-level argument of a tool that had
 * the same value in every call in every good run (a constant of the task: an order number the
 * user gave, a fixed mode), unless it came from a result (a grounding rule says that better).
 * Needs two runs at least: in one run every value is "the same in every run".
 */
import { canonicalJson, isJsonObject, type JsonValue } from '../model/json.js';
import { isReadable, type Trajectory } from '../model/trajectory.js';
import type { SuggestedRule, Supported } from './rules.js';
import { compareText } from './runs.js';

type ArgumentsRule = Extract<SuggestedRule, { kind: 'arguments' }>;

/** Runs needed before a value counts as constant rather than this run's. */
export const MIN_RUNS_FOR_CONSTANTS = 2;

/**
 * The constant arguments of the tools every run called. `grounded` holds `tool\0key` for the
 * top-level keys a grounding rule covers: those values came from results, so they are left out.
 */
export function mineArguments(
  trajectories: readonly Trajectory[],
  grounded: ReadonlySet<string>,
): Supported<ArgumentsRule>[] {
  if (trajectories.length < MIN_RUNS_FOR_CONSTANTS) return [];
  const constant = new Map<string, Map<string, { text: string; value: JsonValue } | null>>();
  const calledIn = new Map<string, number>();
  const unknowable = new Set<string>();
  for (const trajectory of trajectories) {
    const tools = new Set<string>();
    for (const call of trajectory.calls) {
      tools.add(call.tool);
      const args = isReadable(call.args) ? call.args.value : undefined;
      const keys = constant.get(call.tool);
      if (!isJsonObject(args)) {
        // Arguments not captured (or not an object) make every constant of the tool unknowable.
        unknowable.add(call.tool);
        continue;
      }
      if (!keys) {
        constant.set(
          call.tool,
          new Map(
            Object.keys(args).map((key) => [
              key,
              { text: canonicalJson(args[key] as JsonValue), value: args[key] as JsonValue },
            ]),
          ),
        );
        continue;
      }
      for (const [key, seen] of keys) {
        if (!seen) continue;
        const value = Object.hasOwn(args, key) ? (args[key] as JsonValue) : undefined;
        if (value === undefined || canonicalJson(value) !== seen.text) keys.set(key, null);
      }
    }
    for (const tool of tools) calledIn.set(tool, (calledIn.get(tool) ?? 0) + 1);
  }
  const rules: Supported<ArgumentsRule>[] = [];
  for (const tool of [...constant.keys()].sort(compareText)) {
    if (calledIn.get(tool) !== trajectories.length || unknowable.has(tool)) continue;
    const keys = constant.get(tool) as Map<string, { text: string; value: JsonValue } | null>;
    for (const key of [...keys.keys()].sort(compareText)) {
      const seen = keys.get(key);
      if (!seen || grounded.has(`${tool}\u0000${key}`)) continue;
      rules.push({ rule: { kind: 'arguments', tool, key, value: seen.value }, support: trajectories.length });
    }
  }
  return rules;
}
