/**
 * The payloads of durable mode's log records (durable-traces.ts says what each means), encoded
 * and read back. Every record but `request` is a mark: `[type u8][flag u8][reports file size
 * u64]`, then its own fields. Trace ids are `[count u32]` then `[length u8, id]` each; a
 * conversation id is `[length u16, id]`.
 */
import { createHash } from 'node:crypto';
import type { ConversationEviction, LostHistory } from '../judging/conversation-state.js';
import type { SpanRecord } from '../model/span-record.js';

export const REQUEST = 1;
export const JUDGED = 2;
export const DONE = 3;
export const MEMBER = 4;
export const FINAL = 5;
export const FINAL_DONE = 6;
export const LOST = 7;
export const OUTPUT = 8;
export const FORMATS = ['json', 'protobuf'] as const;

/** A member record's flags: its request records were let go at the cap; its conversation was judged final. */
export const FORGOTTEN = 1;
export const RELEASED = 2;

const LOST_CODES: readonly (LostHistory | undefined)[] = [
  undefined,
  'max_calls',
  'max_conversations',
  'storage',
];
const EVICTION_CODES: readonly (ConversationEviction | undefined)[] = [
  undefined,
  'max_conversations',
  'max_calls',
  'shutdown',
];

/** A trace held in a conversation's state (a member record's fields). */
export interface Membership {
  conversationId: string;
  /** Its place in the conversation, earliest judged first. */
  index: number;
  /** What the conversation had lost when the trace joined it. */
  lost: LostHistory | undefined;
  /** When it joined (ms since the epoch): the idle timeout goes on from there after a restart. */
  atMs: number;
}

/** What a record says, without a request's body. */
export type LogRecord =
  | { type: typeof REQUEST; traceIds: string[] }
  | { type: typeof JUDGED; reportsEnd: number; traceId: string }
  | { type: typeof DONE; reportsEnd: number; traceId: string; keep: boolean }
  | { type: typeof MEMBER; reportsEnd: number; traceId: string; flags: number; member: Membership }
  | {
      type: typeof FINAL | typeof FINAL_DONE;
      reportsEnd: number;
      conversationId: string;
      traceIds: string[];
      evicted: ConversationEviction | undefined;
    }
  | { type: typeof LOST; reportsEnd: number; conversationId: string; lost: LostHistory }
  | { type: typeof OUTPUT; reportsEnd: number; traceId: string };

/** A trace's output for the next hop, waiting in the log for room in the forward queue. */
export interface ParkedOutput {
  traceId: string;
  /** What sampling decided (its `done` record says it). */
  keep: boolean;
  /** The span among `body`'s that carries the findings, if any. */
  evaluationSpanId: string | undefined;
  /** The spans, OTLP JSON. */
  body: Buffer;
}

/** A request record's head: its type and format, the trace ids; the body follows. */
export function requestHead(format: (typeof FORMATS)[number], traceIds: Iterable<string>): Buffer[] {
  return [Buffer.from([REQUEST, FORMATS.indexOf(format)]), encodeIds(traceIds)];
}

/** The body of a request record's payload, and its format. */
export function requestBody(payload: Buffer): { format: (typeof FORMATS)[number]; body: Buffer } {
  const { end } = readIds(payload, 2);
  return { format: FORMATS[payload[1] as 0 | 1], body: payload.subarray(end) };
}

/** A request record's payload with only `traceIds` (compaction copies it so). */
export function withTraceIds(payload: Buffer, traceIds: Iterable<string>): Buffer[] {
  const { end } = readIds(payload, 2);
  return [payload.subarray(0, 2), encodeIds(traceIds), payload.subarray(end)];
}

export function traceMark(
  type: typeof JUDGED | typeof DONE,
  reportsEnd: number,
  traceId: string,
  keep = false,
): Buffer[] {
  return [markHead(type, keep ? 1 : 0, reportsEnd), encodeIds([traceId])];
}

export function memberMark(reportsEnd: number, traceId: string, member: Membership, flags = 0): Buffer[] {
  const fields = Buffer.alloc(13);
  fields.writeUInt32LE(member.index, 0);
  fields[4] = LOST_CODES.indexOf(member.lost);
  fields.writeDoubleLE(member.atMs, 5);
  return [
    markHead(MEMBER, flags, reportsEnd),
    fields,
    encodeIds([traceId]),
    encodeText(member.conversationId),
  ];
}

export function finalMark(
  type: typeof FINAL | typeof FINAL_DONE,
  reportsEnd: number,
  conversationId: string,
  traceIds: readonly string[],
  evicted?: ConversationEviction,
): Buffer[] {
  const head = markHead(type, EVICTION_CODES.indexOf(evicted), reportsEnd);
  return [head, encodeIds(traceIds), encodeText(conversationId)];
}

/** An `output` record: `[ids: trace, evaluation span]` then the spans as OTLP JSON. */
export function outputMark(reportsEnd: number, output: ParkedOutput): Buffer[] {
  const ids =
    output.evaluationSpanId === undefined ? [output.traceId] : [output.traceId, output.evaluationSpanId];
  return [markHead(OUTPUT, output.keep ? 1 : 0, reportsEnd), encodeIds(ids), output.body];
}

/** What an `output` record holds. */
export function readOutput(payload: Buffer): ParkedOutput {
  const { ids, end } = readIds(payload, 10);
  const traceId = ids[0];
  if (payload[0] !== OUTPUT || traceId === undefined) throw new RangeError('not an output record');
  return { traceId, keep: payload[1] === 1, evaluationSpanId: ids[1], body: payload.subarray(end) };
}

export function lostMark(reportsEnd: number, conversationId: string, lost: LostHistory): Buffer[] {
  return [markHead(LOST, LOST_CODES.indexOf(lost), reportsEnd), encodeText(conversationId)];
}

/**
 * Reads what a record says. Throws on a payload that is not one of ours (its CRC matched, so it
 * was written so: a newer version's record, or a bug); the caller counts it.
 */
export function readRecord(payload: Buffer): LogRecord | undefined {
  const type = payload[0];
  if (type === REQUEST) return { type, traceIds: readIds(payload, 2).ids };
  if (payload.length < 10) throw new RangeError(`a record of type ${type} is ${payload.length} bytes`);
  const flag = payload[1] as number;
  const reportsEnd = Number(payload.readBigUInt64LE(2));
  if (type === JUDGED) return { type, reportsEnd, traceId: oneId(payload, 10) };
  if (type === DONE) return { type, reportsEnd, traceId: oneId(payload, 10), keep: flag === 1 };
  if (type === MEMBER) {
    const lost = LOST_CODES[payload[14] as number];
    const atMs = payload.readDoubleLE(15);
    const { ids, end } = readIds(payload, 23);
    const traceId = ids[0];
    if (ids.length !== 1 || traceId === undefined) throw new RangeError('a member record names no one trace');
    const conversationId = readText(payload, end);
    const member: Membership = { conversationId, index: payload.readUInt32LE(10), lost, atMs };
    return { type, reportsEnd, traceId, flags: flag, member };
  }
  if (type === FINAL || type === FINAL_DONE) {
    const { ids, end } = readIds(payload, 10);
    return {
      type,
      reportsEnd,
      conversationId: readText(payload, end),
      traceIds: ids,
      evicted: EVICTION_CODES[flag],
    };
  }
  if (type === LOST) {
    const lost = LOST_CODES[flag];
    if (lost === undefined) throw new RangeError(`a lost record with code ${flag}`);
    return { type, reportsEnd, conversationId: readText(payload, 10), lost };
  }
  if (type === OUTPUT) return { type, reportsEnd, traceId: readIds(payload, 10).ids[0] as string };
  return undefined;
}

function markHead(type: number, flag: number, reportsEnd: number): Buffer {
  const head = Buffer.alloc(10);
  head[0] = type;
  head[1] = flag;
  head.writeBigUInt64LE(BigInt(reportsEnd), 2);
  return head;
}

/** `[count u32][length u8, id]...`: trace ids are short (32 hex characters). */
function encodeIds(ids: Iterable<string>): Buffer {
  const list = [...ids].map((id) => Buffer.from(id, 'utf8'));
  const out = Buffer.allocUnsafe(4 + list.reduce((sum, id) => sum + 1 + Math.min(255, id.length), 0));
  out.writeUInt32LE(list.length, 0);
  let at = 4;
  for (const id of list) {
    const length = Math.min(255, id.length);
    out[at++] = length;
    id.copy(out, at, 0, length);
    at += length;
  }
  return out;
}

function readIds(payload: Buffer, offset: number): { ids: string[]; end: number } {
  const count = payload.readUInt32LE(offset);
  const ids: string[] = [];
  let at = offset + 4;
  for (let i = 0; i < count; i++) {
    const length = payload[at++];
    if (length === undefined || at + length > payload.length)
      throw new RangeError('a trace id past the record');
    ids.push(payload.toString('utf8', at, at + length));
    at += length;
  }
  return { ids, end: at };
}

function oneId(payload: Buffer, offset: number): string {
  const { ids } = readIds(payload, offset);
  if (ids.length !== 1) throw new RangeError(`a mark names ${ids.length} traces`);
  return ids[0] as string;
}

/** `[length u16][utf8]`: conversation ids are refused past 256 characters, so they fit. */
function encodeText(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(2 + Math.min(0xffff, bytes.length));
  out.writeUInt16LE(out.length - 2, 0);
  bytes.copy(out, 2, 0, out.length - 2);
  return out;
}

function readText(payload: Buffer, offset: number): string {
  const length = payload.readUInt16LE(offset);
  if (offset + 2 + length > payload.length) throw new RangeError('a conversation id past the record');
  return payload.toString('utf8', offset + 2, offset + 2 + length);
}

/** Drops the spans whose id came before, in place. */
export function takeOnce(spans: SpanRecord[]): void {
  const ids = new Set<string>();
  let kept = 0;
  for (const span of spans) {
    if (ids.has(span.spanId)) continue;
    ids.add(span.spanId);
    spans[kept++] = span;
  }
  spans.length = kept;
}

/** A span id from the trace id and the scenarios judged: the same on every replay. */
export function derivedSpanId(traceId: string, scenarios: readonly string[]): string {
  const id = createHash('sha256')
    .update(`${traceId}\n${scenarios.join('\n')}`)
    .digest('hex')
    .slice(0, 16);
  return id === '0000000000000000' ? '0000000000000001' : id;
}
