/**
 * The `Scenario` object of seed 000 (`allowedTools`, `requiredTools`, `orderRules`, `maxCalls`,
 * `terminalTools`, `expected`) read verbatim into the native rules, so one evaluator serves
 * every format. What each key becomes, and why:
 *
 * - `allowedTools` -> `tools.allowed`, `requiredTools` -> `tools.required`,
 *   `orderRules: [{before, after}]` -> `order.before`, `terminalTools` -> `order.terminal`.
 * - `maxCalls` -> `efficiency.maxCalls` plus `efficiency.repeats: {max: 0}`: the seed's
 *   efficiency check is the budget *and* repeated identical calls, both warnings. The scenario
 *   carries `severity: {efficiency: 'warning'}` so they stay warnings whatever the defaults.
 * - `expected.orderId` -> `safety.tenant {path: orderId}`: the seed fails every call whose
 *   `orderId` argument differs from it, and leaves calls without one alone - which is exactly
 *   the tenant gate (hard, as the seed's grounding failures are).
 * - `expected.customerEmail`: the seed checks it on the first `send_confirmation` call, only if
 *   there is one. Native argument rules say "there is a call with these arguments", so this maps
 *   cleanly (`arguments`: call #1 of `send_confirmation` has this `email`) only when
 *   `requiredTools` includes `send_confirmation` (a missing confirmation fails anyway). When
 *   `allowedTools` leaves `send_confirmation` out, the check can never decide anything and is
 *   dropped. Otherwise the document is rejected with a message saying how to fix it.
 *
 * The seed's evaluator also hard-codes refund grounding (amount from `get_order`, refund id from
 * `issue_refund`); that is code, not part of the `Scenario` object, and is not read here.
 */
import { z } from 'zod';
import type { Severity } from '../model/report.js';
import { toolName } from './assertions.js';
import type { Rules } from './native.js';

/** The top-level keys that mark a seed-000 document (camelCase, unlike seed 001). */
export const SEED_000_KEYS = [
  'allowedTools',
  'requiredTools',
  'orderRules',
  'maxCalls',
  'terminalTools',
  'expected',
];

/** The tool and argument seed 000 checks `expected.customerEmail` on. */
export const CONFIRMATION_TOOL = 'send_confirmation';
const EMAIL_ARGUMENT = 'email';

/** The name the `expected.customerEmail` check reports under. */
export const CUSTOMER_EMAIL_CHECK = 'expected.customerEmail';

const toolList = z.array(toolName);

/** A seed-000 `Scenario` object, plus who the scenario is (`id`, `version`, `description`). */
export const seed000DocumentSchema = z
  .strictObject({
    allowedTools: toolList
      .optional()
      .meta({ description: 'Deny by default: any other tool fails (tools.allowed).' }),
    requiredTools: toolList.optional().meta({ description: 'Each must be called (tools.required).' }),
    orderRules: z
      .array(z.strictObject({ before: toolName, after: toolName }))
      .optional()
      .meta({ description: '`before` must come causally before `after` (order.before).' }),
    maxCalls: z
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Call budget, a warning (efficiency.maxCalls).' }),
    terminalTools: toolList
      .optional()
      .meta({ description: 'Nothing may come after these (order.terminal).' }),
    expected: z
      .strictObject({
        orderId: z.union([z.string().min(1), z.number()]).optional(),
        customerEmail: z.string().min(1).optional(),
      })
      .optional(),
    id: z.string().min(1).optional(),
    version: z
      .union([z.string().min(1), z.number()])
      .transform(String)
      .optional(),
    description: z.string().optional(),
  })
  .superRefine((document, ctx) => {
    // A tool the allowlist leaves out can never satisfy a rule that names it: a typo, most likely.
    const allowed = document.allowedTools;
    if (allowed === undefined) return;
    const known = new Set(allowed);
    const listed = allowed.length === 0 ? 'allowedTools is empty' : `allowedTools: ${allowed.join(', ')}`;
    const check = (tool: string, path: (string | number)[]) => {
      if (!known.has(tool)) {
        ctx.addIssue({ code: 'custom', path, message: `unknown tool ${JSON.stringify(tool)}; ${listed}` });
      }
    };
    for (const [index, tool] of (document.requiredTools ?? []).entries())
      check(tool, ['requiredTools', index]);
    for (const [index, rule] of (document.orderRules ?? []).entries()) {
      check(rule.before, ['orderRules', index, 'before']);
      check(rule.after, ['orderRules', index, 'after']);
    }
    for (const [index, tool] of (document.terminalTools ?? []).entries())
      check(tool, ['terminalTools', index]);
  });

/** A parsed seed-000 document. */
export type Seed000Document = z.output<typeof seed000DocumentSchema>;

/** What a seed-000 document becomes: native rules and severities, or what stops it. */
export interface Seed000Translation {
  rules: Rules;
  severity: Record<string, Severity>;
  /** One line per thing that has no native equivalent, with its path; empty when all is well. */
  problems: string[];
}

/** Translates a parsed seed-000 document into native rules (see the module comment for the mapping). */
export function seed000Rules(document: Seed000Document): Seed000Translation {
  const rules: Rules = {};
  const severity: Record<string, Severity> = {};
  const problems: string[] = [];
  const { allowedTools, requiredTools, orderRules, maxCalls, terminalTools, expected } = document;

  if (allowedTools !== undefined || (requiredTools !== undefined && requiredTools.length > 0)) {
    rules.tools = {
      ...(allowedTools !== undefined && { allowed: allowedTools }),
      ...(requiredTools !== undefined && requiredTools.length > 0 && { required: requiredTools }),
    };
  }
  const before = (orderRules ?? []).map((rule) => ({ before: [rule.before], after: [rule.after] }));
  if (before.length > 0 || (terminalTools !== undefined && terminalTools.length > 0)) {
    rules.order = {
      ...(before.length > 0 && { before }),
      ...(terminalTools !== undefined && terminalTools.length > 0 && { terminal: terminalTools }),
    };
  }
  if (maxCalls !== undefined) {
    rules.efficiency = { maxCalls, repeats: { max: 0 } };
    severity.efficiency = 'warning';
  }
  if (expected?.orderId !== undefined) {
    rules.safety = { tenant: { path: 'orderId', value: expected.orderId } };
  }
  const email = expected?.customerEmail;
  if (email !== undefined) {
    if (requiredTools?.includes(CONFIRMATION_TOOL)) {
      rules.arguments = [
        {
          tool: CONFIRMATION_TOOL,
          call: 1,
          match: { mode: 'superset', args: { [EMAIL_ARGUMENT]: email } },
          name: CUSTOMER_EMAIL_CHECK,
        },
      ];
    } else if (allowedTools === undefined || allowedTools.includes(CONFIRMATION_TOOL)) {
      problems.push(
        `expected.customerEmail: seed 000 checks it on the first ${CONFIRMATION_TOOL} call only when there is one, ` +
          `which toolpath cannot say without requiring the call; add ${CONFIRMATION_TOOL} to requiredTools, ` +
          `or remove customerEmail`,
      );
    }
    // Otherwise the allowlist forbids send_confirmation: the seed's check could never decide anything.
  }
  return { rules, severity, problems };
}
