/**
 * The OTel GenAI chat message format (`gen_ai.input.messages` / `gen_ai.output.messages`):
 * `[{role, parts: [...]}]` with `tool_call` parts `{id, name, arguments}` and
 * `tool_call_response` parts `{id, response}`. The registry's own example writes `result` and
 * pads an id with a space: both are accepted.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { Attributes } from '../model/span-record.js';
import type { Captured } from '../model/trajectory.js';
import { capturedJson, jsonAttribute } from './attributes.js';
import type { RequestedCall, ShownResult } from './convention.js';

/** The messages of a messages attribute; undefined when absent or not a list. */
export function readMessages(attributes: Attributes, key: string): JsonValue[] | undefined {
  const parsed = jsonAttribute(attributes, key);
  if (!parsed.captured) return undefined;
  return Array.isArray(parsed.value) ? parsed.value : undefined;
}

/** What a turn needs from its input history: how long it is and the tool results in it. */
export interface HistoryReading {
  length: number;
  shown: ShownResult[];
}

/** Recently read histories, most recent last; a few suffice (the turns of the traces in flight). */
const recentHistories: { text: string; reading: HistoryReading }[] = [];
const MAX_RECENT_HISTORIES = 16;
/** Histories shorter than this are parsed whole: the lookup would cost more than it saves. */
const MIN_INCREMENTAL_TEXT = 512;

/**
 * The input history of a turn (`gen_ai.input.messages`), read incrementally: each turn's history
 * is the previous turn's plus what happened since, serialized the same way, so when a recently
 * read history is a prefix of this one only the new messages are parsed. Without that, reading
 * every turn of a conversation re-parses it from the start (quadratic in its length). Pure: the
 * result depends only on the text, wherever the prefix came from.
 */
export function readHistory(attributes: Attributes, key: string): HistoryReading | undefined {
  const text = attributes[key];
  if (typeof text !== 'string' || text.length < MIN_INCREMENTAL_TEXT) {
    const messages = readMessages(attributes, key);
    return messages ? { length: messages.length, shown: shownResults(messages) } : undefined;
  }
  const reading = extendRecent(text) ?? readWhole(text);
  if (reading) remember(text, reading);
  return reading ? { length: reading.length, shown: [...reading.shown] } : undefined;
}

function extendRecent(text: string): HistoryReading | undefined {
  for (let i = recentHistories.length - 1; i >= 0; i--) {
    const recent = recentHistories[i] as (typeof recentHistories)[number];
    const known = recent.text;
    // `[a,b]` then `[a,b,c,d]`: the same text up to the closing bracket, then a comma.
    if (text.length <= known.length || text.charCodeAt(known.length - 1) !== 44) continue;
    // Substring equality, not startsWith: V8 compares those a block at a time, startsWith a character at a time.
    const shared = known.length - 1;
    if (text.substring(0, shared) !== known.substring(0, shared)) continue;
    let added: JsonValue;
    try {
      added = JSON.parse(`[${text.substring(known.length)}`) as JsonValue;
    } catch {
      continue;
    }
    // `[a,b,]` is not JSON: only a history that adds messages extends a known one.
    if (!Array.isArray(added) || added.length === 0) continue;
    return {
      length: recent.reading.length + added.length,
      shown: [...recent.reading.shown, ...shownResults(added)],
    };
  }
  return undefined;
}

function readWhole(text: string): HistoryReading | undefined {
  let messages: JsonValue;
  try {
    messages = JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
  return Array.isArray(messages) ? { length: messages.length, shown: shownResults(messages) } : undefined;
}

function remember(text: string, reading: HistoryReading): void {
  if (text.charCodeAt(text.length - 1) !== 93) return; // only `...]`, so a later history can extend it
  recentHistories.push({ text, reading });
  if (recentHistories.length > MAX_RECENT_HISTORIES) recentHistories.shift();
}

/** Tool calls asked for in these messages (`tool_call` and `server_tool_call` parts). */
export function requestedCalls(messages: readonly JsonValue[]): RequestedCall[] {
  const calls: RequestedCall[] = [];
  for (const part of parts(messages)) {
    if (part.type !== 'tool_call' && part.type !== 'server_tool_call') continue;
    const tool = typeof part.name === 'string' ? part.name.trim() : '';
    if (tool === '') continue;
    calls.push({ ...idOf(part.id), tool, args: argumentsOf(part) });
  }
  return calls;
}

/** Tool results shown in these messages (`tool_call_response` and `server_tool_call_response` parts). */
export function shownResults(messages: readonly JsonValue[]): ShownResult[] {
  const results: ShownResult[] = [];
  for (const part of parts(messages)) {
    if (part.type !== 'tool_call_response' && part.type !== 'server_tool_call_response') continue;
    const value = Object.hasOwn(part, 'response') ? part.response : part.result;
    results.push({
      ...idOf(part.id),
      result: value === undefined ? { captured: false } : { captured: true, value },
    });
  }
  return results;
}

function parts(messages: readonly JsonValue[]): { [key: string]: JsonValue }[] {
  const out: { [key: string]: JsonValue }[] = [];
  for (const message of messages) {
    if (!isJsonObject(message) || !Array.isArray(message.parts)) continue;
    for (const part of message.parts) if (isJsonObject(part)) out.push(part);
  }
  return out;
}

function idOf(id: JsonValue | undefined): { callId?: string } {
  const trimmed = typeof id === 'string' ? id.trim() : typeof id === 'number' ? String(id) : '';
  return trimmed === '' ? {} : { callId: trimmed };
}

/** Arguments are an object by the convention, a JSON string from some producers. */
function argumentsOf(part: { [key: string]: JsonValue }): Captured<JsonValue> {
  if (!Object.hasOwn(part, 'arguments')) return { captured: false };
  const value = part.arguments as JsonValue;
  // Already parsed JSON (the messages were): nothing to convert, unlike raw attribute values.
  return typeof value === 'string' ? capturedJson(value) : { captured: true, value };
}
