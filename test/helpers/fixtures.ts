/** Reading captured span fixtures into trajectories, and what tests read off a trajectory. */
import { readFileSync } from 'node:fs';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { ToolCall, Trajectory } from '../../src/model/trajectory.js';
import { assembleTrajectory } from '../../src/normalizers/assemble.js';
import type { Convention } from '../../src/normalizers/convention.js';
import { CONVENTIONS } from '../../src/normalizers/conventions.js';
import { TRACE_ID } from './spans.js';

/** The spans of `test/spans/<name>.otlp.json` (the extension may be given or not). */
export function fixture(name: string): SpanRecord[] {
  const file = name.endsWith('.json') || name.endsWith('.jsonl') ? name : `${name}.otlp.json`;
  const read = readStoredTraces(readFileSync(new URL(`../spans/${file}`, import.meta.url), 'utf8'), file);
  // A fixture with any rejected span is broken, not "mostly fine".
  if (read.input?.format !== 'otlp-json' || read.errors.length > 0)
    throw new Error(`${file}: ${JSON.stringify(read.errors)}`);
  return read.input.spans;
}

/** The trajectory of these spans read through `conventions` (default: the registered precedence). */
export function trajectoryOf(
  spans: readonly SpanRecord[],
  conventions: readonly Convention[] = CONVENTIONS,
): Trajectory {
  const trajectory = assembleTrajectory(spans[0]?.traceId ?? TRACE_ID, spans, conventions);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

/** "a->b" for every happens-before pair, by tool name: what a person reads off the drawing. */
export function orderedPairs(trajectory: Trajectory): string[] {
  const pairs: string[] = [];
  for (const a of trajectory.calls) {
    for (const b of trajectory.calls) if (trajectory.happensBefore(a, b)) pairs.push(`${a.tool}->${b.tool}`);
  }
  return pairs.sort();
}

/** The first call of a tool; throws when there is none, so a test fails where it should. */
export function callOf(trajectory: Trajectory, tool: string): ToolCall {
  const call = trajectory.calls.find((c) => c.tool === tool);
  if (!call) throw new Error(`no ${tool} call`);
  return call;
}
