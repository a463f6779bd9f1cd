/**
 * Typed call/result events (a list of `{kind:'call'}` and `{kind:'result'}` in the order they
 * happened, with `{kind:'decision'}` for pre-execution decisions) as a Trajectory. The list is
 * its own clock: a call happened after another when it was issued after that call's result
 * arrived, so calls issued back to back before any result are concurrent. A call denied or held
 * for approval that never got a result did not run (`not_executed`).
 */
import type { JsonValue } from '../model/json.js';
import { type CallTiming, type ToolCall, Trajectory, type TrajectoryIssue } from '../model/trajectory.js';
import type { TypedEvent } from '../model/typed-event.js';

/** The convention's name as it appears on ToolCalls. */
export const TYPED_EVENTS = 'typed-events';

/**
 * Builds the Trajectory of one typed-event trace. Duplicate call ids, results without a call
 * and calls without a result are reported as trajectory issues, never thrown.
 */
export function trajectoryFromTypedEvents(
  traceId: string,
  events: readonly TypedEvent[],
  name = traceId,
): Trajectory {
  const calls = new Map<string, ToolCall>();
  const timing = new Map<string, CallTiming>();
  const issues: TrajectoryIssue[] = [];

  events.forEach((event, index) => {
    const position = BigInt(index);
    if (event.kind === 'call') {
      if (calls.has(event.id)) {
        issues.push({
          kind: 'call.duplicate_id',
          message: `event ${index}: call id ${event.id} was already used; the later call is ignored`,
          spanIds: [],
        });
        return;
      }
      calls.set(event.id, {
        id: event.id,
        callId: event.id,
        tool: event.tool,
        args: { captured: true, value: event.args as JsonValue },
        result: { captured: false },
        outcome: { status: 'no_result' },
        convention: TYPED_EVENTS,
      });
      timing.set(event.id, { issuedAt: position });
      return;
    }
    const call = calls.get(event.callId);
    const callTiming = timing.get(event.callId);
    if (event.kind === 'decision') {
      if (!call) {
        issues.push({
          kind: 'decision.unlinked',
          message: `event ${index}: ${event.outcome} decision for call ${event.callId}, which was never issued before it`,
          spanIds: [],
        });
        return;
      }
      const decision = { outcome: event.outcome, time: position };
      if (call.decisions) call.decisions.push(decision);
      else call.decisions = [decision];
      return;
    }
    if (!call || !callTiming) {
      issues.push({
        kind: 'result.orphan',
        message: `event ${index}: result for call ${event.callId}, which was never issued before it`,
        spanIds: [],
      });
      return;
    }
    if (callTiming.completedAt !== undefined) {
      issues.push({
        kind: 'result.duplicate',
        message: `event ${index}: a second result for call ${event.callId}; the first is kept`,
        spanIds: [],
      });
      return;
    }
    call.result = { captured: true, value: event.output as JsonValue };
    call.outcome = event.ok ? { status: 'ok' } : { status: 'error', message: errorMessage(event.output) };
    callTiming.completedAt = position;
  });

  for (const call of calls.values()) {
    const last = call.decisions?.[call.decisions.length - 1]?.outcome;
    if (call.outcome.status === 'no_result' && (last === 'deny' || last === 'require_approval')) {
      call.outcome = { status: 'not_executed' };
    } else if (call.outcome.status === 'no_result') {
      issues.push({
        kind: 'call.no_result',
        message: `call ${call.id} (${call.tool}) has no result`,
        spanIds: [],
      });
    }
  }
  return new Trajectory({ traceId, calls: [...calls.values()], timing, issues, root: { name } });
}

function errorMessage(output: { [key: string]: JsonValue }): string {
  const message = output.error ?? output.message;
  return typeof message === 'string' ? message : JSON.stringify(output);
}
