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

/** One event of a typed trace, in the order it happened. */
export type TypedEvent = TypedCallEvent | TypedResultEvent;
