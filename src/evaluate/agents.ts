/**
 * The `agents` section: each agent's rules, judged by the same families on the trajectory
 * restricted to that agent's own calls and turns (model/agent-view.ts). Every result is renamed
 * `agents.NAME.<rule>` and carries the agent, so a finding says whose rule failed. An agent the
 * scenario names that never ran leaves its rules inconclusive (nothing of it to judge), and with
 * `required: true` fails `agents.NAME.required`.
 */
import { agentNames, agentView } from '../model/agent-view.js';
import type { Trajectory } from '../model/trajectory.js';
import type { AgentsSection, Rules } from '../scenario/native.js';
import { ANY_AGENT } from '../scenario/native-agents.js';
import {
  alwaysHard,
  fail,
  pass,
  type RuleFamily,
  type RuleResult,
  undecidedInstead,
  untilMoreCalls,
} from './rule.js';
import { releaseIndex } from './trajectory-index.js';

type AgentBody = AgentsSection[string];

/** The rule id prefix of an agent's rules. */
export function agentRulePrefix(agent: string): string {
  return `agents.${agent}.`;
}

/**
 * Adds the results of every agent's rules to `results`, running `families` (the evaluator's, in
 * its order) on each agent's part of the trajectory. `"*"` is judged for each agent that ran, after
 * the agents named.
 */
export function agentResults(
  trajectory: Trajectory,
  section: AgentsSection,
  families: readonly (readonly [keyof Rules, RuleFamily<unknown>])[],
  results: RuleResult[],
): void {
  const seen = agentNames(trajectory);
  const ran = new Set(seen);
  for (const [name, body] of Object.entries(section)) {
    if (name === ANY_AGENT) continue;
    if (ran.has(name)) judgeAgent(trajectory, name, body, families, results);
    else notRun(trajectory, name, body, seen, families, results);
  }
  const every = section[ANY_AGENT];
  if (every === undefined) return;
  if (seen.length === 0) notRun(trajectory, ANY_AGENT, every, seen, families, results);
  for (const name of seen) judgeAgent(trajectory, name, every, families, results);
}

function judgeAgent(
  trajectory: Trajectory,
  name: string,
  body: AgentBody,
  families: readonly (readonly [keyof Rules, RuleFamily<unknown>])[],
  results: RuleResult[],
): void {
  const from = results.length;
  if (body.required === true) results.push(pass('required', 'structure', 'required'));
  runFamilies(agentView(trajectory, name), body, families, results);
  rename(results, from, name);
}

/** The rules of an agent that never ran: each inconclusive, saying so; `required` fails. */
function notRun(
  trajectory: Trajectory,
  name: string,
  body: AgentBody,
  seen: readonly string[],
  families: readonly (readonly [keyof Rules, RuleFamily<unknown>])[],
  results: RuleResult[],
): void {
  const from = results.length;
  const ran = seen.length === 0 ? 'no agent is named in the trace' : `agents that ran: ${seen.join(', ')}`;
  const who = name === ANY_AGENT ? 'no agent ran in this trace' : `agent ${name} never ran in this trace`;
  const reason = `${who} (no run or call of it), so its rules have nothing to judge; ${ran}`;
  // A conversation's later traces may yet hold the agent's run.
  if (body.required === true)
    results.push(
      untilMoreCalls(
        alwaysHard(
          fail('required', 'structure', 'required', `${who}, but the scenario requires it; ${ran}`, []),
        ),
      ),
    );
  const judged = results.length;
  // The rules are run on nothing, for their names, then each is made undecided.
  runFamilies(agentView(trajectory, name), body, families, results);
  for (let k = judged; k < results.length; k++)
    results[k] = undecidedInstead(results[k] as RuleResult, reason);
  rename(results, from, name);
}

function runFamilies(
  view: Trajectory,
  body: AgentBody,
  families: readonly (readonly [keyof Rules, RuleFamily<unknown>])[],
  results: RuleResult[],
): void {
  try {
    for (const [section, family] of families) {
      // `agents` and `handoffs` are the whole trace's; a body has neither.
      const config = (body as Rules)[section];
      if (config === undefined) continue;
      const returned = family(view, config, results);
      if (returned !== results) for (const result of returned) results.push(result);
    }
  } finally {
    releaseIndex(view);
  }
}

/** Prefixes the rule id and name of `results[from..]` with the agent, and sets the agent. */
function rename(results: RuleResult[], from: number, agent: string): void {
  const prefix = agentRulePrefix(agent);
  for (let k = from; k < results.length; k++) {
    const result = results[k] as RuleResult;
    result.rule = prefix + result.rule;
    result.name = prefix + result.name;
    result.agent = agent;
  }
}
