/**
 * The main job, shared by `toolpath eval` and the demo: stored trace texts and scenarios in,
 * reports out. Callers do the reading and the printing; the only effect here is running the
 * outcome hooks' commands, in {@link runEvalWithOutcomes}.
 */
import { basename } from 'node:path';
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import { type InputError, readStoredTraces, type StoredInput } from '../io/read-traces.js';
import { type Judge, type JudgeRecord, withJudges } from '../judging/judges.js';
import type { Report } from '../model/report.js';
import type { AttributeValue, SpanRecord } from '../model/span-record.js';
import type { Trajectory } from '../model/trajectory.js';
import { normalizeSpans } from '../normalizers/normalize.js';
import { trajectoryFromTypedEvents } from '../normalizers/typed-events.js';
import { evaluateWithOutcomes, type OutcomeHookOptions } from '../run/outcome-runner.js';
import { type RunEvaluation, type RunSummary, runExitStatus, summarizeRun } from '../run/run-summary.js';
import type { Scenario } from '../scenario/scenario.js';
import { type ConversationKey, RunConversations } from './run-conversations.js';

/**
 * One stored input: where it came from (a path, or `-` for stdin) and its text; for a dataset,
 * the row (and trial) it belongs to and that row's scenarios, judged instead of the run's.
 */
export interface StoredText {
  source: string;
  text: string;
  row?: string;
  trial?: number;
  scenarios?: readonly Scenario[];
}

/** A report with the input it was made from (and its dataset row and task), for printing. */
export interface SourcedReport extends RunEvaluation {
  source: string;
}

/** A trace no scenario applied to (by `appliesTo`): counted in `summary.traces`, not evaluated. */
export interface UnmatchedTrace {
  source: string;
  traceId: string;
}

/** What one evaluation run produced. */
export interface EvalRun {
  reports: SourcedReport[];
  errors: InputError[];
  /** Totals per report, and per scenario its pass rate and its gate's decision. */
  summary: RunSummary;
  /** Traces no scenario applied to, so that "nothing was evaluated" is never silent. */
  unmatched?: UnmatchedTrace[];
  /** Traces with spans, none of them an agent, LLM or tool span a convention claims: no trajectory. */
  unrecognized?: UnmatchedTrace[];
  /** The distinct root agent names of the traces read (at most {@link MAX_AGENTS_SEEN}), for appliesTo hints. */
  rootAgents?: string[];
}

/** Root agent names kept for the "applies to none" hints: enough to spot a typo. */
const MAX_AGENTS_SEEN = 10;

/** `; the traces' root agents: a, b` (or that none names one), for a message about appliesTo. */
export function agentsSeen(run: EvalRun): string {
  const agents = run.rootAgents;
  if (agents === undefined) return '';
  if (agents.length === 0) return '; no trace names a root agent';
  const more = agents.length >= MAX_AGENTS_SEEN ? ', …' : '';
  return `; the traces' root agents: ${agents.join(', ')}${more}`;
}

/**
 * Why a run that read traces evaluated none of them, in words a user can act on: no agent
 * spans recognized (look with `toolpath inspect`), or no scenario's `appliesTo` matched.
 */
export function nothingEvaluatedReason(run: EvalRun): string | undefined {
  if (run.summary.evaluated > 0 || run.summary.traces === 0) return undefined;
  const appliesTo = `no scenario applies to any of the traces (check appliesTo${agentsSeen(run)})`;
  const unrecognized = run.unrecognized ?? [];
  const [first] = unrecognized;
  if (!first) return appliesTo;
  const count = unrecognized.length === 1 ? 'the trace' : `${unrecognized.length} traces`;
  const reason =
    `no agent or tool spans recognized in ${count} (no convention toolpath reads claimed a span); ` +
    `run toolpath inspect ${first.source} to see what was read from each span`;
  return (run.unmatched ?? []).length > 0
    ? `${reason}; no scenario applies to the other traces (check appliesTo)`
    : reason;
}

/**
 * Reads every input, normalizes each trace, evaluates it against every scenario that applies
 * to it (`appliesTo`). An input with errors is reported and skipped whole (a verdict on half a
 * trace would mislead); the other inputs are still evaluated. A trace no scenario applies to is
 * counted in `summary.traces` and listed in `unmatched`, with no report. Outcome hooks are not
 * run here (they are inconclusive): {@link runEvalWithOutcomes} runs them.
 */
export function runEval(
  inputs: readonly StoredText[],
  scenarios: readonly Scenario[],
  options: RunEvalOptions = {},
): EvalRun {
  const tally = newTally(options.onTrajectory);
  const reports: SourcedReport[] = [];
  for (const { trajectory, scenario, unit } of evaluations(inputs, scenarios, tally)) {
    try {
      reports.push({ ...unit, report: finalIfConversation(trajectory, evaluate(trajectory, scenario)) });
    } catch (error) {
      tally.errors.push(evaluationError(unit.source, trajectory, scenario, error));
    }
  }
  return finishRun(inputs, scenarios, tally, reports);
}

/**
 * {@link runEval}, running each scenario's outcome hooks for every trace it evaluates, one
 * evaluation after another (a hook checks shared state: a ledger, an outbox).
 */
export async function runEvalWithOutcomes(
  inputs: readonly StoredText[],
  scenarios: readonly Scenario[],
  hooks: OutcomeHookOptions & JudgingOptions = {},
  onInput?: (done: number, total: number, source: string) => void,
): Promise<EvalRun> {
  const tally = newTally();
  const reports: SourcedReport[] = [];
  for (const { trajectory, scenario, unit } of evaluations(inputs, scenarios, tally, onInput)) {
    try {
      let report = await evaluateWithOutcomes(trajectory, scenario, hooks);
      if (hooks.judges) report = await withJudges(hooks.judges, trajectory, report, hooks.onJudgeFailure);
      reports.push({ ...unit, report: finalIfConversation(trajectory, report) });
    } catch (error) {
      tally.errors.push(evaluationError(unit.source, trajectory, scenario, error));
    }
  }
  return finishRun(inputs, scenarios, tally, reports);
}

/** A run has every trace: its verdict on a conversation is final. */
function finalIfConversation(trajectory: Trajectory, report: Report): Report {
  if (trajectory.traceIds) report.final = true;
  return report;
}

function finishRun(
  inputs: readonly StoredText[],
  scenarios: readonly Scenario[],
  tally: Tally,
  reports: SourcedReport[],
): EvalRun {
  const dataset = inputs.some((input) => input.row !== undefined);
  // A dataset's scenarios are its rows'; rows of one scenario id share one gate (the dataset reader checks).
  const judged = [...scenarios, ...inputs.flatMap((input) => input.scenarios ?? [])];
  return {
    reports,
    errors: tally.errors,
    summary: summarizeRun(tally.traces, reports, judged, { dataset }),
    unmatched: tally.unmatched,
    ...(tally.unrecognized.length > 0 && { unrecognized: tally.unrecognized }),
    rootAgents: [...tally.rootAgents],
  };
}

/**
 * An evaluation that threw (a pathological input, e.g. arguments nested thousands deep) is an
 * error of that input alone: the other traces and inputs are still evaluated, and the run exits 2.
 */
function evaluationError(
  source: string,
  trajectory: Trajectory,
  scenario: Scenario,
  error: unknown,
): InputError {
  const why = error instanceof Error ? error.message : String(error);
  return {
    source,
    message: `could not evaluate trace ${trajectory.traceId} against scenario ${scenario.id}: ${why}`,
  };
}

/** Judges to run after the deterministic rules (see judging/judges.ts). */
export interface JudgingOptions {
  judges?: readonly Judge[];
  /** Told of each judge that failed on a report. */
  onJudgeFailure?: (record: JudgeRecord) => void;
}

/** What {@link runEval} can also hand back. */
export interface RunEvalOptions {
  /** Called with every trajectory read, judged or not (the run page draws them). */
  onTrajectory?: (source: string, trajectory: Trajectory) => void;
}

/** What reading the inputs found besides the evaluations to make. */
interface Tally {
  errors: InputError[];
  unmatched: UnmatchedTrace[];
  unrecognized: UnmatchedTrace[];
  traces: number;
  rootAgents: Set<string>;
  onTrajectory: RunEvalOptions['onTrajectory'];
}

function newTally(onTrajectory?: RunEvalOptions['onTrajectory']): Tally {
  return { errors: [], unmatched: [], unrecognized: [], traces: 0, rootAgents: new Set(), onTrajectory };
}

/** Where an evaluation belongs: its input, its dataset row and trial, the task it ran. */
export type UnitOf = Omit<SourcedReport, 'report'>;

/** Each (trace, applicable scenario) pair, input by input; errors and unmatched traces go to `tally`. */
function* evaluations(
  inputs: readonly StoredText[],
  runScenarios: readonly Scenario[],
  tally: Tally,
  onInput?: (done: number, total: number, source: string) => void,
): Generator<{ trajectory: Trajectory; scenario: Scenario; unit: UnitOf }> {
  const conversations = new RunConversations();
  for (const [index, input] of inputs.entries()) {
    const { source, text } = input;
    const scenarios = input.scenarios ?? runScenarios;
    onInput?.(index, inputs.length, source);
    const read = readStoredTraces(text, source);
    if (read.errors.length > 0 || !read.input) {
      tally.errors.push(...read.errors);
      continue;
    }
    let trajectories: Trajectory[];
    try {
      trajectories = trajectoriesOf(read.input, source);
    } catch (error) {
      tally.errors.push({ source, message: `could not read its trajectory: ${(error as Error).message}` });
      continue;
    }
    const spans = read.input.format === 'typed-events' ? [] : read.input.spans;
    const traceIds = new Set(spans.map((s) => s.traceId));
    tally.traces += read.input.format === 'typed-events' ? 1 : traceIds.size;
    for (const trajectory of trajectories) traceIds.delete(trajectory.traceId);
    for (const traceId of traceIds) tally.unrecognized.push({ source, traceId });
    // Made on first use: only a gate.trialsBy reads a root span's resource.
    let byId: Map<string, SpanRecord> | undefined;
    const spanById = (id: string) => {
      byId ??= new Map(spans.map((span) => [span.spanId, span]));
      return byId.get(id);
    };
    for (const trajectory of trajectories) {
      tally.onTrajectory?.(source, trajectory);
      const agent = trajectory.root?.agentName;
      if (agent !== undefined && tally.rootAgents.size < MAX_AGENTS_SEEN) tally.rootAgents.add(agent);
      const conversation = conversationOf(trajectory, input);
      if (conversation) conversations.addTrace(conversation, trajectory, source);
      const applicable = scenarios.filter((scenario) => appliesTo(scenario, trajectory));
      if (applicable.length === 0) tally.unmatched.push({ source, traceId: trajectory.traceId });
      for (const scenario of applicable) {
        const attribute = scenario.gate?.trialsBy?.attribute;
        const task = attribute !== undefined ? taskAttribute(trajectory, spanById, attribute) : input.row;
        const unit: UnitOf = {
          source,
          ...(input.row !== undefined && { row: input.row }),
          ...(input.trial !== undefined && { trial: input.trial }),
          ...(task !== undefined && { task }),
        };
        // A conversation scenario waits for every trace of the conversation (in any input).
        if (conversation && scenario.scope === 'conversation')
          conversations.addScenario(conversation, scenario, unit);
        else yield { trajectory, scenario, unit };
      }
    }
  }
  for (const { trajectory, scenario, unit } of conversations.evaluations())
    yield { trajectory, scenario, unit };
}

/**
 * The conversation a trace belongs to in this run: its conversation id; in a dataset, within its
 * row (and trial), where a trace without an id belongs to the row's conversation (a row is one
 * conversation). Undefined: the trace is judged on its own.
 */
function conversationOf(trajectory: Trajectory, input: StoredText): ConversationKey | undefined {
  if (input.row === undefined)
    return trajectory.conversationId === undefined ? undefined : { id: trajectory.conversationId, group: '' };
  const trial = input.trial === undefined ? '' : ` trial ${input.trial}`;
  return {
    id: trajectory.conversationId ?? `row ${input.row}${trial}`,
    group: `${input.row}\u0000${input.trial ?? ''}`,
  };
}

/** The trajectories of what a stored file held: its traces, or one for a typed-event list (named after the file). */
export function trajectoriesOf(input: StoredInput, source: string): Trajectory[] {
  if (input.format === 'typed-events') {
    const name = source === '-' ? 'stdin' : basename(source);
    return [trajectoryFromTypedEvents(`typed-events:${name}`, input.events, name)];
  }
  return normalizeSpans(input.spans);
}

/**
 * The task a trace ran, for pass^k: the attribute on its root span, else on the root span's
 * resource; undefined when neither has it (the trial is then left out of pass^k and counted).
 */
function taskAttribute(
  trajectory: Trajectory,
  spanById: (id: string) => SpanRecord | undefined,
  attribute: string,
): string | undefined {
  const own = trajectory.root?.attributes;
  if (own && Object.hasOwn(own, attribute)) return taskKey(own[attribute]);
  const rootSpanId = trajectory.root?.spanId;
  const root = rootSpanId === undefined ? undefined : spanById(rootSpanId);
  if (root && Object.hasOwn(root.resource, attribute)) return taskKey(root.resource[attribute]);
  return undefined;
}

function taskKey(value: AttributeValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Exit status of a run: 2 on any input error, else 1 when a scenario's gate is missed (without
 * a gate: when one of its evaluations did not pass) or nothing was evaluated, else 0.
 */
export function exitCodeOf(run: EvalRun): 0 | 1 | 2 {
  return runExitStatus(run.summary, run.errors.length);
}
