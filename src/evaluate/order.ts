/**
 * The order family, on happens-before (never on raw start times): `before` constraints (a
 * partial order; calls asked for in one turn are not ordered), terminal tools (nothing causally
 * after them), and an ordered sequence of steps with per-step argument match.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import type { OrderSection } from '../scenario/native.js';
import { checkTogether } from './order-together.js';
import { callIds, capList, MAX_LISTED } from './outcome.js';
import {
  alwaysHard,
  fail,
  NO_CALLS,
  pass,
  type RuleFamily,
  type RuleResult,
  ruleResult,
  undecided,
  untilMoreCalls,
} from './rule.js';
import { checkExactToolSequence, checkToolSequence } from './tool-sequence.js';
import { distinctTools, toolSet } from './tool-set.js';

type BeforeConstraint = NonNullable<OrderSection['before']>[number];

/**
 * Evaluates the `order` section:
 * - `order.before` (dimension order, hard by default), one result `order.before[i]` per
 *   constraint: every call of an `after` tool has, for each `before` tool, a call of it that
 *   happened-before it (with `beforeAny`: a call of one of them). A call issued in the same turn does not count. With
 *   no `after` call at all the constraint holds: that a tool was called is `tools.required`'s job.
 * - `order.terminal` (dimension safety, always hard): no call happens-after a call of a
 *   terminal tool, whatever that call's outcome (see {@link checkTerminal}).
 * - `order.together` (dimension order, hard by default), one result `order.together[i]` per
 *   group: tools asked for in one turn (see {@link checkTogether}).
 * - `order.sequence` (dimension order, hard by default), reported as the trajectory-assertion JSON's `tool_sequence`:
 *   `in_order` is an ordered subsequence, `exact` is exactly these calls one after the other.
 */
export const orderFamily: RuleFamily<OrderSection> = (trajectory, section, results: RuleResult[] = []) => {
  const precedence = new Precedence(trajectory);
  const before = section.before ?? [];
  for (let index = 0; index < before.length; index++) {
    results.push(checkBefore(precedence, before[index] as BeforeConstraint, index));
  }
  if (section.terminal && section.terminal.length > 0)
    results.push(checkTerminal(precedence, section.terminal));
  const together = section.together ?? [];
  for (let index = 0; index < together.length; index++)
    results.push(checkTogether(trajectory, together[index] as string[], index));
  if (section.sequence) {
    const { mode, steps } = section.sequence;
    const check = mode === 'exact' ? checkExactToolSequence : checkToolSequence;
    const { result, calls } = check(trajectory, steps);
    // A sequence not finished yet may be finished by later calls.
    results.push(untilMoreCalls(ruleResult('order.sequence', 'order', result, calls)));
  }
  return results;
};

/**
 * One `before` constraint: each `after` call needs, for every tool of `before`, a call of it that
 * happened-before it (all of them); with `beforeAny`, a call of one of them.
 */
function checkBefore(precedence: Precedence, constraint: BeforeConstraint, index: number): RuleResult {
  const { trajectory } = precedence;
  const { calls: listing } = trajectory;
  const name = beforeName(index);
  const all = constraint.beforeAny === undefined;
  const wantedTools = distinctTools(constraint.beforeAny ?? constraint.before ?? []);
  const beforeTools = toolSet(wantedTools);
  const afterTools = toolSet(constraint.after);
  // One walk down the causal listing: only a call listed earlier can happen-before a call, so
  // the candidates for an `after` call are the `before` calls met so far, tried in order.
  // Sized up front and counted (pushing onto an empty list allocates room for 16).
  const candidates = new Array<number>(listing.length);
  let candidateCount = 0;
  /** Which positions hold a witnessed call or its witnesses, for the passing result; made at the first witness. */
  let chain: boolean[] | undefined;
  /** Made at the first unwitnessed call (most constraints hold), with the tools it lacked. */
  let unwitnessed: { call: ToolCall; missing: readonly string[] }[] | undefined;
  /** Per wanted tool, the position of the `after` call's witness or -1: one list reused for every call. */
  let found: number[] | undefined;
  for (let position = 0; position < listing.length; position++) {
    const call = listing[position] as ToolCall;
    if (afterTools.has(call.tool)) {
      if (all) {
        found ??= new Array<number>(wantedTools.length);
        if (witnessesOfEach(precedence, listing, candidates, candidateCount, call, wantedTools, found)) {
          chain ??= new Array<boolean>(listing.length).fill(false);
          chain[position] = true;
          for (const witness of found) chain[witness] = true;
        } else {
          unwitnessed ??= [];
          unwitnessed.push({ call, missing: wantedTools.filter((_, k) => found?.[k] === -1) });
        }
      } else {
        const witness = witnessOfAny(precedence, listing, candidates, candidateCount, call);
        // With no tools to want, none is missing: the call holds without a witness.
        if (witness === -1 && wantedTools.length > 0) {
          unwitnessed ??= [];
          unwitnessed.push({ call, missing: wantedTools });
        } else {
          chain ??= new Array<boolean>(listing.length).fill(false);
          chain[position] = true;
          if (witness !== -1) chain[witness] = true;
        }
      }
    }
    if (beforeTools.has(call.tool)) candidates[candidateCount++] = position;
  }
  if (unwitnessed === undefined) return pass('order.before', 'order', name, marked(listing, chain));

  // Only the calls a reason lists are explained: a trace with thousands keeps a bounded message.
  const predecessors: ToolCall[] = [];
  for (let k = 0; k < candidateCount; k++) predecessors.push(listing[candidates[k] as number] as ToolCall);
  const mentioned: ToolCall[] = [];
  const clauses = unwitnessed.slice(0, MAX_LISTED).map(({ call, missing }) => {
    const perTool = missing.map((tool) => {
      const others = predecessors.filter((other) => other.tool === tool && other !== call);
      for (const other of others) mentioned.push(other);
      if (others.length === 0) {
        return call.tool === tool ? `${tool} was not called apart from it` : `${tool} was never called`;
      }
      return `${tool} was called ${notBefore(precedence, call, others).join(' and ')}`;
    });
    const wanted = all ? andList(missing.map((tool) => `any ${tool}`)) : `any ${orList(missing)}`;
    return `${call.tool} (call ${call.id}) came before ${wanted}: ${perTool.join(', and ')}`;
  });
  const offending = new Set(unwitnessed.map(({ call }) => call));
  const calls = [...offending, ...inCausalOrder(trajectory, mentioned).filter((c) => !offending.has(c))];
  return fail('order.before', 'order', name, capClauses(clauses, unwitnessed.length), calls);
}

/**
 * For `call`, the first candidate of each tool that happened-before it, into `found` (-1 for a
 * tool with none); whether every tool had one. Plain loops: a closure per tool and call, and
 * lists per call, were most of what a holding constraint allocated.
 */
function witnessesOfEach(
  precedence: Precedence,
  listing: readonly ToolCall[],
  candidates: readonly number[],
  count: number,
  call: ToolCall,
  tools: readonly string[],
  found: number[],
): boolean {
  let every = true;
  for (let k = 0; k < tools.length; k++) {
    const tool = tools[k] as string;
    let witness = -1;
    for (let c = 0; c < count; c++) {
      const candidate = candidates[c] as number;
      const other = listing[candidate] as ToolCall;
      if (other.tool === tool && precedence.beforeListed(other, call)) {
        witness = candidate;
        break;
      }
    }
    found[k] = witness;
    if (witness === -1) every = false;
  }
  return every;
}

/** For `call`, the first candidate that happened-before it, -1 for none (every tool is then missing). */
function witnessOfAny(
  precedence: Precedence,
  listing: readonly ToolCall[],
  candidates: readonly number[],
  count: number,
  call: ToolCall,
): number {
  for (let c = 0; c < count; c++) {
    const candidate = candidates[c] as number;
    if (precedence.beforeListed(listing[candidate] as ToolCall, call)) return candidate;
  }
  return -1;
}

/** `a`, `a and b`, `a, b and c`. */
function andList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The calls at the positions `marks` marks, in listing order; none without marks. */
function marked(listing: readonly ToolCall[], marks: readonly boolean[] | undefined): readonly ToolCall[] {
  if (marks === undefined) return NO_CALLS;
  let count = 0;
  for (const mark of marks) if (mark) count++;
  // Sized up front: pushing onto an empty array allocates room for 16 calls.
  const calls = new Array<ToolCall>(count);
  let next = 0;
  for (let position = 0; position < marks.length; position++) {
    if (marks[position]) calls[next++] = listing[position] as ToolCall;
  }
  return calls;
}

/** `order.before[i]` names, made once per index rather than once per evaluation. */
const beforeNames: string[] = [];
const MAX_CACHED_NAMES = 256;

function beforeName(index: number): string {
  if (index >= MAX_CACHED_NAMES) return `order.before[${index}]`;
  let name = beforeNames[index];
  if (name === undefined) {
    name = `order.before[${index}]`;
    beforeNames[index] = name;
  }
  return name;
}

/**
 * `order.terminal`: nothing happens-after a call of a terminal tool. Any call counts, failed or
 * not: a terminal tool hands control away (a final message, a handoff, an escalation), and an
 * error outcome does not show the effect did not happen (a timeout after the message went out),
 * so a hard gate must not open because the tool reported an error. The cost: retrying a failed
 * terminal tool is flagged too. Calls issued in the same turn as the terminal call are not after it.
 * A terminal call that was not executed (denied, or held for approval) handed nothing away: it
 * is no gate, though calls after a real one count whatever their outcome.
 */
export function checkTerminal(precedence: Precedence, tools: readonly string[]): RuleResult {
  const { trajectory } = precedence;
  const name = 'order.terminal';
  const terminal = toolSet(tools);
  const { calls: listing } = trajectory;
  /** The positions of the terminal calls: counted first, so the list is made at its size. */
  let gateCount = 0;
  for (const call of listing)
    if (terminal.has(call.tool) && call.outcome.status !== 'not_executed') gateCount++;
  const gates = new Array<number>(gateCount);
  for (let position = 0, next = 0; next < gateCount; position++) {
    const call = listing[position] as ToolCall;
    if (terminal.has(call.tool) && call.outcome.status !== 'not_executed') gates[next++] = position;
  }
  // A call after two terminal calls is listed once, under the first: it is after both. So is a
  // terminal call after another, and everything after it is after the first one too.
  // The lists of a failure are made at its first follower: most traces have none.
  let listed: boolean[] | undefined;
  let clauses: string[] | undefined;
  let involved: ToolCall[] | undefined;
  for (const gatePosition of gates) {
    if (listed?.[gatePosition] === true) continue;
    const gate = listing[gatePosition] as ToolCall;
    // Only calls listed after the gate can happen-after it.
    let after: ToolCall[] | undefined;
    for (let position = gatePosition + 1; position < listing.length; position++) {
      const call = listing[position] as ToolCall;
      if (listed?.[position] !== true && precedence.beforeListed(gate, call)) {
        after ??= [];
        after.push(call);
        listed ??= [];
        listed[position] = true;
      }
    }
    if (after === undefined) continue;
    const failed = gate.outcome.status === 'error' ? ', which failed' : '';
    const followers = capList(after.map((call) => `${call.tool} (call ${call.id})`));
    clauses ??= [];
    clauses.push(
      `${gate.tool} (call ${gate.id}${failed}) is terminal, but calls came after it: ${followers}`,
    );
    involved ??= [];
    involved.push(gate, ...after);
  }
  if (clauses === undefined || involved === undefined) {
    const terminalCalls = gates.map((position) => listing[position] as ToolCall);
    const unsure = unreportedTerminal(trajectory, precedence, terminalCalls);
    if (unsure) return alwaysHard(undecided('order.terminal', 'safety', name, unsure.reason, unsure.calls));
    return alwaysHard(pass('order.terminal', 'safety', name, terminalCalls));
  }
  return alwaysHard(fail('order.terminal', 'safety', name, capList(clauses, '; '), involved));
}

/**
 * A terminal call that never reported back orders nothing after it, so calls the agent made
 * later (listed after it, not in its own turn, not before it) may have come after it: a safety
 * gate cannot pass on that, it is undecided.
 */
function unreportedTerminal(
  trajectory: Trajectory,
  precedence: Precedence,
  terminalCalls: readonly ToolCall[],
): { reason: string; calls: ToolCall[] } | undefined {
  for (const gate of terminalCalls) {
    if (gate.outcome.status !== 'no_result') continue;
    const position = trajectory.calls.indexOf(gate);
    const later = trajectory.calls
      .slice(position + 1)
      .filter(
        (call) =>
          !(call.turnId !== undefined && call.turnId === gate.turnId) && !precedence.before(call, gate),
      );
    if (later.length === 0) continue;
    const followers = capList(later.map((call) => `${call.tool} (call ${call.id})`));
    return {
      reason: `${gate.tool} (call ${gate.id}) is terminal but never reported a result, so whether these calls came after it cannot be told: ${followers}`,
      calls: [gate, ...later],
    };
  }
  return undefined;
}

/**
 * Happens-before lookups that skip what the model already rules out: only a call listed earlier
 * in the causal order can happen-before another (the listing is a topological order), and calls
 * issued by one turn never do. Keeps "is there an X before this call?" near-linear on real traces.
 */
export class Precedence {
  readonly trajectory: Trajectory;

  constructor(trajectory: Trajectory) {
    this.trajectory = trajectory;
  }

  /** `a` comes before `b` in the causal listing (a topological order; concurrent calls by issue time). */
  listedBefore(a: ToolCall, b: ToolCall): boolean {
    return this.trajectory.listingRank(a) < this.trajectory.listingRank(b);
  }

  /** `a -> b`, with the cheap refusals first. */
  before(a: ToolCall, b: ToolCall): boolean {
    if (!this.listedBefore(a, b)) return false;
    return this.beforeListed(a, b);
  }

  /** `a -> b` for an `a` the caller knows is listed before `b`: the same-turn refusal, then happens-before. */
  beforeListed(a: ToolCall, b: ToolCall): boolean {
    if (a.turnId !== undefined && a.turnId === b.turnId) return false;
    return this.trajectory.happensBefore(a, b);
  }

  /**
   * The first of `candidates` (a subsequence of `trajectory.calls`, in its order) that
   * happened-before `call` and passes `accept`, or undefined.
   */
  firstBefore(
    candidates: readonly ToolCall[],
    call: ToolCall,
    accept?: (candidate: ToolCall) => boolean,
  ): ToolCall | undefined {
    const { trajectory } = this;
    const limit = trajectory.listingRank(call);
    for (const candidate of candidates) {
      const rank = trajectory.listingRank(candidate);
      if ((rank === -1 ? limit : rank) >= limit) break;
      if ((accept === undefined || accept(candidate)) && this.before(candidate, call)) return candidate;
    }
    return undefined;
  }
}

/** Clauses joined by `; `, the ones not shown counted, as {@link capList} does. */
export function capClauses(shown: readonly string[], total: number): string {
  const rest = total - shown.length;
  return rest > 0 ? `${shown.join('; ')}; and ${rest} more` : shown.join('; ');
}

/**
 * How calls that were expected before `call` stand to it instead, one phrase per kind, e.g.
 * `concurrently with it, in the same turn (call c2)`, `after it (call c4)`. Every call in
 * `others` must not have happened-before `call`. Shared with the milestones family.
 */
export function notBefore(precedence: Precedence, call: ToolCall, others: readonly ToolCall[]): string[] {
  const sameTurn: ToolCall[] = [];
  const unreported: ToolCall[] = [];
  const concurrent: ToolCall[] = [];
  const after: ToolCall[] = [];
  for (const other of others) {
    if (precedence.trajectory.happensBefore(call, other)) after.push(other);
    else if (call.turnId !== undefined && other.turnId === call.turnId) sameTurn.push(other);
    else if (other.outcome.status === 'no_result' && precedence.listedBefore(other, call))
      unreported.push(other);
    else concurrent.push(other);
  }
  const phrases: string[] = [];
  if (sameTurn.length > 0) phrases.push(`concurrently with it, in the same turn (${callIds(sameTurn)})`);
  if (unreported.length > 0) phrases.push(`before it but never reported a result (${callIds(unreported)})`);
  if (concurrent.length > 0) phrases.push(`concurrently with it (${callIds(concurrent)})`);
  if (after.length > 0) phrases.push(`after it (${callIds(after)})`);
  return phrases;
}

/** `a`, `a or b`, `a, b or c`. */
export function orList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** The distinct calls, in the trajectory's causal order. */
export function inCausalOrder(trajectory: Trajectory, calls: readonly ToolCall[]): ToolCall[] {
  const wanted = new Set(calls);
  return trajectory.calls.filter((call) => wanted.has(call));
}
