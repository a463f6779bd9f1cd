/**
 * The answer family: what the agent told the user, judged against what its tools returned. The
 * answer is the final one (the last turn of the outermost agent's last run), or with `each` the
 * final answer of every outermost run (each user turn of a conversation). Keyword and pattern
 * checks; `grounded`: every value the answer states (an id, an amount, an email...: see
 * answer-values.ts) appears in an earlier result; `mentions`: the answer states what a named
 * tool returned. No answer recorded: every check is inconclusive, never passed.
 */
import { distance } from 'fastest-levenshtein';
import type { JsonValue } from '../model/json.js';
import { isReadable, type ToolCall, type Trajectory, type Turn } from '../model/trajectory.js';
import { readPath } from '../scenario/json-path.js';
import type { AnswerSection } from '../scenario/native-answer.js';
import { OfferedKeys, SoughtKeys } from './answer-keys.js';
import { type AnswerValue, type AnswerValueKind, answerValues, offeredKeys } from './answer-values.js';
import { capList } from './outcome.js';
import { fail, NO_CALLS, pass, type RuleFamily, type RuleResult, undecided } from './rule.js';

const DIMENSION = 'answer';
/** The nearest returned values a grounding finding names. */
const NEAREST = 3;
/** The mark {@link cutAnswer} ends a cut answer with. */
const CUT = '…';
const NO_VALUES: readonly AnswerValue[] = [];

/** One answer to judge: its text (undefined: none recorded) and the calls it may draw on. */
interface JudgedAnswer {
  turn: Turn | undefined;
  text: string | undefined;
  earlier: readonly ToolCall[];
}

/** Evaluates the `answer` section: one result per check, over every answer judged. */
export const answerFamily: RuleFamily<AnswerSection> = (trajectory, section, results: RuleResult[] = []) => {
  const answers = answersOf(trajectory, section.each === true);
  const severity = section.severity ?? 'warning';
  const add = (result: RuleResult) => {
    result.severity = severity;
    results.push(result);
  };
  for (const check of section.contains ?? [])
    add(
      judgeAll('answer.contains', check.name ?? `answer.contains:${check.text}`, answers, (a) =>
        containsCheck(a, check.text, true),
      ),
    );
  for (const check of section.notContains ?? [])
    add(
      judgeAll('answer.notContains', check.name ?? `answer.notContains:${check.text}`, answers, (a) =>
        containsCheck(a, check.text, false),
      ),
    );
  (section.matches ?? []).forEach((check, index, all) => {
    const name = check.name ?? (all.length === 1 ? 'answer.matches' : `answer.matches[${index}]`);
    add(judgeAll('answer.matches', name, answers, (a) => matchesCheck(a, check)));
  });
  if (section.grounded)
    add(
      judgeAll('answer.grounded', 'answer.grounded', answers, (a) =>
        groundedCheck(trajectory, a, section.grounded as Grounded),
      ),
    );
  for (const mention of section.mentions ?? [])
    add(
      judgeAll('answer.mentions', `answer.mentions:${mention.tool}.${mention.path}`, answers, (a) =>
        mentionsCheck(a, mention),
      ),
    );
  return results;
};

type Grounded = NonNullable<AnswerSection['grounded']>;
/** What one check says of one answer. */
type Verdict =
  | { status: 'pass' }
  | { status: 'fail' | 'inconclusive'; reason: string; calls: readonly ToolCall[] };
const PASSED: Verdict = { status: 'pass' };

/** One result for a check over every answer: failed where one fails, else undecided where one is. */
function judgeAll(
  rule: string,
  name: string,
  answers: readonly JudgedAnswer[],
  check: (answer: JudgedAnswer & { text: string }) => Verdict,
): RuleResult {
  const failed: string[] = [];
  const undecidedReasons: string[] = [];
  // Made at the first verdict that names calls: most checks pass.
  let calls: Set<ToolCall> | undefined;
  for (const answer of answers) {
    const verdict =
      answer.text === undefined
        ? { status: 'inconclusive' as const, reason: noAnswer(answer.turn), calls: NO_CALLS }
        : check(answer as JudgedAnswer & { text: string });
    if (verdict.status === 'pass') continue;
    const reason =
      answers.length > 1 ? `the answer of turn ${answer.turn?.id}: ${verdict.reason}` : verdict.reason;
    (verdict.status === 'fail' ? failed : undecidedReasons).push(reason);
    if (verdict.calls.length === 0) continue;
    calls ??= new Set();
    for (const call of verdict.calls) calls.add(call);
  }
  const named = calls === undefined ? NO_CALLS : [...calls];
  if (failed.length > 0) return fail(rule, DIMENSION, name, capList(failed, '; '), named);
  if (undecidedReasons.length > 0)
    return undecided(rule, DIMENSION, name, capList(undecidedReasons, '; '), named);
  return pass(rule, DIMENSION, name);
}

function noAnswer(turn: Turn | undefined): string {
  return turn === undefined
    ? 'no answer recorded: the trace records no turn of the agent'
    : `no answer recorded: the trace records no text for turn ${turn.id}, the agent's last`;
}

/**
 * The answers judged: the last turn of the last outermost run, or of every outermost run with
 * `each`. A trace without runs: its last turn. The calls each may draw on: those issued by an
 * earlier turn, those its own turn consumed, and those no turn issued.
 */
function answersOf(trajectory: Trajectory, each: boolean): JudgedAnswer[] {
  const { turns } = trajectory;
  const place = new Map<string, number>();
  turns.forEach((turn, index) => {
    place.set(turn.id, index);
  });
  const finals: (Turn | undefined)[] = [];
  for (const run of trajectory.agents) {
    if (run.parentRunId !== undefined || run.turns.length === 0) continue;
    const last = run.turns[run.turns.length - 1] as string;
    finals.push(turns[place.get(last) ?? -1]);
  }
  if (finals.length === 0) finals.push(turns[turns.length - 1]);
  const judged = each ? finals : finals.slice(-1);
  return judged.map((turn) => {
    const at = turn === undefined ? turns.length : (place.get(turn.id) ?? turns.length);
    const consumed = new Set(turn?.consumed ?? []);
    const earlier = trajectory.calls.filter((call) => {
      if (call.turnId === undefined) return true;
      if (consumed.has(call.id)) return true;
      const issuedAt = place.get(call.turnId);
      return issuedAt !== undefined && issuedAt < at;
    });
    return { turn, text: turn?.answer, earlier };
  });
}

function isCut(text: string): boolean {
  return text.endsWith(CUT) && text.length > 4_000;
}

function containsCheck(answer: { text: string }, wanted: string, must: boolean): Verdict {
  const found = answer.text.toLowerCase().includes(wanted.toLowerCase());
  if (found === must) return PASSED;
  const quoted = JSON.stringify(wanted);
  if (!found && isCut(answer.text))
    return {
      status: 'inconclusive',
      reason: `the answer was cut at 4,000 characters before ${quoted} was found`,
      calls: NO_CALLS,
    };
  return {
    status: 'fail',
    reason: must ? `the answer does not contain ${quoted}` : `the answer contains ${quoted}`,
    calls: NO_CALLS,
  };
}

function matchesCheck(
  answer: { text: string },
  check: NonNullable<AnswerSection['matches']>[number],
): Verdict {
  // `test`, not a matcher: asking for no positions lets re2js run its DFA.
  if (check.regex.program.test(answer.text)) return PASSED;
  const shown = `/${check.pattern}/${check.flags ?? ''}`;
  if (isCut(answer.text))
    return {
      status: 'inconclusive',
      reason: `the answer was cut at 4,000 characters without matching ${shown}`,
      calls: NO_CALLS,
    };
  return { status: 'fail', reason: `the answer does not match ${shown}`, calls: NO_CALLS };
}

/** The calls of `earlier` that succeeded, and those of them whose result cannot be read. */
function readable(earlier: readonly ToolCall[]): { ok: ToolCall[]; unread: ToolCall[] } {
  const ok: ToolCall[] = [];
  const unread: ToolCall[] = [];
  for (const call of earlier) {
    if (call.outcome.status !== 'ok') continue;
    if (isReadable(call.result)) ok.push(call);
    else unread.push(call);
  }
  return { ok, unread };
}

function groundedCheck(
  trajectory: Trajectory,
  answer: JudgedAnswer & { text: string },
  grounded: Grounded,
): Verdict {
  const kinds = new Set<AnswerValueKind>(grounded.kinds);
  let values = answerValues(answer.text, kinds);
  // A value running into the cut may be a piece of a longer one: not judged.
  if (isCut(answer.text)) values = values.filter((value) => !answer.text.endsWith(`${value.text}${CUT}`));
  if (values.length === 0) return PASSED;
  const from = new Set(grounded.from);
  const { ok, unread } = readable(answer.earlier);
  const withArguments = from.has('arguments');
  // First only whether each stated value is offered (no key sets): most answers are grounded.
  const sought = new SoughtKeys(values);
  for (const call of ok) if (!sought.allFound) offeredKeys(resultOf(call), sought);
  let argsUnread = false;
  if (withArguments) {
    for (const call of answer.earlier) {
      if (!isReadable(call.args)) argsUnread = true;
      else if (!sought.allFound) offeredKeys(call.args.value, sought);
    }
  }
  const missing = sought.missing();
  if (missing.length === 0) return PASSED;
  // One OfferedKeys per call, for the finding to name which call returned the nearest value.
  const perCall = ok.map((call) => {
    const keys = new OfferedKeys();
    offeredKeys(resultOf(call), keys);
    return { call, keys };
  });
  const explained = missing.map((value) => explain(value, perCall));
  const reason = capList(
    explained.map((entry) => entry.text),
    '; ',
  );
  const calls = [...new Set(explained.flatMap((entry) => entry.calls))];
  // What toolpath could not read may hold the value: undecided, saying what it could not read.
  const blind: string[] = [];
  if (unread.length > 0) blind.push(`the results of ${capList(unread.map(callName))} were not readable`);
  if (argsUnread) blind.push('some arguments were not captured');
  if (from.has('input')) blind.push("the user's input is not recorded in the trajectory");
  if (blind.length > 0)
    return {
      status: 'inconclusive',
      reason: `${reason}; but ${blind.join(', ')}`,
      calls: [...calls, ...unread],
    };
  if (trajectory.calls.length === 0)
    return { status: 'fail', reason: `${reason}; no tool was called`, calls };
  return { status: 'fail', reason, calls };
}

/** `id "R-7731" appears in no earlier tool result; nearest returned: "R-1001" (issue_refund, call call_3)`. */
function explain(
  value: AnswerValue,
  perCall: readonly { call: ToolCall; keys: OfferedKeys }[],
): { text: string; calls: ToolCall[] } {
  const candidates: { shown: string; call: ToolCall; distance: number }[] = [];
  const seen = new Set<string>();
  for (const { call, keys } of perCall) {
    for (const [key, shown] of keys.shown(value.kind)) {
      if (seen.has(key)) continue;
      seen.add(key);
      candidates.push({ shown, call, distance: nearness(value, key) });
    }
  }
  candidates.sort((a, b) => a.distance - b.distance);
  const nearest = candidates.slice(0, NEAREST);
  const subject = `the answer states ${value.kind} ${JSON.stringify(value.text)}, which appears in no earlier tool result`;
  if (nearest.length === 0) return { text: `${subject}; the tools returned no ${value.kind}`, calls: [] };
  const listed = nearest
    .map((entry) => `${JSON.stringify(entry.shown)} (${callName(entry.call)})`)
    .join(', ');
  return { text: `${subject}; nearest returned: ${listed}`, calls: nearest.map((entry) => entry.call) };
}

function nearness(value: AnswerValue, key: string): number {
  if (value.kind === 'amount' || value.kind === 'number') return Math.abs(Number(key) - Number(value.key));
  return distance(value.key, key);
}

function mentionsCheck(
  answer: JudgedAnswer & { text: string },
  mention: { tool: string; path: string },
): Verdict {
  const { ok, unread } = readable(answer.earlier.filter((call) => call.tool === mention.tool));
  const returned: { call: ToolCall; value: JsonValue }[] = [];
  for (const call of ok)
    for (const hit of readPath(resultOf(call), mention.path))
      if (hit.value !== null && typeof hit.value !== 'object') returned.push({ call, value: hit.value });
  const text = answer.text.toLowerCase();
  // The answer's values are scanned for only when a returned value is a number.
  let stated: readonly AnswerValue[] | undefined;
  for (const { value } of returned) {
    if (typeof value === 'number') stated ??= answerValues(answer.text);
    if (states(text, stated ?? NO_VALUES, value)) return PASSED;
  }
  const what = `${mention.tool}'s ${mention.path}`;
  if (unread.length > 0)
    return {
      status: 'inconclusive',
      reason: `the answer states no ${what} that toolpath could read; the results of ${capList(unread.map(callName))} were not readable`,
      calls: unread,
    };
  if (returned.length === 0) {
    const why =
      ok.length === 0
        ? `${mention.tool} returned nothing before the answer`
        : `${mention.tool} returned no ${mention.path}`;
    return { status: 'fail', reason: `the answer cannot state ${what}: ${why}`, calls: ok };
  }
  const values = capList(returned.map(({ value }) => JSON.stringify(value)));
  return {
    status: 'fail',
    reason: `the answer states no ${what} (returned ${values})`,
    calls: returned.map(({ call }) => call),
  };
}

/** Whether the answer states a returned scalar: a number by value (`$40.00` for 40), text case-insensitively. */
function states(lowerText: string, stated: readonly AnswerValue[], value: JsonValue): boolean {
  if (typeof value === 'number') {
    const key = String(value);
    return stated.some(
      (found) =>
        found.key === key && (found.kind === 'number' || found.kind === 'amount' || found.kind === 'id'),
    );
  }
  const text = String(value).trim().toLowerCase();
  return text !== '' && lowerText.includes(text);
}

/** A readable call's result (see {@link readable}). */
function resultOf(call: ToolCall): JsonValue {
  return call.result.captured ? call.result.value : null;
}

function callName(call: ToolCall): string {
  return `${call.tool}, call ${call.id}`;
}
