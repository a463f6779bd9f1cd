/**
 * What the `expected` fields of a scenario object check. The scenario object names expected
 * values by field, and the parser knows no domain: each field is read through this table, as one
 * of two general kinds of check.
 *
 * - `everyCall`: every call that has `argument` must carry this value, and calls without it are
 *   left alone: the native tenant gate (`safety.tenant`, hard). At most one such field per scenario.
 * - `firstCallOf`: the first call of `tool` has `argument` equal to the value, when there is such a
 *   call. Native argument rules say "there is a call with these arguments", so this maps to
 *   `arguments` (call 1 of `tool`) only when `requiredTools` includes `tool`; when `allowedTools`
 *   leaves `tool` out the check can never decide anything and is dropped; otherwise the document
 *   is refused with a message saying how to fix it.
 *
 * The two fields below are those the scenario object defines (docs/scenarios.md); a field not
 * in the table is refused by name, with the nearest known one.
 */

/** How one `expected` field is checked. */
export type ExpectedField =
  | { kind: 'everyCall'; argument: string }
  | { kind: 'firstCallOf'; tool: string; argument: string };

/** The scenario object's `expected` fields and what each checks. */
export const EXPECTED_FIELDS = {
  orderId: { kind: 'everyCall', argument: 'orderId' },
  customerEmail: { kind: 'firstCallOf', tool: 'send_confirmation', argument: 'email' },
} as const satisfies Record<string, ExpectedField>;

/** The name an `expected` field's check reports under: `expected.<field>`. */
export function expectedCheckName(field: string): string {
  return `expected.${field}`;
}
