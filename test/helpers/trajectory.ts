/**
 * Builds a Trajectory from a compact list of steps, so tests read like the trace they describe.
 * A step is one call, or an array of calls issued together (one turn, a parallel batch).
 *
 * Step k is issued at 2k and its calls complete at 2k+1 (or later with `completesAtStep`), so
 * each step happens-after every call of the steps before it that has completed, and calls in
 * one step are concurrent. Each step is also one turn that consumed the previous step's results.
 */
import type { JsonValue } from '../../src/model/json.js';
import {
  type CallOutcome,
  type CallTiming,
  type ToolCall,
  type ToolCallDecision,
  Trajectory,
  type TrajectoryIssue,
  type TrajectoryRoot,
  type Turn,
} from '../../src/model/trajectory.js';

/** Marks arguments as not recorded (OTel makes them opt-in). */
export const NOT_CAPTURED = Symbol('not captured');

/** One call in a step: a tool name, or the details that matter to the test. */
export type CallSpec =
  | string
  | {
      tool: string;
      /** Parsed arguments; NOT_CAPTURED for "not recorded". Defaults to `{}`. */
      args?: JsonValue | typeof NOT_CAPTURED;
      /** Record the arguments as an unparsable raw string with this parse error. */
      parseError?: string;
      id?: string;
      outcome?: CallOutcome;
      /** The call is still running until this (later) step: it overlaps the steps in between. */
      completesAtStep?: number;
      /** The call never reported a result: it happens-before nothing. */
      noResult?: boolean;
      /** Pre-execution decisions recorded for the call. */
      decisions?: ToolCallDecision[];
      /** The trace records no turn for this call (a convention without turns). */
      noTurn?: boolean;
    };

/** One step: a call, or calls issued in parallel. */
export type StepSpec = CallSpec | readonly CallSpec[];

/** Options for {@link buildTrajectory}. */
export interface BuildOptions {
  traceId?: string;
  root?: TrajectoryRoot;
  issues?: TrajectoryIssue[];
}

/** Nanoseconds per step in the calls' start/end times, so durations are easy to compute in tests. */
export const STEP_NANOS = 1_000_000n;

/**
 * Builds a trajectory. Calls get ids `c1`, `c2`, … in the order written and span ids `s1`, `s2`, ….
 */
export function buildTrajectory(steps: readonly StepSpec[], options: BuildOptions = {}): Trajectory {
  const calls: ToolCall[] = [];
  const timing = new Map<string, CallTiming>();
  const turns: Turn[] = [];
  let previousIds: string[] = [];
  steps.forEach((step, stepIndex) => {
    const specs: readonly CallSpec[] = Array.isArray(step) ? step : [step as CallSpec];
    const ids: string[] = [];
    const issued: string[] = [];
    for (const spec of specs) {
      const detail = typeof spec === 'string' ? { tool: spec } : spec;
      const number = calls.length + 1;
      const id = detail.id ?? `c${number}`;
      const completesAtStep = detail.completesAtStep ?? stepIndex;
      const issuedAt = BigInt(2 * stepIndex);
      const completedAt = detail.noResult ? undefined : BigInt(2 * completesAtStep + 1);
      timing.set(id, completedAt === undefined ? { issuedAt } : { issuedAt, completedAt });
      const args = detail.args ?? {};
      const call: ToolCall = {
        id,
        tool: detail.tool,
        args:
          args === NOT_CAPTURED
            ? { captured: false }
            : detail.parseError !== undefined
              ? { captured: true, value: args, parseError: detail.parseError }
              : { captured: true, value: args },
        result: { captured: false },
        outcome: detail.outcome ?? (detail.noResult ? { status: 'no_result' } : { status: 'ok' }),
        spanId: `s${number}`,
        startTimeUnixNano: issuedAt * STEP_NANOS,
        turnId: `t${stepIndex + 1}`,
        convention: 'test',
      };
      if (completedAt !== undefined) call.endTimeUnixNano = completedAt * STEP_NANOS;
      if (detail.decisions) call.decisions = detail.decisions;
      if (detail.noTurn) delete call.turnId;
      calls.push(call);
      ids.push(id);
      if (call.turnId !== undefined) issued.push(id);
    }
    turns.push({ id: `t${stepIndex + 1}`, issued, consumed: previousIds });
    previousIds = ids;
  });
  return new Trajectory({
    traceId: options.traceId ?? 'trace-1',
    calls,
    timing,
    turns,
    ...(options.root && { root: options.root }),
    ...(options.issues && { issues: options.issues }),
  });
}
