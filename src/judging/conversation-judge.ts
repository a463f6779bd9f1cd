/**
 * Judging conversation scenarios as a live front door sees traces: after each trace of a
 * conversation, provisionally (`final: false`; what later calls could still mend is `pending`),
 * and once the conversation goes idle, is evicted or the front door shuts down, finally
 * (`final: true`), on the latest trace's evaluated span. The state between traces is
 * {@link ConversationState}'s; the clock is the caller's.
 */
import { appliesTo } from '../evaluate/applies-to.js';
import { evaluate } from '../evaluate/evaluate.js';
import { joinConversation } from '../model/conversation.js';
import type { Finding, Report } from '../model/report.js';
import type { Trajectory } from '../model/trajectory.js';
import type { Scenario } from '../scenario/scenario.js';
import {
  type ClosedConversation,
  CONVERSATION_DEFAULTS,
  type ConversationEviction,
  type ConversationLimits,
  ConversationState,
  type TruncatedBy,
} from './conversation-state.js';
import { type EvaluationEvent, reportEvents } from './evaluation-events.js';
import type { Redactor } from './redact.js';

/**
 * Why a conversation was judged final before it went idle: an eviction, or `worker_exit` (the
 * judging worker that held its state exited; judged inconclusive on the app's thread).
 */
export type ConversationEnd = ConversationEviction | 'worker_exit';

/** A conversation's final judgement, written on its latest trace's evaluated span. */
export interface ConversationJudgement {
  conversationId: string;
  /** The latest trace: where the findings go. */
  traceId: string;
  evaluatedSpanId: string | undefined;
  reports: Report[];
  events: EvaluationEvent[];
  /** Set when it was judged before going idle: why. */
  evicted?: ConversationEnd;
  startedAtMs: number;
  endedAtMs: number;
  failures: { stage: string; message: string; error: unknown }[];
}

/** The provisional reports after one trace, and conversations closed to make room for it. */
export interface ProvisionalJudgement {
  reports: Report[];
  closed: ConversationJudgement[];
}

/** The limits given, with the defaults for those not given. */
export function conversationLimits(given: Partial<ConversationLimits> = {}): ConversationLimits {
  const limits = { ...CONVERSATION_DEFAULTS };
  for (const key of Object.keys(limits) as (keyof ConversationLimits)[]) {
    const value = given[key];
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

/** Judges conversation scenarios over the traces of each conversation, as they come. */
export class ConversationJudge {
  readonly state: ConversationState;

  constructor(
    private readonly scenarios: readonly Scenario[],
    private readonly redactor: Redactor,
    limits: ConversationLimits,
  ) {
    // Values leave the trace's judgement only where raw values may leave at all: otherwise a rule
    // that needs an earlier trace's values is inconclusive rather than misled by a redacted one.
    const keepValues = redactor.setting === false;
    this.state = new ConversationState(limits, () => keepValues);
  }

  /** Whether a scenario is judged here: a conversation scenario, on a trace with a conversation id. */
  judges(scenario: Scenario, trajectory: Trajectory): boolean {
    return scenario.scope === 'conversation' && trajectory.conversationId !== undefined;
  }

  /**
   * After a trace of conversation `trajectory.conversationId`: its provisional reports, the trace
   * itself with every value it captured, the earlier ones as held.
   */
  afterTrace(trajectory: Trajectory, evaluatedSpanId: string | undefined, now: number): ProvisionalJudgement {
    const id = trajectory.conversationId as string;
    const { held, closed } = this.state.add(id, trajectory, evaluatedSpanId, now);
    const traces = [...held.traces.slice(0, -1), trajectory];
    const joined = joinConversation(id, traces);
    const reports: Report[] = [];
    for (const scenario of this.applicable(traces)) {
      const report = evaluate(joined, scenario, { provisional: true });
      report.final = false;
      if (held.truncated) markTruncated(report, held.truncated, this.state.limits.maxCalls);
      reports.push(this.redactor.redact(report, joined));
    }
    this.redactor.release();
    return { reports, closed: closed.map((conversation) => this.judgeFinal(conversation)) };
  }

  /** The conversations idle at `now`, judged final. */
  expire(now: number): ConversationJudgement[] {
    return this.state.takeIdle(now).map((conversation) => this.judgeFinal(conversation));
  }

  /** Every conversation held, judged final (at shutdown). */
  closeAll(): ConversationJudgement[] {
    return this.state.takeAll().map((conversation) => this.judgeFinal(conversation));
  }

  /** When the conversation idle longest goes idle, on the caller's clock; undefined when none is held. */
  get dueAt(): number | undefined {
    return this.state.dueAt;
  }

  /** Conversations whose earlier traces a judging worker that exited held: judged as truncated from now on. */
  markLost(ids: readonly string[]): void {
    this.state.markLost(ids);
  }

  /** The conversation scenarios that apply to any of the traces. */
  private applicable(traces: readonly Trajectory[]): Scenario[] {
    return this.scenarios.filter(
      (scenario) => scenario.scope === 'conversation' && traces.some((trace) => appliesTo(scenario, trace)),
    );
  }

  private judgeFinal(conversation: ClosedConversation): ConversationJudgement {
    const startedAtMs = Date.now();
    const failures: ConversationJudgement['failures'] = [];
    const reports: Report[] = [];
    const events: EvaluationEvent[] = [];
    try {
      const joined = joinConversation(conversation.id, conversation.traces);
      for (const scenario of this.applicable(conversation.traces)) {
        try {
          const report = evaluate(joined, scenario);
          report.final = true;
          if (conversation.evicted !== undefined) report.incomplete = evictedBecause(conversation.evicted);
          if (conversation.truncated)
            markTruncated(report, conversation.truncated, this.state.limits.maxCalls);
          const redacted = this.redactor.redact(report, joined);
          reports.push(redacted);
          reportEvents(redacted, events);
        } catch (error) {
          const message = `toolpath: scenario ${scenario.id} threw on conversation ${conversation.id}`;
          failures.push({ stage: 'evaluate', message, error });
        }
      }
    } catch (error) {
      const message = `toolpath: could not join conversation ${conversation.id}`;
      failures.push({ stage: 'normalize', message, error });
    }
    this.redactor.release();
    const out: ConversationJudgement = {
      conversationId: conversation.id,
      traceId: conversation.latest.traceId,
      evaluatedSpanId: conversation.latest.evaluatedSpanId,
      reports,
      events,
      startedAtMs,
      endedAtMs: Date.now(),
      failures,
    };
    if (conversation.evicted !== undefined) out.evicted = conversation.evicted;
    return out;
  }
}

function evictedBecause(reason: ConversationEviction): string {
  if (reason === 'shutdown') return 'shutdown: the conversation may have gone on';
  if (reason === 'max_calls') return 'max_calls: the conversation grew past the calls held for one';
  return 'max_conversations: judged early to make room for another conversation';
}

/**
 * Earlier traces of the conversation were let go at `maxCalls`, or lost with a judging worker that
 * exited: what they did is missing, and any rule may have needed it, so the verdict is
 * inconclusive, with a hard finding that says why.
 */
function markTruncated(report: Report, by: TruncatedBy, maxCalls: number): void {
  const why =
    by === 'max_calls'
      ? `were let go when it passed ${maxCalls} calls (limits: max calls per conversation)`
      : 'were lost when the judging worker that held them exited (worker: true; see stats().workerRestarts)';
  const finding: Finding = {
    rule: 'conversation.truncated',
    severity: 'hard',
    message: `earlier traces of conversation ${report.conversationId} ${why}, so this verdict judges only the traces since`,
    calls: [],
    spans: [],
    inconclusive: true,
    traceIds: [],
  };
  report.findings.push(finding);
  report.verdict = 'inconclusive';
  report.pass = false;
}
