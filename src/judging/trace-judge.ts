/**
 * Judging one finished trace, the same for both front doors (the in-process processor and the
 * collector adapter): the {@link TraceEvaluator}'s judgement, then its effects in the app
 * (metrics, log records, `onReport`, `diag`). Contains every error: a scenario that throws costs
 * its own report, never the trace or the host app.
 */
import { diag, type MeterProvider, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import type { Logger, LoggerProvider } from '@opentelemetry/api-logs';
import type { Report } from '../model/report.js';
import type { SpanRecord } from '../model/span-record.js';
import type { Trajectory } from '../model/trajectory.js';
import { TOOLPATH_VERSION } from '../model/version.js';
import type { Scenario } from '../scenario/scenario.js';
import type { ConversationJudge, ConversationJudgement } from './conversation-judge.js';
import { EVALUATION_RESULT_EVENT, type EvaluationEvent } from './evaluation-events.js';
import { type Judge, type JudgeRecord, judgeEvent, runJudges } from './judges.js';
import { ToolpathMetrics } from './metrics.js';
import {
  type EvaluatorOptions,
  type Judgement,
  type JudgingFailure,
  TraceEvaluator,
} from './trace-evaluator.js';

export {
  evaluatedSpanOf,
  type Judgement,
  type JudgingFailure,
  loadScenarios,
  type ScenarioInput,
} from './trace-evaluator.js';

/** The Logs API's LoggerProvider (an sdk-logs LoggerProvider, or the global one from `@opentelemetry/api-logs`). */
export type EvaluationLoggerProvider = LoggerProvider;

/** Where a judgement's effects go in the app. */
export interface SinkOptions {
  /**
   * Called with each (redacted) report and the trajectory it judged: `undefined` for a
   * conversation's final report (judged over several traces) and for a trace no convention
   * claimed. Errors it throws go to `diag`.
   */
  onReport?: (report: Report, trajectory: Trajectory | undefined) => void;
  /** Where toolpath's metrics go; default: the global MeterProvider. */
  meterProvider?: MeterProvider;
  /** When given, each report is also a `gen_ai.evaluation.result` log record. */
  loggerProvider?: EvaluationLoggerProvider;
  /**
   * Judges run after the deterministic rules on the reports of the scenarios they name (see
   * judging/judges.ts): each result is a `gen_ai.evaluation.result` log record with the judge's
   * identity; a failure is counted (`toolpath.evaluation.errors`, stage `judge`). Not on a worker.
   */
  judges?: readonly Judge[];
  /** Called with each report's judge records once its judges are done. Errors it throws go to `diag`. */
  onJudges?: (report: Report, records: readonly JudgeRecord[]) => void;
}

/** What judging needs, shared by the processor's and the adapter's options. */
export interface JudgeOptions extends EvaluatorOptions, SinkOptions {}

/** A judgement's effects in the app: metrics, log records, `onReport`, and failures to `diag`. */
export class JudgementSinks {
  readonly metrics: ToolpathMetrics;
  private readonly logger?: Logger;

  constructor(private readonly options: SinkOptions) {
    this.metrics = new ToolpathMetrics(options.meterProvider);
    this.logger = options.loggerProvider?.getLogger('toolpath', TOOLPATH_VERSION);
  }

  /** Records one judgement of trace `traceId`. Never throws. */
  record(traceId: string, judgement: Judgement): void {
    // Indexed loops: for-of, and a `?? []` to loop over, allocated per trace.
    const { failures, conversations, reports } = judgement;
    for (let f = 0; f < failures.length; f++) this.fail(failures[f] as JudgingFailure);
    if (conversations !== undefined)
      for (let c = 0; c < conversations.length; c++)
        this.recordConversation(conversations[c] as ConversationJudgement);
    for (let r = 0; r < reports.length; r++) {
      const report = reports[r] as Report;
      this.metrics.recordReport(report);
      if (!this.options.onReport) continue;
      try {
        // Judged on a worker, there is no trajectory here: such options take `(report) => void`.
        this.options.onReport(report, judgement.trajectory);
      } catch (error) {
        this.fail({ stage: 'on_report', message: 'toolpath: onReport threw', error });
      }
    }
    if (judgement.toolCalls !== undefined)
      this.metrics.recordTrajectory(judgement.toolCalls, judgement.seconds);
    this.metrics.recordSampling(judgement.decision.reason, judgement.decision.keep);
    if (judgement.evaluatedSpanId !== undefined)
      this.log(traceId, judgement.evaluatedSpanId, judgement.reports, judgement.events);
    if (this.options.judges && judgement.trajectory)
      this.judge(traceId, judgement.evaluatedSpanId, judgement.trajectory, judgement.reports);
  }

  /** Judges still running, so a flush can wait for them. */
  private readonly judging = new Set<Promise<void>>();

  /** Resolves once every judge started so far has finished. */
  async judgesSettled(): Promise<void> {
    while (this.judging.size > 0) await Promise.all([...this.judging]);
  }

  /** Runs the judges on each report, off the caller's path: results logged, failures counted. Never throws. */
  private judge(
    traceId: string,
    spanId: string | undefined,
    trajectory: Trajectory,
    reports: readonly Report[],
  ): void {
    const judges = this.options.judges as readonly Judge[];
    for (const report of reports) {
      const failed = (record: JudgeRecord) =>
        this.fail({
          stage: 'judge',
          message: `toolpath: judge ${record.name} failed on scenario ${record.scenario}: ${record.error}`,
          error: undefined,
        });
      const running = runJudges(judges, trajectory, report, failed)
        .then((records) => {
          if (records.length > 0 && this.options.onJudges) {
            try {
              this.options.onJudges(report, records);
            } catch (error) {
              this.fail({ stage: 'on_judges', message: 'toolpath: onJudges threw', error });
            }
          }
          if (records.length === 0 || spanId === undefined) return;
          this.log(
            traceId,
            spanId,
            records.map(() => report),
            records.map((record) => judgeEvent(record, report)),
            records.map((record) => record.name),
          );
        })
        .catch((error) => this.fail({ stage: 'judge', message: 'toolpath: judging failed', error }))
        .finally(() => this.judging.delete(running));
      this.judging.add(running);
    }
  }

  /** Each report as a log record, with its result event's attributes (`events` holds one per report, in order). */
  private log(
    traceId: string,
    spanId: string,
    reports: readonly Report[],
    events: readonly EvaluationEvent[],
    /** The judges' names, when the events are theirs (the body names them). */
    judgeNames?: readonly string[],
  ): void {
    if (!this.logger || reports.length === 0) return;
    const results = events.filter((event) => event.name === EVALUATION_RESULT_EVENT);
    const context = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED });
    for (const [k, report] of reports.entries()) {
      try {
        this.logger.emit({
          eventName: EVALUATION_RESULT_EVENT,
          severityText: report.verdict === 'fail' ? 'WARN' : 'INFO',
          severityNumber: report.verdict === 'fail' ? 13 : 9,
          body:
            judgeNames === undefined
              ? `${report.scenario.id}: ${report.verdict}`
              : `${judgeNames[k]} on ${report.scenario.id}`,
          attributes: (results[k] as EvaluationEvent).attributes as Record<string, string | number | boolean>,
          context,
        });
      } catch (error) {
        this.fail({ stage: 'log', message: 'toolpath: the logger threw', error });
      }
    }
  }

  /** Records a conversation's final judgement: its reports, why it was let go early. Never throws. */
  recordConversation(judgement: ConversationJudgement): void {
    for (const failure of judgement.failures) this.fail(failure);
    if (judgement.evicted !== undefined) this.metrics.recordConversationEviction(judgement.evicted);
    for (const report of judgement.reports) {
      this.metrics.recordReport(report);
      if (!this.options.onReport) continue;
      try {
        // The joined trajectory is not kept past its judgement: such calls get the report alone.
        // A conversation's final report is judged over several traces: no one trajectory.
        this.options.onReport(report, undefined);
      } catch (error) {
        this.fail({ stage: 'on_report', message: 'toolpath: onReport threw', error });
      }
    }
    if (judgement.evaluatedSpanId !== undefined)
      this.log(judgement.traceId, judgement.evaluatedSpanId, judgement.reports, judgement.events);
  }

  /** Counts and reports a failure (of judging, or of a sink). Never throws, even when the meter does. */
  fail(failure: JudgingFailure): void {
    this.metrics.recordError(failure.stage);
    diag.error(failure.message, failure.error);
  }
}

/** Judges finished traces on the calling thread; one per processor or adapter. */
export class TraceJudge {
  readonly sinks: JudgementSinks;
  private readonly evaluator: TraceEvaluator;

  constructor(options: JudgeOptions) {
    this.evaluator = new TraceEvaluator(options);
    this.sinks = new JudgementSinks(options);
  }

  /** The scenarios as loaded (without outcome hooks). */
  get scenarios(): readonly Scenario[] {
    return this.evaluator.scenarios;
  }

  /** The conversation state and its judging; undefined without conversation scenarios. */
  get conversations(): ConversationJudge | undefined {
    return this.evaluator.conversations;
  }

  /**
   * Judges one trace's spans and records the judgement. `incomplete` says why the trace is
   * judged before it completed; `partlyPassedOn`, that some of its spans already went on (a
   * flush), so it is kept whole. Never throws.
   */
  judge(
    traceId: string,
    spans: readonly SpanRecord[],
    incomplete?: string,
    partlyPassedOn = false,
    now?: number,
  ): Judgement {
    const judgement = this.evaluator.judge(traceId, spans, incomplete, partlyPassedOn, now);
    this.sinks.record(traceId, judgement);
    return judgement;
  }

  /** Conversations idle at `now` (the clock `judge` is given), judged final and recorded. Never throws. */
  expireConversations(now?: number): ConversationJudgement[] {
    const judged = this.evaluator.expireConversations(now);
    for (const judgement of judged) this.sinks.recordConversation(judgement);
    return judged;
  }

  /** Every conversation held, judged final and recorded (at shutdown). Never throws. */
  closeConversations(): ConversationJudgement[] {
    const judged = this.evaluator.closeConversations();
    for (const judgement of judged) this.sinks.recordConversation(judgement);
    return judged;
  }
}
