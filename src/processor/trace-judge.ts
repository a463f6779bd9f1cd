/**
 * Judging one finished trace, the same for both front doors (the in-process processor and the
 * collector adapter): normalize, evaluate every scenario that applies, redact, record metrics
 * and log records, and decide by risk whether the trace goes on. Contains every error: a
 * scenario that throws costs its own report, never the trace or the host app.
 */

import { diag, type MeterProvider, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import type { Logger, LoggerProvider } from '@opentelemetry/api-logs';
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import type { Report } from '../model/report.js';
import type { SpanRecord } from '../model/span-record.js';
import type { AgentRun, ToolCall, Trajectory } from '../model/trajectory.js';
import { normalizeTrace } from '../normalizers/normalize.js';
import { loadScenarioFileSync, parseScenario, type Scenario } from '../scenario/scenario.js';
import { EVALUATION_RESULT_EVENT, type EvaluationEvent, reportEvents } from './evaluation-events.js';
import { ToolpathMetrics } from './metrics.js';
import { type RedactionSetting, Redactor } from './redact.js';
import { RiskSampler, type SamplingDecision, type SamplingOptions } from './risk-sampler.js';

/**
 * A scenario as the options take it: a loaded {@link Scenario}, a file path (JSON or YAML), or
 * a scenario document as an object (native or a compatibility format).
 */
export type ScenarioInput = Scenario | string | Record<string, unknown>;

/** The Logs API's LoggerProvider (an sdk-logs LoggerProvider, or the global one from `@opentelemetry/api-logs`). */
export type EvaluationLoggerProvider = LoggerProvider;

/** What judging needs, shared by the processor's and the adapter's options. */
export interface JudgeOptions {
  /** Scenarios to evaluate; each trace is evaluated against those whose `appliesTo` holds. */
  scenarios: readonly ScenarioInput[];
  /** Redaction of values in findings; default: every argument and result value is redacted. */
  redact?: RedactionSetting;
  /** Risk sampling of what goes on to the exporter; default: keep every trace. */
  sampling?: SamplingOptions;
  /** Called with each (redacted) report. Errors it throws go to `diag`. */
  onReport?: (report: Report, trajectory: Trajectory) => void;
  /** Where toolpath's metrics go; default: the global MeterProvider. */
  meterProvider?: MeterProvider;
  /** When given, each report is also a `gen_ai.evaluation.result` log record. */
  loggerProvider?: EvaluationLoggerProvider;
}

/** What judging one trace gave. */
export interface Judgement {
  /** Undefined when no convention claimed any span: nothing to evaluate. */
  trajectory?: Trajectory;
  /** The span the evaluation is about (the root agent span, else the trace's root span). */
  evaluatedSpanId?: string;
  /** One per scenario that applied and evaluated, redacted. */
  reports: Report[];
  /** The events to write: each report's result event and finding events. */
  events: EvaluationEvent[];
  decision: SamplingDecision;
  /** Wall clock around the evaluation (ms since the epoch), for the evaluation span. */
  startedAtMs: number;
  endedAtMs: number;
}

/** Loads every scenario input; throws a ScenarioError naming the bad one (setup, not runtime). */
export function loadScenarios(inputs: readonly ScenarioInput[]): Scenario[] {
  return inputs.map((input, index) => {
    if (typeof input === 'string') return loadScenarioFileSync(input);
    if (isLoadedScenario(input)) return input;
    return parseScenario(input, `scenarios[${index}]`);
  });
}

function isLoadedScenario(input: Scenario | Record<string, unknown>): input is Scenario {
  return (
    typeof input.id === 'string' && typeof input.rules === 'object' && typeof input.severity === 'object'
  );
}

/** Judges finished traces; one per processor or adapter (it remembers tools seen, for sampling). */
export class TraceJudge {
  readonly scenarios: readonly Scenario[];
  readonly metrics: ToolpathMetrics;
  private readonly redactor: Redactor;
  private readonly sampler: RiskSampler;
  private readonly logger?: Logger;

  constructor(private readonly options: JudgeOptions) {
    // Outcome hooks check a system's final state: a job for CI (`toolpath eval`), not for live traffic.
    this.scenarios = loadScenarios(options.scenarios).map(withoutOutcomeHooks);
    this.metrics = new ToolpathMetrics(options.meterProvider);
    this.redactor = new Redactor(options.redact);
    const irreversible = this.scenarios.flatMap((scenario) => scenario.rules.safety?.irreversible ?? []);
    this.sampler = new RiskSampler(options.sampling, irreversible);
    this.logger = options.loggerProvider?.getLogger('toolpath', '0.1.0');
  }

  /**
   * Judges one trace's spans. `incomplete` says why the trace is judged before it completed;
   * `partlyPassedOn`, that some of its spans already went on (a flush), so it is kept whole.
   * Never throws.
   */
  judge(
    traceId: string,
    spans: readonly SpanRecord[],
    incomplete?: string,
    partlyPassedOn = false,
  ): Judgement {
    const startedAtMs = Date.now();
    const started = performance.now();
    let trajectory: Trajectory | undefined;
    try {
      trajectory = normalizeTrace(traceId, spans);
    } catch (error) {
      this.fail('normalize', `toolpath: could not normalize trace ${traceId}`, error);
    }
    const reports: Report[] = [];
    const events: EvaluationEvent[] = [];
    if (trajectory) {
      for (const scenario of this.scenarios) {
        const report = this.evaluateOne(trajectory, scenario, incomplete);
        if (!report) continue;
        reports.push(report);
        reportEvents(report, events);
      }
      this.redactor.release();
      this.metrics.recordTrajectory(trajectory.calls.length, (performance.now() - started) / 1000);
    }
    const evaluatedSpanId = trajectory ? evaluatedSpanOf(trajectory) : undefined;
    const decision = this.decide(traceId, spans, reports, trajectory, partlyPassedOn);
    if (evaluatedSpanId !== undefined) this.log(traceId, evaluatedSpanId, reports, events);
    return { trajectory, evaluatedSpanId, reports, events, decision, startedAtMs, endedAtMs: Date.now() };
  }

  private evaluateOne(trajectory: Trajectory, scenario: Scenario, incomplete?: string): Report | undefined {
    let report: Report;
    try {
      if (!appliesTo(scenario, trajectory)) return undefined;
      report = this.redactor.redact(evaluate(trajectory, scenario), trajectory);
    } catch (error) {
      this.fail('evaluate', `toolpath: scenario ${scenario.id} threw on trace ${trajectory.traceId}`, error);
      return undefined;
    }
    if (incomplete !== undefined) report.incomplete = incomplete;
    this.metrics.recordReport(report);
    if (this.options.onReport) {
      try {
        this.options.onReport(report, trajectory);
      } catch (error) {
        this.fail('on_report', 'toolpath: onReport threw', error);
      }
    }
    return report;
  }

  private decide(
    traceId: string,
    spans: readonly SpanRecord[],
    reports: readonly Report[],
    trajectory: Trajectory | undefined,
    partlyPassedOn: boolean,
  ): SamplingDecision {
    let decision: SamplingDecision;
    try {
      decision = this.sampler.decide({
        traceId,
        reports,
        hasError: hasErrorSpan(spans),
        tools: trajectory ? trajectory.calls.map(toolOf) : [],
        spanAttributes: () => spans.map((span) => span.attributes),
        partlyPassedOn,
      });
    } catch (error) {
      // Fail open: a trace we could not decide on is kept.
      this.fail('sample', `toolpath: sampling failed on trace ${traceId}`, error);
      decision = { keep: true, reason: 'error', adjustedCount: 1 };
    }
    this.metrics.recordSampling(decision.reason, decision.keep);
    return decision;
  }

  /** Each report as a log record, with its result event's attributes (`events` holds one per report, in order). */
  private log(
    traceId: string,
    spanId: string,
    reports: readonly Report[],
    events: readonly EvaluationEvent[],
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
          body: `${report.scenario.id}: ${report.verdict}`,
          attributes: (results[k] as EvaluationEvent).attributes as Record<string, string | number | boolean>,
          context,
        });
      } catch (error) {
        this.fail('log', 'toolpath: the logger threw', error);
      }
    }
  }

  private fail(stage: string, message: string, error: unknown): void {
    this.metrics.recordError(stage);
    diag.error(message, error);
  }
}

/**
 * The outermost agent span (an agent run with a span whose enclosing run has none: the trace's
 * synthetic run), else the trace's root span.
 */
export function evaluatedSpanOf(trajectory: Trajectory): string | undefined {
  const withSpan = new Map<string, AgentRun>();
  for (const run of trajectory.agents) if (run.spanId !== undefined) withSpan.set(run.id, run);
  for (const run of withSpan.values()) {
    if (run.parentRunId === undefined || !withSpan.has(run.parentRunId)) return run.spanId;
  }
  return trajectory.root?.spanId;
}

function hasErrorSpan(spans: readonly SpanRecord[]): boolean {
  for (const span of spans) if (span.status.code === 'error') return true;
  return false;
}

function toolOf(call: ToolCall): string {
  return call.tool;
}

function withoutOutcomeHooks(scenario: Scenario): Scenario {
  if (scenario.rules.outcome === undefined) return scenario;
  const { outcome: _hooks, ...rules } = scenario.rules;
  return { ...scenario, rules };
}
