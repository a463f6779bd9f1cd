/**
 * Judges: user functions that grade a trajectory and its answer after the deterministic rules
 * (an LLM rubric, a similarity score). Each runs only on reports of the scenarios it names and
 * per `when`, with a timeout; what it returns is added beside the report, never in place of its
 * verdict, and a judge that throws, times out or returns nonsense is counted, never thrown.
 */

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Attributes } from '@opentelemetry/api';
import { type JudgeRecord, type JudgeResult, type Report, scenarioLabel } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import { EVALUATION_RESULT_EVENT, type EvaluationEvent } from './evaluation-events.js';

/** A judge as given in code (or exported by a judges module for the CLI and `toolpath serve`). */
export interface Judge {
  /** The evaluator's name (`gen_ai.evaluation.evaluator.id`); unique among the judges. */
  name: string;
  /** Its version (`gen_ai.evaluation.evaluator.version`). */
  version?: string;
  /** `llm` when a model grades (default), `code` when code does. */
  type?: 'llm' | 'code';
  /** The scenario ids whose reports it judges; it runs on no other. */
  scenarios: readonly string[];
  /** On which verdicts it runs: `fail`, `pass` or `always` (default: every verdict). */
  when?: 'fail' | 'pass' | 'always';
  /** Milliseconds it may take (default {@link DEFAULT_JUDGE_TIMEOUT_MS}); past it, it counts as failed. */
  timeoutMs?: number;
  /** The grading: the trajectory and the final answer (undefined when none was recorded). */
  judge: (trajectory: Trajectory, answer: string | undefined) => JudgeResult | Promise<JudgeResult>;
}

export type { JudgeRecord, JudgeResult };

export const DEFAULT_JUDGE_TIMEOUT_MS = 30_000;

/** The final answer a judge is given: the last turn's text, as the answer checks read it. */
export function finalAnswer(trajectory: Trajectory): string | undefined {
  const { turns } = trajectory;
  for (let index = trajectory.agents.length - 1; index >= 0; index--) {
    const run = trajectory.agents[index];
    if (run === undefined || run.parentRunId !== undefined || run.turns.length === 0) continue;
    const last = run.turns[run.turns.length - 1];
    return turns.find((turn) => turn.id === last)?.answer;
  }
  return turns[turns.length - 1]?.answer;
}

/** Whether `judge` runs on `report`. */
export function judgesReport(judge: Judge, report: Report): boolean {
  if (!judge.scenarios.includes(report.scenario.id)) return false;
  const when = judge.when ?? 'always';
  return when === 'always' || (when === 'fail' ? report.verdict === 'fail' : report.verdict === 'pass');
}

/**
 * Runs every judge that applies to `report`, each with its timeout; never rejects. `onFailure`
 * is told of each failure (to count it).
 */
export async function runJudges(
  judges: readonly Judge[],
  trajectory: Trajectory,
  report: Report,
  onFailure: (record: JudgeRecord) => void = () => {},
): Promise<JudgeRecord[]> {
  const applying = judges.filter((judge) => judgesReport(judge, report));
  if (applying.length === 0) return [];
  const answer = finalAnswer(trajectory);
  return Promise.all(
    applying.map(async (judge) => {
      const record: JudgeRecord = {
        name: judge.name,
        ...(judge.version !== undefined && { version: judge.version }),
        type: judge.type ?? 'llm',
        scenario: report.scenario.id,
      };
      try {
        const result = await withTimeout(judge, trajectory, answer);
        const problem = resultProblem(result);
        if (problem === undefined) record.result = result as JudgeResult;
        else record.error = problem;
      } catch (error) {
        record.error = error instanceof Error ? `threw: ${error.message}` : `threw ${String(error)}`;
      }
      if (record.error !== undefined) {
        try {
          onFailure(record);
        } catch {
          // Counting a failure must not become one.
        }
      }
      return record;
    }),
  );
}

async function withTimeout(
  judge: Judge,
  trajectory: Trajectory,
  answer: string | undefined,
): Promise<unknown> {
  const timeoutMs = judge.timeoutMs ?? DEFAULT_JUDGE_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    timer.unref?.();
  });
  try {
    // A synchronous throw becomes a rejection here, caught by the caller.
    return await Promise.race([Promise.resolve().then(() => judge.judge(trajectory, answer)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function resultProblem(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null)
    return `returned ${String(result)}, not {score, label, reason}`;
  const { score, label, reason } = result as Record<string, unknown>;
  if (typeof score !== 'number' || !Number.isFinite(score)) return 'returned a result without a finite score';
  if (typeof label !== 'string') return 'returned a result without a label';
  if (typeof reason !== 'string') return 'returned a result without a reason';
  return undefined;
}

/** A judge's result as a `gen_ai.evaluation.result` event, with the judge's identity. */
export function judgeEvent(record: JudgeRecord, report: Report): EvaluationEvent {
  const attributes: Attributes = {
    'gen_ai.evaluation.name': `${record.name} (${scenarioLabel(report.scenario)})`,
    'gen_ai.evaluation.evaluator.id': record.name,
    'gen_ai.evaluation.evaluator.type': record.type,
    'toolpath.scenario.id': report.scenario.id,
    'toolpath.verdict': report.verdict,
  };
  if (record.version !== undefined) attributes['gen_ai.evaluation.evaluator.version'] = record.version;
  if (record.result) {
    attributes['gen_ai.evaluation.score.value'] = record.result.score;
    attributes['gen_ai.evaluation.score.label'] = record.result.label;
    attributes['gen_ai.evaluation.explanation'] = record.result.reason.slice(0, 1_024);
  } else {
    attributes['error.type'] = 'toolpath.judge_failed';
    attributes['toolpath.judge.error'] = record.error ?? '';
  }
  return { name: EVALUATION_RESULT_EVENT, attributes };
}

/**
 * Loads the judges a module exports (its default export, or `judges`): an array of {@link Judge}.
 * For the CLI and `toolpath serve`; a module that does not export one is a clear error.
 */
export async function loadJudges(modulePath: string): Promise<Judge[]> {
  const url = pathToFileURL(resolve(modulePath)).href;
  const loaded = (await import(url)) as { default?: unknown; judges?: unknown };
  const judges = loaded.judges ?? loaded.default;
  if (!Array.isArray(judges))
    throw new Error(
      `judges module ${modulePath}: expected a default (or judges) export that is an array of judges`,
    );
  judges.forEach((judge, index) => {
    const problem = judgeProblem(judge);
    if (problem) throw new Error(`judges module ${modulePath}: judge ${index}: ${problem}`);
  });
  return judges as Judge[];
}

/** What is wrong with a judge given in code, or undefined. */
export function judgeProblem(judge: unknown): string | undefined {
  if (typeof judge !== 'object' || judge === null) return 'expected an object {name, scenarios, judge}';
  const { name, scenarios, judge: grade, when, type, timeoutMs } = judge as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') return 'expected a name';
  if (!Array.isArray(scenarios) || !scenarios.every((id) => typeof id === 'string'))
    return `${name}: expected scenarios, a list of scenario ids`;
  if (typeof grade !== 'function')
    return `${name}: expected judge, a function (trajectory, answer) => {score, label, reason}`;
  if (when !== undefined && when !== 'fail' && when !== 'pass' && when !== 'always')
    return `${name}: expected when to be fail, pass or always; got ${String(when)}`;
  if (type !== undefined && type !== 'llm' && type !== 'code') return `${name}: expected type llm or code`;
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !(timeoutMs > 0)))
    return `${name}: expected timeoutMs, a positive number`;
  return undefined;
}

/** Judges the report and attaches the judges' records to it (`report.judges`); the verdict is unchanged. */
export async function withJudges(
  judges: readonly Judge[],
  trajectory: Trajectory,
  report: Report,
  onFailure?: (record: JudgeRecord) => void,
): Promise<Report> {
  const records = await runJudges(judges, trajectory, report, onFailure);
  return records.length === 0 ? report : { ...report, judges: records };
}
