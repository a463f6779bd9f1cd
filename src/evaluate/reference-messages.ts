/**
 * The reference trajectory given as a chat message list, as LangChain agentevals takes it: each
 * assistant message that asks for tools is one turn, its `tool_calls` the calls made in parallel.
 * OpenAI's shape (`{id, type: 'function', function: {name, arguments}}`, arguments a JSON string)
 * is read, and LangChain's (`{name, args}` on an `ai` message) too, so a reference copied out
 * of either works. User, system and tool messages, and assistant messages without tool calls,
 * carry no calls and are skipped.
 */
import { isJsonObject, type JsonValue } from '../model/json.js';
import type { JsonObject } from '../scenario/assertions.js';
import type { OutcomeRequirement } from './call-outcome.js';

/**
 * One call of the reference. `args` absent: the reference does not constrain the arguments.
 * `outcome` (`ok`, `error`): only a call that ended that way stands for it; absent: any call.
 */
export interface ReferenceCall {
  tool: string;
  args?: JsonObject;
  outcome?: OutcomeRequirement;
}

/** The reference turn by turn, or what makes the message list unreadable (with where it is). */
export type ReferenceReading = { ok: true; turns: ReferenceCall[][] } | { ok: false; problem: string };

const ASSISTANT_ROLES = new Set(['assistant', 'ai']);

/** A reference call with its 1-based number in the whole reference, as reasons name it. */
export interface NumberedCall extends ReferenceCall {
  number: number;
}

/** The reference's turns with numbered calls, and all its calls in one list; or why it cannot be read. */
export type NumberedReference =
  | { ok: true; turns: readonly NumberedCall[][]; calls: readonly NumberedCall[] }
  | { ok: false; problem: string };

/**
 * The reference of a section (given as `turns` or as `messages`), read and numbered. Not cached
 * by the section: a parsed scenario is a plain object a caller may still change, and numbering a
 * reference costs little beside matching it.
 */
export function numberedReference(section: {
  turns?: readonly (readonly {
    tool: string;
    args?: JsonObject;
    outcome?: OutcomeRequirement | undefined;
  }[])[];
  messages?: readonly Record<string, unknown>[];
}): NumberedReference {
  const reading = section.turns
    ? { ok: true as const, turns: section.turns }
    : readReferenceMessages(section.messages ?? []);
  if (!reading.ok) return reading;
  // Fields copied one by one: a spread into a literal with one more key is a slow path in V8.
  const turns: NumberedCall[][] = [];
  const calls: NumberedCall[] = [];
  for (const turn of reading.turns) {
    const numbered: NumberedCall[] = [];
    for (const call of turn) {
      const copy: NumberedCall = { tool: call.tool, number: calls.length + 1 };
      if (call.args !== undefined) copy.args = call.args;
      if (call.outcome !== undefined && call.outcome !== 'any') copy.outcome = call.outcome;
      numbered.push(copy);
      calls.push(copy);
    }
    turns.push(numbered);
  }
  return { ok: true, turns, calls };
}

/** Reads a chat message list into reference turns. Never throws: a bad message is a `problem`. */
export function readReferenceMessages(messages: readonly Record<string, unknown>[]): ReferenceReading {
  const turns: ReferenceCall[][] = [];
  for (const [index, message] of messages.entries()) {
    const at = `messages[${index}]`;
    if (!isJsonObject(message)) return { ok: false, problem: `${at}: expected a message object` };
    const role = message.role ?? message.type;
    const toolCalls = message.tool_calls;
    if (typeof role !== 'string' || !ASSISTANT_ROLES.has(role) || toolCalls == null) continue;
    if (!Array.isArray(toolCalls)) {
      return { ok: false, problem: `${at}.tool_calls: expected a list, got ${typeof toolCalls}` };
    }
    const turn: ReferenceCall[] = [];
    for (const [callIndex, toolCall] of toolCalls.entries()) {
      const read = readToolCall(toolCall, `${at}.tool_calls[${callIndex}]`);
      if ('problem' in read) return { ok: false, problem: read.problem };
      turn.push(read);
    }
    if (turn.length > 0) turns.push(turn);
  }
  return { ok: true, turns };
}

function readToolCall(toolCall: JsonValue | undefined, at: string): ReferenceCall | { problem: string } {
  if (!isJsonObject(toolCall)) return { problem: `${at}: expected a tool call object` };
  const fn = toolCall.function;
  const openAi = isJsonObject(fn);
  const name = openAi ? fn.name : toolCall.name;
  if (typeof name !== 'string' || name === '') {
    return { problem: `${at}: no tool name (expected function.name or name)` };
  }
  const where = openAi ? `${at}.function.arguments` : `${at}.args`;
  const raw = openAi ? fn.arguments : toolCall.args;
  if (raw === undefined || raw === null) return { tool: name };
  // Models send "" for a tool without parameters.
  if (raw === '') return { tool: name, args: {} };
  let args: unknown = raw;
  if (typeof raw === 'string') {
    try {
      args = JSON.parse(raw);
    } catch (error) {
      return { problem: `${where}: not valid JSON (${(error as Error).message})` };
    }
  }
  if (!isJsonObject(args as JsonValue)) {
    return { problem: `${where}: expected a JSON object of arguments, got ${JSON.stringify(args)}` };
  }
  return { tool: name, args: args as JsonObject };
}
