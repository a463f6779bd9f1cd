/**
 * The one place that says whether a call's outcome is what a rule asks for (`outcome: ok | error
 * | any` on counts, forbidden tools, repeats, sequence steps, reference calls and argument rules).
 *
 * `ok` counts calls that succeeded, `error` calls that failed, `any` every call. A call that never
 * reported a result might have ended either way: for `ok` and `error` it is "unknown", and the rule
 * decides whether that could change its verdict. Any other status (a call denied before it ran,
 * `not_executed`) is neither a success nor a failure: only `any` counts it.
 */
import type { ToolCall } from '../model/trajectory.js';
import { type MatchOutcome, renderValue } from './match-args.js';

/** What a rule asks of a call's outcome; absent means `any`. */
export type OutcomeRequirement = 'ok' | 'error' | 'any';

/** Whether a call has the outcome asked for: `unknown` when it never reported one. */
export type OutcomeAnswer = 'yes' | 'no' | 'unknown';

/** Does `call` have the outcome `required` asks for? */
export function outcomeAnswer(required: OutcomeRequirement | undefined, call: ToolCall): OutcomeAnswer {
  if (required === undefined || required === 'any') return 'yes';
  const { status } = call.outcome;
  if (status === 'no_result') return 'unknown';
  return status === required ? 'yes' : 'no';
}

/** `a successful call`, `a failed call`, `a call`. */
export function requiredCall(required: OutcomeRequirement | undefined): string {
  if (required === 'ok') return 'a successful call';
  if (required === 'error') return 'a failed call';
  return 'a call';
}

/** ` successful`, ` failed` or '' (for "3 successful calls"). */
export function outcomeAdjective(required: OutcomeRequirement | undefined): string {
  if (required === 'ok') return ' successful';
  if (required === 'error') return ' failed';
  return '';
}

/**
 * How a call ended, as a reason says it: `it succeeded`, `it failed (TimeoutError: upstream)`,
 * `it never reported a result`, `it was not executed (...)`.
 */
export function describeOutcome(call: ToolCall): string {
  const { outcome } = call;
  switch (outcome.status) {
    case 'ok':
      return 'it succeeded';
    case 'error': {
      const detail = [outcome.errorType, outcome.message]
        .filter((part) => part !== undefined && part !== '')
        .join(': ');
      return detail === '' ? 'it failed' : `it failed (${renderValue(detail)})`;
    }
    case 'no_result':
      return 'it never reported a result';
    case 'not_executed':
      return 'it was not executed (a decision denied it or held it for approval)';
    default:
      return `its outcome was ${JSON.stringify((outcome as { status: string }).status)}`;
  }
}

/**
 * An argument match joined with the outcome a rule asks of the same call: a mismatch of either is a
 * mismatch; otherwise what could not be judged (arguments, or a result never reported) is undecided.
 */
export function withOutcome(
  args: MatchOutcome,
  required: OutcomeRequirement | undefined,
  call: ToolCall,
): MatchOutcome {
  if (args.status === 'mismatch' || required === undefined || required === 'any') return args;
  const answer = outcomeAnswer(required, call);
  if (answer === 'yes') return args;
  if (answer === 'no') {
    return { status: 'mismatch', detail: `${describeOutcome(call)}; expected ${requiredCall(required)}` };
  }
  const unknown = `it never reported a result, so whether it ${required === 'ok' ? 'succeeded' : 'failed'} is unknown`;
  return {
    status: 'undecided',
    detail: args.status === 'undecided' ? `${args.detail}, and ${unknown}` : unknown,
  };
}

/** `, in a call that succeeded` / `, in a call that failed` for a rule that asks an outcome; '' otherwise. */
export function inCallThat(required: OutcomeRequirement | undefined): string {
  if (required === 'ok') return ', in a call that succeeded';
  if (required === 'error') return ', in a call that failed';
  return '';
}
