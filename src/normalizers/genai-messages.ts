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

function* parts(messages: readonly JsonValue[]): Generator<{ [key: string]: JsonValue }> {
  for (const message of messages) {
    if (!isJsonObject(message) || !Array.isArray(message.parts)) continue;
    for (const part of message.parts) if (isJsonObject(part)) yield part;
  }
}

function idOf(id: JsonValue | undefined): { callId?: string } {
  const trimmed = typeof id === 'string' ? id.trim() : typeof id === 'number' ? String(id) : '';
  return trimmed === '' ? {} : { callId: trimmed };
}

/** Arguments are an object by the convention, a JSON string from some producers. */
function argumentsOf(part: { [key: string]: JsonValue }): Captured<JsonValue> {
  return Object.hasOwn(part, 'arguments') ? capturedJson(part.arguments as JsonValue) : { captured: false };
}
