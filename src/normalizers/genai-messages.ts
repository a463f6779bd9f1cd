/**
 * The OTel GenAI chat message format (`gen_ai.input.messages` / `gen_ai.output.messages`):
 * `[{role, parts: [...]}]` with `tool_call` parts `{id, name, arguments}` and
 * `tool_call_response` parts `{id, response}`. The registry's own example writes `result` and
 * pads an id with a space: both are accepted.
 */
import type { JsonValue } from '../model/json.js';
import { isJsonObject } from '../model/json.js';
import type { Attributes, AttributeValue } from '../model/span-record.js';
import { noteOf, type TextExtension, type TextNote, type TextRef } from '../model/text-extensions.js';
import type { Captured } from '../model/trajectory.js';
import { withAnswerText } from './answer-text.js';
import { capturedJson, parsedJson } from './attributes.js';
import type { RequestedCall, ShownResult } from './convention.js';
import { isToolCallFinish } from './unread-activity.js';

/** The messages of a messages attribute; undefined when absent or not a list. */
export function readMessages(attributes: Attributes, key: string): JsonValue[] | undefined {
  if (!Object.hasOwn(attributes, key)) return undefined;
  const value = parsedJson(attributes[key] as AttributeValue);
  return Array.isArray(value) ? value : undefined;
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
  /** What stands for `head`, when it was noted (model/text-extensions.ts). */
  ref: TextRef | undefined;
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
 * A turn's input history (`gen_ai.input.messages`), given its output messages (`output`, read
 * from `outputKey`). The history is read incrementally: each turn's history is the previous
 * turn's plus what happened since, serialized the same way, so when a recently read history is a
 * prefix of this one only the new messages are parsed. Without that, reading every turn of a
 * conversation re-parses it from the start (quadratic in its length). History and reply are then
 * remembered as one, for the next turn's history holds both: only the tool results after them are
 * left to parse. A history the decoder noted to extend an earlier text (model/text-extensions.ts)
 * is read from the note, without comparing or even touching the text. Pure: the result depends
 * only on the text, wherever the prefix came from (a note is a fact about the text). The
 * reading is the one remembered: a turn's `shown` is read-only (TurnDraft says so).
 */
export function readHistory(
  attributes: Attributes,
  inputKey: string,
  outputKey: string,
  output: readonly JsonValue[] | undefined,
): HistoryReading | undefined {
  const note = noteOf(attributes, inputKey);
  const history = readRememberedHistory(attributes, inputKey, note);
  if (!history || !output || history.length === 0 || output.length === 0) return history;
  const inputText = attributes[inputKey];
  const outputText = attributes[outputKey];
  // `[a,b]` and `[c]` make `[a,b,c]`, which holds exactly the messages of both.
  if (
    typeof inputText === 'string' &&
    typeof outputText === 'string' &&
    lastCharCode(inputText, note?.extension) === CLOSE_BRACKET &&
    outputText.charCodeAt(0) === OPEN_BRACKET &&
    outputText.charCodeAt(outputText.length - 1) === CLOSE_BRACKET
  ) {
    const reading = {
      length: history.length + output.length,
      shown: withShownResults(history.shown, output),
    };
    const ref = note?.ref;
    remember({
      head: inputText,
      ref,
      tail: outputText,
      length: inputText.length + outputText.length - 1,
      reading,
    });
    // The next history usually records the reply as an input message, without its finish_reason:
    // remembered that way too, the next turn parses only the tool results after it, not the reply again.
    const reply = withoutFinishReason(outputText);
    if (reply !== undefined) {
      remember({ head: inputText, ref, tail: reply, length: inputText.length + reply.length - 1, reading });
    }
  }
  return history;
}

const FINISH_REASON_MEMBER = ',"finish_reason":"';
const QUOTE = 34;
const BACKSLASH = 92;

/**
 * `[{…,"finish_reason":"stop"}]` as `[{…}]`; undefined for a reply that does not end so. The
 * value holds no quote or backslash, so the quotes around it and its key are not escaped: the
 * member is the last one of the last message, and dropping it leaves that message's parts as
 * they were (a reading depends only on them and on the count of messages).
 */
function withoutFinishReason(reply: string): string | undefined {
  const end = reply.length - 3;
  if (!reply.endsWith('"}]')) return undefined;
  const member = reply.lastIndexOf(FINISH_REASON_MEMBER, end);
  if (member === -1) return undefined;
  for (let i = member + FINISH_REASON_MEMBER.length; i < end; i++) {
    const code = reply.charCodeAt(i);
    if (code === QUOTE || code === BACKSLASH) return undefined;
  }
  return `${reply.substring(0, member)}}]`;
}

const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;

/** The reading of a history, remembered for later turns; undefined when absent or not a list. */
function readRememberedHistory(
  attributes: Attributes,
  key: string,
  note: TextNote | undefined,
): HistoryReading | undefined {
  const text = attributes[key];
  if (typeof text !== 'string' || text.length < MIN_INCREMENTAL_TEXT) {
    const messages = readMessages(attributes, key);
    if (!messages) return undefined;
    const reading = { length: messages.length, shown: shownResults(messages) };
    // Remembered all the same: the next turn's history, long by then, extends this one.
    if (typeof text === 'string') rememberText(text, reading, note);
    return reading;
  }
  const extension = note?.extension;
  const reading = (extension && extendNoted(extension)) ?? extendRecent(text) ?? readWhole(text);
  if (reading) rememberText(text, reading, note);
  return reading;
}

/**
 * A history noted to extend an earlier text (see text-extensions.ts) that was read recently:
 * only what was added is parsed, and the text itself is never touched. `[a,b]` (or `[a,b]` with
 * the reply `[c]`, remembered as `[a,b,c]`) then `added` = `,c,d]`: the messages after the known
 * ones are `[d]`.
 */
function extendNoted({ earlier, added }: TextExtension): HistoryReading | undefined {
  if (added.charCodeAt(0) !== COMMA) return undefined;
  for (let i = recentHistories.length - 1; i >= 0; i--) {
    const recent = recentHistories[i] as RecentHistory;
    if (recent.ref !== earlier) continue;
    let from = 1;
    const tail = recent.tail;
    if (tail !== undefined) {
      // `,c` first (the reply without its brackets), then a comma before the new messages.
      const end = tail.length - 1;
      if (added.charCodeAt(end) !== COMMA || added.substring(1, end) !== tail.substring(1, end)) continue;
      from = end + 1;
    }
    const reading = withAdded(recent.reading, added.substring(from));
    if (reading) return reading;
  }
  return undefined;
}

function extendRecent(text: string): HistoryReading | undefined {
  for (let i = recentHistories.length - 1; i >= 0; i--) {
    const recent = recentHistories[i] as RecentHistory;
    const known = recent.length;
    // `[a,b]` then `[a,b,c,d]`: the same text up to the closing bracket, then a comma.
    if (text.length <= known || text.charCodeAt(known - 1) !== COMMA || !isPrefixOf(recent, text)) continue;
    const reading = withAdded(recent.reading, text.substring(known));
    if (reading) return reading;
  }
  return undefined;
}

/**
 * A known reading extended by the messages of `rest` (`d]` for the messages `[d]`); undefined
 * when they are not JSON or none (`[a,b,]` is not JSON: only a history that adds messages
 * extends a known one).
 */
function withAdded(known: HistoryReading, rest: string): HistoryReading | undefined {
  // `[]` then `[,d]` is not JSON either.
  if (known.length === 0) return undefined;
  let added: JsonValue;
  try {
    added = JSON.parse(`[${rest}`) as JsonValue;
  } catch {
    return undefined;
  }
  if (!Array.isArray(added) || added.length === 0) return undefined;
  return { length: known.length + added.length, shown: withShownResults(known.shown, added) };
}

/** A text's last character, from its note when it has one: reading the text would copy it into one piece. */
function lastCharCode(text: string, extension: TextExtension | undefined): number {
  const source = extension === undefined ? text : extension.added;
  return source.charCodeAt(source.length - 1);
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
function rememberText(text: string, reading: HistoryReading, note: TextNote | undefined): void {
  if (lastCharCode(text, note?.extension) !== CLOSE_BRACKET) return;
  remember({ head: text, ref: note?.ref, tail: undefined, length: text.length, reading });
}

function remember(recent: RecentHistory): void {
  recentHistories.push(recent);
  if (recentHistories.length > MAX_RECENT_HISTORIES) recentHistories.shift();
}

/**
 * Tool calls asked for in these messages (`tool_call` and `server_tool_call` parts). Counted
 * first, so the list is made at its size (one grown by push reserves room for 17).
 */
export function requestedCalls(messages: readonly JsonValue[]): RequestedCall[] {
  let count = 0;
  for (const message of messages) {
    const parts = partsOf(message);
    if (parts !== undefined) for (const part of parts) if (requestedTool(part) !== '') count++;
  }
  const calls: RequestedCall[] = new Array(count);
  let at = 0;
  for (const message of messages) {
    const parts = partsOf(message);
    if (parts === undefined) continue;
    for (const part of parts) {
      const tool = requestedTool(part);
      if (tool === '') continue;
      const call = part as { [key: string]: JsonValue };
      const callId = idOf(call.id);
      const args = argumentsOf(call);
      // Literals, not a spread of an optional id: spreading was most of this function's time.
      calls[at++] = callId === undefined ? { tool, args } : { callId, tool, args };
    }
  }
  return calls;
}

/**
 * Tool requests in output messages that {@link requestedCalls} does not read, said for the
 * unread-activity guard: a part whose type names a tool or function but is none this format
 * defines, a `tool_call` part without a name, and a message finishing for a tool call with no
 * `tool_call` part. Undefined when there is none (the usual case: nothing is allocated).
 */
export function unreadRequests(messages: readonly JsonValue[], key: string): string[] | undefined {
  let unread: string[] | undefined;
  let calls = 0;
  let toolFinish: string | undefined;
  for (const message of messages) {
    const parts = partsOf(message);
    if (parts !== undefined) {
      for (const part of parts) {
        if (!isJsonObject(part) || typeof part.type !== 'string') continue;
        const type = part.type;
        if (type === 'tool_call' || type === 'server_tool_call') {
          calls++;
          if (requestedTool(part) === '')
            unread = withItem(unread, `a ${type} part without a name in ${key}`);
        } else if (!KNOWN_TOOL_PARTS.has(type) && TOOLISH_TYPE.test(type)) {
          unread = withItem(
            unread,
            `a part of type ${JSON.stringify(type)} in ${key}, which no convention reads`,
          );
        }
      }
    }
    const finish = isJsonObject(message) ? message.finish_reason : undefined;
    if (typeof finish === 'string' && isToolCallFinish(finish)) toolFinish = finish;
  }
  if (toolFinish !== undefined && calls === 0)
    unread = withItem(
      unread,
      `finish_reason ${JSON.stringify(toolFinish)} in ${key}, with no tool_call part`,
    );
  return unread;
}

/** The list with the item added; a new list for none. */
function withItem(list: string[] | undefined, item: string): string[] {
  if (!list) return [item];
  list.push(item);
  return list;
}

const KNOWN_TOOL_PARTS = new Set([
  'tool_call',
  'server_tool_call',
  'tool_call_response',
  'server_tool_call_response',
]);
const TOOLISH_TYPE = /tool|function/i;

/** The tool a `tool_call` (or `server_tool_call`) part asks for; '' for any other part. */
function requestedTool(part: JsonValue): string {
  if (!isJsonObject(part) || (part.type !== 'tool_call' && part.type !== 'server_tool_call')) return '';
  return typeof part.name === 'string' ? part.name.trim() : '';
}

/** Tool results shown in these messages (`tool_call_response` and `server_tool_call_response` parts). */
export function shownResults(messages: readonly JsonValue[]): ShownResult[] {
  const results: ShownResult[] = new Array(countShownResults(messages));
  fillShownResults(messages, results, 0);
  return results;
}

/**
 * The results `earlier` followed by those shown in these messages, in an array made at its size;
 * `earlier` itself when the messages show none (a reply rarely does: a copy of every earlier
 * result per turn would be quadratic in a conversation). Shared as readings are.
 */
function withShownResults(
  earlier: readonly ShownResult[],
  messages: readonly JsonValue[],
): readonly ShownResult[] {
  const added = countShownResults(messages);
  if (added === 0) return earlier;
  const results: ShownResult[] = new Array(earlier.length + added);
  for (let i = 0; i < earlier.length; i++) results[i] = earlier[i] as ShownResult;
  fillShownResults(messages, results, earlier.length);
  return results;
}

function countShownResults(messages: readonly JsonValue[]): number {
  let count = 0;
  for (const message of messages) {
    const parts = partsOf(message);
    if (parts !== undefined) for (const part of parts) if (isResultPart(part)) count++;
  }
  return count;
}

/** Writes the results shown in these messages into `results`, from position `at` on. */
function fillShownResults(messages: readonly JsonValue[], results: ShownResult[], at: number): void {
  for (const message of messages) {
    const parts = partsOf(message);
    if (parts === undefined) continue;
    for (const part of parts) {
      if (!isResultPart(part)) continue;
      const value = Object.hasOwn(part, 'response') ? part.response : part.result;
      const result: Captured<JsonValue> =
        value === undefined ? { captured: false } : { captured: true, value };
      const callId = idOf(part.id);
      results[at++] = callId === undefined ? { result } : { callId, result };
    }
  }
}

function isResultPart(part: JsonValue): part is { [key: string]: JsonValue } {
  return (
    isJsonObject(part) && (part.type === 'tool_call_response' || part.type === 'server_tool_call_response')
  );
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

/**
 * The text parts of a turn's output messages (`{type: "text", content}`), joined; undefined when
 * there are none. Not cut: the caller cuts (see answer-text.ts).
 */
export function answerText(output: readonly JsonValue[]): string | undefined {
  let text: string | undefined;
  for (const message of output) {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) continue;
    const parts = message.parts;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      if (typeof part !== 'object' || part === null || Array.isArray(part)) continue;
      if (part.type === 'text') text = withAnswerText(text, part.content);
    }
  }
  return text;
}
