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
   * The spans record no structured call id for it: it is keyed (and read) by its tool span,
   * `span:<id>`, and has no `callId`.
   */
  idless?: true;
  /** The result exactly, or text its JSON must contain (long tool output), or none recorded. */
  result: { exactly: JsonValue } | { containing: string[] } | { notCaptured: true };
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
  spanId: string;
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
