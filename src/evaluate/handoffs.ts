/**
 * The handoffs family: which agent may pass control to which (`allowed`, deny by default;
 * `forbidden`), which handoffs must be made (`required`), how many (`max`), and that every
 * transfer asked for was made (`handoffs.not_made`: its target agent ran after it). A handoff is
 * a call the trace records as one (`ToolCall.handoff`: the GenAI transfer refinement, the
 * frameworks' own), from the agent that made the call to the target it names.
 */
import type { AgentRun, ToolCall } from '../model/trajectory.js';
import type { HandoffsSection } from '../scenario/native.js';
import { ANY_AGENT } from '../scenario/native-agents.js';
import { callIds, capList } from './outcome.js';
import {
  alwaysHard,
  fail,
  pass,
  type RuleFamily,
  type RuleResult,
  undecided,
  undecidedInstead,
  untilMoreCalls,
} from './rule.js';

type Pair = NonNullable<HandoffsSection['allowed']>[number];

/** Evaluates the `handoffs` section. */
export const handoffsFamily: RuleFamily<HandoffsSection> = (
  trajectory,
  section,
  results: RuleResult[] = [],
) => {
  const handoffs = trajectory.calls.filter((call) => call.handoff !== undefined);
  const names = new Map<string, string>();
  for (const run of trajectory.agents) if (run.name !== undefined) names.set(run.id, run.name);
  // Runs control reached with no handoff recorded: each may have been one.
  const unstarted = trajectory.unstartedRuns();
  const { allowed: allowedPairs, forbidden: forbiddenPairs } = section;
  if (allowedPairs) {
    const unknown = unstarted.filter(
      (run) => !allowedPairs.some((pair) => pair.from === ANY_AGENT && reaches(pair, run)),
    );
    results.push(
      alwaysHard(
        unlessUnrecorded(allowed(handoffs, allowedPairs, names), unknown, 'a handoff no allowed pair covers'),
      ),
    );
  }
  if (forbiddenPairs) {
    const unknown = unstarted.filter((run) => forbiddenPairs.some((pair) => reaches(pair, run)));
    results.push(
      alwaysHard(
        unlessUnrecorded(forbidden(handoffs, forbiddenPairs, names), unknown, 'a forbidden handoff'),
      ),
    );
  }
  if (section.required)
    section.required.forEach((pair, index) => {
      results.push(required(handoffs, pair, index, names));
    });
  if (section.max !== undefined) {
    const result = max(handoffs, section.max);
    results.push(
      handoffs.length + unstarted.length > section.max
        ? unlessUnrecorded(result, unstarted, 'handoffs over the limit')
        : result,
    );
  }
  results.push(notMade(handoffs));
  return results;
};

/** Whether the pair's target is the run's agent. */
function reaches(pair: Pair, run: AgentRun): boolean {
  return pair.to === ANY_AGENT || pair.to === run.name;
}

/**
 * A passing result undecided when control reached runs no recorded handoff or call started
 * (`Trajectory.unstartedRuns`): each may have been a handoff the rule would judge.
 */
function unlessUnrecorded(result: RuleResult, runs: readonly AgentRun[], missing: string): RuleResult {
  if (result.status !== 'pass' || runs.length === 0) return result;
  const listed = capList(
    runs.map((run) => `${run.name}${run.spanId === undefined ? '' : ` (span ${run.spanId})`}`),
  );
  return undecidedInstead(
    result,
    `control reached ${listed} with no handoff or call recorded as starting ${runs.length === 1 ? 'it' : 'them'}: ${missing} may be missing from the trace`,
  );
}

/** `from -> to` of a handoff call, as reasons name it. */
function described(call: ToolCall): string {
  return `${call.agentName ?? 'an unnamed agent'} -> ${targetOf(call)} (call ${call.id})`;
}

function targetOf(call: ToolCall): string {
  return (call.handoff as NonNullable<ToolCall['handoff']>).targetName;
}

/**
 * The trajectory's run names by run id: a handoff's target is also known by its run's name (a
 * transfer tool may spell it otherwise).
 */
type RunNames = ReadonlyMap<string, string>;

function targetIs(call: ToolCall, name: string, names: RunNames): boolean {
  const handoff = call.handoff as NonNullable<ToolCall['handoff']>;
  if (handoff.targetName === name) return true;
  return handoff.targetRunId !== undefined && names.get(handoff.targetRunId) === name;
}

/** Whether the pair covers the handoff: yes, no, or unknown (the pair names a caller, the trace none). */
function covers(pair: Pair, call: ToolCall, names: RunNames): 'yes' | 'no' | 'unknown' {
  if (pair.to !== ANY_AGENT && !targetIs(call, pair.to, names)) return 'no';
  if (pair.from === ANY_AGENT) return 'yes';
  if (call.agentName === undefined) return 'unknown';
  return pair.from === call.agentName ? 'yes' : 'no';
}

function pairText(pair: Pair): string {
  return `${pair.from} -> ${pair.to}`;
}

function allowed(handoffs: readonly ToolCall[], pairs: readonly Pair[], names: RunNames): RuleResult {
  const rule = 'handoffs.allowed';
  const denied: ToolCall[] = [];
  const unsure: ToolCall[] = [];
  for (const call of handoffs) {
    const answers = pairs.map((pair) => covers(pair, call, names));
    if (answers.includes('yes')) continue;
    (answers.includes('unknown') ? unsure : denied).push(call);
  }
  const allowedText = pairs.length === 0 ? 'none' : pairs.map(pairText).join(', ');
  if (denied.length > 0)
    return fail(
      rule,
      'safety',
      rule,
      `handoffs not on the allowed list: ${capList(denied.map(described))}; allowed: ${allowedText}`,
      denied,
    );
  if (unsure.length > 0)
    return undecided(
      rule,
      'safety',
      rule,
      `the trace does not name the agent that made ${capList(unsure.map(described))}, and the allowed pairs name their callers: ${allowedText}`,
      unsure,
    );
  return pass(rule, 'safety', rule, handoffs);
}

function forbidden(handoffs: readonly ToolCall[], pairs: readonly Pair[], names: RunNames): RuleResult {
  const rule = 'handoffs.forbidden';
  const offending: ToolCall[] = [];
  const unsure: ToolCall[] = [];
  for (const call of handoffs) {
    const answers = pairs.map((pair) => covers(pair, call, names));
    if (answers.includes('yes')) offending.push(call);
    else if (answers.includes('unknown')) unsure.push(call);
  }
  if (offending.length > 0)
    return fail(rule, 'safety', rule, `forbidden handoffs: ${capList(offending.map(described))}`, offending);
  if (unsure.length > 0)
    return undecided(
      rule,
      'safety',
      rule,
      `whether ${capList(unsure.map(described))} ${unsure.length === 1 ? 'is' : 'are'} forbidden is unknown: the trace does not name the agent that made ${unsure.length === 1 ? 'it' : 'them'}`,
      unsure,
    );
  return pass(rule, 'safety', rule);
}

function required(handoffs: readonly ToolCall[], pair: Pair, index: number, names: RunNames): RuleResult {
  const rule = 'handoffs.required';
  const name = `${rule}[${index}]`;
  const matching = handoffs.filter((call) => covers(pair, call, names) === 'yes');
  const made = matching.filter((call) => call.handoff?.targetRunId !== undefined);
  if (made.length > 0) return pass(rule, 'structure', name, made);
  if (matching.length > 0)
    return untilMoreCalls(
      fail(
        rule,
        'structure',
        name,
        `the handoff ${pairText(pair)} was asked for (${callIds(matching)}) but never made: no run of ${pair.to === ANY_AGENT ? 'its target' : pair.to} after it`,
        matching,
      ),
    );
  const unsure = handoffs.filter((call) => covers(pair, call, names) === 'unknown');
  if (unsure.length > 0)
    return undecided(
      rule,
      'structure',
      name,
      `no handoff ${pairText(pair)} is known; the trace does not name the agent that made ${callIds(unsure)}`,
      unsure,
    );
  const seen =
    handoffs.length === 0 ? 'no handoff was made' : `handoffs made: ${capList(handoffs.map(described))}`;
  return untilMoreCalls(fail(rule, 'structure', name, `expected a handoff ${pairText(pair)}; ${seen}`, []));
}

function max(handoffs: readonly ToolCall[], limit: number): RuleResult {
  const rule = 'handoffs.max';
  if (handoffs.length <= limit) return pass(rule, 'structure', rule, handoffs);
  return fail(
    rule,
    'structure',
    rule,
    `${handoffs.length} handoffs were asked for; expected at most ${limit}: ${capList(handoffs.map(described))}`,
    handoffs,
  );
}

/**
 * `handoffs.not_made`: a transfer asked for whose target never ran after it. A call a decision
 * held back (not executed) was not to be made; one whose span is still open may yet hand off. A
 * request no span records reports no result, as a handoff the SDK made does: what says it was
 * made is the target's run.
 */
function notMade(handoffs: readonly ToolCall[]): RuleResult {
  const rule = 'handoffs.not_made';
  const missing: ToolCall[] = [];
  const open: ToolCall[] = [];
  for (const call of handoffs) {
    if (call.handoff?.targetRunId !== undefined || call.outcome.status === 'not_executed') continue;
    (call.spanId !== undefined && call.endTimeUnixNano === undefined ? open : missing).push(call);
  }
  if (missing.length > 0) {
    const listed = capList(
      missing.map(
        (call) =>
          `${described(call)}${call.outcome.status === 'error' ? ', which failed' : ''}: no run of ${targetOf(call)} after it`,
      ),
      '; ',
    );
    // A conversation's next trace may hold the target's run.
    return untilMoreCalls(
      fail(rule, 'structure', rule, `handoffs asked for but never made: ${listed}`, missing),
    );
  }
  if (open.length > 0)
    return undecided(
      rule,
      'structure',
      rule,
      `${capList(open.map(described))} ${open.length === 1 ? 'is' : 'are'} still open (no end recorded) and no run of the target follows: whether control passed is unknown`,
      open,
    );
  return pass(rule, 'structure', rule, handoffs);
}
