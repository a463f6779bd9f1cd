/**
 * The part of judging that needs nothing from the app: normalize a trace's records, evaluate the
 * scenarios that apply, redact, build the events and decide by risk. It has no side effects
 * beyond its own memory (the tools it has seen), and what it returns is plain data, so it runs
 * on the app's thread or on a worker alike. Metrics, logs, `onReport` and `diag` are the
 * caller's ({@link JudgementSinks}).
 */
import { diag } from '@opentelemetry/api';
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import type { Report } from '../model/report.js';
import type { SpanRecord } from '../model/span-record.js';
import type { AgentRun, ToolCall, Trajectory } from '../model/trajectory.js';
import { normalizeTrace } from '../normalizers/normalize.js';
import {
  loadScenarioFileSync,
  parseScenario,
  type Scenario,
  type ScenarioInput,
} from '../scenario/scenario.js';
import { ConversationJudge, type ConversationJudgement, conversationLimits } from './conversation-judge.js';
import type { ConversationLimits } from './conversation-state.js';
import { type EvaluationEvent, reportEvents } from './evaluation-events.js';
import { type RedactionSetting, Redactor } from './redact.js';
import { RiskSampler, type SamplingDecision, type SamplingOptions } from './risk-sampler.js';

export type { ScenarioInput } from '../scenario/scenario.js';

/** What the evaluator needs: all plain data, so a worker can be given it too. */
export interface EvaluatorOptions {
  /** Scenarios to evaluate; each trace is evaluated against those whose `appliesTo` holds. */
  scenarios: readonly ScenarioInput[];
  /** Redaction of values in findings; default: every argument and result value is redacted. */
  redact?: RedactionSetting;
  /** Risk sampling of what goes on to the exporter; default: keep every trace. */
  sampling?: SamplingOptions;
  /**
   * The state kept per conversation for `scope: conversation` scenarios (idle timeout and caps,
   * defaults in conversation-state.ts); `false` keeps none: such scenarios are then judged on each
   * trace alone, inconclusive where the trace carries a conversation id.
   */
  conversations?: Partial<ConversationLimits> | false;
}

/** Something that went wrong while judging: the trace still goes on, the caller reports it. */
export interface JudgingFailure {
  /** Where: `normalize`, `evaluate`, `sample` (and, in the sinks, `on_report`, `log`). */
  stage: string;
  message: string;
  error: unknown;
}

/** What judging one trace gave. */
export interface Judgement {
  /** Undefined when no convention claimed any span, and when judged on a worker thread. */
  trajectory?: Trajectory;
  /** Tool calls in the trajectory; undefined when there was none to evaluate. */
  toolCalls?: number;
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
  /** Time to normalize and evaluate, for the duration metric. */
  seconds: number;
  failures: JudgingFailure[];
  /** Conversations judged final while judging this trace (evicted to make room for its own). */
  conversations?: ConversationJudgement[];
}

/** Loads every scenario input; throws a ScenarioError naming the bad one (setup, not runtime). */
export function loadScenarios(inputs: readonly ScenarioInput[]): Scenario[] {
  return inputs.map((input, index) => {
    if (typeof input === 'string') return loadScenarioFileSync(input);
    if (isLoadedScenario(input)) return input;
    return parseScenario(input, `scenarios[${index}]`);
  });
}

export function isLoadedScenario(input: ScenarioInput): input is Scenario {
  return (
    typeof input === 'object' &&
    typeof input.id === 'string' &&
    typeof input.rules === 'object' &&
    typeof input.severity === 'object'
  );
}

/** Judges records into plain judgements; one per front door (it remembers tools seen, for sampling). */
export class TraceEvaluator {
  readonly scenarios: readonly Scenario[];
  private readonly redactor: Redactor;
  private readonly sampler: RiskSampler;
  /** Undefined without conversation scenarios, or with `conversations: false`. */
  readonly conversations: ConversationJudge | undefined;

  constructor(options: EvaluatorOptions) {
    // Outcome hooks check a system's final state: a job for CI (`toolpath eval`), not for live traffic.
    this.scenarios = loadScenarios(options.scenarios).map(withoutOutcomeHooks);
    this.redactor = new Redactor(options.redact);
    const irreversible = this.scenarios.flatMap((scenario) => scenario.rules.safety?.irreversible ?? []);
    this.sampler = new RiskSampler(options.sampling, irreversible);
    const anyConversational = this.scenarios.some((scenario) => scenario.scope === 'conversation');
    if (anyConversational && options.conversations !== false)
      this.conversations = new ConversationJudge(
        this.scenarios,
        this.redactor,
        conversationLimits(options.conversations),
      );
  }

  /**
   * Judges one trace's spans. `incomplete` says why the trace is judged before it completed;
   * `partlyPassedOn`, that some of its spans already went on (a flush), so it is kept whole.
   * Never throws: what fails is in `failures`.
   */
  judge(
    traceId: string,
    spans: readonly SpanRecord[],
    incomplete?: string,
    partlyPassedOn = false,
    now = performance.now(),
  ): Judgement {
    const startedAtMs = Date.now();
    const started = performance.now();
    const failures: JudgingFailure[] = [];
    let trajectory: Trajectory | undefined;
    try {
      trajectory = normalizeTrace(traceId, spans);
    } catch (error) {
      failures.push({ stage: 'normalize', message: `toolpath: could not normalize trace ${traceId}`, error });
    }
    const reports: Report[] = [];
    const events: EvaluationEvent[] = [];
    let closed: ConversationJudgement[] | undefined;
    if (trajectory) {
      const conversations = this.conversations;
      for (const scenario of this.scenarios) {
        if (conversations?.judges(scenario, trajectory)) continue;
        const report = this.evaluateOne(trajectory, scenario, failures);
        if (!report) continue;
        if (incomplete !== undefined) report.incomplete = incomplete;
        reports.push(report);
      }
      this.redactor.release();
      if (conversations && trajectory.conversationId !== undefined)
        closed = this.judgeConversation(conversations, trajectory, incomplete, now, reports, failures);
      for (const report of reports) reportEvents(report, events);
    }
    const seconds = (performance.now() - started) / 1000;
    // A provisional verdict is no verdict to sample on: only final reports decide.
    const final = reports.some((report) => report.final === false)
      ? reports.filter((report) => report.final !== false)
      : reports;
    const decision = this.decide(traceId, spans, final, trajectory, partlyPassedOn, failures);
    const judgement: Judgement = {
      trajectory,
      toolCalls: trajectory?.calls.length,
      evaluatedSpanId: trajectory ? evaluatedSpanOf(trajectory) : undefined,
      reports,
      events,
      decision,
      startedAtMs,
      endedAtMs: Date.now(),
      seconds,
      failures,
    };
    // Assigned, not spread: a spread of a condition is slow in V8.
    if (closed && closed.length > 0) judgement.conversations = closed;
    return judgement;
  }

  /** The trace's conversation, judged provisionally after it; adds the reports to `reports`. */
  private judgeConversation(
    conversations: ConversationJudge,
    trajectory: Trajectory,
    incomplete: string | undefined,
    now: number,
    reports: Report[],
    failures: JudgingFailure[],
  ): ConversationJudgement[] {
    try {
      const judged = conversations.afterTrace(trajectory, evaluatedSpanOf(trajectory), now);
      for (const report of judged.reports) {
        if (incomplete !== undefined) report.incomplete = incomplete;
        reports.push(report);
      }
      return judged.closed;
    } catch (error) {
      const message = `toolpath: could not judge conversation ${trajectory.conversationId} after trace ${trajectory.traceId}`;
      failures.push({ stage: 'evaluate', message, error });
      return [];
    }
  }

  /** Conversations idle at `now` (the clock `judge` was given), judged final. Never throws. */
  expireConversations(now = performance.now()): ConversationJudgement[] {
    return this.conversations ? guardedList(() => (this.conversations as ConversationJudge).expire(now)) : [];
  }

  /** Every conversation held, judged final (at shutdown). Never throws. */
  closeConversations(): ConversationJudgement[] {
    return this.conversations ? guardedList(() => (this.conversations as ConversationJudge).closeAll()) : [];
  }

  /** When the conversation idle longest goes idle (the clock `judge` is given); undefined when none is held. */
  conversationsDueAt(): number | undefined {
    return this.conversations?.dueAt;
  }

  /** Conversations whose earlier traces were lost elsewhere (a judging worker that exited): see ConversationState.markLostElsewhere. */
  markConversationsLost(ids: readonly string[]): void {
    this.conversations?.markLostElsewhere(ids);
  }

  private evaluateOne(
    trajectory: Trajectory,
    scenario: Scenario,
    failures: JudgingFailure[],
  ): Report | undefined {
    try {
      if (!appliesTo(scenario, trajectory)) return undefined;
      const report = evaluate(trajectory, scenario);
      // A conversation scenario with no conversation state to join the trace's conversation in.
      if (scenario.scope === 'conversation' && trajectory.conversationId !== undefined)
        notJoined(report, trajectory.conversationId);
      return this.redactor.redact(report, trajectory);
    } catch (error) {
      const message = `toolpath: scenario ${scenario.id} threw on trace ${trajectory.traceId}`;
      failures.push({ stage: 'evaluate', message, error });
      return undefined;
    }
  }

  private decide(
    traceId: string,
    spans: readonly SpanRecord[],
    reports: readonly Report[],
    trajectory: Trajectory | undefined,
    partlyPassedOn: boolean,
    failures: JudgingFailure[],
  ): SamplingDecision {
    try {
      return this.sampler.decide({
        traceId,
        reports,
        hasError: hasErrorSpan(spans),
        tools: trajectory ? trajectory.calls.map(toolOf) : [],
        spanAttributes: () => spans.map((span) => span.attributes),
        partlyPassedOn,
      });
    } catch (error) {
      // Fail open: a trace we could not decide on is kept.
      failures.push({ stage: 'sample', message: `toolpath: sampling failed on trace ${traceId}`, error });
      return { keep: true, reason: 'error', adjustedCount: 1 };
    }
  }
}

/**
 * The outermost agent span (an agent run with a span whose enclosing run has none: the trace's
 * synthetic run), else the trace's root span.
 */
export function evaluatedSpanOf(trajectory: Trajectory): string | undefined {
  const { agents } = trajectory;
  if (agents.length <= FEW_RUNS) return evaluatedSpanAmong(agents) ?? trajectory.root?.spanId;
  const withSpan = new Map<string, AgentRun>();
  for (const run of trajectory.agents) if (run.spanId !== undefined) withSpan.set(run.id, run);
  for (const run of withSpan.values()) {
    if (run.parentRunId === undefined || !withSpan.has(run.parentRunId)) return run.spanId;
  }
  return trajectory.root?.spanId;
}

/** Up to this many agent runs, {@link evaluatedSpanOf} searches them in place rather than keying them. */
const FEW_RUNS = 8;

/**
 * {@link evaluatedSpanOf}'s Map of the runs with a span by id, without the Map: an id stands at
 * the place of its first run with a span and for its last such run, as a Map's entry would.
 */
function evaluatedSpanAmong(agents: readonly AgentRun[]): string | undefined {
  for (let i = 0; i < agents.length; i++) {
    const first = agents[i] as AgentRun;
    if (first.spanId === undefined || runWithSpan(agents, first.id, 0, i) !== undefined) continue;
    const run = runWithSpan(agents, first.id, i + 1, agents.length, true) ?? first;
    if (run.parentRunId === undefined || runWithSpan(agents, run.parentRunId, 0, agents.length) === undefined)
      return run.spanId;
  }
  return undefined;
}

/** A run with a span and id `id` among `agents[from .. to - 1]`: the first, or with `last` the last. */
function runWithSpan(
  agents: readonly AgentRun[],
  id: string,
  from: number,
  to: number,
  last = false,
): AgentRun | undefined {
  let found: AgentRun | undefined;
  for (let k = from; k < to; k++) {
    const run = agents[k] as AgentRun;
    if (run.spanId === undefined || run.id !== id) continue;
    if (!last) return run;
    found = run;
  }
  return found;
}

/** A conversation judged on one trace alone cannot be trusted: inconclusive, and why. */
function notJoined(report: Report, conversationId: string): void {
  report.findings.push({
    rule: 'conversation.not_joined',
    severity: 'hard',
    message: `the trace belongs to conversation ${conversationId}, but conversations are not kept here (conversations: false), so it was judged on its own`,
    calls: [],
    spans: [],
    inconclusive: true,
  });
  report.verdict = 'inconclusive';
  report.pass = false;
}

function guardedList<T>(make: () => T[]): T[] {
  try {
    return make();
  } catch (error) {
    diag.error('toolpath: judging idle conversations failed', error);
    return [];
  }
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
