/**
 * `order.together`: tools to be asked for in one turn, in parallel (the order and the policy
 * fetched together rather than in two round trips). Read on the turn each call carries, so a
 * trace whose convention records no turns cannot be judged: inconclusive, never passed.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import { callIds, MAX_LISTED } from './outcome.js';
import { fail, NO_CALLS, pass, type RuleResult, undecided } from './rule.js';
import { distinctTools } from './tool-set.js';

/** Tools of a group at most (bits of a mask), as the schema has it. */
const MAX_GROUP = 30;

/**
 * One group (`order.together[i]`, dimension order, hard by default). Where every tool of the group
 * is called (whether they are is `tools.required`'s business), each call of one of them must share
 * its turn with a call of each of the others. Calls that were not executed count: they were asked
 * for. A call with no recorded turn may have been in any turn: where it decides, the result is
 * inconclusive.
 */
export function checkTogether(trajectory: Trajectory, group: readonly string[], index: number): RuleResult {
  const rule = 'order.together';
  const name = `${rule}[${index}]`;
  const tools = distinctTools(group);
  // Each tool of the group is a bit of a mask: the schema allows at most MAX_GROUP tools.
  const bitOf = new Map<string, number>();
  tools.slice(0, MAX_GROUP).forEach((tool, position) => {
    bitOf.set(tool, 1 << position);
  });
  const full = (1 << bitOf.size) - 1;
  /** Per turn, the group's tools asked for in it, as bits. */
  const inTurn = new Map<string, number>();
  /** The group's tools with a call whose turn is not recorded. */
  let turnless = 0;
  let called = 0;
  const grouped: ToolCall[] = [];
  for (const call of trajectory.calls) {
    const bit = bitOf.get(call.tool);
    if (bit === undefined) continue;
    grouped.push(call);
    called |= bit;
    if (call.turnId === undefined) turnless |= bit;
    else inTurn.set(call.turnId, (inTurn.get(call.turnId) ?? 0) | bit);
  }
  if (called !== full) return pass(rule, 'order', name, NO_CALLS);

  let violating = 0;
  const clauses: string[] = [];
  /** The tools some call was asked for without, as bits. */
  let missed = 0;
  const offending = new Set<ToolCall>();
  let doubtful = false;
  /** Per missing tool, where its calls were asked for: the same in every clause that names it. */
  const whereAsked = new Map<string, string>();
  for (const call of grouped) {
    const bit = bitOf.get(call.tool) as number;
    const present = call.turnId === undefined ? bit : (inTurn.get(call.turnId) as number);
    if (present === full) continue;
    // A missing tool is surely apart when this call's turn is known and no call of it lacks one.
    const apart = call.turnId === undefined ? 0 : full & ~present & ~turnless;
    if (apart === 0) {
      doubtful = true;
      continue;
    }
    violating++;
    offending.add(call);
    missed |= apart;
    if (clauses.length < MAX_LISTED) {
      const absent = tools.filter((tool) => ((bitOf.get(tool) ?? 0) & apart) !== 0);
      const where = absent.map((other) => {
        let described = whereAsked.get(other);
        if (described === undefined) {
          described = `${other} in ${turnsOf(grouped.filter((mate) => mate.tool === other))}`;
          whereAsked.set(other, described);
        }
        return described;
      });
      clauses.push(
        `${call.tool} (call ${call.id}) was asked for in turn ${call.turnId} without ${absent.join(' or ')} (asked for ${where.join(', ')})`,
      );
    }
  }
  const wanted = `${tools.join(', ')} are to be asked for in one turn`;
  if (violating > 0) {
    // The offending calls, and every call of the tools they were asked for without.
    const calls = grouped.filter(
      (call) => offending.has(call) || ((bitOf.get(call.tool) as number) & missed) !== 0,
    );
    const rest = violating > clauses.length ? `; and ${violating - clauses.length} more` : '';
    return fail(rule, 'order', name, `${wanted}: ${clauses.join('; ')}${rest}`, calls);
  }
  if (doubtful) {
    const unknown = grouped.filter((call) => call.turnId === undefined);
    const reason = `${wanted}, but the trace records no turn for ${callIds(unknown)}, so whether they were asked for together cannot be told`;
    return undecided(rule, 'order', name, reason, grouped);
  }
  return pass(rule, 'order', name, grouped);
}

/** `turn t1 (call c1)`, `turns t1, t3 (calls c1, c4)`. */
function turnsOf(calls: readonly ToolCall[]): string {
  const turns = [...new Set(calls.map((call) => call.turnId ?? 'unknown'))];
  const shown =
    turns.length > MAX_LISTED ? [...turns.slice(0, MAX_LISTED), `${turns.length - MAX_LISTED} more`] : turns;
  return `${turns.length === 1 ? 'turn' : 'turns'} ${shown.join(', ')} (${callIds(calls)})`;
}
