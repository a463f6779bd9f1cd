/**
 * `tool_call_args`: a tool was called with matching arguments - any of its calls, or its Nth
 * call in causal order with `call_index`. Calls whose arguments were not captured make the
 * result inconclusive unless another call settles it. With `outcome: ok | error` the matching
 * call must also have ended that way (`call` still counts every call of the tool); a call that
 * never reported a result is undecided, like one whose arguments were not captured.
 */
import type { ToolCall, Trajectory } from '../model/trajectory.js';
import type { ArgumentRule } from '../scenario/native.js';
import { inCallThat, withOutcome } from './call-outcome.js';
import { describeExpectation, type MatchOutcome, matchArgs } from './match-args.js';
import { type AssertionOutcome, failed, passed, times, undecided } from './outcome.js';
import { callsOfTool } from './trajectory-index.js';

/** At most this many calls are described in one reason; the rest are counted. */
const MAX_CALLS_DESCRIBED = 5;

/** The result name: the rule's own, else the trajectory-assertion JSON's `tool_call_args:<tool>` or `tool_call_args:<tool>#<call>`. */
export function toolCallArgsName(assertion: ArgumentRule): string {
  if (assertion.name !== undefined) return assertion.name;
  const base = `tool_call_args:${assertion.tool}`;
  return assertion.call === undefined ? base : `${base}#${assertion.call}`;
}

/** Evaluates one `tool_call_args` entry against the trajectory. */
export function checkToolCallArgs(trajectory: Trajectory, assertion: ArgumentRule): AssertionOutcome {
  const name = toolCallArgsName(assertion);
  const { tool } = assertion;
  const calls = callsOfTool(trajectory, tool);
  const index = assertion.call;

  if (index !== undefined) {
    const call = calls[index - 1];
    if (!call) {
      const seen =
        calls.length === 0 ? `${tool} was never called` : `${tool} was called ${times(calls.length)}`;
      return failed(name, `${seen}; the check asks for call #${index}`, calls);
    }
    const outcome = withOutcome(matchArgs(assertion.match, call.args), assertion.outcome, call);
    if (outcome.status === 'match') return passed(name, [call]);
    // Described only for a reason: a passing check (the usual one) never renders the expectation.
    const which = `${tool} call #${index} (call ${call.id})`;
    const expectation = expectationOf(assertion);
    if (outcome.status === 'undecided') {
      return undecided(name, `${which} could not be checked against ${expectation}: ${outcome.detail}`, [
        call,
      ]);
    }
    return failed(name, `${which} did not match ${expectation}: ${outcome.detail}`, [call]);
  }

  if (calls.length === 0) return failed(name, `${tool} was never called`, []);
  const outcomes: { call: ToolCall; outcome: MatchOutcome }[] = [];
  for (const call of calls) {
    // The first matching call settles it; the others are only judged to explain a failure.
    const outcome = withOutcome(matchArgs(assertion.match, call.args), assertion.outcome, call);
    if (outcome.status === 'match') return passed(name, [call]);
    outcomes.push({ call, outcome });
  }
  const seen = `saw ${calls.length === 1 ? '1 call' : `${calls.length} calls`}: ${describeCalls(outcomes)}`;
  if (outcomes.some((entry) => entry.outcome.status === 'undecided')) {
    return undecided(
      name,
      `could not decide whether ${tool} was called with ${expectationOf(assertion)}; ${seen}`,
      calls,
    );
  }
  return failed(name, `no call to ${tool} matched ${expectationOf(assertion)}; ${seen}`, calls);
}

/** The arguments a rule expects, and the outcome it asks of the call when it asks one. */
function expectationOf(assertion: ArgumentRule): string {
  return `${describeExpectation(assertion.match)}${inCallThat(assertion.outcome)}`;
}

/** `#1 (call c3) amount_cents: expected 5000, saw 4000; #2 (call c5) arguments were not captured`. */
export function describeCalls(outcomes: readonly { call: ToolCall; outcome: MatchOutcome }[]): string {
  const described = outcomes.slice(0, MAX_CALLS_DESCRIBED).map(({ call, outcome }, position) => {
    const detail = outcome.status === 'match' ? 'matched' : outcome.detail;
    return `#${position + 1} (call ${call.id}) ${detail}`;
  });
  const rest = outcomes.length - MAX_CALLS_DESCRIBED;
  return rest > 0 ? `${described.join('; ')}; and ${rest} more` : described.join('; ');
}
