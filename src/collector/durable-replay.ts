/**
 * Reading durable mode's log back at start: what its records say of each trace and conversation
 * (a record copied forward by compaction says it again: the latest copy counts, flags add up),
 * and the spans of the traces still owed something, each span once.
 */
import type { ConversationEviction } from '../judging/conversation-state.js';
import type { SpanRecord } from '../model/span-record.js';
import {
  DONE,
  FINAL,
  FINAL_DONE,
  JUDGED,
  LOST,
  type LogRecord,
  MEMBER,
  type Membership,
  REQUEST,
  requestBody,
} from './durable-records.js';
import type { ConversationReplay, FinalMark } from './durable-use.js';
import { decodeOtlpJsonText } from './otlp-json.js';
import { decodeExportTraceProtobuf } from './otlp-proto.js';
import type { LogPosition } from './span-log.js';

/** What the records say of one trace. */
export interface TraceFacts {
  judged?: LogPosition;
  done?: { at: LogPosition; keep: boolean };
  member?: { at: LogPosition; flags: number; membership: Membership };
}

/** A conversation's final judgement as its `final` record says it. */
export interface FinalFacts {
  at: LogPosition;
  conversationId: string;
  traceIds: string[];
  evicted: ConversationEviction | undefined;
}

/** Everything the log's records say, but the bodies. */
export interface LogFacts {
  requests: { at: LogPosition; traceIds: string[] }[];
  traces: Map<string, TraceFacts>;
  /** Finals written and not done, by {@link finalKey}. */
  finals: Map<string, FinalFacts>;
  /** Traces whose conversation's final judgement was delivered, and those finals' keys. */
  released: Set<string>;
  releasedFinals: Set<string>;
  lost: Map<string, { at: LogPosition; lost: NonNullable<Membership['lost']> }>;
  /** The reports file's size when the latest mark was written. */
  reportsEnd: number;
}

/** A final judgement's key: its conversation and traces (in any order: its report lists them by start). */
export function finalKey(conversationId: string, traceIds: readonly string[]): string {
  return `${conversationId}\n${[...traceIds].sort().join('\n')}`;
}

export function newFacts(): LogFacts {
  return {
    requests: [],
    traces: new Map(),
    finals: new Map(),
    released: new Set(),
    releasedFinals: new Set(),
    lost: new Map(),
    reportsEnd: 0,
  };
}

/** Adds what one record says. Records come oldest first, so a later copy replaces an earlier one. */
export function addFact(facts: LogFacts, record: LogRecord, at: LogPosition): void {
  if (record.type === REQUEST) {
    facts.requests.push({ at, traceIds: record.traceIds });
    return;
  }
  facts.reportsEnd = Math.max(facts.reportsEnd, record.reportsEnd);
  if (record.type === JUDGED) traceFacts(facts, record.traceId).judged = at;
  else if (record.type === DONE) traceFacts(facts, record.traceId).done = { at, keep: record.keep };
  else if (record.type === MEMBER) {
    const trace = traceFacts(facts, record.traceId);
    trace.member = { at, flags: (trace.member?.flags ?? 0) | record.flags, membership: record.member };
  } else if (record.type === FINAL) {
    const { conversationId, traceIds, evicted } = record;
    const key = finalKey(conversationId, traceIds);
    if (!facts.releasedFinals.has(key)) facts.finals.set(key, { at, conversationId, traceIds, evicted });
  } else if (record.type === FINAL_DONE) {
    const key = finalKey(record.conversationId, record.traceIds);
    facts.finals.delete(key);
    facts.releasedFinals.add(key);
    for (const traceId of record.traceIds) facts.released.add(traceId);
  }
  // Judged final when idle: what it had lost is behind it (a later `lost` record says otherwise).
  if ((record.type === FINAL || record.type === FINAL_DONE) && record.evicted === undefined)
    facts.lost.delete(record.conversationId);
  else if (record.type === LOST) facts.lost.set(record.conversationId, { at, lost: record.lost });
}

function traceFacts(facts: LogFacts, traceId: string): TraceFacts {
  let trace = facts.traces.get(traceId);
  if (!trace) {
    trace = {};
    facts.traces.set(traceId, trace);
  }
  return trace;
}

/**
 * The spans of the given request records, by trace, each span once, keeping only the traces each
 * record still holds (`live`), in the order they were received.
 */
export function readSpans(
  records: readonly { at: LogPosition; live: ReadonlySet<string> }[],
  read: (at: LogPosition) => Buffer,
): Map<string, SpanRecord[]> {
  const ordered = [...records].sort((a, b) => a.at.segment - b.at.segment || a.at.offset - b.at.offset);
  const spans = new Map<string, SpanRecord[]>();
  const seen = new Map<string, Set<string>>();
  for (const record of ordered) {
    const { format, body } = requestBody(read(record.at));
    const decoded =
      format === 'protobuf' ? decodeExportTraceProtobuf(body) : decodeOtlpJsonText(body.toString('utf8'));
    for (const span of decoded.spans) {
      if (!record.live.has(span.traceId)) continue;
      let ids = seen.get(span.traceId);
      if (!ids) {
        ids = new Set();
        seen.set(span.traceId, ids);
        spans.set(span.traceId, []);
      }
      if (ids.has(span.spanId)) continue;
      ids.add(span.spanId);
      spans.get(span.traceId)?.push(span);
    }
  }
  return spans;
}

/**
 * The conversations to hold again: the members of each final written and not delivered (to be
 * judged again for their output), then each conversation's other members, in the order they
 * joined it. A member let go at the cap has no spans.
 */
export function replayConversations(
  finals: Iterable<FinalMark>,
  members: Iterable<{ traceId: string; membership: Membership; forgotten: boolean }>,
  spans: ReadonlyMap<string, SpanRecord[]>,
): ConversationReplay[] {
  const groups = new Map<string, ConversationReplay>();
  const finalOf = new Map<string, FinalMark>();
  for (const final of finals) {
    for (const traceId of final.traceIds) finalOf.set(traceId, final);
    const group = { conversationId: final.conversationId, traces: [], lost: undefined, lastAtMs: 0, final };
    groups.set(`final\n${finalKey(final.conversationId, final.traceIds)}`, group);
  }
  const order = new Map<string, number>();
  for (const { traceId, membership, forgotten } of members) {
    const final = finalOf.get(traceId);
    const key = final
      ? `final\n${finalKey(final.conversationId, final.traceIds)}`
      : `current\n${membership.conversationId}`;
    let group = groups.get(key);
    if (!group) {
      group = { conversationId: membership.conversationId, traces: [], lost: undefined, lastAtMs: 0 };
      groups.set(key, group);
    }
    group.traces.push({ traceId, spans: forgotten ? undefined : spans.get(traceId) });
    order.set(traceId, membership.index);
    group.lost ??= membership.lost;
    group.lastAtMs = Math.max(group.lastAtMs, membership.atMs);
  }
  for (const group of groups.values())
    group.traces.sort((a, b) => (order.get(a.traceId) ?? 0) - (order.get(b.traceId) ?? 0));
  return [...groups.values()];
}
