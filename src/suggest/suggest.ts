/**
 * `toolpath suggest`'s work, without I/O: an agent's good runs in, the rules that held on every
 * one of them out, each with its support and, given bad runs, the bad runs it catches.
 */
import { appliesTo } from '../evaluate/applies-to.js';
import type { Severity } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import type { LeafTally } from './leaves.js';
import { mineArguments } from './mine-arguments.js';
import { mineGrounding } from './mine-grounding.js';
import { mineBefore, mineTerminal, reduceBefore } from './mine-order.js';
import { mineTools } from './mine-tools.js';
import type { SuggestedRule, Supported } from './rules.js';
import { type AgentGroup, groupByAgent, type SuggestRun } from './runs.js';
import { failureOn, passesOn, scenarioOf } from './verify.js';

/** What the user sets. */
export interface SuggestOptions {
  /** A rule is suggested only when it was checked (not vacuous) in at least this many runs. Default 1. */
  minSupport?: number;
  /** Limits (call counts) at the most seen plus this many percent, rounded up. Default 0. */
  marginPercent?: number;
}

/** A bad run a rule fails, and how: `hard` fails the verdict, `warning` only lowers a score. */
export interface Catch {
  run: SuggestRun;
  severity: Severity;
}

/** A suggested rule, what backs it, and the bad runs it fails. */
export interface RuleSuggestion extends Supported {
  /** The bad runs of the agent the rule fails, in the order given. */
  catches: Catch[];
}

/** The scenario suggested for one agent. */
export interface AgentSuggestion {
  group: AgentGroup;
  rules: RuleSuggestion[];
  /** Rules the mining found but the evaluator did not pass on every good run: never suggested. */
  dropped: number;
  /** The bad runs of this agent (its scenario applies to them), in the order given. */
  bad: SuggestRun[];
  /** Those no suggested rule fails with a hard failure. */
  uncaught: SuggestRun[];
}

/** Everything suggested, and the bad runs that are no agent's. */
export interface Suggestions {
  agents: AgentSuggestion[];
  /** Bad runs no suggested scenario applies to (their root agent had no good run). */
  unmatchedBad: SuggestRun[];
  /** Values with more fields than mining reads (see leaves.ts). */
  truncatedValues: number;
}

/** Mines, verifies and (with bad runs) tries every rule; deterministic for the same runs. */
export function suggestScenarios(
  good: readonly SuggestRun[],
  bad: readonly SuggestRun[] = [],
  options: SuggestOptions = {},
): Suggestions {
  const minSupport = options.minSupport ?? 1;
  const tally: LeafTally = { truncated: 0 };
  const agents: AgentSuggestion[] = [];
  const matched = new Set<SuggestRun>();
  for (const group of groupByAgent(good)) {
    const trajectories = group.runs.map((run) => run.trajectory);
    const mined = mineRules(trajectories, options.marginPercent ?? 0, tally).filter(
      ({ support }) => support >= minSupport,
    );
    const held = mined.filter(({ rule }) => {
      const scenario = scenarioOf(group, [rule]);
      return trajectories.every((trajectory) => passesOn(scenario, trajectory));
    });
    // Reduced after the check: only pairs that really held may stand for the pairs they imply.
    const before = new Set(reduceBefore(held.filter(isBefore)));
    const kept = held.filter((supported) => !isBefore(supported) || before.has(supported));
    const groupBad = bad.filter((run) => appliesTo(group, run.trajectory));
    for (const run of groupBad) matched.add(run);
    const rules = kept.map((supported): RuleSuggestion => {
      const scenario = scenarioOf(group, [supported.rule]);
      const catches: Catch[] = [];
      for (const run of groupBad) {
        const severity = failureOn(scenario, run.trajectory);
        if (severity) catches.push({ run, severity });
      }
      return { ...supported, catches };
    });
    const uncaught = groupBad.filter(
      (run) => !rules.some((rule) => rule.catches.some((c) => c.run === run && c.severity === 'hard')),
    );
    agents.push({ group, rules, dropped: mined.length - held.length, bad: groupBad, uncaught });
  }
  return {
    agents,
    unmatchedBad: bad.filter((run) => !matched.has(run)),
    truncatedValues: tally.truncated,
  };
}

/** Every candidate rule, in the order the scenario lists them. */
function mineRules(
  trajectories: readonly Trajectory[],
  marginPercent: number,
  tally: LeafTally,
): Supported[] {
  const tools = mineTools(trajectories, marginPercent);
  const grounding = mineGrounding(trajectories, tally);
  const grounded = new Set(grounding.map(({ rule }) => `${rule.tool}\u0000${rule.path.split('.')[0]}`));
  return [
    ...tools,
    ...mineBefore(trajectories),
    ...mineTerminal(trajectories),
    ...mineArguments(trajectories, grounded),
    ...grounding,
  ];
}

function isBefore(
  supported: Supported,
): supported is Supported<Extract<SuggestedRule, { kind: 'order.before' }>> {
  return supported.rule.kind === 'order.before';
}
