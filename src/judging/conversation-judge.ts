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
  type HeldConversation,
  type LostHistory,
} from './conversation-state.js';
import { type EvaluationEvent, reportEvents } from './evaluation-events.js';
import { boundProvisional, coalescedReport, judgedNow, lastOf } from './provisional-bounds.js';
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
  /** The traces it was judged on, earliest judged first. */
  traceIds: string[];
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
  /** Traces judged into their conversation before a restart and judged again for their output. */
  readonly #judgedBefore = new Set<string>();
  /** Provisional judgements coalesced into a later one (a long conversation; provisional-bounds.ts). */
  coalesced = 0;

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
   * itself with every value it captured, the earlier ones as held. A trace judged into it before
   * a restart is not added again: judged on the conversation as held, or, when that was judged
   * final already, not judged on it at all.
   */
  afterTrace(trajectory: Trajectory, evaluatedSpanId: string | undefined, now: number): ProvisionalJudgement {
    const id = trajectory.conversationId as string;
    let found: HeldConversation | undefined;
    let closed: ClosedConversation[] = [];
    if (this.#judgedBefore.size > 0 && this.#judgedBefore.delete(trajectory.traceId)) {
      found = this.state.holding(id, trajectory.traceId);
      if (!found) return { reports: [], closed: [] };
    } else ({ held: found, closed } = this.state.add(id, trajectory, evaluatedSpanId, now));
    const held = found;
    const newScenario = this.checkApplies(held);
    const applicable: [number, Scenario][] = [];
    for (const index of held.mark.applies) applicable.push([index, this.scenarios[index] as Scenario]);
    applicable.sort((a, b) => a[0] - b[0]);
    const reports = judgedNow(held, newScenario)
      ? this.provisional(held, trajectory, applicable)
      : this.coalesce(held, trajectory, applicable);
    return { reports, closed: closed.map((conversation) => this.judgeFinal(conversation)) };
  }

  /** The provisional reports after `trajectory`, judged on every trace held. */
  private provisional(
    held: HeldConversation,
    trajectory: Trajectory,
    applicable: readonly [number, Scenario][],
  ): Report[] {
    const id = trajectory.conversationId as string;
    const traces = held.traces.map((trace) => (trace.traceId === trajectory.traceId ? trajectory : trace));
    const joined = joinConversation(id, traces);
    const reports: Report[] = [];
    for (const [index, scenario] of applicable) {
      const report = evaluate(joined, scenario, { provisional: true });
      report.final = false;
      if (held.lost) markLost(report, held.lost, this.state.limits.maxCalls);
      held.mark.last.set(index, lastOf(report));
      reports.push(boundProvisional(this.redactor.redact(report, joined)));
    }
    this.redactor.release();
    held.mark.judgedSize = held.size;
    held.mark.judgedAfter = trajectory.traceId;
    held.mark.coalesced = 0;
    return reports;
  }

  /** The short reports of a trace whose provisional judgement is coalesced into a later one. */
  private coalesce(
    held: HeldConversation,
    trajectory: Trajectory,
    applicable: readonly [number, Scenario][],
  ): Report[] {
    held.mark.coalesced++;
    this.coalesced++;
    const id = trajectory.conversationId as string;
    return applicable.map(([index, scenario]) => {
      const report = coalescedReport(id, trajectory.traceId, held, scenario, index);
      if (held.lost) markLost(report, held.lost, this.state.limits.maxCalls);
      return report;
    });
  }

  /**
   * Which scenarios apply to the conversation, checked on the traces it gained since (held again
   * after a restart too); whether one applies now that did not before.
   */
  private checkApplies(held: HeldConversation): boolean {
    const { mark, traces } = held;
    let grew = false;
    for (; mark.checked < traces.length; mark.checked++) {
      const trace = traces[mark.checked] as Trajectory;
      for (const [index, scenario] of this.scenarios.entries()) {
        if (scenario.scope !== 'conversation' || mark.applies.has(index) || !appliesTo(scenario, trace))
          continue;
        mark.applies.add(index);
        grew = true;
      }
    }
    return grew;
  }

  /**
   * Durable mode, at start: holds again a trace judged into conversation `id` before a restart,
   * without judging it (its reports were written then). Returns the conversations closed to make
   * room, judged final. Restore in the order conversations were last active.
   */
  restore(
    id: string,
    trajectory: Trajectory,
    evaluatedSpanId: string | undefined,
    lastActive: number,
    lost: LostHistory | undefined,
  ): ConversationJudgement[] {
    const closed = this.state.restore(id, trajectory, evaluatedSpanId, lastActive, lost);
    return closed.map((conversation) => this.judgeFinal(conversation));
  }

  /** Durable mode, at start: traces judged into their conversation before a restart that will be judged again. */
  judgedBefore(traceIds: Iterable<string>): void {
    for (const traceId of traceIds) this.#judgedBefore.add(traceId);
  }

  /** When the conversation idle longest goes idle, on the caller's clock; undefined when none is held. */
  get dueAt(): number | undefined {
    return this.state.dueAt;
  }

  /** Conversations whose earlier traces a judging worker that exited held: judged as truncated from now on. */
  markLostElsewhere(ids: readonly string[]): void {
    this.state.markLostElsewhere(ids);
  }

  /** Judges conversation `id` final now, as it was closed (`evicted`) before a restart. */
  closeNow(id: string, evicted?: ConversationEviction): ConversationJudgement | undefined {
    const conversation = this.state.take(id, evicted);
    return conversation && this.judgeFinal(conversation);
  }

  /** The conversations idle at `now`, judged final. */
  expire(now: number): ConversationJudgement[] {
    return this.state.takeIdle(now).map((conversation) => this.judgeFinal(conversation));
  }

  /** Every conversation held, judged final (at shutdown). */
  closeAll(): ConversationJudgement[] {
    return this.state.takeAll().map((conversation) => this.judgeFinal(conversation));
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
          if (conversation.lost) markLost(report, conversation.lost, this.state.limits.maxCalls);
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
      traceIds: conversation.traces.map((trace) => trace.traceId),
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
 * Earlier traces of the conversation were let go: what they did is missing, and any rule may have
 * needed it, so the verdict is inconclusive, with a hard finding that says why.
 */
function markLost(report: Report, lost: LostHistory, maxCalls: number): void {
  const id = report.conversationId;
  const message =
    lost === 'max_calls'
      ? `earlier traces of conversation ${id} were let go when it passed ${maxCalls} calls (limits: max calls per conversation), so this verdict judges only the traces since`
      : lost === 'max_conversations'
        ? `earlier traces of conversation ${id} were judged final early to make room for another conversation (limits: max conversations), so this verdict judges only the traces since`
        : lost === 'worker_exit'
          ? `earlier traces of conversation ${id} were lost when the judging worker that held them exited (worker: true; see stats().workerRestarts), so this verdict judges only the traces since`
          : `traces of conversation ${id} were not in storage after a restart (forced out at storage.maxBytes), so this verdict judges only the traces kept`;
  const finding: Finding = {
    rule: 'conversation.truncated',
    severity: 'hard',
    message,
    calls: [],
    spans: [],
    inconclusive: true,
    traceIds: [],
  };
  report.findings.push(finding);
  report.verdict = 'inconclusive';
  report.pass = false;
}
