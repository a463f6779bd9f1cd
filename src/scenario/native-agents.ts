/**
 * The multi-agent sections of the native scenario: `agents` (a scenario body per agent, judged on
 * that agent's own calls) and `handoffs` (which agent may pass control to which, and that a
 * transfer asked for was made). Part of the schema in native.ts.
 */
import { z } from 'zod';

/** The name that stands for every agent that ran (in `agents`) or any agent (in a handoff pair). */
export const ANY_AGENT = '*';

const agentName = z
  .string()
  .min(1)
  .meta({ description: `An agent's name as read, or "${ANY_AGENT}" for any.` });

/**
 * `agents`: per agent name, the rule sections judged on that agent's runs' own calls and turns
 * (a sub-agent's calls are its own; the call that started it is its caller's). Built from the
 * sections' object, which native.ts owns.
 */
export function agentsSectionSchema<Shape extends z.ZodRawShape>(
  sections: z.ZodObject<Shape, z.core.$strict>,
) {
  const body = sections.extend({
    required: z.boolean().optional().meta({
      description:
        'The agent must have run: without a run or call of it, a failing finding (otherwise its rules are only inconclusive).',
    }),
  });
  const someRule = body.refine((rules) => Object.values(rules).some((rule) => rule !== undefined), {
    message: 'no rules for this agent: give at least one rule section, or required: true',
  });
  return z.record(z.string().min(1), someRule).meta({
    description: `Rules per agent (gen_ai.agent.name and each convention's own), judged on the calls and turns of that agent's runs only; "${ANY_AGENT}" applies to every agent that ran. An agent that never ran makes its rules inconclusive, or fails with required: true.`,
  });
}

const pairSchema = z.strictObject({ from: agentName, to: agentName });

const pairs = (description: string) => z.array(pairSchema).optional().meta({ description });

export const handoffsSectionSchema = z.strictObject({
  allowed: pairs(
    'Deny by default: a handoff (a transfer of control) from one agent to another matching no pair fails (always hard).',
  ),
  forbidden: pairs('Handoffs that must never be asked for (always hard).'),
  required: pairs('Handoffs that must be made: asked for, and the target agent ran after.'),
  max: z.int().min(0).optional().meta({ description: 'At most this many handoffs asked for.' }),
});
