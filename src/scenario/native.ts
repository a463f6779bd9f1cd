/**
 * The native scenario format: the single source of the scenario types, the validation messages
 * and the JSON Schema editors use (`toolpath schema`). One section per rule family; every section
 * is optional and an omitted one checks nothing. How calls are named and matched:
 * native-matching.ts; outcome hooks and the run gate: native-run.ts.
 */
import { z } from 'zod';
import { argsSchema, toolName } from './assertions.js';
import { agentsSectionSchema, handoffsSectionSchema } from './native-agents.js';
import { answerSectionSchema } from './native-answer.js';
import {
  appliesToSchema,
  argsMatchSchema,
  outcomeSchema,
  path,
  severitySchema,
  toolSet,
} from './native-matching.js';
import { mcpSectionSchema } from './native-mcp.js';
import { gateSchema, outcomeSectionSchema } from './native-run.js';
import { suggestion } from './suggestion.js';

export { appliesToSchema, argsMatchSchema, severitySchema } from './native-matching.js';
export { DEFAULT_OUTCOME_TIMEOUT_MS, gateSchema } from './native-run.js';

const toolsSectionSchema = z.strictObject({
  allowed: z
    .array(toolName)
    .optional()
    .meta({ description: 'Deny by default: any other tool is an unauthorized call (always hard).' }),
  forbidden: z
    .array(z.union([toolName, z.strictObject({ tool: toolName, outcome: outcomeSchema })]))
    .optional()
    .meta({
      description:
        'Tools that must never be called (always hard): a name counts every call, {tool, outcome} only the calls with that outcome.',
    }),
  required: z.array(toolName).optional().meta({ description: 'Tools that must be called at least once.' }),
  counts: z
    .record(
      toolName,
      z.strictObject({
        min: z.int().min(0).optional(),
        max: z.int().min(0).optional(),
        outcome: outcomeSchema,
      }),
    )
    .optional()
    .meta({ description: 'Per-tool minimum and maximum number of calls (of the given outcome).' }),
});

const sequenceStepSchema = z.strictObject({
  tool: toolName,
  match: argsMatchSchema.optional(),
  outcome: outcomeSchema,
});

/** One `order.before` constraint: `before` (all of these tools) or `beforeAny` (one of them), never both. */
const beforeConstraintSchema = z
  .strictObject({
    before: toolSet.optional().meta({
      description: 'Tools that must each have a call causally before every `after` call (all of them).',
    }),
    beforeAny: toolSet.optional().meta({
      description: 'Tools one of which must have a call causally before every `after` call (any one).',
    }),
    after: toolSet,
  })
  .superRefine((constraint, ctx) => {
    if ((constraint.before === undefined) === (constraint.beforeAny === undefined))
      ctx.addIssue({
        code: 'custom',
        message:
          constraint.before === undefined
            ? 'needs `before` (all of these tools) or `beforeAny` (any one of them)'
            : 'give `before` (all of these tools) or `beforeAny` (any one of them), not both',
      });
  })
  .meta({ oneOf: [{ required: ['before'] }, { required: ['beforeAny'] }] });

const orderSectionSchema = z.strictObject({
  before: z.array(beforeConstraintSchema).optional().meta({
    description:
      'Partial order on happens-before: every call of an `after` tool must come causally after a call of each `before` tool (all of them), or of one `beforeAny` tool. Calls asked for in one turn are not ordered.',
  }),
  terminal: z
    .array(toolName)
    .optional()
    .meta({ description: 'Tools nothing may come causally after (always hard).' }),
  together: z
    .array(
      z
        .array(toolName)
        .min(2)
        .max(30)
        .superRefine((group, ctx) => {
          const repeated = group.find((tool, index) => group.indexOf(tool) !== index);
          if (repeated !== undefined)
            ctx.addIssue({
              code: 'custom',
              message: `${repeated} is listed twice; list each tool of a group once`,
            });
        }),
    )
    .optional()
    .meta({
      description:
        'Groups of tools to be asked for in one turn (in parallel): where every tool of a group is called, each call of one of them shares its turn with a call of each of the others. Inconclusive where the trace records no turns.',
    }),
  sequence: z
    .strictObject({
      mode: z.enum(['in_order', 'exact']).default('in_order').meta({
        description:
          'in_order: the steps appear in this causal order, other calls may come between. exact: the calls are exactly these steps, in this order.',
      }),
      steps: z.array(sequenceStepSchema).min(1),
    })
    .optional(),
});

const argsModeSchema = z.enum(['exact', 'ignore', 'subset', 'superset']);
const referenceCallSchema = z.strictObject({
  tool: toolName,
  args: argsSchema.optional(),
  outcome: outcomeSchema,
});

const referenceSectionSchema = z
  .strictObject({
    mode: z.enum(['strict', 'unordered', 'subset', 'superset']).meta({
      description:
        'strict: the same turns in the same order (calls inside a turn in any order). unordered: the same multiset of calls. subset: no call outside the reference. superset: every reference call is there.',
    }),
    argsMode: argsModeSchema.default('exact'),
    argsOverrides: z
      .record(toolName, z.union([argsModeSchema, z.array(path).min(1)]))
      .optional()
      .meta({ description: 'Per tool: a mode, or the list of argument paths that must be equal.' }),
    ignore: z
      .array(path)
      .optional()
      .meta({ description: 'Argument paths (globs with *) left out of every comparison.' }),
    turns: z
      .array(z.array(referenceCallSchema).min(1))
      .optional()
      .meta({ description: 'The reference, turn by turn: each turn is a list of calls made in parallel.' }),
    messages: z
      .array(z.record(z.string(), z.unknown()))
      .optional()
      .meta({ description: 'The reference as an OpenAI-style chat message list with tool_calls.' }),
  })
  .superRefine((reference, ctx) => {
    if ((reference.turns === undefined) === (reference.messages === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give the reference as exactly one of turns or messages' });
    }
  });

const argumentRuleSchema = z.strictObject({
  tool: toolName,
  call: z
    .int()
    .min(1)
    .optional()
    .meta({ description: '1-based: the Nth call of the tool in causal order. Omitted: any call.' }),
  match: argsMatchSchema,
  outcome: outcomeSchema,
  name: z.string().min(1).optional().meta({ description: 'The name this check reports under.' }),
});

const groundingRuleSchema = z.strictObject({
  tool: toolName,
  path,
  from: z.union([z.literal('any'), z.strictObject({ tool: toolName, path: path.optional() })]).meta({
    description:
      "Where the value must come from: a field of a successful earlier result of a tool, or 'any' earlier result.",
  }),
  relation: z.enum(['equals', 'contains']).default('equals'),
  call: z.int().min(1).optional(),
  name: z.string().min(1).optional(),
});

const safetySectionSchema = z.strictObject({
  irreversible: z
    .array(toolName)
    .optional()
    .meta({ description: 'Tools that must not be called again after a successful call (always hard).' }),
  failedResultUse: z.boolean().optional().meta({
    description:
      'A value only found in the result of a failed call must not be used downstream (always hard).',
  }),
  tenant: z
    .strictObject({ path, value: z.union([z.string(), z.number()]) })
    .optional()
    .meta({ description: 'Every call argument at this path must equal this tenant (always hard).' }),
  approval: z
    .array(
      z.strictObject({
        tool: toolName,
        by: toolSet.optional().meta({
          description:
            'Tools whose successful call, causally before, approves the call (a confirmation asked of the user). Omitted: only allow decisions approve.',
        }),
      }),
    )
    .superRefine((gates, ctx) => {
      // Results are named by tool: two gates on one tool would report under one name.
      gates.forEach((gate, index) => {
        if (gates.findIndex((other) => other.tool === gate.tool) !== index)
          ctx.addIssue({
            code: 'custom',
            message: `a second gate on ${gate.tool}; give one gate per tool, with every approving tool in its by list`,
            path: [index, 'tool'],
          });
      });
    })
    .optional()
    .meta({
      description:
        'Approval gates (always hard): each successful call of the tool needs an allow decision (gen_ai.tool.call.decision) or a successful call of a `by` tool causally before it; a call that ran after a deny always fails.',
    }),
});

const efficiencySectionSchema = z.strictObject({
  maxCalls: z.int().min(0).optional(),
  maxCallsPerTurn: z.int().min(1).optional().meta({
    description:
      'At most this many tool calls asked for in one turn (a runaway batch). Inconclusive where the trace records no turns.',
  }),
  repeats: z
    .strictObject({ max: z.int().min(0).default(0), outcome: outcomeSchema })
    .optional()
    .meta({
      description:
        'Identical calls (same tool, canonical JSON arguments) allowed beyond the first, counting calls of the given outcome.',
    }),
  retries: z
    .strictObject({
      transient: z
        .array(z.string())
        .default([])
        .meta({ description: 'Error types (or message substrings) that are worth retrying.' }),
      max: z.int().min(0).default(1),
    })
    .optional(),
  maxDurationMs: z.number().min(0).optional(),
  maxTokens: z.int().min(0).optional(),
});

const milestoneSchema = z.strictObject({
  tool: toolSet,
  match: argsMatchSchema.optional(),
  outcome: z.enum(['ok', 'error', 'any']).default('ok'),
});

const milestonesSectionSchema = z
  .strictObject({
    define: z
      .record(z.string().min(1), milestoneSchema)
      .meta({ description: 'Milestones, each reached by a call that satisfies its predicate.' }),
    requires: z
      .record(z.string().min(1), z.array(z.string().min(1)))
      .optional()
      .meta({
        description: 'Prerequisites: a milestone counts only if these were reached causally before it.',
      }),
    forbidden: z
      .array(z.tuple([z.string().min(1), z.string().min(1)]))
      .optional()
      .meta({ description: 'Transitions [from, to]: `to` must never be reached causally after `from`.' }),
    end: z.array(z.string().min(1)).optional().meta({ description: 'Milestones the trajectory must reach.' }),
    never: z
      .array(z.string().min(1))
      .optional()
      .meta({ description: 'Milestones the trajectory must never reach, whatever came before.' }),
  })
  .superRefine((section, ctx) => {
    // A misspelt milestone would otherwise be "never reached": a confusing failure at run time.
    const defined = Object.keys(section.define);
    const check = (name: string, path: (string | number)[]) => {
      if (Object.hasOwn(section.define, name)) return;
      const known = defined.length === 0 ? 'none' : defined.join(', ');
      const message = `unknown milestone ${JSON.stringify(name)}${suggestion(name, defined)}; defined: ${known}`;
      ctx.addIssue({ code: 'custom', message, path });
    };
    for (const [name, prerequisites] of Object.entries(section.requires ?? {})) {
      check(name, ['requires', name]);
      prerequisites.forEach((prerequisite, index) => {
        check(prerequisite, ['requires', name, index]);
      });
    }
    section.forbidden?.forEach((pair, index) => {
      pair.forEach((name, side) => {
        check(name, ['forbidden', index, side]);
      });
    });
    section.end?.forEach((name, index) => {
      check(name, ['end', index]);
    });
    section.never?.forEach((name, index) => {
      check(name, ['never', index]);
    });
  });

/** The rule sections of one body: of the scenario, and of each agent in `agents`. */
const sectionsSchema = z.strictObject({
  tools: toolsSectionSchema.optional().meta({
    description:
      'Which tools: allowed (deny by default), forbidden, required, per-tool call counts. Unauthorized and forbidden calls are always hard.',
  }),
  order: orderSectionSchema.optional().meta({
    description:
      'Causal order: before/after constraints (a partial order on happens-before), terminal tools, tools asked for together in one turn, an ordered sequence of steps with argument matches.',
  }),
  reference: referenceSectionSchema.optional().meta({
    description:
      'A reference trajectory to compare with: strict, unordered, subset or superset, with argument modes and per-tool overrides.',
  }),
  arguments: z.array(argumentRuleSchema).optional().meta({
    description:
      'Argument checks: a tool (or its Nth call) was called with arguments that match (exact, superset, subset, regex, schema).',
  }),
  grounding: z.array(groundingRuleSchema).optional().meta({
    description: 'Provenance: an argument must equal (or contain) a field of an earlier successful result.',
  }),
  safety: safetySectionSchema.optional().meta({
    description:
      'Safety gates, always hard: irreversible tools repeated after success, use of failed results, cross-tenant values, approval before a gated tool.',
  }),
  efficiency: efficiencySectionSchema.optional().meta({
    description:
      'Budgets, warnings by default: call budget, calls per turn, repeated identical calls, retries by outcome, duration and tokens.',
  }),
  milestones: milestonesSectionSchema.optional().meta({
    description:
      'Semantic milestones reached by calls: prerequisites, forbidden transitions, milestones the trajectory must reach, milestones it must never reach.',
  }),
  outcome: outcomeSectionSchema.optional().meta({
    description:
      'Outcome hooks: external checks of the real final state (a ledger, an outbox), each a command or a function supplied in code, reported under the outcome dimension apart from the trajectory. Hard by default.',
  }),
  mcp: mcpSectionSchema.optional().meta({
    description:
      'MCP rules, always hard: the servers calls may go to (allowed, forbidden), and approval before tools whose MCP annotations say destructiveHint: true.',
  }),
  answer: answerSectionSchema.optional().meta({
    description:
      'Checks of the final answer, warnings by default: texts it contains or not, patterns, values grounded in what the tools returned, values it mentions.',
  }),
});

/** The rule sections of a scenario, with the multi-agent ones (native-agents.ts). */
export const rulesSchema = sectionsSchema.extend({
  // Outcome hooks judge the final state, not an agent's calls: not per agent.
  agents: agentsSectionSchema(sectionsSchema.omit({ outcome: true })).optional(),
  handoffs: handoffsSectionSchema.optional().meta({
    description:
      'Handoffs between agents: allowed and forbidden pairs, required ones, at most how many; a transfer asked for whose target never ran fails (handoffs.not_made).',
  }),
});

/** A whole native scenario document. */
export const nativeScenarioSchema = rulesSchema.extend({
  id: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "A stable id, reported with every result (default: the file's base name)." }),
  version: z
    .union([z.string().min(1), z.number()])
    .transform(String)
    .optional()
    .meta({ description: 'The scenario version, reported with every result.' }),
  description: z.string().optional().meta({ description: 'What the scenario is about, for people.' }),
  scope: z.enum(['trace', 'conversation']).optional().meta({
    description:
      "What one evaluation judges: one trace (default), or a conversation: every trace carrying the same conversation id (gen_ai.conversation.id or a convention's session or thread id), their calls in one cumulative trajectory. A trace without an id is judged on its own.",
  }),
  appliesTo: appliesToSchema.optional().meta({
    description:
      'Which traces the scenario evaluates: root agent name, root span name, root span attributes (all given must hold). Omitted: every trace.',
  }),
  // Lets a JSON scenario name its schema for editors; it checks nothing.
  $schema: z.string().optional().meta({ description: 'The JSON Schema this file follows (for editors).' }),
  gate: gateSchema.optional().meta({
    description:
      'The run gate: the pass rate (and pass^k) a run must reach. Without it, every evaluation must pass.',
  }),
  severity: z.record(z.string().min(1), severitySchema).optional().meta({
    description:
      'Severity per rule id or family (e.g. efficiency: warning, order.before: hard). Safety gates stay hard.',
  }),
});

export type ArgsMatchSpec = z.output<typeof argsMatchSchema>;
export type AppliesTo = z.output<typeof appliesToSchema>;
/** What one evaluation judges: a trace, or every trace of a conversation. */
export type Scope = 'trace' | 'conversation';
export type Rules = z.output<typeof rulesSchema>;
export type ToolsSection = NonNullable<Rules['tools']>;
export type OrderSection = NonNullable<Rules['order']>;
export type ReferenceSection = NonNullable<Rules['reference']>;
export type ArgumentRule = NonNullable<Rules['arguments']>[number];
export type GroundingRule = NonNullable<Rules['grounding']>[number];
export type SafetySection = NonNullable<Rules['safety']>;
export type EfficiencySection = NonNullable<Rules['efficiency']>;
export type MilestonesSection = NonNullable<Rules['milestones']>;
export type { McpSection } from './native-mcp.js';
export type OutcomeSection = NonNullable<Rules['outcome']>;
export type AgentsSection = NonNullable<Rules['agents']>;
export type HandoffsSection = NonNullable<Rules['handoffs']>;
export type OutcomeHook = OutcomeSection[number];
/** A scenario's run gate, whichever format it was written in. */
export type Gate = z.output<typeof gateSchema>;
export type NativeScenarioDocument = z.output<typeof nativeScenarioSchema>;
