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
  shown: readonly ShownResult[];
}

/**
 * A recently read history, as the text it was read from: `head` alone, or, for a turn's history
 * and reply remembered as one, `head` (the history `[a,b]`) then `tail` (the reply `[c]`) standing
 * for `[a,b,c]`. Kept as the two texts: joining them into one would copy the whole history again
 * for every turn.
 */
interface RecentHistory {
  head: string;
  tail: string | undefined;
  /** The length of the text it stands for. */
  length: number;
  reading: HistoryReading;
}

/** Recently read histories, most recent last; a few suffice (the turns of the traces in flight). */
const recentHistories: RecentHistory[] = [];
const MAX_RECENT_HISTORIES = 16;
/** Histories shorter than this are parsed whole: the lookup would cost more than it saves. */
const MIN_INCREMENTAL_TEXT = 512;

/**
 * A turn's input history (`gen_ai.input.messages`) and its output messages. The history is read
 * incrementally: each turn's history is the previous turn's plus what happened since, serialized
 * the same way, so when a recently read history is a prefix of this one only the new messages
 * are parsed. Without that, reading every turn of a conversation re-parses it from the start
 * (quadratic in its length). History and reply are then remembered as one, for the next turn's
 * history holds both: only the tool results after them are left to parse. Pure: the result
 * depends only on the text, wherever the prefix came from.
 */
export function readExchange(
  attributes: Attributes,
  inputKey: string,
  outputKey: string,
): { input: HistoryReading | undefined; output: JsonValue[] | undefined } {
  const history = readRememberedHistory(attributes, inputKey);
  const output = readMessages(attributes, outputKey);
  // Shared with the remembered reading: a turn's `shown` is read-only (TurnDraft says so).
  const input = history && { length: history.length, shown: history.shown };
  if (!history || !output || history.length === 0 || output.length === 0) return { input, output };
  const inputText = attributes[inputKey];
  const outputText = attributes[outputKey];
  // `[a,b]` and `[c]` make `[a,b,c]`, which holds exactly the messages of both.
  if (
    typeof inputText === 'string' &&
    typeof outputText === 'string' &&
    inputText.charCodeAt(inputText.length - 1) === CLOSE_BRACKET &&
    outputText.charCodeAt(0) === OPEN_BRACKET &&
    outputText.charCodeAt(outputText.length - 1) === CLOSE_BRACKET
  ) {
    // A reply rarely holds tool results: then the history's results stand as they are, not
    // copied (a copy of every earlier result per turn, quadratic in a conversation).
    const replied = shownResults(output);
    remember({
      head: inputText,
      tail: outputText,
      length: inputText.length + outputText.length - 1,
      reading: {
        length: history.length + output.length,
        shown: replied.length === 0 ? history.shown : history.shown.concat(replied),
      },
    });
  }
  return { input, output };
}

const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;

/** The reading of a history, remembered for later turns; undefined when absent or not a list. */
function readRememberedHistory(attributes: Attributes, key: string): HistoryReading | undefined {
  const text = attributes[key];
  if (typeof text !== 'string' || text.length < MIN_INCREMENTAL_TEXT) {
    const messages = readMessages(attributes, key);
    if (!messages) return undefined;
    const reading = { length: messages.length, shown: shownResults(messages) };
    // Remembered all the same: the next turn's history, long by then, extends this one.
    if (typeof text === 'string') rememberText(text, reading);
    return reading;
  }
  const reading = extendRecent(text) ?? readWhole(text);
  if (reading) rememberText(text, reading);
  return reading;
}

function extendRecent(text: string): HistoryReading | undefined {
  for (let i = recentHistories.length - 1; i >= 0; i--) {
    const recent = recentHistories[i] as RecentHistory;
    const known = recent.length;
    // `[a,b]` then `[a,b,c,d]`: the same text up to the closing bracket, then a comma.
    if (text.length <= known || text.charCodeAt(known - 1) !== COMMA || !isPrefixOf(recent, text)) continue;
    let added: JsonValue;
    try {
      added = JSON.parse(`[${text.substring(known)}`) as JsonValue;
    } catch {
      continue;
    }
    // `[a,b,]` is not JSON: only a history that adds messages extends a known one.
    if (!Array.isArray(added) || added.length === 0) continue;
    const shown = shownResults(added);
    return {
      length: recent.reading.length + added.length,
      // Not copied when nothing was added (as for a reply), and shared as readings are.
      shown: shown.length === 0 ? recent.reading.shown : recent.reading.shown.concat(shown),
    };
  }
  return undefined;
}

/**
 * Whether the text the recent history stands for, but its closing bracket, starts `text`.
 * Substring equality, not startsWith: V8 compares those a block at a time, startsWith a
 * character at a time.
 */
function isPrefixOf(recent: RecentHistory, text: string): boolean {
  const { head, tail } = recent;
  if (tail === undefined) {
    const shared = head.length - 1;
    return text.substring(0, shared) === head.substring(0, shared);
  }
  // `[a,b` + `,` + `c` (the reply without its brackets). The reply first: it is short, and where
  // the history records the reply differently (an output message's `finish_reason`), it differs.
  const comma = head.length - 1;
  const end = recent.length - 1;
  return (
    text.charCodeAt(comma) === COMMA &&
    text.substring(comma + 1, end) === tail.substring(1, tail.length - 1) &&
    text.substring(0, comma) === head.substring(0, comma)
  );
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

/** Remembers a history read from one text; only `...]`, so a later history can extend it. */
function rememberText(text: string, reading: HistoryReading): void {
  if (text.charCodeAt(text.length - 1) !== CLOSE_BRACKET) return;
  remember({ head: text, tail: undefined, length: text.length, reading });
}

function remember(recent: RecentHistory): void {
  recentHistories.push(recent);
  if (recentHistories.length > MAX_RECENT_HISTORIES) recentHistories.shift();
}

/** Tool calls asked for in these messages (`tool_call` and `server_tool_call` parts). */
export function requestedCalls(messages: readonly JsonValue[]): RequestedCall[] {
  const calls: RequestedCall[] = [];
  for (const message of messages) {
    const parts = partsOf(message);
    if (parts === undefined) continue;
    for (const part of parts) {
      if (!isJsonObject(part) || (part.type !== 'tool_call' && part.type !== 'server_tool_call')) continue;
      const tool = typeof part.name === 'string' ? part.name.trim() : '';
      if (tool === '') continue;
      const callId = idOf(part.id);
      const args = argumentsOf(part);
      // Literals, not a spread of an optional id: spreading was most of this function's time.
      calls.push(callId === undefined ? { tool, args } : { callId, tool, args });
    }
  }
  return calls;
}

/** Tool results shown in these messages (`tool_call_response` and `server_tool_call_response` parts). */
export function shownResults(messages: readonly JsonValue[]): ShownResult[] {
  const results: ShownResult[] = [];
  for (const message of messages) {
    const parts = partsOf(message);
    if (parts === undefined) continue;
    for (const part of parts) {
      if (!isJsonObject(part)) continue;
      if (part.type !== 'tool_call_response' && part.type !== 'server_tool_call_response') continue;
      const value = Object.hasOwn(part, 'response') ? part.response : part.result;
      const result: Captured<JsonValue> =
        value === undefined ? { captured: false } : { captured: true, value };
      const callId = idOf(part.id);
      results.push(callId === undefined ? { result } : { callId, result });
    }
  }
  return results;
}

/** A message's parts, when it is an object with a list of them. */
function partsOf(message: JsonValue): JsonValue[] | undefined {
  if (!isJsonObject(message)) return undefined;
  const parts = message.parts;
  return Array.isArray(parts) ? parts : undefined;
}

/** The trimmed call id, or undefined when there is none. */
function idOf(id: JsonValue | undefined): string | undefined {
  const trimmed = typeof id === 'string' ? id.trim() : typeof id === 'number' ? String(id) : '';
  return trimmed === '' ? undefined : trimmed;
}

/** Arguments are an object by the convention, a JSON string from some producers. */
function argumentsOf(part: { [key: string]: JsonValue }): Captured<JsonValue> {
  if (!Object.hasOwn(part, 'arguments')) return { captured: false };
  const value = part.arguments as JsonValue;
  // Already parsed JSON (the messages were): nothing to convert, unlike raw attribute values.
  return typeof value === 'string' ? capturedJson(value) : { captured: true, value };
}
