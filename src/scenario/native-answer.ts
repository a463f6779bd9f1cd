/**
 * The native `answer` section: checks of what the agent told the user (its final answer), not of
 * what it did. Keyword and pattern checks, and grounding of the values the answer states in what
 * the tools returned. Judged by src/evaluate/answer.ts.
 */
import { z } from 'zod';
import { type CompiledRegex, compileRegex, toolName } from './assertions.js';
import { path, severitySchema } from './native-matching.js';

/** The kinds of value `answer.grounded` looks for in an answer (docs/scenarios.md says what each is). */
export const ANSWER_VALUE_KINDS = ['id', 'number', 'amount', 'email', 'url', 'date'] as const;
/** One of {@link ANSWER_VALUE_KINDS}. */
export type AnswerValueKind = (typeof ANSWER_VALUE_KINDS)[number];

const textCheck = z
  .union([z.string().min(1), z.strictObject({ text: z.string().min(1), name: z.string().min(1).optional() })])
  .transform((entry) =>
    typeof entry === 'string' ? { text: entry, name: undefined } : { name: undefined, ...entry },
  );

const patternCheck = z
  .strictObject({ pattern: z.string(), flags: z.string().optional(), name: z.string().min(1).optional() })
  .transform((match, ctx): typeof match & { regex: CompiledRegex } => {
    const compiled = compileRegex(match.pattern, match.flags);
    if (!compiled.ok) {
      ctx.addIssue({ code: 'custom', message: compiled.message, path: [compiled.field] });
      return z.NEVER;
    }
    return { ...match, regex: compiled.regex };
  });

/** Where a stated value may come from. */
export const ANSWER_SOURCES = ['results', 'input', 'arguments'] as const;
/** The kinds `grounded: true` checks: bare numbers (counts, days) are left out unless asked for. */
export const DEFAULT_GROUNDED_KINDS = ['id', 'amount', 'email', 'url', 'date'] as const;

const groundedSchema = z
  .union([
    z.literal(true),
    z.strictObject({
      kinds: z.array(z.enum(ANSWER_VALUE_KINDS)).min(1).optional(),
      from: z.array(z.enum(ANSWER_SOURCES)).min(1).optional(),
    }),
  ])
  .transform((grounded) => ({
    kinds: grounded === true || grounded.kinds === undefined ? [...DEFAULT_GROUNDED_KINDS] : grounded.kinds,
    from: grounded === true || grounded.from === undefined ? (['results'] as const) : grounded.from,
  }))
  .meta({
    description:
      "Every value of these kinds (default id, amount, email, url, date) the answer states appears in an earlier tool result (or the input, or a call's arguments, where `from` allows).",
  });

export const answerSectionSchema = z.strictObject({
  each: z.boolean().optional().meta({
    description:
      'Judge the final answer of every run of the outermost agent (each user turn of a conversation), not only the last one.',
  }),
  severity: severitySchema.optional().meta({
    description: 'The answer checks are warnings by default; hard makes a failed one fail the verdict.',
  }),
  contains: z
    .array(textCheck)
    .optional()
    .meta({ description: 'Texts the answer must contain (case-insensitive).' }),
  notContains: z
    .array(textCheck)
    .optional()
    .meta({ description: 'Texts the answer must not contain (case-insensitive).' }),
  matches: z
    .union([patternCheck, z.array(patternCheck).min(1)])
    .transform((value) => (Array.isArray(value) ? value : [value]))
    .optional()
    .meta({ description: 'RE2 patterns (JS syntax, flags i, m, s) the answer must match.' }),
  grounded: groundedSchema.optional(),
  mentions: z
    .array(z.strictObject({ tool: toolName, path }))
    .optional()
    .meta({ description: 'The answer states a value a successful call of the tool returned at this path.' }),
});

export type AnswerSection = z.output<typeof answerSectionSchema>;
