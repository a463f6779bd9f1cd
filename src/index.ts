/**
 * toolpath: judge what an AI agent did from its OpenTelemetry spans.
 *
 * The pipeline, one direction: spans -> {@link SpanRecord} -> {@link Trajectory} (a causal DAG
 * of turns and tool calls) -> {@link Report} per scenario.
 *
 * ```ts
 * import { readStoredTraces, normalizeSpans, loadScenarioFile, evaluate } from 'toolpath';
 * const read = readStoredTraces(text, 'trace.json');
 * const scenario = await loadScenarioFile('refund.yaml');
 * if (read.input?.format === 'otlp-json') {
 *   for (const trajectory of normalizeSpans(read.input.spans)) console.log(evaluate(trajectory, scenario));
 * }
 * ```
 * @packageDocumentation
 */

export {
  type DecodeError,
  type DecodeOptions,
  type DecodeResult,
  decodeExportTraceRequest,
  parseOtlpJsonText,
} from './collector/otlp-json.js';
export type { ConversationOptions } from './config/options.js';
export { ConfigError } from './config/values.js';
export { type EvaluateOptions, evaluate } from './evaluate/evaluate.js';
export type { OutcomeResult } from './evaluate/outcome-hooks.js';
export { type InputError, type ReadResult, readStoredTraces, type StoredInput } from './io/read-traces.js';
export { fromReadableSpan } from './io/readable-span.js';
export type { EvaluationEvent } from './judging/evaluation-events.js';
export {
  DEFAULT_JUDGE_TIMEOUT_MS,
  type Judge,
  type JudgeRecord,
  type JudgeResult,
  loadJudges,
  runJudges,
  withJudges,
} from './judging/judges.js';
export { REDACTED, type RedactionOptions, type RedactionSetting } from './judging/redact.js';
export type { SamplingDecision, SamplingOptions, SamplingReason } from './judging/risk-sampler.js';
export type { DropReason } from './judging/trace-buffer.js';
export type {
  EvaluationLoggerProvider,
  Judgement,
  JudgeOptions,
  JudgingFailure,
} from './judging/trace-judge.js';
export type { JsonValue } from './model/json.js';
export type {
  AssertionResult,
  Dimension,
  Finding,
  Report,
  ReportCut,
  ReportStats,
  ReportSummary,
  Severity,
  Verdict,
} from './model/report.js';
export { scenarioLabel } from './model/report.js';
export type {
  Attributes,
  AttributeValue,
  ScopeRecord,
  SpanEventRecord,
  SpanKindName,
  SpanLinkRecord,
  SpanRecord,
  StatusCodeName,
} from './model/span-record.js';
export {
  type AgentRun,
  type CallOutcome,
  type Captured,
  type DecisionOutcome,
  type Handoff,
  type McpServer,
  type McpToolAnnotations,
  type ToolCall,
  type ToolCallDecision,
  Trajectory,
  type TrajectoryIssue,
  type TrajectoryRoot,
  type Turn,
} from './model/trajectory.js';
export type { TypedEvent } from './model/typed-event.js';
export { groupByTrace, normalizeSpans, normalizeTrace } from './normalizers/normalize.js';
export { trajectoryFromTypedEvents } from './normalizers/typed-events.js';
export {
  type AppThreadOptions,
  type ProcessorLimits,
  type ProcessorStats,
  TrajectoryProcessor,
  type TrajectoryProcessorOptions,
  trajectoryProcessor,
  type WorkerOptions,
} from './processor/trajectory-processor.js';
export {
  type CommandRun,
  evaluateWithOutcomes,
  type OutcomeCheck,
  type OutcomeContext,
  type OutcomeHookOptions,
  type OutcomeProblem,
  runOutcomeHooks,
} from './run/outcome-runner.js';
export { allOfKPass, type PassHatK, passHatK, type Trial } from './run/pass-k.js';
export {
  type GateDecision,
  type GatedScenario,
  type PassKDecision,
  type RunEvaluation,
  type RunSummary,
  type RunUnit,
  type ScenarioSummary,
  summarizeRun,
} from './run/run-summary.js';
export type { Gate } from './scenario/native.js';
export {
  loadScenarioFile,
  loadScenarioFileSync,
  parseScenario,
  parseScenarioText,
  type Scenario,
  ScenarioError,
  type ScenarioInput,
} from './scenario/scenario.js';
