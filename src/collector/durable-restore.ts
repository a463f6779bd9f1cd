/**
 * Durable mode at start: the log read back (each record's facts, damage and unreadable records
 * counted) and the bookkeeping rebuilt from it: which records are still needed, which traces to
 * judge and hold again, which conversations' finals are owed. Ongoing bookkeeping is
 * durable-traces.ts's.
 */
import {
  DONE,
  FINAL,
  FORGOTTEN,
  finalMark,
  JUDGED,
  RELEASED,
  readRecord,
  traceMark,
} from './durable-records.js';
import {
  addFact,
  finalKey,
  type LogFacts,
  newFacts,
  readSpans,
  replayConversations,
} from './durable-replay.js';
import type {
  DurableReports,
  FinalMark,
  LiveTraces,
  Mark,
  NeededRecords,
  Replay,
  ReplayedTrace,
  RequestRecord,
  StorageSettings,
} from './durable-use.js';
import { type LogDamage, SpanLog } from './span-log.js';

/** The state of durable-traces.ts's DurableTraces that a restart fills in. */
export interface RestoreTarget {
  log: SpanLog;
  needed: NeededRecords;
  live: LiveTraces;
  finals: Set<FinalMark>;
  lostMarks: Map<string, Mark>;
  reports: DurableReports | undefined;
}

/**
 * Reads the log in `options.directory` (made if missing): what each record says, without its
 * body (the log may be large, the ids are not), records it could not read, and where damage was.
 */
export function readLog(options: StorageSettings): {
  log: SpanLog;
  damage: LogDamage;
  facts: LogFacts;
  unreadable: number;
} {
  const { maxBytes } = options;
  const segmentBytes =
    options.segmentBytes ?? Math.max(2 ** 20, Math.min(64 * 2 ** 20, Math.floor(maxBytes / 16)));
  const facts = newFacts();
  let unreadable = 0;
  // Where the first damage was, as an offset of the reports file: a record lost there (a
  // `judged` mark) is known again from the lines after the last record before it.
  let damagedAfter = Number.POSITIVE_INFINITY;
  const { log, damage } = SpanLog.open(
    options.directory,
    (payload, at) => {
      try {
        const record = readRecord(payload);
        // After damage, a `done` is not taken as the end of its trace: the record lost may be
        // the trace's `member`, and its conversation needs its spans. Judged again for its
        // output only (its report line is read back), it is done again.
        if (record?.type === DONE && damagedAfter !== Number.POSITIVE_INFINITY) return;
        if (record) addFact(facts, record, at);
        else unreadable++;
      } catch {
        unreadable++;
      }
    },
    {
      segmentBytes,
      onDamage: () => {
        damagedAfter = Math.min(damagedAfter, facts.reportsEnd);
      },
      ...(options.reports && { beforeWrite: () => options.reports?.sync() ?? Promise.resolve() }),
    },
  );
  facts.reportsEnd = Math.min(facts.reportsEnd, damagedAfter);
  return { log, damage, facts, unreadable };
}

/** Takes back what the log's records say is still needed; says what to judge and hold again. */
export function restore(t: RestoreTarget, facts: LogFacts): Omit<Replay, 'damage' | 'unreadable'> {
  for (const { at, traceIds } of facts.requests) t.live.note(at, traceIds);
  const done = new Map<string, boolean>();
  for (const [traceId, fact] of facts.traces) {
    const member = fact.member;
    const released = member !== undefined && ((member.flags & RELEASED) !== 0 || facts.released.has(traceId));
    let trace = t.live.get(traceId);
    // A member with no spans left (let go at the cap) is done: there is nothing to judge.
    const forgotten = member !== undefined && ((member.flags & FORGOTTEN) !== 0 || !trace);
    const isDone = fact.done !== undefined || forgotten;
    if (isDone) done.set(traceId, fact.done?.keep ?? true);
    if (isDone && (!member || released)) {
      t.live.finish(traceId);
      continue;
    }
    if (!trace && member) {
      trace = { records: [], lastSeq: 0, done: true };
      t.live.add(traceId, trace);
    }
    if (!trace) continue;
    trace.done = isDone;
    if (!isDone && fact.judged) trace.judged = t.needed.placeAt(fact.judged);
    if (isDone && !forgotten && fact.done) trace.doneMark = t.needed.placeAt(fact.done.at);
    if (member) {
      const flags = member.flags | (forgotten ? FORGOTTEN : 0) | (released ? RELEASED : 0);
      const { membership } = member;
      trace.member = {
        conversationId: membership.conversationId,
        flags,
        mark: t.needed.placeAt(member.at),
        membership,
      };
    }
    if (forgotten) t.live.releaseRecords(traceId, trace);
  }
  for (const { at, conversationId, traceIds, evicted } of facts.finals.values())
    t.finals.add(t.needed.placeAt<FinalMark>(at, { at, conversationId, traceIds, evicted }));
  for (const [conversationId, { at }] of facts.lost) t.lostMarks.set(conversationId, t.needed.placeAt(at));
  markWrittenReports(t, facts.reportsEnd);
  const records = new Set<RequestRecord>();
  for (const [, trace] of t.live.entries()) for (const record of trace.records) records.add(record);
  const spans = readSpans([...records], (at) => t.log.read(at));
  const traces: ReplayedTrace[] = [];
  const judgedBefore = new Set<string>();
  for (const [traceId, trace] of t.live.entries()) {
    if (trace.done) continue;
    traces.push({ traceId, spans: spans.get(traceId) ?? [], reported: trace.judged !== undefined });
    if (trace.member) judgedBefore.add(traceId);
  }
  const lost = [...facts.lost].map(([conversationId, { lost }]) => ({ conversationId, lost }));
  const conversations = replayConversations(t.finals, t.live.members(), spans);
  return { traces, done, judgedBefore, conversations, lost };
}

/**
 * A report line written just before a crash may lack the record that says so: the lines after
 * the last record's offset are read, and their traces marked judged, their conversations' finals
 * written. Said in the log before any later record moves the offset past those lines.
 */
function markWrittenReports(t: RestoreTarget, reportsEnd: number): void {
  if (!t.reports || t.live.size === 0) return;
  const written = t.reports.writtenSince(reportsEnd);
  for (const traceId of written.traces) {
    const trace = t.live.get(traceId);
    if (!trace || trace.done || trace.judged) continue;
    trace.judged = t.needed.place(traceMark(JUDGED, reportsEnd, traceId));
  }
  const known = new Set([...t.finals].map((final) => finalKey(final.conversationId, final.traceIds)));
  for (const { conversationId, traceIds, evicted } of written.finals) {
    const held = traceIds.filter((id) => {
      const member = t.live.get(id)?.member;
      return member?.conversationId === conversationId && !(member.flags & RELEASED);
    });
    if (held.length === 0 || known.has(finalKey(conversationId, traceIds))) continue;
    const at = t.log.append(finalMark(FINAL, reportsEnd, conversationId, traceIds, evicted));
    t.finals.add(t.needed.placeAt<FinalMark>(at, { at, conversationId, traceIds, evicted }));
  }
}
