/**
 * Scenarios written from tau-bench's gold actions (taubench-airline-gold.json), by one mapping for
 * every task: what tau-bench's action reward counts, said in the scenario language.
 *
 * The reward compares the database after the agent's calls with the database after replaying the
 * gold actions (tau_bench/envs/base.py, `calculate_reward`). Reads change nothing, and neither
 * does a write that failed (the tool returns an error before it changes anything), so the
 * scenario looks at the successful writes only: each gold write must have been made, successfully,
 * with the same arguments (`reference`, superset mode, `outcome: ok`), as many successful calls
 * of each write tool as the gold has (`tools.counts`, `outcome: ok`), and no successful call of a
 * write tool the gold does not use (`tools.forbidden`, `outcome: ok`).
 *
 * Two facts of the airline tools (tau_bench/envs/airline/tools/) shape the comparison:
 * `book_reservation` and `update_reservation_flights` set each flight's origin, destination and
 * price themselves, whatever the call passed, so those fields are `ignore`d.
 */
import type { JsonValue } from '../../src/model/json.js';
import { parseScenario, type Scenario } from '../../src/scenario/scenario.js';

/** One gold action of a task. */
export interface GoldAction {
  name: string;
  kwargs: { [key: string]: JsonValue };
}

/** One task as transcribed. */
export interface GoldTask {
  task: number;
  user_id: string;
  actions: GoldAction[];
  outputs: string[];
}

/** The airline tools that change the database; the others only read it or talk. */
export const WRITE_TOOLS = [
  'book_reservation',
  'cancel_reservation',
  'update_reservation_baggages',
  'update_reservation_flights',
  'update_reservation_passengers',
  'send_certificate',
] as const;

/** Flight fields the booking and flight-change tools overwrite from their flight data. */
export const SET_BY_THE_TOOLS = ['flights.*.origin', 'flights.*.destination', 'flights.*.price'];

/**
 * The native scenario document for one task. `outcome` is what the write rules ask of a call:
 * `ok` as the benchmark counts, or `any` (every call, as counts and references did before they
 * could ask an outcome).
 */
export function scenarioDocument(task: GoldTask, outcome: 'ok' | 'any' = 'ok'): Record<string, unknown> {
  const writes = task.actions.filter((action) => (WRITE_TOOLS as readonly string[]).includes(action.name));
  const counts: Record<string, { min: number; max: number; outcome: 'ok' | 'any' }> = {};
  for (const write of writes) {
    const count = (counts[write.name]?.min ?? 0) + 1;
    counts[write.name] = { min: count, max: count, outcome };
  }
  const document: Record<string, unknown> = {
    id: `taubench.airline.task-${String(task.task).padStart(2, '0')}`,
    tools: {
      forbidden: WRITE_TOOLS.filter((tool) => counts[tool] === undefined).map((tool) => ({ tool, outcome })),
      counts,
    },
  };
  if (writes.length > 0) {
    document.reference = {
      mode: 'superset',
      argsMode: 'exact',
      ignore: SET_BY_THE_TOOLS,
      turns: [writes.map((write) => ({ tool: write.name, args: write.kwargs, outcome }))],
    };
  }
  return document;
}

/** The loaded scenario for one task. */
export function scenarioOf(task: GoldTask, outcome: 'ok' | 'any' = 'ok'): Scenario {
  const document = scenarioDocument(task, outcome);
  return parseScenario(document, `${document.id as string}.json`);
}
