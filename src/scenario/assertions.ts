/**
 * The trajectory-assertion JSON (`tool_call_args`, `expected_tool_sequence`, `allowed_tools`,
 * `expected_tool_calls`), accepted verbatim. This schema is the single source of the types:
 * every type below is inferred from it. Regex patterns are compiled here, at load time, on
 * RE2 (re2js), so a scenario that would need a backtracking engine never loads.
 */
import { RE2JS, RE2JSException } from 're2js';
import { z } from 'zod';
import type { JsonValue } from '../model/json.js';

/** A JSON object as arguments are written in a scenario. */
export type JsonObject = { [key: string]: JsonValue };

/** Regex flags that change matching, and the RE2 flag each maps to. */
const REGEX_FLAGS: Readonly<Record<string, number>> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
};
/**
 * JS flags that have no effect on a yes/no test against one string: `g` (we test once, from
 * the start), `u` (RE2 always reads Unicode), `d` (match indices are never read).
 */
const IGNORED_REGEX_FLAGS = new Set(['g', 'u', 'd']);
const UNSUPPORTED_REGEX_FLAGS: Readonly<Record<string, string>> = {
  y: 'flag y (sticky) is not supported; anchor the pattern with ^ instead',
  v: 'flag v (Unicode sets) is not supported; write the pattern without set operations',
};

/**
 * Where a JSON value stops being JSON (a YAML `.inf`, a date), as a path inside it: the first
 * such place in document order. An explicit stack: arguments in a typed-event file may nest
 * deeper than a call stack goes.
 */
function findNonJson(
  root: unknown,
  rootPath: (string | number)[],
): { path: (string | number)[]; why: string } | undefined {
  const stack: Place[] = [{ value: root, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const place = stack.pop() as Place;
    const { value } = place;
    if (value === null || typeof value === 'string' || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (Number.isFinite(value)) continue;
      return { path: [...rootPath, ...pathOf(place)], why: `${value} is not a JSON number` };
    }
    // Children pushed last first, so they are looked at in order.
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--)
        stack.push({ value: value[index], key: index, parent: place });
      continue;
    }
    const isPlainObject =
      typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value));
    if (!isPlainObject)
      return { path: [...rootPath, ...pathOf(place)], why: `a ${typeof value} is not a JSON value` };
    // Own keys only: a `__proto__` key from JSON.parse is data like any other.
    const keys = Object.keys(value as object);
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index] as string;
      stack.push({ value: (value as Record<string, unknown>)[key], key, parent: place });
    }
  }
  return undefined;
}

/** A value {@link findNonJson} looks at, and how it was reached. */
interface Place {
  value: unknown;
  key: string | number | undefined;
  parent: Place | undefined;
}

function pathOf(place: Place): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Place | undefined = place; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * A JSON object (arguments, results). Not `z.record`: zod copies records key by key and turns a
 * `__proto__` key into the prototype, when it is an ordinary key here. This keeps the object as is.
 */
export function jsonObjectSchema(expected: string, description: string) {
  return z
    .custom<JsonObject>()
    .superRefine((value, ctx) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', message: `expected ${expected}; got ${describeValue(value)}` });
        return;
      }
      const found = findNonJson(value, []);
      if (found)
        ctx.addIssue({ code: 'custom', message: `expected a JSON value; ${found.why}`, path: found.path });
    })
    .meta({ type: 'object', description });
}

/** The expected arguments of a match. */
export const argsSchema = jsonObjectSchema(
  'an object of arguments',
  'The expected arguments, a JSON object.',
);

/** A pattern compiled on RE2: matching is linear in the input, whatever the pattern. */
export interface CompiledRegex {
  /** The pattern as written, for messages. */
  source: string;
  /** The flags as written (possibly empty). */
  flags: string;
  /** The compiled RE2 program. */
  program: RE2JS;
}

/** The result of compiling a user pattern: the program, or what is wrong and where. */
export type RegexCompilation =
  | { ok: true; regex: CompiledRegex }
  | { ok: false; field: 'pattern' | 'flags'; message: string };

/**
 * Compiles a JavaScript-style pattern and flags on RE2. Flags i, m, s map to RE2; g, u, d are
 * accepted and ignored (they cannot change a yes/no test); y and v are rejected. Constructs RE2
 * cannot run in linear time (backreferences, lookaheads) are rejected with a message naming them.
 */
export function compileRegex(pattern: string, flags = ''): RegexCompilation {
  let programFlags = RE2JS.LOOKBEHINDS; // captureless lookbehinds run in linear time in re2js
  const seen = new Set<string>();
  for (const flag of flags) {
    const got = `got ${JSON.stringify(flags)}`;
    if (seen.has(flag)) return { ok: false, field: 'flags', message: `flag ${flag} is given twice; ${got}` };
    seen.add(flag);
    const mapped = REGEX_FLAGS[flag];
    if (mapped !== undefined) programFlags |= mapped;
    else if (IGNORED_REGEX_FLAGS.has(flag)) continue;
    else {
      const why = UNSUPPORTED_REGEX_FLAGS[flag] ?? `${JSON.stringify(flag)} is not a regex flag`;
      return { ok: false, field: 'flags', message: `expected flags among i, m, s, g, u, d; ${got}: ${why}` };
    }
  }
  const unsupported = findUnsupportedConstruct(pattern);
  if (unsupported) {
    return {
      ok: false,
      field: 'pattern',
      message:
        `expected a pattern RE2 can run in linear time (no backreferences, no lookaheads); ` +
        `got ${JSON.stringify(pattern)}, which uses ${unsupported}`,
    };
  }
  try {
    // translateRegExp rewrites JS-only syntax (\u0041, \cA, [^], named groups) into RE2 syntax.
    const program = RE2JS.compile(RE2JS.translateRegExp(pattern), programFlags);
    return { ok: true, regex: { source: pattern, flags, program } };
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    const detail = error.message.replace(/^error parsing regexp: /, '');
    return {
      ok: false,
      field: 'pattern',
      message: `expected a regular expression RE2 can run; got ${JSON.stringify(pattern)}: ${detail}`,
    };
  }
}

/**
 * Finds JS regex constructs RE2 has no linear-time way to run. Checked on the pattern as written,
 * because translateRegExp would turn some of them (`\k<name>`) into harmless-looking literals.
 */
function findUnsupportedConstruct(pattern: string): string | undefined {
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === '\\') {
      const next = pattern[index + 1] ?? '';
      if (!inClass && next >= '1' && next <= '9') {
        const digits = /^[0-9]+/.exec(pattern.slice(index + 1))?.[0] ?? next;
        return `a backreference (\\${digits})`;
      }
      if (!inClass && next === 'k' && pattern[index + 2] === '<') return 'a named backreference (\\k<…>)';
      index++; // the escaped character is never syntax
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === '(' && pattern[index + 1] === '?') {
      const kind = pattern[index + 2];
      if (kind === '=') return 'a lookahead ((?=…))';
      if (kind === '!') return 'a negative lookahead ((?!…))';
    }
  }
  return undefined;
}

export const toolName = z.string().min(1);

/**
 * A share in [0, 1]: a pass rate a run must reach. A percentage (`90`) is refused with the rate
 * it most likely stands for, since 90 would otherwise be a gate no run can meet.
 */
export const passRateSchema = z
  .number()
  .check((ctx) => {
    const rate = ctx.value;
    if (rate >= 0 && rate <= 1) return;
    const meant = rate > 1 && rate <= 100 ? ` (did you mean ${rate / 100}?)` : '';
    ctx.issues.push({
      code: 'custom',
      input: rate,
      message: `expected a rate between 0 and 1; got ${rate}${meant}`,
    });
  })
  .meta({ minimum: 0, maximum: 1 });

const exactMatchSchema = z.strictObject({ mode: z.literal('exact'), args: argsSchema });
const subsetMatchSchema = z.strictObject({ mode: z.literal('subset'), args: argsSchema });
const regexMatchSchema = z
  .strictObject({ mode: z.literal('regex'), pattern: z.string(), flags: z.string().optional() })
  .transform((match, ctx) => {
    const compiled = compileRegex(match.pattern, match.flags);
    if (!compiled.ok) {
      ctx.addIssue({ code: 'custom', message: compiled.message, path: [compiled.field] });
      return z.NEVER;
    }
    return { ...match, regex: compiled.regex };
  });

/** One `answer_matches` entry: a pattern (and flags) the final answer must match. */
const answerPatternSchema = z
  .strictObject({ pattern: z.string(), flags: z.string().optional() })
  .transform((match, ctx) => {
    const compiled = compileRegex(match.pattern, match.flags);
    if (!compiled.ok) {
      ctx.addIssue({ code: 'custom', message: compiled.message, path: [compiled.field] });
      return z.NEVER;
    }
    return { ...match, regex: compiled.regex };
  });

/** How a call's arguments must look: `exact`, `subset` or `regex` (the trajectory-assertion JSON's `match`). */
export const argsMatchSchema = z.discriminatedUnion('mode', [
  exactMatchSchema,
  subsetMatchSchema,
  regexMatchSchema,
]);

/** One `tool_call_args` entry: a tool must have been called (its Nth call, with `call_index`) with matching arguments. */
export const toolCallArgsSchema = z.strictObject({
  tool: toolName,
  /** 1-based index of the call of `tool` in causal order. */
  call_index: z.int().min(1).optional(),
  match: argsMatchSchema,
});

/** One step of `expected_tool_sequence`, optionally with the arguments that call must have. */
export const sequenceStepSchema = z.strictObject({ tool: toolName, match: argsMatchSchema.optional() });

/**
 * One `expected_tool_calls` entry. The seed gives no shape for this presence-only check, so the
 * shapes seen in the wild are all accepted: a tool name, `{tool}` or `{name}`.
 */
const expectedToolCallSchema = z.union([
  toolName,
  z
    .strictObject({ tool: toolName.optional(), name: toolName.optional() })
    .check((ctx) => {
      const { tool, name } = ctx.value;
      if ((tool === undefined) === (name === undefined)) {
        const got = tool === undefined ? 'got neither' : 'got both';
        ctx.issues.push({
          code: 'custom',
          input: ctx.value,
          message: `expected a tool name in exactly one of tool or name; ${got}`,
        });
      }
    })
    .transform((entry) => entry.tool ?? entry.name ?? ''),
]);

/** The four assertion families of the trajectory-assertion JSON. Each is optional; an omitted one checks nothing. */
export const assertionSetSchema = z.strictObject({
  tool_call_args: z
    .array(toolCallArgsSchema)
    .meta({
      description: 'Each entry: the tool (or its call_index-th call) was called with matching arguments.',
    })
    .optional(),
  expected_tool_sequence: z
    .array(sequenceStepSchema)
    .meta({ description: 'Steps that must appear in this causal order; other calls may come between.' })
    .optional(),
  allowed_tools: z
    .array(toolName)
    .meta({
      description: 'Deny by default: any tool not listed fails no_unexpected_tool. Empty allows none.',
    })
    .optional(),
  expected_tool_calls: z
    .array(expectedToolCallSchema)
    .meta({ description: 'Presence only: each tool was called at least once. Names, {tool} or {name}.' })
    .optional(),
  answer_contains: z
    .array(z.string().min(1))
    .meta({ description: 'Keyword assertions: the final answer contains each text (case-insensitive).' })
    .optional(),
  answer_matches: z
    .array(answerPatternSchema)
    .meta({ description: 'The final answer matches each pattern (RE2, flags i, m, s).' })
    .optional(),
});

/** A whole scenario document in the trajectory-assertion JSON: the assertions plus who the scenario is. */
export const scenarioDocumentSchema = assertionSetSchema.extend({
  min_pass_rate: passRateSchema.optional().meta({
    description:
      'The run gate: the share of evaluations that must pass (0 to 1); below it the run fails. Without it, every evaluation must pass.',
  }),
  id: z.string().min(1).optional(),
  version: z
    .union([z.string().min(1), z.number()])
    .transform(String)
    .optional(),
  description: z.string().optional(),
});

/** A parsed `match`, with its regex compiled when the mode is `regex`. */
export type ArgsMatch = z.output<typeof argsMatchSchema>;
/** A parsed `tool_call_args` entry. */
export type ToolCallArgsAssertion = z.output<typeof toolCallArgsSchema>;
/** A parsed `expected_tool_sequence` step. */
export type SequenceStep = z.output<typeof sequenceStepSchema>;
/** The parsed assertion set: what the evaluator runs. */
export type AssertionSet = z.output<typeof assertionSetSchema>;
/** A parsed scenario document. */
export type ScenarioDocument = z.output<typeof scenarioDocumentSchema>;
/** A scenario document as written (before parsing), for building scenarios in code. */
export type ScenarioDocumentInput = z.input<typeof scenarioDocumentSchema>;

/** Short rendering of a value for messages: primitives as JSON, containers by kind. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (typeof value === 'object' && value !== null) {
    return Object.keys(value).length === 0 ? 'an empty object' : 'an object';
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const json = JSON.stringify(value);
  return json.length > 80 ? `${json.slice(0, 79)}…"` : json;
}
