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
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import type { GroundingRule } from '../scenario/native.js';
import { type PathHit, readPath, scalarKey, walkJson } from './json-path.js';
import { deepEqualJson, renderValue } from './match-args.js';
import { callIds, capList, MAX_LISTED, times } from './outcome.js';
import { fail, pass, type RuleFamily, type RuleResult, undecided } from './rule.js';
import { errorDetail } from './safety.js';

const RULE = 'grounding.source';
const DIMENSION = 'grounding';

/** Evaluates the `grounding` section: one result per rule. */
export const groundingFamily: RuleFamily<readonly GroundingRule[]> = (trajectory, rules) =>
  rules.map((rule) => checkGrounding(trajectory, rule));

/** The name a grounding rule reports under: its own, else `grounding:<tool>.<path>` (`<tool>#<call>` with `call`). */
export function groundingName(rule: GroundingRule): string {
  if (rule.name !== undefined) return rule.name;
  const tool = rule.call === undefined ? rule.tool : `${rule.tool}#${rule.call}`;
  return `grounding:${tool}.${rule.path}`;
}

/** A result read once per rule: its fields at `from.path` (or at any depth), or why it cannot be read. */
type SourceFields = { readable: true; fields: PathHit[] } | { readable: false; why: string };

/** What one argument value (or one call) came to. */
interface Problem {
  status: 'fail' | 'inconclusive';
  call: ToolCall;
  /**
   * Why, and the calls that explain it. Deferred: only the problems a reason lists are
   * explained, so a trace with thousands of ungrounded calls costs no quadratic explaining.
   */
  explain: () => { text: string; calls: ToolCall[] };
}

/**
 * Checks one grounding rule. A tool that was never called passes (nothing to ground: whether
 * it must be called is `tools.required`'s business), unless `call` asks for a call that is not there.
 */
export function checkGrounding(trajectory: Trajectory, rule: GroundingRule): RuleResult {
  const name = groundingName(rule);
  const calls = trajectory.callsOf(rule.tool);
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
  const problems = targets.flatMap((call) => grounder.check(call));
  const failures = problems.filter((problem) => problem.status === 'fail');
  const shown = failures.length > 0 ? failures : problems;
  if (shown.length === 0) return pass(RULE, DIMENSION, name, targets);
  const listed = shown.slice(0, MAX_LISTED).map((problem) => problem.explain());
  const rest = shown.length - listed.length;
  const reason = listed.map((entry) => entry.text).join('; ') + (rest > 0 ? `; and ${rest} more` : '');
  const involved = [
    ...new Set([...listed.flatMap((entry) => entry.calls), ...shown.map((problem) => problem.call)]),
  ];
  return failures.length > 0
    ? fail(RULE, DIMENSION, name, reason, involved)
    : undecided(RULE, DIMENSION, name, reason, involved);
}

/** One rule's view of the trajectory: which calls can ground a value, each result read once. */
class Grounder {
  readonly #sources: readonly ToolCall[];
  readonly #fields = new Map<ToolCall, SourceFields>();
  /** Which sources hold each scalar value, built on first use: `equals` is one lookup per value. */
  #holders: Map<string, ToolCall[]> | undefined;
  #blind: ToolCall[] | undefined;
  readonly #fromPath: string | undefined;
  readonly #fromTool: string | undefined;

  constructor(
    private readonly trajectory: Trajectory,
    private readonly rule: GroundingRule,
  ) {
    this.#fromTool = rule.from === 'any' ? undefined : rule.from.tool;
    this.#fromPath = rule.from === 'any' ? undefined : rule.from.path;
    this.#sources = this.#fromTool === undefined ? trajectory.calls : trajectory.callsOf(this.#fromTool);
  }

  /** The problems with one call's argument at the rule's path; none when every value there is grounded. */
  check(call: ToolCall): Problem[] {
    const { rule } = this;
    const which = `${rule.tool} (call ${call.id})`;
    const plain = (status: Problem['status'], text: string): Problem[] => [
      { status, call, explain: () => ({ text, calls: [call] }) },
    ];
    if (!call.args.captured) return plain('inconclusive', `the arguments of ${which} were not captured`);
    if (call.args.parseError !== undefined) {
      return plain('inconclusive', `the arguments of ${which} are not valid JSON (${call.args.parseError})`);
    }
    const hits = readPath(call.args.value, rule.path);
    if (hits.length === 0) return plain('fail', `${which} has no argument at ${rule.path}`);
    return hits.flatMap((hit) => this.#judge(call, hit) ?? []);
  }

  /** Undefined when the value is grounded; otherwise why not, naming the calls that explain it. */
  #judge(call: ToolCall, hit: PathHit): Problem | undefined {
    const { trajectory } = this;
    const holders = this.#holdersOf(hit.value);
    const grounds = (source: ToolCall) =>
      source.outcome.status === 'ok' && trajectory.happensBefore(source, call);
    if (holders.some(grounds)) return undefined;
    const contains = this.rule.relation === 'contains';
    if (contains && this.#sources.some((source) => grounds(source) && this.#contains(source, hit.value)))
      return undefined;

    // A result we cannot read may hold the value: undecided rather than a guess either way.
    const blind = this.#unreadableOk();
    const status = blind.some((source) => trajectory.happensBefore(source, call)) ? 'inconclusive' : 'fail';
    return { status, call, explain: () => this.#explain(call, hit, holders) };
  }

  /** Why a value is not grounded: the unreadable results, the source that held it too late, or what the sources held. */
  #explain(call: ToolCall, hit: PathHit, holders: readonly ToolCall[]): { text: string; calls: ToolCall[] } {
    const { trajectory } = this;
    const earlier = this.#sources.filter((source) => trajectory.happensBefore(source, call));
    const earlierOk = earlier.filter((source) => source.outcome.status === 'ok');
    const subject = `${hit.path} ${render(hit.value)} of ${this.rule.tool} (call ${call.id})`;
    const unreadable = earlierOk.filter((source) => !this.#read(source).readable);
    if (unreadable.length > 0) {
      const why = unreadable.map(
        (source) => `the result of ${source.tool} (call ${source.id}) ${this.#why(source)}`,
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
    return { text, calls: this.#fromTool === undefined ? [call] : [call, ...earlierOk] };
  }

  /** The sources that succeeded but whose result cannot be read, computed once. */
  #unreadableOk(): readonly ToolCall[] {
    this.#blind ??= this.#sources.filter(
      (source) => source.outcome.status === 'ok' && !this.#read(source).readable,
    );
    return this.#blind;
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
        ? this.#sources.filter((source) => holderSet.has(source) || this.#contains(source, value))
        : holders;
    const holding = candidates.filter((source) => source !== call && source.outcome.status !== 'no_result');
    const named = (source: ToolCall) => `${source.tool} (call ${source.id})`;
    for (const source of holding) {
      if (source.outcome.status === 'ok' && trajectory.concurrent(source, call)) {
        const when =
          source.turnId !== undefined && source.turnId === call.turnId
            ? 'in the same turn'
            : 'concurrently with it';
        return { source, text: `${named(source)}, but that call was made ${when}, not before` };
      }
    }
    for (const source of holding) {
      if (source.outcome.status === 'ok' && trajectory.happensBefore(call, source)) {
        return { source, text: `${named(source)}, but that call was made after it` };
      }
    }
    for (const source of holding) {
      if (source.outcome.status === 'error' && trajectory.happensBefore(source, call)) {
        return { source, text: `${named(source)}, but that call failed${errorDetail(source)}` };
      }
    }
    return undefined;
  }

  /** What the earlier calls of the source tool returned, or that there were none. */
  #describeEarlier(earlier: readonly ToolCall[], earlierOk: readonly ToolCall[]): string {
    const from = this.#fromTool;
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
    const read = this.#read(source);
    if (!read.readable) return 'nothing readable';
    const path = this.#fromPath;
    if (path === undefined) return render(source.result.captured ? source.result.value : null);
    if (read.fields.length === 0) return `no ${path}`;
    return read.fields.map((field) => `${field.path} ${render(field.value)}`).join(', ');
  }

  /**
   * The sources whose result has a field equal to `value`: one index lookup for a scalar (the
   * usual id or amount), a scan with deep equality for an object or array.
   */
  #holdersOf(value: JsonValue): readonly ToolCall[] {
    const key = scalarKey(value);
    if (key === undefined) {
      return this.#sources.filter((source) => {
        const read = this.#read(source);
        return read.readable && read.fields.some((field) => deepEqualJson(field.value, value));
      });
    }
    if (!this.#holders) {
      const index = new Map<string, ToolCall[]>();
      for (const source of this.#sources) {
        const read = this.#read(source);
        if (!read.readable) continue;
        const keys = new Set(read.fields.map((field) => scalarKey(field.value)));
        for (const held of keys) {
          if (held === undefined) continue;
          const holders = index.get(held);
          if (holders) holders.push(source);
          else index.set(held, [source]);
        }
      }
      this.#holders = index;
    }
    return this.#holders.get(key) ?? [];
  }

  /** `contains` beyond equality: the value inside a string field, or an element of an array field. */
  #contains(source: ToolCall, value: JsonValue): boolean {
    if (this.rule.relation !== 'contains') return false;
    const read = this.#read(source);
    if (!read.readable) return false;
    return read.fields.some(({ value: field }) => {
      if (typeof field === 'string')
        return typeof value === 'string' && value !== '' && field.includes(value);
      return Array.isArray(field) && field.some((item) => deepEqualJson(item, value));
    });
  }

  #read(source: ToolCall): SourceFields {
    let read = this.#fields.get(source);
    if (read) return read;
    const { result } = source;
    if (!result.captured) read = { readable: false, why: 'was not captured' };
    else if (result.parseError !== undefined)
      read = { readable: false, why: `is not valid JSON (${result.parseError})` };
    else {
      const fields =
        this.#fromPath === undefined ? walkJson(result.value) : readPath(result.value, this.#fromPath);
      read = { readable: true, fields };
    }
    this.#fields.set(source, read);
    return read;
  }

  #why(source: ToolCall): string {
    const read = this.#read(source);
    return read.readable ? '' : read.why;
  }

  #ofTool(): string {
    return this.#fromTool === undefined ? '' : ` of ${this.#fromTool}`;
  }
}

function render(value: JsonValue): string {
  return renderValue(JSON.stringify(value));
}
