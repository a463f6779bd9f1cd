/** What a convention's reader hands to trajectory assembly for one tool span. */
import type { JsonValue } from '../model/json.js';
import type { CallOutcome, Captured } from '../model/trajectory.js';

/** A tool call as one convention reads it from one span, before ids and order are assigned. */
export interface ToolCallDraft {
  tool: string;
  callId?: string;
  args: Captured<JsonValue>;
  result: Captured<JsonValue>;
  outcome: CallOutcome;
  agentName?: string;
  convention: string;
}
