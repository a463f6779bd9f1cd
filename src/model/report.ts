/** What an evaluation says about one trace against one scenario. */

/** pass: every check held. fail: a hard check failed. inconclusive: a check could not be decided (e.g. arguments not captured). */
export type Verdict = 'pass' | 'fail' | 'inconclusive';

/** A hard finding fails the verdict whatever the scores; a warning only lowers a score. */
export type Severity = 'hard' | 'warning';

/**
 * The dimensions a report scores, each 0..1. Only dimensions the scenario checks appear.
 * `outcome` scores the outcome hooks: external checks of the real final state, apart from the trajectory.
 * `answer` scores the checks of what the agent told the user (its final answer).
 */
export type Dimension = (typeof DIMENSIONS)[number];

/** Every score dimension, in the order reports and tables show them. */
export const DIMENSIONS = [
  'structure',
  'order',
  'arguments',
  'grounding',
  'safety',
  'efficiency',
  'outcome',
  'answer',
] as const;

/** One thing that is wrong (or could not be decided), with the calls and spans it is about. */
export interface Finding {
  /** Stable dotted id of the rule, e.g. `order.sequence`, `tools.allowed`. */
  rule: string;
  severity: Severity;
  /** Says what was expected and what was seen. */
  message: string;
  /** Trajectory node ids of the calls concerned. */
  calls: string[];
  /** Span ids of the calls concerned (where they came from spans). */
  spans: string[];
  /**
   * In a conversation's report: the trace of each call, parallel to `calls` (ids of calls of
   * different traces may be alike).
   */
  traceIds?: string[];
  /** Name of the assertion this finding came from, when it came from one. */
  assertion?: string;
  /** For a rule of the scenario's `agents`: the agent it judged (the rule id is `agents.NAME.…`). */
  agent?: string;
  /** True when the rule could not decide (e.g. arguments not captured). */
  inconclusive?: boolean;
  /**
   * In a provisional report (`final: false`): the rule has not held yet, but calls of later
   * traces could still make it hold (a required tool not called so far). It does not fail the
   * verdict, which is `inconclusive` while it stands.
   */
  pending?: boolean;
}

/** One named assertion's result, in the `{name, status, reason}` shape of the compatibility format. */
export interface AssertionResult {
  name: string;
  /** `pending` only in a provisional report: see {@link Finding.pending}. */
  status: 'pass' | 'fail' | 'inconclusive' | 'pending';
  /** Empty on pass; on fail says what was expected and what was seen. */
  reason: string;
}

/**
 * Graded agreement with the reference trajectory, from the optimal pairing the `reference` rule
 * uses (pairs whose arguments were compared and match): precision = paired calls / calls, recall =
 * paired reference calls / reference calls, f1 their harmonic mean. An empty side scores 1
 * (nothing unpaired), so an empty trajectory against an empty reference scores 1 throughout.
 */
export interface ReferenceScores {
  precision: number;
  recall: number;
  f1: number;
}

/** Counts about the evaluated trajectory. */
export interface ReportStats {
  calls: number;
  turns: number;
  errors: number;
  durationMs: number;
}

/** The outcome of evaluating one trace against one scenario. */
export interface Report {
  /** The trace judged; for a conversation, its latest trace (whose evaluation span gets the findings). */
  traceId: string;
  /** Set when a conversation was judged (`scope: conversation`): its id. */
  conversationId?: string;
  /** Set with `conversationId`: every trace of the conversation judged, earliest first. */
  traceIds?: string[];
  /**
   * For a conversation: whether this is its final verdict. `false` while later traces could still
   * come (the processor and `toolpath serve` judge after each trace; rules later calls could
   * still satisfy are then `pending`); `true` once it went idle, and always in `toolpath eval`.
   * Only final reports count in pass rates and metrics.
   */
  final?: boolean;
  scenario: { id: string; version?: string };
  /** The toolpath version that judged: with the scenario's id and version, what produced the verdict. */
  toolpathVersion: string;
  verdict: Verdict;
  pass: boolean;
  scores: Partial<Record<Dimension, number>>;
  findings: Finding[];
  assertions: AssertionResult[];
  stats: ReportStats;
  /** Set when the scenario has a readable `reference`: precision, recall and F1 against it. */
  referenceScores?: ReferenceScores;
  /** Set when judges ran on the report (see judging/judges.ts): their results beside the verdict, which they never change. */
  judges?: JudgeRecord[];
  /**
   * Set when the trace was judged before it completed (a timeout, eviction or shutdown closed
   * it): why, e.g. `timeout: 2 spans still open`. What is missing may explain a finding.
   */
  incomplete?: string;
  /**
   * Set on a provisional report of a long conversation cut to fit its bound (under 16 KiB as a
   * line): how much it left out. `traceIds`: the earliest trace ids (the latest are kept);
   * `findings`: whole findings (hard ones are kept first); `calls`: entries of findings' `calls`;
   * `assertions`: whole assertions; `characters`: of messages and reasons cut short. A final
   * report made from a provisional one (a judging worker exited) keeps its `traceIds` count.
   */
  cut?: ReportCut;
}

/** What a provisional report cut to its bound left out: see {@link Report.cut}. */
export interface ReportCut {
  traceIds?: number;
  findings?: number;
  calls?: number;
  assertions?: number;
  characters?: number;
}

/** What a judge returns: a score, a label (`good`, `hallucinated`) and why. */
export interface JudgeResult {
  score: number;
  label: string;
  reason: string;
}

/** One judge's result on one report, or why it has none. */
export interface JudgeRecord {
  name: string;
  version?: string;
  type: 'llm' | 'code';
  scenario: string;
  /** Set when the judge returned a result. */
  result?: JudgeResult;
  /** Set when it failed: threw, timed out or returned something else than a result. */
  error?: string;
}

/** Totals over a run of evaluations. */
export interface ReportSummary {
  traces: number;
  evaluated: number;
  passed: number;
  failed: number;
  inconclusive: number;
}

/** `id@version` (or just `id`): how a scenario is named in output. */
export function scenarioLabel(scenario: Report['scenario']): string {
  return scenario.version ? `${scenario.id}@${scenario.version}` : scenario.id;
}
