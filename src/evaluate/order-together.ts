/**
 * `order.together`: tools to be asked for in one turn, in parallel (the order and the policy
 * fetched together rather than in two round trips). Read on the turn each call carries, so a
 * trace whose convention records no turns cannot be judged: inconclusive, never passed.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import { callIds, MAX_LISTED } from './outcome.js';
import { fail, NO_CALLS, pass, type RuleResult, undecided } from './rule.js';
import { distinctTools } from './tool-set.js';

/** How a call stands to one other tool of its group. */
type Together = 'together' | 'apart' | 'unknown';

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
  const byTool = new Map<string, ToolCall[]>();
  for (const tool of tools) byTool.set(tool, []);
  for (const call of trajectory.calls) byTool.get(call.tool)?.push(call);
  for (const calls of byTool.values()) if (calls.length === 0) return pass(rule, 'order', name, NO_CALLS);

  /** Per turn, the group's tools asked for in it. */
  const toolsOfTurn = new Map<string, Set<string>>();
  /** The group's tools with a call whose turn is not recorded. */
  const turnless = new Set<string>();
  const grouped: ToolCall[] = [];
  for (const call of trajectory.calls) {
    if (!byTool.has(call.tool)) continue;
    grouped.push(call);
    if (call.turnId === undefined) {
      turnless.add(call.tool);
      continue;
    }
    let inTurn = toolsOfTurn.get(call.turnId);
    if (!inTurn) {
      inTurn = new Set();
      toolsOfTurn.set(call.turnId, inTurn);
    }
    inTurn.add(call.tool);
  }
  const standing = (call: ToolCall, other: string): Together => {
    if (call.turnId !== undefined && toolsOfTurn.get(call.turnId)?.has(other)) return 'together';
    return call.turnId === undefined || turnless.has(other) ? 'unknown' : 'apart';
  };

  let violating = 0;
  const clauses: string[] = [];
  const involved = new Set<ToolCall>();
  const doubtful: ToolCall[] = [];
  for (const call of grouped) {
    const others = tools.filter((tool) => tool !== call.tool);
    const apart = others.filter((other) => standing(call, other) === 'apart');
    if (apart.length > 0) {
      violating++;
      involved.add(call);
      for (const other of apart) for (const mate of byTool.get(other) as ToolCall[]) involved.add(mate);
      if (clauses.length < MAX_LISTED) {
        const where = apart.map((other) => `${other} in ${turnsOf(byTool.get(other) as ToolCall[])}`);
        clauses.push(
          `${call.tool} (call ${call.id}) was asked for in turn ${call.turnId} without ${apart.join(' or ')} (asked for ${where.join(', ')})`,
        );
      }
    } else if (others.some((other) => standing(call, other) === 'unknown')) doubtful.push(call);
  }
  const wanted = `${tools.join(', ')} are to be asked for in one turn`;
  if (violating > 0) {
    const calls = grouped.filter((call) => involved.has(call));
    const rest = violating > clauses.length ? `; and ${violating - clauses.length} more` : '';
    return fail(rule, 'order', name, `${wanted}: ${clauses.join('; ')}${rest}`, calls);
  }
  if (doubtful.length > 0) {
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
