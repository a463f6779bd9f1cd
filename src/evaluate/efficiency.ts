/**
 * The efficiency family: what the run cost - calls against a budget and per turn, identical calls repeated,
 * retries classified by the error they followed, wall time and tokens. Warnings by default:
 * waste lowers the efficiency score without failing a run that did the right thing.
 *
 * Identical means the same tool and the same canonical JSON arguments (key order ignored).
 * A call is a retry when the identical call before it failed and it was made after that failure
 * was seen; a retry is judged by `retries` (when the scenario declares them), never as a repeat.
 * Any other identical call is a repeat. A repeated success of a side-effecting tool is also
 * `safety.irreversible`'s business when the tool is declared there. `repeats.outcome` counts only
 * the identical calls of that outcome (the first of them is not a repeat); a call without a result
 * may or may not count, which makes the check inconclusive where it decides it.
 */

import { canonicalHash, canonicalJson } from '../model/json.js';
import type { Severity } from '../model/report.js';
import type { ToolCall, Trajectory, Turn } from '../model/trajectory.js';
import type { EfficiencySection } from '../scenario/native.js';
import { callsPerTurn } from './calls-per-turn.js';
import { renderValue } from './match-args.js';
import { callIds, capList, times } from './outcome.js';
import { repeatsOfOutcome } from './outcome-repeats.js';
import { fail, pass, type RuleFamily, type RuleResult, undecided } from './rule.js';
import { errorDetail } from './safety.js';
import { callsOfTool } from './trajectory-index.js';

const DIMENSION = 'efficiency';
const SEVERITY: Severity = 'warning';

/** Evaluates the `efficiency` section: one result per budget or check the section sets. */
export const efficiencyFamily: RuleFamily<EfficiencySection> = (
  trajectory,
  section,
  results: RuleResult[] = [],
) => {
  const first = results.length;
  if (section.maxCalls !== undefined) results.push(budget(trajectory, section.maxCalls));
  if (section.maxCallsPerTurn !== undefined) results.push(callsPerTurn(trajectory, section.maxCallsPerTurn));
  const { repeats: repeatRule, retries: retryRule } = section;
  // Only the repeat and retry checks look at identical calls; a call without an identical one
  // can only fail a limit that is not a count (negative, NaN or missing: a section built in
  // code, as the schema allows none of them).
  const groups =
    repeatRule || retryRule
      ? identicalCalls(trajectory, notACount(repeatRule) || notACount(retryRule))
      : NO_IDENTICAL_CALLS;
  if (section.repeats) {
    const { max, outcome } = section.repeats;
    const retriesJudged = section.retries !== undefined;
    results.push(
      outcome === undefined || outcome === 'any'
        ? repeats(trajectory, groups, max, retriesJudged)
        : repeatsOfOutcome(
            trajectory,
            groups.groups,
            groups.blind,
            max,
            outcome,
            retriesJudged ? isRetryOf : undefined,
          ),
    );
  }
  if (section.retries)
    results.push(retries(trajectory, groups, section.retries.transient, section.retries.max));
  if (section.maxDurationMs !== undefined) results.push(duration(trajectory, section.maxDurationMs));
  if (section.maxTokens !== undefined) results.push(tokens(trajectory, section.maxTokens));
  // Every result is a fresh object: set the severity on it rather than copy it.
  for (let index = first; index < results.length; index++) (results[index] as RuleResult).severity = SEVERITY;
  return results;
};

/** `efficiency.budget`: at most `max` calls; the reason names the calls over budget. */
function budget(trajectory: Trajectory, max: number): RuleResult {
  const rule = 'efficiency.budget';
  const { calls } = trajectory;
  if (calls.length <= max) return pass(rule, DIMENSION, rule, calls);
  const over = calls.slice(max);
  const reason = `${calls.length} calls, budget ${max} (over budget: ${callIds(over)})`;
  return fail(rule, DIMENSION, rule, reason, over);
}

/** Calls grouped by tool and canonical arguments, plus the calls whose arguments are unknown (not captured, too deep). */
interface IdenticalCalls {
  /** Groups of identical calls, in the order of their first call. */
  groups: ToolCall[][];
  /** Per tool, its calls whose arguments are unknown: they may repeat any call of the tool. */
  blind: Map<string, ToolCall[]>;
}

const NO_IDENTICAL_CALLS: IdenticalCalls = { groups: [], blind: new Map() };

/**
 * The groups of identical captured calls, in the order of their first call; a call with no
 * identical one is a group of its own only `withSingles`. Canonical JSON is only written for
 * calls whose argument hashes (consistent with canonical JSON) collide with another call's of
 * the same tool: a call whose hash no other call has cannot have an identical one. The maps are
 * made when first needed: in most runs no call has an identical one or unknown arguments.
 */
function identicalCalls(trajectory: Trajectory, withSingles: boolean): IdenticalCalls {
  const groups: ToolCall[][] = [];
  let blind: Map<string, ToolCall[]> | undefined;
  /** Per tool with several captured calls: its groups by canonical arguments. */
  let byArgs: Map<string, Map<string, ToolCall[]>> | undefined;
  const { calls } = trajectory;
  const hashes = argumentHashes(trajectory);
  for (let position = 0; position < calls.length; position++) {
    const call = calls[position] as ToolCall;
    // Too deep to read: as unknown as arguments not captured.
    if (!call.args.captured || call.args.tooDeep) {
      blind ??= new Map();
      const list = blind.get(call.tool);
      if (list) list.push(call);
      else blind.set(call.tool, [call]);
      continue;
    }
    const hash = hashes?.of[position] ?? NOT_HASHED;
    if (hash === NOT_HASHED || hashes?.count.get(hash) === 1) {
      if (withSingles) groups.push([call]);
      continue;
    }
    byArgs ??= new Map();
    let ofTool = byArgs.get(call.tool);
    if (!ofTool) {
      ofTool = new Map();
      byArgs.set(call.tool, ofTool);
    }
    // Unparsable arguments are kept as their raw text: the same text is the same call.
    const key = canonicalJson(call.args.value);
    const group = ofTool.get(key);
    if (group) group.push(call);
    else {
      const created = [call];
      ofTool.set(key, created);
      groups.push(created);
    }
  }
  return { groups, blind: blind ?? NO_IDENTICAL_CALLS.blind };
}

/** Marks a call not hashed: uncaptured, or the only captured call of its tool. */
const NOT_HASHED = -1;
const SMALL_HASH = 0x3fffffff;

/** Per position in the causal listing, a call's hash (if hashed); how many calls share each hash. */
interface ArgumentHashes {
  of: number[];
  count: Map<number, number>;
}

/**
 * The argument hashes of the captured calls of tools with several, undefined when there are
 * none. Identical calls share a hash, so a hash held once is a call without an identical one.
 */
function argumentHashes(trajectory: Trajectory): ArgumentHashes | undefined {
  let hashes: ArgumentHashes | undefined;
  /** Captured calls per tool, counted for tools called more than once. */
  let captured: Map<string, number> | undefined;
  const { calls } = trajectory;
  for (let position = 0; position < calls.length; position++) {
    const call = calls[position] as ToolCall;
    if (!call.args.captured || call.args.tooDeep) continue;
    const ofTool = callsOfTool(trajectory, call.tool);
    // The only call of its tool has no identical call.
    if (ofTool.length <= 1) continue;
    captured ??= new Map();
    if (capturedCalls(ofTool, call.tool, captured) === 1) continue;
    hashes ??= { of: [], count: new Map() };
    const { of, count } = hashes;
    while (of.length < position) of.push(NOT_HASHED);
    // 30 bits: a small integer to V8, which a Map keys and an array holds without boxing.
    const hash =
      (Math.imul(canonicalHash(call.tool), 0x01000193) ^ canonicalHash(call.args.value)) & SMALL_HASH;
    of.push(hash);
    count.set(hash, (count.get(hash) ?? 0) + 1);
  }
  return hashes;
}

/** How many of `calls` (those of `tool`) had their arguments captured, counted once per tool. */
function capturedCalls(calls: readonly ToolCall[], tool: string, counted: Map<string, number>): number {
  let count = counted.get(tool);
  if (count === undefined) {
    count = 0;
    for (const call of calls) if (call.args.captured && !call.args.tooDeep) count++;
    counted.set(tool, count);
  }
  return count;
}

/** The identical call before `call` failed, and `call` was made once that failure was seen. */
function isRetryOf(trajectory: Trajectory, previous: ToolCall, call: ToolCall): boolean {
  return previous.outcome.status === 'error' && trajectory.happensBefore(previous, call);
}

/**
 * `efficiency.repeat`: each distinct call may be repeated at most `max` times. Retries after an
 * error do not count when the retry rule judges them (`retries` declared); otherwise nobody
 * declared the error worth retrying, and the retry counts as a repeat.
 */
function repeats(
  trajectory: Trajectory,
  found: IdenticalCalls,
  max: number,
  retriesJudged: boolean,
): RuleResult {
  const rule = 'efficiency.repeat';
  const problems: string[] = [];
  const involved: ToolCall[] = [];
  for (const group of found.groups) {
    const repeated = group.filter(
      (call, index) =>
        index > 0 && !(retriesJudged && isRetryOf(trajectory, group[index - 1] as ToolCall, call)),
    );
    if (repeated.length <= max) continue;
    const first = group[0] as ToolCall;
    const args = first.args.captured ? renderValue(canonicalJson(first.args.value)) : '';
    problems.push(
      `${first.tool} was called ${times(group.length)} with identical arguments ${args} (${callIds(group)}): ` +
        `${repeated.length} ${repeated.length === 1 ? 'repeat' : 'repeats'} (${callIds(repeated)}), at most ${max} allowed`,
    );
    for (const call of group) involved.push(call);
  }
  if (problems.length > 0) return fail(rule, DIMENSION, rule, capList(problems, '; '), involved);
  const unknown = blindTools(trajectory, found, () => true);
  if (unknown.length > 0) {
    const reason = unknown
      .map(
        ({ tool, calls }) =>
          `the arguments of ${tool} (${callIds(calls)}) ${unknownHow(calls)}, so its repeated calls cannot be told apart`,
      )
      .join('; ');
    return undecided(
      rule,
      DIMENSION,
      rule,
      reason,
      unknown.flatMap(({ calls }) => calls),
    );
  }
  return pass(rule, DIMENSION, rule);
}

/**
 * `efficiency.retry`: a retry is fine after an error declared transient (`transient` equals the
 * error type, or is a substring of its message) as long as the call is retried at most `max`
 * times in a row; a retry after any other error repeats a call that cannot succeed.
 */
function retries(
  trajectory: Trajectory,
  found: IdenticalCalls,
  transient: readonly string[],
  max: number,
): RuleResult {
  const rule = 'efficiency.retry';
  const problems: string[] = [];
  const involved = new Set<ToolCall>();
  const seen: ToolCall[] = [];
  let permanentSeen = false;
  for (const group of found.groups) {
    let original = group[0] as ToolCall;
    let chain: ToolCall[] = [];
    const closeChain = () => {
      if (chain.length > max) {
        problems.push(
          `${original.tool} (call ${original.id}) was retried ${times(chain.length)} (${callIds(chain)}), at most ${max} allowed`,
        );
        for (const call of [original, ...chain]) involved.add(call);
      }
    };
    for (let index = 1; index < group.length; index++) {
      const previous = group[index - 1] as ToolCall;
      const call = group[index] as ToolCall;
      if (!isRetryOf(trajectory, previous, call)) {
        closeChain();
        original = call;
        chain = [];
        continue;
      }
      chain.push(call);
      seen.push(call);
      if (!isTransient(previous, transient)) {
        permanentSeen = true;
        problems.push(
          `${call.tool} (call ${call.id}) retried call ${previous.id} after a permanent error${errorDetail(previous) || ' (no error type or message recorded)'}`,
        );
        involved.add(previous).add(call);
      }
    }
    closeChain();
  }
  if (problems.length > 0) {
    const declared =
      transient.length === 0
        ? 'no error is declared transient'
        : `declared transient: ${transient.join(', ')}`;
    const reason = capList(problems, '; ') + (permanentSeen ? `; ${declared}` : '');
    return fail(rule, DIMENSION, rule, reason, [...involved]);
  }
  // A call whose arguments are unknown may retry, or be retried after, a failed call of its tool.
  const unknown = blindTools(trajectory, found, (blind, tool) => {
    // Some failed call with a later call, one of the two blind: a blind failure followed by
    // anything, or a blind call after any failure. Two "after any of these" passes, not pairs.
    const calls = callsOfTool(trajectory, tool);
    const failed = calls.filter((call) => call.outcome.status === 'error');
    if (failed.length === 0) return false;
    const blindSet = new Set(blind);
    const blindFailed = failed.filter((call) => blindSet.has(call));
    if (blindFailed.length > 0 && calls.some(trajectory.afterAny(blindFailed))) return true;
    return blind.some(trajectory.afterAny(failed));
  });
  if (unknown.length > 0) {
    const reason = unknown
      .map(
        ({ tool, calls }) =>
          `the arguments of ${tool} (${callIds(calls)}) ${unknownHow(calls)}, so whether it was retried after an error is unknown`,
      )
      .join('; ');
    return undecided(
      rule,
      DIMENSION,
      rule,
      reason,
      unknown.flatMap(({ calls }) => calls),
    );
  }
  return pass(rule, DIMENSION, rule, seen);
}

function isTransient(failed: ToolCall, transient: readonly string[]): boolean {
  const { outcome } = failed;
  if (outcome.status !== 'error') return false;
  return transient.some(
    (declared) =>
      outcome.errorType === declared || (declared !== '' && outcome.message?.includes(declared) === true),
  );
}

/** Why the arguments of these calls are unknown: not captured, too deep to read, or some of each. */
function unknownHow(calls: readonly ToolCall[]): string {
  const deep = calls.filter((call) => call.args.captured && call.args.tooDeep).length;
  if (deep === 0) return 'were not captured';
  return deep === calls.length ? 'nest too deep to read' : 'were not captured or nest too deep to read';
}

/**
 * Tools with a call whose arguments are unknown and at least one other call, for which `relevant`
 * holds: their repeats or retries cannot be decided.
 */
function blindTools(
  trajectory: Trajectory,
  found: IdenticalCalls,
  relevant: (blind: readonly ToolCall[], tool: string) => boolean,
): { tool: string; calls: ToolCall[] }[] {
  const out: { tool: string; calls: ToolCall[] }[] = [];
  for (const [tool, calls] of found.blind) {
    if (callsOfTool(trajectory, tool).length < 2 || !relevant(calls, tool)) continue;
    out.push({ tool, calls });
  }
  return out;
}

/**
 * `efficiency.duration`: the root span's duration, else the first call's start to the last
 * call's end. Undecided when the trace records neither.
 */
function duration(trajectory: Trajectory, maxMs: number): RuleResult {
  const rule = 'efficiency.duration';
  const measured = trajectory.duration();
  if (!measured) {
    const reason = `the trace records no start and end times, so its duration is unknown; budget ${maxMs} ms`;
    return undecided(rule, DIMENSION, rule, reason, []);
  }
  if (measured.ms <= maxMs) return pass(rule, DIMENSION, rule);
  return fail(
    rule,
    DIMENSION,
    rule,
    `${measured.ms} ms ${measured.from === 'root span' ? `(root span ${trajectory.root?.name})` : "(first call's start to last call's end)"}, budget ${maxMs} ms`,
    trajectory.calls,
  );
}

/**
 * `efficiency.tokens`: input plus output tokens over the turns that recorded usage (a missing
 * count in a recorded usage counts 0). When some turns recorded none, the sum is a lower
 * bound: over budget is still a failure, within it is undecided.
 */
function tokens(trajectory: Trajectory, max: number): RuleResult {
  const rule = 'efficiency.tokens';
  const { turns } = trajectory;
  let recorded = 0;
  let input = 0;
  let output = 0;
  for (const turn of turns) {
    if (!recordsUsage(turn)) continue;
    recorded++;
    input += turn.usage?.inputTokens ?? 0;
    output += turn.usage?.outputTokens ?? 0;
  }
  if (recorded === 0) {
    const reason = `no turn recorded token usage (${turns.length} ${turns.length === 1 ? 'turn' : 'turns'}); budget ${max}`;
    return undecided(rule, DIMENSION, rule, reason, []);
  }
  const total = input + output;
  const partial = recorded < turns.length;
  // Described only for a reason: most runs stay within budget. (`!(total > max)`, not
  // `total <= max`: a NaN budget passes, as it always has.)
  if (!partial && !(total > max)) return pass(rule, DIMENSION, rule);
  const counted = `${total} tokens (${input} input, ${output} output)`;
  const scope = partial ? ` in the ${recorded} of ${turns.length} turns that recorded usage` : '';
  if (total > max)
    return fail(rule, DIMENSION, rule, `${partial ? 'at least ' : ''}${counted}${scope}, budget ${max}`, []);
  const missing = turns.filter((turn) => !recordsUsage(turn)).map((turn) => turn.id);
  const reason = `${counted}${scope}, budget ${max}; turns ${capList(missing)} recorded none`;
  return undecided(rule, DIMENSION, rule, reason, []);
}

/** Whether a repeat or retry limit is set but is no count of calls (only a section built in code). */
function notACount(limit: { max?: number } | undefined): boolean {
  return limit !== undefined && !((limit.max as number) >= 0);
}

/** A turn that recorded token usage (a missing count in a recorded usage counts 0). */
function recordsUsage(turn: Turn): boolean {
  return turn.usage?.inputTokens !== undefined || turn.usage?.outputTokens !== undefined;
}
