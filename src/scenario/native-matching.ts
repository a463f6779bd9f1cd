/**
 * The native format's vocabulary for naming calls: tool sets, argument matches (exact,
 * superset, subset, regex, JSON Schema; acceptable values), outcomes and which traces a
 * scenario applies to. The rule sections (native.ts) are built from these.
 *
 * Argument modes are read from the actual call's side everywhere: `superset` = the call has at
 * least these arguments (the trajectory-assertion JSON's `subset`), `subset` = the call has nothing beyond these, as
 * LangChain agentevals defines them for reference trajectories.
 */
import { z } from 'zod';
import { argsSchema, type CompiledRegex, compileRegex, toolName } from './assertions.js';
import { compileArgsSchema } from './json-schema.js';
import { acceptableValuesFit } from './match-checks.js';

/** A tool, or a set of tools any one of which satisfies the constraint. */
export const toolSet = z
  .union([toolName, z.array(toolName).min(1)])
  .transform((value) => (Array.isArray(value) ? value : [value]))
  .meta({ description: 'A tool name, or a list of tool names (any one of them).' });

/** Severities a scenario can give a rule. */
export const severitySchema = z.enum(['hard', 'warning']);

/** A dot path into arguments or results (`customer.id`, `items.0.sku`); `*` matches one segment. */
export const path = z
  .string()
  .min(1)
  .meta({ description: 'A dot path, e.g. customer.id or items.0.sku; * matches one segment.' });

/**
 * Which outcome a call must have to count or match: `ok` (it succeeded), `error` (it failed),
 * `any` (every call, the default). A call that never reported a result makes an `ok` or `error`
 * rule inconclusive where it could change the verdict.
 */
export const outcomeSchema = z.enum(['ok', 'error', 'any']).optional().meta({
  description:
    'ok: only calls that succeeded count. error: only calls that failed. any (default): every call, whatever its outcome (also calls denied before they ran).',
});

/** Acceptable values per argument path: BFCL's possible answers, `""` marking an optional argument. */
const acceptableValuesSchema = z.record(path, z.array(z.json()).min(1)).meta({
  description:
    'Per argument path (no *), the values it may have; "" in the list means the argument may also be left out. Compared like the other arguments (numeric, normalize).',
});

/** How a call's arguments must look. */
export const argsMatchSchema = z
  .strictObject({
    mode: z.enum(['exact', 'superset', 'subset', 'regex', 'schema']).default('superset').meta({
      description:
        'exact: deep equal. superset (default): the call has at least these arguments. subset: the call has nothing beyond these. regex: pattern tested on the JSON of the arguments. schema: a JSON Schema the arguments must satisfy.',
    }),
    args: argsSchema.optional(),
    pattern: z.string().optional(),
    flags: z.string().optional(),
    schema: argsSchema
      .optional()
      .meta({ type: 'object', description: 'A JSON Schema (draft 2020-12) for the arguments.' }),
    ignore: z
      .array(path)
      .optional()
      .meta({ description: 'Paths (globs with *) left out of the comparison.' }),
    defaults: argsSchema
      .optional()
      .meta({ description: 'Declared defaults: an argument equal to its default counts as absent.' }),
    numeric: z
      .boolean()
      .optional()
      .meta({ description: 'Compare numbers and numeric strings by value (1, 1.0 and "1" are equal).' }),
    oneOf: acceptableValuesSchema.optional(),
    normalize: z.boolean().optional().meta({
      description:
        'Compare strings normalized as BFCL does: spaces and , . / - _ * ^ removed, lower-cased, \' read as ".',
    }),
  })
  .transform((match, ctx): typeof match & { regex?: CompiledRegex } => {
    const needs = match.mode === 'regex' ? 'pattern' : match.mode === 'schema' ? 'schema' : 'args';
    if (match.oneOf !== undefined && !acceptableValuesFit(match, ctx)) return z.NEVER;
    if (match[needs] === undefined && !(needs === 'args' && match.oneOf !== undefined)) {
      ctx.addIssue({ code: 'custom', message: `mode ${match.mode} needs ${needs}`, path: [needs] });
      return z.NEVER;
    }
    if (match.mode === 'schema' && match.schema !== undefined) {
      // Checked and compiled once, at load time: an unusable schema never loads, evaluation never compiles.
      const compiled = compileArgsSchema(match.schema);
      if (compiled.ok) return match;
      for (const problem of compiled.problems) {
        ctx.addIssue({ code: 'custom', message: problem.message, path: ['schema', ...problem.path] });
      }
      return z.NEVER;
    }
    if (match.mode !== 'regex' || match.pattern === undefined) return match;
    // Compiled once, at load time, on RE2: a pattern that needs backtracking never loads.
    const compiled = compileRegex(match.pattern, match.flags);
    if (!compiled.ok) {
      ctx.addIssue({ code: 'custom', message: compiled.message, path: [compiled.field] });
      return z.NEVER;
    }
    return { ...match, regex: compiled.regex };
  });

/** Which traces a scenario applies to; all given conditions must hold. None given: every trace. */
export const appliesToSchema = z.strictObject({
  agent: toolSet
    .optional()
    .meta({ description: 'The root agent name (gen_ai.agent.name or the convention equivalent).' }),
  rootSpan: toolSet.optional().meta({ description: "The root span's name." }),
  attributes: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .optional()
    .meta({ description: 'Root span attributes that must have these values.' }),
});
