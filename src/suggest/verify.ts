/**
 * Every suggested rule is checked by the real evaluator, never trusted from the mining: alone,
 * as a scenario of its own, against every good run (a rule that does not pass on one of them is
 * dropped) and against every bad run (to say which bad runs it catches).
 */
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import type { Severity } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import { parseScenario, type Scenario } from '../scenario/scenario.js';
import { type SuggestedRule, scenarioDocument } from './rules.js';
import type { AgentGroup } from './runs.js';

/** The name suggested scenarios are parsed under, for messages. */
const SOURCE = 'toolpath suggest';

/** The scenario of these rules for this group, as `toolpath eval` would load it. */
export function scenarioOf(
  group: Pick<AgentGroup, 'key' | 'appliesTo'>,
  rules: readonly SuggestedRule[],
): Scenario {
  return parseScenario(scenarioDocument(group, rules).document, SOURCE);
}

/** Every check of the scenario passed on the trajectory (none failed, none was undecided). */
export function passesOn(scenario: Scenario, trajectory: Trajectory): boolean {
  const { assertions } = evaluate(trajectory, scenario);
  return assertions.length > 0 && assertions.every((assertion) => assertion.status === 'pass');
}

/**
 * What the scenario's checks say of a bad run it applies to: the severity of its worst decided
 * failure (`hard` fails the verdict, `warning` only lowers a score); undefined when nothing
 * failed, or the scenario does not apply to the run.
 */
export function failureOn(scenario: Scenario, trajectory: Trajectory): Severity | undefined {
  if (!appliesTo(scenario, trajectory)) return undefined;
  let worst: Severity | undefined;
  for (const finding of evaluate(trajectory, scenario).findings) {
    // Findings of the trace's own issues name no assertion: they are not the rule's.
    if (finding.assertion === undefined || finding.inconclusive || finding.pending) continue;
    if (finding.severity === 'hard') return 'hard';
    worst = 'warning';
  }
  return worst;
}
