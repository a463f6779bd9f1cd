/**
 * Outcome hooks, the pure half: a scenario's `outcome` entries become results in the `outcome`
 * dimension, from results the caller has already obtained (by running commands or functions, see
 * `src/run/outcome-runner.ts`). A trace says what the agent attempted; a hook says what really
 * happened (the refund is in the ledger, the email is in the outbox). Nothing here runs anything,
 * so the same hook results always give the same report.
 */
import type { OutcomeHook } from '../scenario/native.js';
import { renderValue } from './match-args.js';
import { fail, pass, type RuleResult, undecided } from './rule.js';

/** What one outcome hook's check said about the final state. */
export interface OutcomeResult {
  status: 'pass' | 'fail' | 'inconclusive';
  /** Why: on fail, what is wrong with the final state; on inconclusive, why it could not be checked. */
  message?: string;
}

/** The rule id every outcome hook reports under; `severity: { outcome: warning }` softens them all. */
export const OUTCOME_RULE = 'outcome.check';

/** A message longer than this is cut: a report stays bounded whatever a hook prints or returns. */
export const MAX_OUTCOME_MESSAGE = 500;

const STATUSES: ReadonlySet<string> = new Set(['pass', 'fail', 'inconclusive']);

/**
 * One result per hook, in the scenario's order, named `outcome:<name>`: the supplied result,
 * or inconclusive when none was supplied (a hook that was not run is never a silent pass).
 * A supplied value that is not an {@link OutcomeResult} (it may come from untyped code) is
 * inconclusive with what it was.
 */
export function outcomeHookResults(
  hooks: readonly OutcomeHook[],
  supplied: Readonly<Record<string, OutcomeResult>> | undefined,
): RuleResult[] {
  return hooks.map((hook) => {
    const name = `outcome:${hook.name}`;
    // hasOwn: a hook named `constructor` must not find Object.prototype's.
    const given: unknown =
      supplied !== undefined && Object.hasOwn(supplied, hook.name) ? supplied[hook.name] : undefined;
    if (given === undefined) return undecided(OUTCOME_RULE, 'outcome', name, notSupplied(hook), []);
    if (!isOutcomeResult(given)) {
      const reason = `outcome hook ${hook.name} gave an unusable result ${describe(given)}; expected { status: pass | fail | inconclusive, message?: string }`;
      return undecided(OUTCOME_RULE, 'outcome', name, reason, []);
    }
    const message =
      given.message === undefined || given.message.trim() === ''
        ? undefined
        : capMessage(given.message.trim());
    if (given.status === 'pass') return pass(OUTCOME_RULE, 'outcome', name);
    if (given.status === 'fail') {
      const reason =
        message === undefined
          ? `outcome hook ${hook.name} failed (it gave no message)`
          : `outcome hook ${hook.name} failed: ${message}`;
      return fail(OUTCOME_RULE, 'outcome', name, reason, []);
    }
    const reason =
      message === undefined
        ? `outcome hook ${hook.name} could not decide (it gave no message)`
        : `outcome hook ${hook.name} could not decide: ${message}`;
    return undecided(OUTCOME_RULE, 'outcome', name, reason, []);
  });
}

/** Why a hook has no result: nothing can check it, or its command was not run by this caller. */
function notSupplied(hook: OutcomeHook): string {
  if (hook.command === undefined) {
    return `no check supplied for outcome hook ${hook.name}: give it a command, or a function to evaluateWithOutcomes`;
  }
  return `outcome hook ${hook.name} was not run: its command runs under toolpath eval or evaluateWithOutcomes, not evaluate alone`;
}

function isOutcomeResult(value: unknown): value is OutcomeResult {
  if (typeof value !== 'object' || value === null) return false;
  const { status, message } = value as Record<string, unknown>;
  return (
    typeof status === 'string' &&
    STATUSES.has(status) &&
    (message === undefined || typeof message === 'string')
  );
}

/** A value from untyped code, as JSON where it can be (a cycle or a bigint cannot), bounded. */
function describe(value: unknown): string {
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return renderValue(json);
  } catch {
    // Falls through to the type name.
  }
  return typeof value === 'object' ? 'object' : typeof value;
}

/** The first {@link MAX_OUTCOME_MESSAGE} characters, marked when cut. */
export function capMessage(message: string): string {
  return message.length > MAX_OUTCOME_MESSAGE ? `${message.slice(0, MAX_OUTCOME_MESSAGE - 1)}…` : message;
}
