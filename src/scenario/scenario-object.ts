/**
 * The scenario object (`allowedTools`, `requiredTools`, `orderRules`, `maxCalls`,
 * `terminalTools`, `expected`: camelCase, as a TypeScript `Scenario` literal) read verbatim into
 * the native rules, so one evaluator serves every format. What each key becomes, and why:
 *
 * - `allowedTools` -> `tools.allowed`, `requiredTools` -> `tools.required`,
 *   `orderRules: [{before, after}]` -> `order.before`, `terminalTools` -> `order.terminal`.
 * - `maxCalls` -> `efficiency.maxCalls` plus `efficiency.repeats: {max: 0}`: the format's
 *   efficiency check is the budget *and* repeated identical calls, both warnings. The scenario
 *   carries `severity: {efficiency: 'warning'}` so they stay warnings whatever the defaults.
 * - `expected.<field>`: through the table of expected-fields.ts, which says for each field which
 *   argument (and which tool's first call) it checks.
 */
import { z } from 'zod';
import type { Severity } from '../model/report.js';
import { toolName } from './assertions.js';
import { EXPECTED_FIELDS, type ExpectedField, expectedCheckName } from './expected-fields.js';
import type { Rules } from './native.js';

/** The top-level keys that mark a scenario object (camelCase, unlike the trajectory-assertion JSON). */
export const SCENARIO_OBJECT_KEYS = [
  'allowedTools',
  'requiredTools',
  'orderRules',
  'maxCalls',
  'terminalTools',
  'expected',
];

const toolList = z.array(toolName);

const expectedValue = z.union([z.string().min(1), z.number()]);

/** A scenario object, plus who the scenario is (`id`, `version`, `description`). */
export const scenarioObjectSchema = z
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
      .strictObject(
        Object.fromEntries(Object.keys(EXPECTED_FIELDS).map((field) => [field, expectedValue.optional()])),
      )
      .optional()
      .meta({ description: 'Expected argument values by field (docs/scenarios.md: the scenario object).' }),
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

/** A parsed scenario object. */
export type ScenarioObjectDocument = z.output<typeof scenarioObjectSchema>;

/** What a scenario object becomes: native rules and severities, or what stops it. */
export interface ScenarioObjectTranslation {
  rules: Rules;
  severity: Record<string, Severity>;
  /** One line per thing that has no native equivalent, with its path; empty when all is well. */
  problems: string[];
}

/** Translates a parsed scenario object into native rules (see the module comment for the mapping). */
export function scenarioObjectRules(document: ScenarioObjectDocument): ScenarioObjectTranslation {
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
  for (const [field, value] of Object.entries(expected ?? {})) {
    if (value === undefined) continue;
    const check: ExpectedField = EXPECTED_FIELDS[field as keyof typeof EXPECTED_FIELDS];
    if (check.kind === 'everyCall') {
      if (rules.safety?.tenant !== undefined) {
        problems.push(
          `expected.${field}: only one expected field can gate every call (${rules.safety.tenant.path} does already)`,
        );
        continue;
      }
      rules.safety = { tenant: { path: check.argument, value } };
      continue;
    }
    const { tool, argument } = check;
    if (requiredTools?.includes(tool)) {
      rules.arguments = [
        ...(rules.arguments ?? []),
        {
          tool,
          call: 1,
          match: { mode: 'superset', args: { [argument]: value } },
          name: expectedCheckName(field),
        },
      ];
    } else if (allowedTools === undefined || allowedTools.includes(tool)) {
      problems.push(
        `expected.${field}: the scenario object checks it on the first ${tool} call only when there is one, ` +
          `which toolpath cannot say without requiring the call; add ${tool} to requiredTools, or remove ${field}`,
      );
    }
    // Otherwise the allowlist forbids the tool: the check could never decide anything.
  }
  return { rules, severity, problems };
}
