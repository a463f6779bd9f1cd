/**
 * How one actual call compares with one reference call: the same tool, arguments per the
 * section's `argsMode` or the tool's override (a mode, or the dot paths that must be equal) less
 * the section's `ignore` paths, and the outcome the reference call asks for, if any. Arguments
 * that were not captured (or not valid JSON), and a call that never reported a result where an
 * outcome is asked, make the pair "unknown", never a match.
 */
import { isJsonObject, type JsonValue } from '../model/json.js';
import { type Captured, isReadable, type ToolCall, unreadable } from '../model/trajectory.js';
import type { JsonObject } from '../scenario/assertions.js';
import { readPath } from '../scenario/json-path.js';
import type { ReferenceSection } from '../scenario/native.js';
import { describeOutcome, outcomeAnswer, requiredCall } from './call-outcome.js';
import { ignorePaths, withoutPaths } from './ignore-paths.js';
import { deepEqualJson, type MatchOutcome, matchArgs, renderValue } from './match-args.js';
import { capList } from './outcome.js';
import type { ReferenceCall } from './reference-messages.js';

/** One pair's verdict; `detail` is a phrase ready for a reason (`amount: expected 40, saw 45`). */
export type PairVerdict =
  | { status: 'match' }
  | { status: 'mismatch'; detail: string }
  | { status: 'unknown'; detail: string };

/** The pair matches. */
export const MATCH: PairVerdict = { status: 'match' };

/**
 * One reference call against one actual call, explained: same tool, arguments per the section's
 * mode (through `matchArgs`). Builds difference text, so the matcher uses {@link classifyPair}
 * for every pair and this only for the few pairs a reason shows.
 */
export function comparePair(
  call: ToolCall,
  reference: ReferenceCall,
  section: ReferenceSection,
): PairVerdict {
  if (call.tool !== reference.tool) return { status: 'mismatch', detail: `is a ${call.tool} call` };
  const args = compareArguments(call, reference, section);
  if (args.status === 'mismatch' || reference.outcome === undefined) return args;
  const answer = outcomeAnswer(reference.outcome, call);
  if (answer === 'no')
    return {
      status: 'mismatch',
      detail: `${describeOutcome(call)}, expected ${requiredCall(reference.outcome)}`,
    };
  if (answer === 'yes') return args;
  const unknown = 'it never reported a result';
  return {
    status: 'unknown',
    detail: args.status === 'unknown' ? `${args.detail}, and ${unknown}` : unknown,
  };
}

/** The arguments part of {@link comparePair}. */
function compareArguments(call: ToolCall, reference: ReferenceCall, section: ReferenceSection): PairVerdict {
  // A reference call without arguments does not constrain them.
  if (reference.args === undefined) return MATCH;
  const mode = modeFor(call.tool, section);
  if (mode === 'ignore') return MATCH;
  const outcome = Array.isArray(mode)
    ? comparePaths(mode, reference.args, call.args, section.ignore)
    : matchArgs(
        section.ignore === undefined
          ? { mode, args: reference.args }
          : { mode, args: reference.args, ignore: section.ignore },
        call.args,
      );
  if (outcome.status === 'match') return MATCH;
  return outcome.status === 'mismatch'
    ? { status: 'mismatch', detail: outcome.detail }
    : { status: 'unknown', detail: outcome.detail };
}

/**
 * The status {@link comparePair} gives, without building any text: a trace of a thousand calls
 * means a great many pairs, and almost all of them differ.
 */
export function classifyPair(
  call: ToolCall,
  reference: ReferenceCall,
  section: ReferenceSection,
): PairVerdict['status'] {
  if (call.tool !== reference.tool) return 'mismatch';
  const args = classifyArguments(call, reference, section);
  if (args === 'mismatch' || reference.outcome === undefined) return args;
  const answer = outcomeAnswer(reference.outcome, call);
  return answer === 'no' ? 'mismatch' : answer === 'unknown' ? 'unknown' : args;
}

/** The arguments part of {@link classifyPair}: how the arguments compare, whatever the outcome. */
export function classifyArguments(
  call: ToolCall,
  reference: ReferenceCall,
  section: ReferenceSection,
): PairVerdict['status'] {
  if (reference.args === undefined) return 'match';
  const mode = modeFor(call.tool, section);
  if (mode === 'ignore') return 'match';
  if (!isReadable(call.args)) return 'unknown';
  if (Array.isArray(mode))
    return comparePaths(mode, reference.args, call.args, section.ignore).status as 'match' | 'mismatch';
  const ignore = ignorePaths(section.ignore);
  const expected = withoutPaths(reference.args, ignore) as JsonObject;
  const actual = withoutPaths(call.args.value, ignore);
  if (mode === 'exact') return deepEqualJson(expected, actual) ? 'match' : 'mismatch';
  if (!isJsonObject(actual)) return 'mismatch';
  // superset: the call has every reference argument; subset: the reference has every call argument.
  const [inner, outer] = mode === 'superset' ? [expected, actual] : [actual, expected];
  const holds = Object.keys(inner).every(
    (key) => Object.hasOwn(outer, key) && deepEqualJson(inner[key] as JsonValue, outer[key] as JsonValue),
  );
  return holds ? 'match' : 'mismatch';
}

/**
 * How many top-level arguments differ: ranks candidates for "closest" without building text.
 * Uncaptured arguments rank last.
 */
export function argumentDistance(
  call: ToolCall,
  reference: ReferenceCall,
  ignore?: readonly string[],
): number {
  if (!call.args.captured || !isJsonObject(call.args.value)) return Number.MAX_SAFE_INTEGER;
  const paths = ignorePaths(ignore);
  const actual = withoutPaths(call.args.value, paths) as JsonObject;
  const expected = withoutPaths(reference.args ?? {}, paths) as JsonObject;
  let distance = 0;
  for (const key of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
    const want = Object.hasOwn(expected, key) ? expected[key] : undefined;
    const saw = Object.hasOwn(actual, key) ? actual[key] : undefined;
    if (want === undefined || saw === undefined || !deepEqualJson(want, saw)) distance++;
  }
  return distance;
}

/**
 * Whether every call of a reference call's tool matches it, as {@link classifyPair} would say
 * pair by pair: it asks no outcome, and leaves the arguments out of the comparison (it gives
 * none, or its tool's mode is `ignore`).
 */
export function argumentsIgnored(reference: ReferenceCall, section: ReferenceSection): boolean {
  if (reference.outcome !== undefined) return false;
  return reference.args === undefined || modeFor(reference.tool, section) === 'ignore';
}

/** The argument mode for a tool: its override, else the section's. */
function modeFor(tool: string, section: ReferenceSection): ReferenceSection['argsMode'] | string[] {
  const overrides = section.argsOverrides;
  // Own property only: a tool named `constructor` must not pick up Object.prototype's.
  const override = overrides !== undefined && Object.hasOwn(overrides, tool) ? overrides[tool] : undefined;
  return override ?? section.argsMode;
}

/**
 * Path overrides: the values at these paths (`*` = any one segment) must be equal; the rest is
 * ignored, and so is what the section's `ignore` paths select.
 */
function comparePaths(
  paths: readonly string[],
  reference: JsonObject,
  args: Captured<JsonValue>,
  ignored: readonly string[] | undefined,
): MatchOutcome {
  if (!args.captured) return { status: 'undecided', detail: 'arguments were not captured' };
  if (args.parseError !== undefined) {
    return { status: 'undecided', detail: `arguments are ${unreadable(args)}` };
  }
  const ignore = ignorePaths(ignored);
  const expected = withoutPaths(reference, ignore);
  const actual = withoutPaths(args.value, ignore);
  // Concrete paths of every listed path, once each (two globs may reach the same value).
  const want = new Map<string, JsonValue>();
  const saw = new Map<string, JsonValue>();
  for (const path of paths) {
    for (const hit of readPath(expected, path)) want.set(hit.path, hit.value);
    for (const hit of readPath(actual, path)) saw.set(hit.path, hit.value);
  }
  const differences: string[] = [];
  for (const [at, value] of want) {
    const seen = saw.get(at);
    if (seen === undefined) differences.push(`missing ${at} (expected ${render(value)})`);
    else if (!deepEqualJson(value, seen))
      differences.push(`${at}: expected ${render(value)}, saw ${render(seen)}`);
  }
  for (const [at, value] of saw) if (!want.has(at)) differences.push(`extra ${at} (saw ${render(value)})`);
  return differences.length === 0
    ? { status: 'match' }
    : { status: 'mismatch', detail: capList(differences) };
}

function render(value: JsonValue): string {
  return renderValue(JSON.stringify(value));
}
