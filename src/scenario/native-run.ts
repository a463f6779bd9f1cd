/**
 * What a native scenario says beyond the calls themselves: outcome hooks (checks run on the
 * agent's end state, outside the trajectory) and the run gate (pass rates over many evaluations).
 */
import { z } from 'zod';
import { passRateSchema } from './assertions.js';

/** Default time an outcome hook may take before it is stopped and reported inconclusive. */
export const DEFAULT_OUTCOME_TIMEOUT_MS = 10_000;

/** An hour: a check slower than that is a mistake, and timers cannot wait much beyond 24 days anyway. */
const MAX_OUTCOME_TIMEOUT_MS = 3_600_000;

const outcomeHookSchema = z.strictObject({
  name: z.string().min(1).meta({
    description:
      "The hook's name: it reports as outcome:<name>, and names the function that checks it when the check is supplied in code.",
  }),
  command: z.string().min(1).optional().meta({
    description:
      "A shell command run by toolpath eval, in the scenario file's directory, with the report (JSON, without outcome results) on stdin and TOOLPATH_TRACE_ID, TOOLPATH_SCENARIO_ID, TOOLPATH_OUTCOME in its environment. Exit 0: pass; exit 1: fail, with the first line of output as the reason; anything else: inconclusive. Omitted: the check is supplied in code, else the hook is inconclusive.",
  }),
  timeoutMs: z.int().min(1).max(MAX_OUTCOME_TIMEOUT_MS).default(DEFAULT_OUTCOME_TIMEOUT_MS).meta({
    description:
      'How long the check may run, in ms, before it is stopped and reported inconclusive (default 10000, at most an hour).',
  }),
});

export const outcomeSectionSchema = z.array(outcomeHookSchema).superRefine((hooks, ctx) => {
  // Results are keyed by name: two hooks with one name would silently share a result.
  const seen = new Set<string>();
  hooks.forEach((hook, index) => {
    if (seen.has(hook.name)) {
      ctx.addIssue({
        code: 'custom',
        message: `duplicate outcome hook name ${JSON.stringify(hook.name)}`,
        path: [index, 'name'],
      });
    }
    seen.add(hook.name);
  });
});

/**
 * The run gate: what a run of evaluations must reach for this scenario, instead of every
 * evaluation passing. Judged over a whole `toolpath eval` (or dataset), never on one trace.
 */
export const gateSchema = z
  .strictObject({
    minPassRate: passRateSchema.optional().meta({
      description:
        "The share of evaluations (traces, or dataset rows' trials) that must pass, 0 to 1; inconclusive counts as not passed. The trajectory-assertion JSON's min_pass_rate.",
    }),
    passK: z
      .strictObject({
        k: z.int().min(1).meta({ description: 'How many trials of a task must all pass.' }),
        min: passRateSchema.meta({ description: 'The pass^k the run must reach, 0 to 1.' }),
      })
      .optional()
      .meta({
        description:
          'pass^k as tau-bench computes it: the mean over tasks of C(c, k) / C(n, k) (n trials of a task, c passed). Tasks with fewer than k trials are left out and counted. Trials are grouped by dataset row, or by trialsBy.',
      }),
    trialsBy: z
      .strictObject({
        attribute: z.string().min(1).meta({
          description:
            'A root-span attribute (else a resource attribute) whose value names the task, e.g. task.id.',
        }),
      })
      .optional()
      .meta({ description: 'Groups traces into trials of one task for passK, by an attribute.' }),
  })
  .superRefine((gate, ctx) => {
    if (gate.minPassRate === undefined && gate.passK === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'a gate needs minPassRate or passK (or both); without a gate every evaluation must pass',
      });
    }
    if (gate.trialsBy !== undefined && gate.passK === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'trialsBy groups trials for passK; give passK: {k, min} too, or remove trialsBy',
        path: ['trialsBy'],
      });
    }
  });
