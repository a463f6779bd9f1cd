/**
 * The shape of what a corpus trace must read as (test/helpers/corpus-readings.ts and the
 * per-source files beside it), and the helpers they write it with.
 */
import type { JsonValue } from '../../src/model/json.js';
import type { CallOutcome } from '../../src/model/trajectory.js';

/** A call a corpus trace must read as. */
export interface ExpectedCall {
  tool: string;
  args: JsonValue;
  outcome: CallOutcome;
  /**
   * The arguments, or for a call read from code (no JSON arguments: `args` is ignored), how the
   * argument source text starts.
   */
  code?: { argsStartWith: string };
  /** For long JSON arguments (`args` is ignored): how their JSON text starts. */
  argsJsonStartsWith?: string;
  /** The call has no call id of its own (read from code, or a span without one). */
  noCallId?: true;
  /** The result exactly, text its JSON must contain (long tool output), or none recorded. */
  result: { exactly: JsonValue } | { containing: string[] } | { none: true };
  agent?: string;
}

/** A turn (one model generation) a corpus trace must read as. */
export interface ExpectedTurn {
  spanId: string;
  issued: string[];
  consumed: string[];
}

/** An agent run a corpus trace must read as. */
export interface ExpectedRun {
  /** Its agent span; '' for a run no agent span records (see `runId`). */
  spanId: string;
  /** The run's id, for a run no agent span records (the trace's, or a sub-agent's read from its turns). */
  runId?: string;
  name?: string;
  /** The enclosing run's agent span, for a sub-agent. */
  parentSpanId?: string;
  parentCall?: string;
  turns: ExpectedTurn[];
}

/** What one corpus trace must read as. */
export interface ExpectedTrace {
  file: string;
  traceId: string;
  /** Runs with turns or calls; every other run the trace has must have neither. */
  runs: ExpectedRun[];
  calls: Record<string, ExpectedCall>;
  /** Chains of groups in causal order; calls in no common chain are concurrent. */
  order: string[][][];
  /** The conversation id the trace belongs to (its outermost agent run's), when it carries one. */
  conversationId?: string;
  /** The kinds of the warnings the trace must read with; none when absent. */
  warnings?: string[];
}

/** Turns of one run where each is shown every result asked for before it (the history only grows). */
export function conversation(turns: [spanId: string, issued: string[]][]): ExpectedTurn[] {
  const seen: string[] = [];
  return turns.map(([spanId, issued]) => {
    const turn = { spanId, issued, consumed: [...seen] };
    seen.push(...issued);
    return turn;
  });
}

export const ok: CallOutcome = { status: 'ok' };
