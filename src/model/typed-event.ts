/**
 * The typed call/result events of a hand-written or adapted trace: a call joined to its result
 * by call id. A stored file may hold a list of these instead of spans.
 */
import type { JsonValue } from './json.js';

/** A tool invocation. */
export interface TypedCallEvent {
  kind: 'call';
  id: string;
  tool: string;
  args: { [key: string]: JsonValue };
}

/** The result of the call with id `callId`. */
export interface TypedResultEvent {
  kind: 'result';
  callId: string;
  ok: boolean;
  output: { [key: string]: JsonValue };
}

/**
 * A pre-execution decision on the call with id `callId` (the GenAI `gen_ai.tool.call.decision`
 * event): `deny` or `require_approval` without a result after it means the call did not run.
 */
export interface TypedDecisionEvent {
  kind: 'decision';
  callId: string;
  outcome: 'allow' | 'deny' | 'require_approval';
}

/** One event of a typed trace, in the order it happened. */
export type TypedEvent = TypedCallEvent | TypedResultEvent | TypedDecisionEvent;
