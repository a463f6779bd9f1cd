/**
 * The conversations of one `toolpath eval` run: traces gathered by conversation id across every
 * input (a dataset's within each row and trial), and the conversation scenarios that apply to
 * any of them. Each conversation is joined once, after every input was read, and judged once:
 * the run has every trace, so its verdicts are final.
 */
import { joinConversation } from '../model/conversation.js';
import type { Trajectory } from '../model/trajectory.js';
import type { Scenario } from '../scenario/scenario.js';
import type { UnitOf } from './run-eval.js';

/** A conversation of the run: its id, and the dataset row (and trial) it is in ('' for none). */
export interface ConversationKey {
  id: string;
  group: string;
}

interface Gathered {
  id: string;
  traces: Trajectory[];
  /** The inputs its traces came from. */
  sources: Set<string>;
  /** The conversation scenarios that apply to some trace of it, each with the unit of the first such trace. */
  scenarios: Map<Scenario, UnitOf>;
}

/** Traces and scenarios gathered per conversation, in the order conversations were first met. */
export class RunConversations {
  readonly #byKey = new Map<string, Gathered>();

  #entry(key: ConversationKey): Gathered {
    const name = `${key.group}\u0000${key.id}`;
    let entry = this.#byKey.get(name);
    if (!entry) {
      entry = { id: key.id, traces: [], sources: new Set(), scenarios: new Map() };
      this.#byKey.set(name, entry);
    }
    return entry;
  }

  /** Every trace of a conversation joins it, whichever scenarios apply to it. */
  addTrace(key: ConversationKey, trajectory: Trajectory, source: string): void {
    const entry = this.#entry(key);
    entry.traces.push(trajectory);
    entry.sources.add(source);
  }

  /** A conversation scenario applies to one of the conversation's traces (from `unit`'s input). */
  addScenario(key: ConversationKey, scenario: Scenario, unit: UnitOf): void {
    const scenarios = this.#entry(key).scenarios;
    if (!scenarios.has(scenario)) scenarios.set(scenario, unit);
  }

  /** Each conversation joined, against each of its scenarios; its inputs named together. */
  *evaluations(): Generator<{ trajectory: Trajectory; scenario: Scenario; unit: UnitOf }> {
    for (const { id, traces, sources, scenarios } of this.#byKey.values()) {
      if (scenarios.size === 0) continue;
      const trajectory = joinConversation(id, traces);
      const source = [...sources].join(', ');
      for (const [scenario, unit] of scenarios) yield { trajectory, scenario, unit: { ...unit, source } };
    }
  }
}
