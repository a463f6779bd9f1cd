/**
 * The reference-trajectory family, in LangChain agentevals' four modes: `unordered` (the same
 * multiset of calls), `superset` (every reference call is there), `subset` (no call outside the
 * reference), `strict` (the same turns in the same order, calls inside a turn in any order).
 *
 * Calls are paired by maximum bipartite matching, not first fit: a loose argument mode or a
 * duplicate call lets one call stand for several reference calls, and first fit then rejects
 * pairings that exist. A pair whose arguments were not captured is "unknown": when a pairing
 * exists only by counting unknown pairs as matches, the result is inconclusive, never a pass.
 * The pairing also grades the trajectory: precision, recall and F1 (reference-scores.ts), which
 * the report carries beside the verdict.
 */
import type { JsonValue } from '../model/json.js';
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import type { ReferenceSection } from '../scenario/native.js';
import { deepEqualJson, renderValue } from './match-args.js';
import { callIds, capList, MAX_LISTED } from './outcome.js';
import { argumentDistance, MATCH, type PairVerdict } from './reference-args.js';
import { type NumberedCall, numberedReference, type ReferenceCall } from './reference-messages.js';
import { coveredWhicheverWayTheyEnded } from './reference-outcomes.js';
import { BOTH, NEEDS, type Needs, Pairing } from './reference-pairing.js';
import { referenceScores } from './reference-scores.js';
import { fail, pass, type RuleFamily, type RuleResult, undecided, untilMoreCalls } from './rule.js';

const NAME = 'reference';
const DIMENSION = 'order';

/** Evaluates the `reference` section: one result, rule `reference.<mode>`. */
export const referenceFamily: RuleFamily<ReferenceSection> = (
  trajectory,
  section,
  results: RuleResult[] = [],
) => {
  const rule = `reference.${section.mode}`;
  const reading = numberedReference(section);
  if (!reading.ok)
    results.push(fail(rule, DIMENSION, NAME, `the reference cannot be read: ${reading.problem}`, []));
  else if (section.mode === 'strict')
    results.push(checkStrict(rule, trajectoryTurns(trajectory), reading.turns, section));
  else {
    const result = checkCalls(rule, trajectory.calls, reading.calls, NEEDS[section.mode], section);
    // Superset asks only for recall: a reference call missing so far may still come.
    results.push(section.mode === 'superset' ? untilMoreCalls(result) : result);
  }
  return results;
};

/**
 * The trajectory's turns as groups of calls, in causal order: each turn's issued calls, and the
 * calls no turn issued (a convention without turns) in batches of consecutive concurrent calls. Turns that issued no
 * call (the final answer) are left out: a reference turn always has calls.
 */
export function trajectoryTurns(trajectory: Trajectory): ToolCall[][] {
  const position = new Map(trajectory.calls.map((call, index) => [call.id, index]));
  const placed = new Set<string>();
  const groups: ToolCall[][] = [];
  for (const turn of trajectory.turns) {
    const group = turn.issued.filter((id) => position.has(id) && !placed.has(id));
    for (const id of group) placed.add(id);
    const calls = [...new Set(group)].sort((a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0));
    if (calls.length > 0) groups.push(calls.map((id) => trajectory.call(id) as ToolCall));
  }
  // Calls no turn issued (typed events, turnless conventions) still run in parallel batches:
  // consecutive ones that are mutually concurrent form one turn, as one batch would.
  let batch: ToolCall[] = [];
  for (const call of trajectory.calls) {
    if (placed.has(call.id)) continue;
    if (batch.every((other) => trajectory.concurrent(other, call))) batch.push(call);
    else {
      groups.push(batch);
      batch = [call];
    }
  }
  if (batch.length > 0) groups.push(batch);
  const first = (group: ToolCall[]) => position.get(group[0]?.id ?? '') ?? 0;
  return groups.sort((a, b) => first(a) - first(b));
}

/** `unordered`, `superset`, `subset`: one pairing over the whole trajectory. */
function checkCalls(
  rule: string,
  calls: readonly ToolCall[],
  references: readonly NumberedCall[],
  needs: Needs,
  section: ReferenceSection,
): RuleResult {
  const pairing = new Pairing(references, calls, section);
  const result = judgeCalls(rule, calls, pairing, needs);
  result.referenceScores = referenceScores(pairing.sure.size, references.length, calls.length);
  return result;
}

/** The verdict of one pairing over the whole trajectory. */
function judgeCalls(rule: string, calls: readonly ToolCall[], pairing: Pairing, needs: Needs): RuleResult {
  if (pairing.covers(pairing.sure, needs)) return pass(rule, DIMENSION, NAME, pairing.pairedCalls());
  if (pairing.covers(pairing.possible, needs)) {
    if (coveredWhicheverWayTheyEnded(pairing, needs))
      return pass(rule, DIMENSION, NAME, pairing.pairedCalls());
    const doubts = doubtfulPairs([pairing]);
    const reason = `${doubts.reason}; ${matchedCount(pairing, needs, pairing.sure.size)} with arguments compared`;
    return undecided(rule, DIMENSION, NAME, reason, doubts.calls);
  }
  const { text, culprits } = problems(pairing, needs);
  const sure = pairing.sure.size;
  const tally =
    matchedCount(pairing, needs, pairing.possible.size) +
    (sure < pairing.possible.size ? ` (${sure} with arguments compared)` : '');
  return fail(rule, DIMENSION, NAME, `${text}; ${tally}`, inOrder(calls, culprits));
}

/** `matched 2 of 3 reference calls and 2 of 5 calls`: the sides `needs` names. */
function matchedCount(pairing: Pairing, needs: Needs, size: number): string {
  const parts: string[] = [];
  if (needs.references) parts.push(`${size} of ${pairing.references.length} reference calls`);
  if (needs.calls) parts.push(`${size} of ${pairing.calls.length} calls`);
  return `matched ${parts.join(' and ')}`;
}

/** `strict`: turn k of the trajectory pairs with reference turn k, calls inside a turn in any order. */
function checkStrict(
  rule: string,
  actualTurns: readonly ToolCall[][],
  referenceTurns: readonly NumberedCall[][],
  section: ReferenceSection,
): RuleResult {
  const allCalls = actualTurns.flat();
  const result = judgeStrict(rule, actualTurns, allCalls, referenceTurns, section);
  let paired = 0;
  let references = 0;
  for (const turn of referenceTurns) references += turn.length;
  for (const pairing of result.pairings) paired += pairing.sure.size;
  result.judged.referenceScores = referenceScores(paired, references, allCalls.length);
  return result.judged;
}

/** The verdict of turn-by-turn pairings, and the pairings (turn k with reference turn k). */
function judgeStrict(
  rule: string,
  actualTurns: readonly ToolCall[][],
  allCalls: readonly ToolCall[],
  referenceTurns: readonly NumberedCall[][],
  section: ReferenceSection,
): { judged: RuleResult; pairings: Pairing[] } {
  const judged = (result: RuleResult) => ({ judged: result, pairings });
  const shared = Math.min(actualTurns.length, referenceTurns.length);
  const pairings: Pairing[] = [];
  let divergence: { line: string; calls: readonly ToolCall[] } | undefined;
  let matchedTurns = 0;
  let sureTurns = 0;
  for (let index = 0; index < shared; index++) {
    const pairing = new Pairing(
      referenceTurns[index] ?? [],
      actualTurns[index] ?? [],
      section,
      ' in this turn',
    );
    pairings.push(pairing);
    // Covering for sure is covering possibly too (the possible pairing grows from the sure one).
    if (pairing.covers(pairing.sure, BOTH)) {
      matchedTurns++;
      sureTurns++;
    } else if (pairing.covers(pairing.possible, BOTH)) {
      matchedTurns++;
      if (coveredWhicheverWayTheyEnded(pairing, BOTH)) sureTurns++;
    } else divergence ??= turnDivergence(index, pairing);
  }
  if (divergence === undefined && actualTurns.length !== referenceTurns.length) {
    const extra = actualTurns[shared];
    const expected = referenceTurns[shared];
    divergence = extra
      ? {
          line: `turn ${shared + 1}: expected no turn, saw ${toolList(extra)} (${callIds(extra)})`,
          calls: extra,
        }
      : { line: `turn ${shared + 1}: expected ${toolList(expected ?? [])}, saw no turn`, calls: [] };
  }
  const ofTurns = `of ${referenceTurns.length} reference turns`;
  if (divergence === undefined) {
    if (sureTurns === shared) return judged(pass(rule, DIMENSION, NAME, allCalls));
    const doubts = doubtfulPairs(pairings);
    const reason = `${doubts.reason}; matched ${sureTurns} ${ofTurns} with arguments compared`;
    return judged(undecided(rule, DIMENSION, NAME, reason, doubts.calls));
  }
  const lengths =
    actualTurns.length === referenceTurns.length
      ? ''
      : `; the reference has ${turnCount(referenceTurns.length)}, the trace ${actualTurns.length}`;
  const reason = `${divergence.line}; matched ${matchedTurns} ${ofTurns}${lengths}`;
  return judged(fail(rule, DIMENSION, NAME, reason, divergence.calls));
}

/** How one turn differs: its tools, and when the tools agree, which arguments do not. */
function turnDivergence(index: number, pairing: Pairing): { line: string; calls: readonly ToolCall[] } {
  const { references, calls } = pairing;
  const line = `turn ${index + 1}: expected ${toolList(references)}, saw ${toolList(calls)} (${callIds(calls)})`;
  const sorted = (tools: readonly { tool: string }[]) => tools.map((item) => item.tool).sort();
  if (!deepEqualJson(sorted(references), sorted(calls))) return { line, calls };
  return { line: `${line}: ${problems(pairing, BOTH).text}`, calls };
}

/**
 * Why the best pairing falls short: what is left unpaired, and the nearest candidate for each.
 * An unpaired call already shown as the nearest candidate of an unpaired reference call is not
 * listed again: the one line says both.
 */
function problems(pairing: Pairing, needs: Needs): { text: string; culprits: ToolCall[] } {
  const { references, calls, possible, scope } = pairing;
  const lines: string[] = [];
  const culprits: ToolCall[] = [];
  const explained = new Set<number>();
  // Only the lines a reason shows are built (each scans candidates); the rest are counted.
  let more = 0;
  for (const [left, reference] of references.entries()) {
    if (!needs.references || possible.rightOf[left] !== -1) continue;
    if (lines.length === MAX_LISTED) {
      more++;
      continue;
    }
    const { line, chosen } = withClosest(
      `reference call #${reference.number} ${describeReference(reference)} has no match`,
      pairing.callsOf(reference.tool),
      {
        verdict: (right) => pairing.verdict(left, right),
        differs: (right) => pairing.differs(left, right),
        free: (right) => possible.leftOf[right] === -1,
        distance: (right) => argumentDistance(calls[right] as ToolCall, reference, pairing.ignore),
        name: (right) => `call ${calls[right]?.id} ${reference.tool}`,
        partner: (right) => `reference call #${references[possible.leftOf[right] as number]?.number}`,
        none: `no ${reference.tool} call${scope}`,
      },
    );
    lines.push(line);
    if (chosen === undefined) continue;
    culprits.push(calls[chosen] as ToolCall);
    if (possible.leftOf[chosen] === -1) explained.add(chosen);
  }
  for (const [right, call] of calls.entries()) {
    if (!needs.calls || possible.leftOf[right] !== -1) continue;
    culprits.push(call);
    if (explained.has(right)) continue;
    if (lines.length === MAX_LISTED) {
      more++;
      continue;
    }
    const { line } = withClosest(
      `${describeCall(call)} is not in the reference`,
      pairing.referencesOf(call.tool),
      {
        verdict: (left) => pairing.verdict(left, right),
        differs: (left) => pairing.differs(left, right),
        free: (left) => possible.rightOf[left] === -1,
        distance: (left) => argumentDistance(call, references[left] as NumberedCall, pairing.ignore),
        name: (left) => `reference call #${references[left]?.number} ${call.tool}`,
        partner: (left) => `call ${calls[possible.rightOf[left] as number]?.id}`,
        none: `the reference has no ${call.tool} call${scope}`,
      },
    );
    lines.push(line);
  }
  return { text: lines.join('; ') + (more > 0 ? `; and ${more} more` : ''), culprits };
}

/** How a problem line names its nearest candidate on the other side. */
interface Candidates {
  verdict(index: number): PairVerdict;
  differs(index: number): boolean;
  /** Not paired in the best pairing. */
  free(index: number): boolean;
  distance(index: number): number;
  name(index: number): string;
  /** Who the candidate is paired with. */
  partner(index: number): string;
  /** What to say when there is no candidate at all. */
  none: string;
}

/**
 * `head` and its nearest candidate: one whose arguments differ (the likely slip), an unpaired one
 * first, then the least different; when every candidate would match, it is paired with another.
 */
function withClosest(
  head: string,
  candidates: readonly number[],
  side: Candidates,
): { line: string; chosen?: number } {
  if (candidates.length === 0) return { line: `${head}: ${side.none}` };
  const differing = candidates.filter((index) => side.differs(index));
  if (differing.length === 0) {
    const taken = candidates[0] as number;
    return {
      line: `${head}; closest: ${side.name(taken)}, already paired with ${side.partner(taken)}`,
      chosen: taken,
    };
  }
  const rank = (index: number) => (side.free(index) ? 0 : 1e9) + side.distance(index);
  const chosen = differing.reduce((best, index) => (rank(index) < rank(best) ? index : best));
  const verdict = side.verdict(chosen);
  const detail = verdict.status === 'mismatch' ? verdict.detail : '';
  return { line: `${head}; closest: ${side.name(chosen)} ${detail}`, chosen };
}

/** The pairs of the best pairing that rely on arguments, or outcomes, that could not be checked. */
function doubtfulPairs(pairings: readonly Pairing[]): { reason: string; calls: ToolCall[] } {
  const lines: string[] = [];
  const calls: ToolCall[] = [];
  let outcomes = false;
  for (const pairing of pairings) {
    pairing.references.forEach((reference, left) => {
      const right = pairing.possible.rightOf[left] as number;
      const verdict = right === -1 ? MATCH : pairing.verdict(left, right);
      if (verdict.status !== 'unknown') return;
      const call = pairing.calls[right] as ToolCall;
      calls.push(call);
      if (reference.outcome !== undefined && call.outcome.status === 'no_result') outcomes = true;
      lines.push(
        `call ${call.id} ${call.tool} as reference call #${reference.number} ${describeReference(reference)} (${verdict.detail})`,
      );
    });
  }
  const what = outcomes
    ? 'calls whose arguments or outcome could not be checked match'
    : 'arguments that could not be compared agree';
  const reason = `a pairing exists only if ${what}: ${capList(lines, '; ')}`;
  return { reason, calls };
}

/** `calls` without duplicates, in the order of `all` (causal order). */
function inOrder(all: readonly ToolCall[], calls: readonly ToolCall[]): ToolCall[] {
  const wanted = new Set(calls);
  return all.filter((call) => wanted.has(call));
}

function turnCount(count: number): string {
  return `${count} ${count === 1 ? 'turn' : 'turns'}`;
}

function toolList(items: readonly { tool: string }[]): string {
  return `[${capList(items.map((item) => item.tool))}]`;
}

function describeReference(reference: ReferenceCall): string {
  const base = reference.args === undefined ? reference.tool : `${reference.tool} ${render(reference.args)}`;
  if (reference.outcome === 'ok') return `${base} (a call that succeeded)`;
  return reference.outcome === 'error' ? `${base} (a call that failed)` : base;
}

function describeCall(call: ToolCall): string {
  const args = call.args.captured ? render(call.args.value) : '(arguments not captured)';
  return `call ${call.id} ${call.tool} ${args}`;
}

function render(value: JsonValue): string {
  return renderValue(JSON.stringify(value));
}
