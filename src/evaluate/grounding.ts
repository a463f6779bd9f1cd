/**
 * The grounding family: an argument value must come from something the agent had really seen.
 * For each call of a tool, the value at a path of its arguments must equal (or be contained in)
 * a field of the result of a call that happened-before it and succeeded. Causal, never by start
 * time: a value present only in a result produced concurrently (the same turn) or later was a
 * guess, even when it turns out right.
 *
 * Values are compared as JSON: numbers by value (40 and 40.0 are equal), strings exactly, and
 * never across types, so the number 40 in the arguments is not grounded by the string "40" in
 * a result. `contains` also accepts a non-empty string inside a string field, or an element of
 * an array field.
 */
import type { JsonValue } from '../model/json.js';
import { reportedBack, type ToolCall, type Trajectory, unreadable } from '../model/trajectory.js';
import { type PathHit, readPath } from '../scenario/json-path.js';
import type { GroundingRule } from '../scenario/native.js';
import { GroundingSources } from './grounding-sources.js';
import { renderValue } from './match-args.js';
import { callIds, capList, MAX_LISTED, times } from './outcome.js';
import { fail, pass, type RuleFamily, type RuleResult, undecided } from './rule.js';
import { errorDetail } from './safety.js';
import { callsOfTool } from './trajectory-index.js';

const RULE = 'grounding.source';
const DIMENSION = 'grounding';

/** Evaluates the `grounding` section: one result per rule. */
export const groundingFamily: RuleFamily<readonly GroundingRule[]> = (
  trajectory,
  rules,
  results: RuleResult[] = [],
) => {
  for (const rule of rules) results.push(checkGrounding(trajectory, rule));
  return results;
};

/** The name a grounding rule reports under: its own, else `grounding:<tool>.<path>` (`<tool>#<call>` with `call`). */
export function groundingName(rule: GroundingRule): string {
  if (rule.name !== undefined) return rule.name;
  const tool = rule.call === undefined ? rule.tool : `${rule.tool}#${rule.call}`;
  return `grounding:${tool}.${rule.path}`;
}

/**
 * What one argument value (or one call) came to: the explanation's text when it is known up
 * front, else the value and its holders, explained by {@link Grounder.explain}. Deferred: only
 * the problems a reason lists are explained, so a trace with thousands of ungrounded calls
 * costs no quadratic explaining.
 */
type Problem =
  | { status: 'fail' | 'inconclusive'; call: ToolCall; text: string }
  | { status: 'fail' | 'inconclusive'; call: ToolCall; hit: PathHit; holders: readonly ToolCall[] };

/**
 * Checks one grounding rule. A tool that was never called passes (nothing to ground: whether
 * it must be called is `tools.required`'s business), unless `call` asks for a call that is not there.
 */
export function checkGrounding(trajectory: Trajectory, rule: GroundingRule): RuleResult {
  const name = groundingName(rule);
  const calls = callsOfTool(trajectory, rule.tool);
  let targets = calls;
  if (rule.call !== undefined) {
    const call = calls[rule.call - 1];
    if (!call) {
      const seen =
        calls.length === 0
          ? `${rule.tool} was never called`
          : `${rule.tool} was called ${times(calls.length)}`;
      return fail(RULE, DIMENSION, name, `${seen}; the check asks for call #${rule.call}`, calls);
    }
    targets = [call];
  }

  const grounder = new Grounder(trajectory, rule);
  const problems: Problem[] = [];
  for (const call of targets) grounder.check(call, problems);
  if (problems.length === 0) return pass(RULE, DIMENSION, name, targets);
  const failures = problems.filter((problem) => problem.status === 'fail');
  const shown = failures.length > 0 ? failures : problems;
  const listed = shown.slice(0, MAX_LISTED).map((problem) => grounder.explain(problem));
  const rest = shown.length - listed.length;
  const reason = listed.map((entry) => entry.text).join('; ') + (rest > 0 ? `; and ${rest} more` : '');
  const involved = [
    ...new Set([...listed.flatMap((entry) => entry.calls), ...shown.map((problem) => problem.call)]),
  ];
  return failures.length > 0
    ? fail(RULE, DIMENSION, name, reason, involved)
    : undecided(RULE, DIMENSION, name, reason, involved);
}

/** One rule's check: each argument value judged against the rule's sources, and explained when it is not grounded. */
class Grounder {
  readonly #sources: GroundingSources;

  constructor(
    private readonly trajectory: Trajectory,
    private readonly rule: GroundingRule,
  ) {
    this.#sources = new GroundingSources(trajectory, rule);
  }

  /** Adds to `problems` those of one call's argument at the rule's path; none when every value there is grounded. */
  check(call: ToolCall, problems: Problem[]): void {
    const { rule } = this;
    if (!call.args.captured) {
      problems.push(
        plainProblem('inconclusive', call, `the arguments of ${which(rule, call)} were not captured`),
      );
      return;
    }
    if (call.args.parseError !== undefined) {
      const text = `the arguments of ${which(rule, call)} are ${unreadable(call.args)}`;
      problems.push(plainProblem('inconclusive', call, text));
      return;
    }
    const hits = readPath(call.args.value, rule.path);
    if (hits.length === 0) {
      problems.push(plainProblem('fail', call, `${which(rule, call)} has no argument at ${rule.path}`));
      return;
    }
    for (const hit of hits) {
      const problem = this.#judge(call, hit);
      if (problem) problems.push(problem);
    }
  }

  /** Undefined when the value is grounded; otherwise why not, naming the calls that explain it. */
  #judge(call: ToolCall, hit: PathHit): Problem | undefined {
    const { trajectory } = this;
    const sources = this.#sources;
    // A scan that stops at the first grounding source settles the usual value.
    if (sources.groundsFirstLookup(call, hit.value)) return undefined;
    const holders = sources.holdersOf(hit.value);
    for (const source of holders) if (sources.grounds(source, call)) return undefined;
    if (this.rule.relation === 'contains') {
      for (const source of sources.sources) {
        if (sources.grounds(source, call) && sources.contains(source, hit.value)) return undefined;
      }
    }

    // A result we cannot read may hold the value: undecided rather than a guess either way.
    let status: Problem['status'] = 'fail';
    for (const source of sources.unreadableOk()) {
      if (trajectory.happensBefore(source, call)) {
        status = 'inconclusive';
        break;
      }
    }
    return { status, call, hit, holders };
  }

  /** Why a problem is one, and the calls that explain it. */
  explain(problem: Problem): { text: string; calls: ToolCall[] } {
    if ('text' in problem) return { text: problem.text, calls: [problem.call] };
    return this.#explain(problem.call, problem.hit, problem.holders);
  }

  /** Why a value is not grounded: the unreadable results, the source that held it too late, or what the sources held. */
  #explain(call: ToolCall, hit: PathHit, holders: readonly ToolCall[]): { text: string; calls: ToolCall[] } {
    const { trajectory } = this;
    const earlier = this.#sources.sources.filter((source) => trajectory.happensBefore(source, call));
    const earlierOk = earlier.filter((source) => source.outcome.status === 'ok');
    const subject = `${hit.path} ${render(hit.value)} of ${this.rule.tool} (call ${call.id})`;
    const unreadable = earlierOk.filter((source) => !this.#sources.read(source).readable);
    if (unreadable.length > 0) {
      const why = unreadable.map(
        (source) => `the result of ${source.tool} (call ${source.id}) ${this.#sources.why(source)}`,
      );
      const text = `${subject} appears in no captured earlier result${this.#ofTool()}; ${capList(why)}`;
      return { text, calls: [call, ...unreadable] };
    }
    const elsewhere = this.#explainElsewhere(call, hit.value, holders);
    if (elsewhere) {
      return { text: `${subject} is in the result of ${elsewhere.text}`, calls: [call, elsewhere.source] };
    }
    const verb = this.rule.relation === 'contains' ? 'is contained in no field of' : 'appears in no';
    const text = `${subject} ${verb} earlier result${this.#ofTool()}; ${this.#describeEarlier(earlier, earlierOk)}`;
    // With `from: 'any'` every earlier call is a candidate: the finding names the call alone.
    return { text, calls: this.#sources.fromTool === undefined ? [call] : [call, ...earlierOk] };
  }

  /**
   * A source that does hold the value but cannot ground it: made in the same turn or
   * concurrently, made later, or failed. The most telling one wins, in that order.
   */
  #explainElsewhere(
    call: ToolCall,
    value: JsonValue,
    holders: readonly ToolCall[],
  ): { source: ToolCall; text: string } | undefined {
    const { trajectory } = this;
    const holderSet = new Set(holders);
    const candidates =
      this.rule.relation === 'contains'
        ? this.#sources.sources.filter(
            (source) => holderSet.has(source) || this.#sources.contains(source, value),
          )
        : holders;
    const holding = candidates.filter((source) => source !== call && reportedBack(source));
    for (const source of holding) {
      if (source.outcome.status === 'ok' && trajectory.concurrent(source, call)) {
        const when =
          source.turnId !== undefined && source.turnId === call.turnId
            ? 'in the same turn'
            : 'concurrently with it';
        return { source, text: `${callName(source)}, but that call was made ${when}, not before` };
      }
    }
    for (const source of holding) {
      if (source.outcome.status === 'ok' && trajectory.happensBefore(call, source)) {
        return { source, text: `${callName(source)}, but that call was made after it` };
      }
    }
    for (const source of holding) {
      if (source.outcome.status === 'error' && trajectory.happensBefore(source, call)) {
        return { source, text: `${callName(source)}, but that call failed${errorDetail(source)}` };
      }
    }
    return undefined;
  }

  /** What the earlier calls of the source tool returned, or that there were none. */
  #describeEarlier(earlier: readonly ToolCall[], earlierOk: readonly ToolCall[]): string {
    const from = this.#sources.fromTool;
    if (earlierOk.length === 0) {
      if (earlier.length === 0)
        return from === undefined ? 'no call was made before it' : `${from} was not called before it`;
      const of = from === undefined ? '' : ` of ${from}`;
      return earlier.length === 1
        ? `the earlier call${of} (call ${earlier[0]?.id}) did not succeed`
        : `none of the earlier calls${of} (${callIds(earlier)}) succeeded`;
    }
    if (from === undefined) return `earlier successful results: ${callIds(earlierOk)}`;
    return capList(
      earlierOk.map((source) => `${source.tool} (call ${source.id}) returned ${this.#returned(source)}`),
    );
  }

  /** `refundId "R-1001"`, `no refundId`, or the whole result when the rule names no path. */
  #returned(source: ToolCall): string {
    const read = this.#sources.read(source);
    if (!read.readable) return 'nothing readable';
    const path = this.#sources.fromPath;
    if (path === undefined || read.hits === undefined)
      return render(source.result.captured ? source.result.value : null);
    if (read.hits.length === 0) return `no ${path}`;
    return read.hits.map((field) => `${field.path} ${render(field.value)}`).join(', ');
  }

  #ofTool(): string {
    return this.#sources.fromTool === undefined ? '' : ` of ${this.#sources.fromTool}`;
  }
}

/** `issue_refund (call c3)`: the call a grounding rule checks, as reasons name it. */
function which(rule: GroundingRule, call: ToolCall): string {
  return `${rule.tool} (call ${call.id})`;
}

/** A problem whose explanation is known up front and names the call alone. */
function plainProblem(status: Problem['status'], call: ToolCall, text: string): Problem {
  return { status, call, text };
}

/** `get_order (call c2)`. */
function callName(call: ToolCall): string {
  return `${call.tool} (call ${call.id})`;
}

function render(value: JsonValue): string {
  return renderValue(JSON.stringify(value));
}
