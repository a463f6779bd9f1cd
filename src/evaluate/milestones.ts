/**
 * The milestones family: calls are mapped to named milestones (a tool, an outcome, optionally
 * arguments), and the scenario says which milestones need which before them, which must never
 * follow which, and which must be reached. All on happens-before: a milestone reached in the
 * same turn as another is not after it.
 *
 * A call reaches a milestone for certain, or only possibly: when the milestone's `match` needs
 * arguments that were not captured, or it asks for an outcome and the call never reported one.
 * A rule that holds only on such calls is inconclusive, never silently passed or failed.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import type { MilestonesSection } from '../scenario/native.js';
import { describeOutcome, outcomeAnswer } from './call-outcome.js';
import { describeExpectation, matchArgs } from './match-args.js';
import { capClauses, inCausalOrder, notBefore, orList, Precedence } from './order.js';
import { capList, MAX_LISTED } from './outcome.js';
import { fail, pass, type RuleFamily, type RuleResult, undecided, untilMoreCalls } from './rule.js';
import { toolSet } from './tool-set.js';

type Milestone = MilestonesSection['define'][string];

/** A call that reaches a milestone; `doubt` says why that is only possible, when it is. */
interface Reach {
  call: ToolCall;
  doubt?: string;
}

/** The calls of a milestone's tools that do not reach it, and why (`failed`, an argument difference). */
interface Miss {
  call: ToolCall;
  why: string;
}

/** Everything known about one milestone's calls, computed once per evaluation. */
interface Found {
  reaches: Reach[];
  /** The reaching calls, in causal order. */
  calls: ToolCall[];
  /** The reaching calls that only possibly reach it, and why. */
  doubt: Map<ToolCall, string>;
  misses: Miss[];
}

/**
 * Evaluates the `milestones` section, all in dimension `order`, hard by default:
 * - `milestones.requires` (`milestones.requires:<m>`): every call reaching m has, for each
 *   prerequisite p, a call reaching p that happened-before it.
 * - `milestones.forbidden` (`milestones.forbidden:<from>-><to>`): no call reaching `to`
 *   happens-after a call reaching `from`.
 * - `milestones.end` (`milestones.end:<m>`): some call reaches m.
 * - `milestones.never` (`milestones.never:<m>`): no call reaches m, whatever came before it.
 */
export const milestonesFamily: RuleFamily<MilestonesSection> = (
  trajectory,
  section,
  results: RuleResult[] = [],
) => {
  const found = new Milestones(trajectory, section);
  const precedence = new Precedence(trajectory);
  const { define } = section;
  if (section.requires) {
    for (const [name, prerequisites] of Object.entries(section.requires)) {
      const defined =
        Object.hasOwn(define, name) && prerequisites.every((other) => Object.hasOwn(define, other));
      results.push(
        defined
          ? requires(precedence, name, prerequisites, found)
          : unknownMilestones(section, 'milestones.requires', `milestones.requires:${name}`, [
              name,
              ...prerequisites,
            ]),
      );
    }
  }
  for (const [from, to] of section.forbidden ?? []) {
    const name = `milestones.forbidden:${from}->${to}`;
    results.push(
      Object.hasOwn(define, from) && Object.hasOwn(define, to)
        ? forbidden(precedence, from, to, found.of(from), found.of(to))
        : unknownMilestones(section, 'milestones.forbidden', name, [from, to]),
    );
  }
  for (const name of section.end ?? []) {
    const milestone = Object.hasOwn(define, name) ? define[name] : undefined;
    results.push(
      milestone
        ? end(name, milestone, found.of(name))
        : unknownMilestones(section, 'milestones.end', `milestones.end:${name}`, [name]),
    );
  }
  for (const name of section.never ?? []) {
    results.push(
      Object.hasOwn(define, name)
        ? never(name, found.of(name))
        : unknownMilestones(section, 'milestones.never', `milestones.never:${name}`, [name]),
    );
  }
  return results;
};

/** Each milestone's calls, found once per evaluation however many rules name it. */
class Milestones {
  readonly #found = new Map<string, Found>();

  constructor(
    private readonly trajectory: Trajectory,
    private readonly section: MilestonesSection,
  ) {}

  of(name: string): Found {
    let milestone = this.#found.get(name);
    if (!milestone) {
      const { define } = this.section;
      milestone = reachOf(this.trajectory, Object.hasOwn(define, name) ? define[name] : undefined);
      this.#found.set(name, milestone);
    }
    return milestone;
  }
}

/** The calls that reach a milestone, for certain or possibly, and the calls of its tools that miss it. */
function reachOf(trajectory: Trajectory, milestone: Milestone | undefined): Found {
  if (!milestone) return { reaches: [], calls: [], doubt: new Map(), misses: [] };
  const tools = toolSet(milestone.tool);
  const reaches: Reach[] = [];
  const misses: Miss[] = [];
  for (const call of trajectory.calls) {
    if (!tools.has(call.tool)) continue;
    let doubt: string | undefined;
    const outcome = outcomeAnswer(milestone.outcome, call);
    if (outcome === 'unknown') doubt = 'it never reported a result';
    else if (outcome === 'no') {
      misses.push({ call, why: describeOutcome(call) });
      continue;
    }
    if (milestone.match) {
      const matched = matchArgs(milestone.match, call.args);
      if (matched.status === 'mismatch') {
        misses.push({ call, why: matched.detail });
        continue;
      }
      if (matched.status === 'undecided')
        doubt = doubt === undefined ? matched.detail : `${doubt}, and ${matched.detail}`;
    }
    reaches.push(doubt === undefined ? { call } : { call, doubt });
  }
  const doubt = new Map<ToolCall, string>();
  for (const reach of reaches) if (reach.doubt !== undefined) doubt.set(reach.call, reach.doubt);
  return { reaches, calls: reaches.map((reach) => reach.call), doubt, misses };
}

function requires(
  precedence: Precedence,
  milestone: string,
  prerequisites: readonly string[],
  found: Milestones,
): RuleResult {
  const { trajectory } = precedence;
  const rule = 'milestones.requires';
  const name = `${rule}:${milestone}`;
  let violating = 0;
  const violations: string[] = [];
  const doubts: string[] = [];
  const involved: ToolCall[] = [];
  const chain: ToolCall[] = [];
  for (const reach of found.of(milestone).reaches) {
    const { call } = reach;
    const missing: { prerequisite: string; seen: string }[] = [];
    for (const prerequisite of prerequisites) {
      const { calls, doubt } = found.of(prerequisite);
      // With no doubtful call, every call is certain: no filter to call.
      const certain =
        doubt.size === 0
          ? precedence.firstBefore(calls, call)
          : precedence.firstBefore(calls, call, (other) => !doubt.has(other));
      if (certain) {
        chain.push(call, certain);
        continue;
      }
      const earlier =
        doubt.size === 0 ? [] : calls.filter((other) => doubt.has(other) && precedence.before(other, call));
      involved.push(call);
      for (const other of earlier) involved.push(other);
      if (reach.doubt === undefined && earlier.length === 0) {
        // Described only for the calls the reason lists; the rest are counted.
        if (violating >= MAX_LISTED) {
          missing.push({ prerequisite, seen: '' });
          continue;
        }
        const others = calls.filter((other) => other !== call);
        for (const other of others) involved.push(other);
        const seen =
          others.length === 0
            ? `was never reached${missed(found.of(prerequisite).misses)}`
            : `was reached ${notBefore(precedence, call, others).join(' and ')}`;
        missing.push({ prerequisite, seen });
        continue;
      }
      const subject = reached(reach, milestone);
      const maybes = earlier.map((other) => `${callName(other)} reached it (${doubt.get(other)})`);
      doubts.push(
        maybes.length === 0
          ? `${subject} with no ${prerequisite} before it`
          : `${subject}, with ${prerequisite} before it only if ${orList(maybes)}`,
      );
    }
    if (missing.length === 0) continue;
    violating++;
    if (violations.length >= MAX_LISTED) continue;
    const wanted = missing.map((entry) => entry.prerequisite).join(' and ');
    const seen = missing.map((entry) => `${entry.prerequisite} ${entry.seen}`).join(', and ');
    violations.push(`${callName(call)} reached ${milestone} before ${wanted}: ${seen}`);
  }
  if (violating > 0) {
    const reason = capClauses(violations, violating);
    return fail(rule, 'order', name, reason, inCausalOrder(trajectory, involved));
  }
  if (doubts.length > 0) {
    const reason = `could not decide: ${capList(doubts, '; ')}`;
    return undecided(rule, 'order', name, reason, inCausalOrder(trajectory, involved));
  }
  return pass(rule, 'order', name, inCausalOrder(trajectory, chain));
}

function forbidden(
  precedence: Precedence,
  from: string,
  to: string,
  sources: Found,
  targets: Found,
): RuleResult {
  const rule = 'milestones.forbidden';
  const name = `${rule}:${from}->${to}`;
  let violating = 0;
  const violations: string[] = [];
  const doubts: string[] = [];
  const involved: ToolCall[] = [];
  for (const target of targets.reaches) {
    // The clearest witness: a call that reached `from` for certain, when there is one.
    const source =
      precedence.firstBefore(sources.calls, target.call, (call) => !sources.doubt.has(call)) ??
      precedence.firstBefore(sources.calls, target.call);
    if (!source) continue;
    involved.push(source, target.call);
    const sourceReach: Reach = {
      call: source,
      ...(sources.doubt.has(source) && { doubt: sources.doubt.get(source) }),
    };
    const clause = `${reached(target, to)} after ${reached(sourceReach, from)}`;
    if (sourceReach.doubt !== undefined || target.doubt !== undefined) doubts.push(clause);
    else if (violating++ < MAX_LISTED) violations.push(clause);
  }
  const calls = inCausalOrder(precedence.trajectory, involved);
  if (violating > 0) {
    return fail(
      rule,
      'order',
      name,
      `${to} must not follow ${from}: ${capClauses(violations, violating)}`,
      calls,
    );
  }
  if (doubts.length > 0)
    return undecided(rule, 'order', name, `could not decide: ${capList(doubts, '; ')}`, calls);
  return pass(rule, 'order', name);
}

function end(milestone: string, definition: Milestone, found: Found): RuleResult {
  const rule = 'milestones.end';
  const name = `${rule}:${milestone}`;
  const certain = found.reaches.filter((reach) => reach.doubt === undefined).map((reach) => reach.call);
  if (certain.length > 0) return pass(rule, 'order', name, certain);
  if (found.reaches.length > 0) {
    const possible = found.reaches.map(
      ({ call, doubt }) => `${callName(call)} may have reached it (${doubt})`,
    );
    const reason = `could not decide whether ${milestone} was reached: ${capList(possible, '; ')}`;
    return undecided(
      rule,
      'order',
      name,
      reason,
      found.reaches.map((reach) => reach.call),
    );
  }
  const outcome = { ok: 'a successful call', error: 'a failed call', any: 'a call' }[definition.outcome];
  const wanted = definition.match ? ` with ${describeExpectation(definition.match)}` : '';
  const needs = `${milestone} was never reached: it needs ${outcome} of ${orList(definition.tool)}${wanted}`;
  if (found.misses.length === 0) {
    return untilMoreCalls(
      fail(rule, 'order', name, `${needs}; ${orList(definition.tool)} was never called`, []),
    );
  }
  const seen = describeMisses(found.misses);
  return untilMoreCalls(
    fail(
      rule,
      'order',
      name,
      `${needs}; saw ${seen}`,
      found.misses.map((miss) => miss.call),
    ),
  );
}

/** No call reaches the milestone; one that only possibly does makes it inconclusive. */
function never(milestone: string, found: Found): RuleResult {
  const rule = 'milestones.never';
  const name = `${rule}:${milestone}`;
  const certain = found.reaches.filter((reach) => reach.doubt === undefined);
  if (certain.length > 0) {
    const reached = capList(certain.map((reach) => callName(reach.call)));
    return fail(
      rule,
      'order',
      name,
      `${milestone} must never be reached, but ${reached} reached it`,
      certain.map((reach) => reach.call),
    );
  }
  if (found.reaches.length > 0) {
    const possible = found.reaches.map(
      ({ call, doubt }) => `${callName(call)} may have reached it (${doubt})`,
    );
    const reason = `could not decide whether ${milestone}, which must never be reached, was: ${capList(possible, '; ')}`;
    return undecided(rule, 'order', name, reason, found.calls);
  }
  return pass(rule, 'order', name);
}

/**
 * A failing result when a rule names milestones `define` does not have. The schema rejects such
 * a scenario at load time; this covers sections built in code, so the family never throws.
 */
function unknownMilestones(
  section: MilestonesSection,
  rule: string,
  name: string,
  named: readonly string[],
): RuleResult {
  const unknown = named.filter((milestone) => !Object.hasOwn(section.define, milestone));
  const defined = Object.keys(section.define).join(', ') || 'none';
  return fail(
    rule,
    'order',
    name,
    `unknown milestone ${[...new Set(unknown)].join(', ')}; defined: ${defined}`,
    [],
  );
}

/** `get_refund_policy (call c1): it failed (TimeoutError); …`: why calls of a milestone's tools missed it. */
function describeMisses(misses: readonly Miss[]): string {
  return capList(
    misses.map(({ call, why }) => `${callName(call)}: ${why}`),
    '; ',
  );
}

/** ` (get_refund_policy (call c1): it failed)` when calls of the milestone's tools missed it, else ''. */
function missed(misses: readonly Miss[]): string {
  return misses.length === 0 ? '' : ` (${describeMisses(misses)})`;
}

/** `issue_refund (call c3)`. */
function callName(call: ToolCall): string {
  return `${call.tool} (call ${call.id})`;
}

/** `issue_refund (call c3) reached refund_issued`, or `… may have reached it (arguments were not captured)`. */
function reached(reach: Reach, milestone: string): string {
  const how = reach.doubt === undefined ? 'reached' : 'may have reached';
  return `${callName(reach.call)} ${how} ${milestone}${reach.doubt === undefined ? '' : ` (${reach.doubt})`}`;
}
