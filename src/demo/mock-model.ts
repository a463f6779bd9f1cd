/**
 * A scripted stand-in for an LLM: each step looks at the conversation so far and answers with
 * tool calls or a final text, as a real model would. Deterministic, no network.
 */
import type { JsonValue } from '../model/json.js';

/** One message part, in the OTel GenAI message shape. */
export type MessagePart =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: { [key: string]: JsonValue } }
  | { type: 'tool_call_response'; id: string; response: JsonValue };

/** A chat message, in the OTel GenAI message shape. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: MessagePart[];
  finish_reason?: string;
}

/** What the model answers: tool calls to make (in parallel when several), or the final text. */
export type ModelReply =
  | { toolCalls: { name: string; arguments: { [key: string]: JsonValue } }[] }
  | { text: string };

/** One step of a script: the reply, given what the model has seen. */
export type ScriptStep = (seen: ReadonlyMap<string, JsonValue>) => ModelReply;

/**
 * A scripted model: step N answers the Nth request. `seen` maps each tool name to the latest
 * result the conversation holds, so a step can use (or ignore) what it was shown.
 */
export class ScriptedModel {
  readonly name = 'mock-support-model';
  #step = 0;
  #callCounter = 0;

  constructor(private readonly steps: readonly ScriptStep[]) {}

  /** The model's reply to this conversation, as an assistant message. */
  reply(conversation: readonly ChatMessage[], toolNames: ReadonlyMap<string, string>): ChatMessage {
    const step = this.steps[this.#step++];
    if (!step)
      return { role: 'assistant', parts: [{ type: 'text', content: 'Done.' }], finish_reason: 'stop' };
    const answer = step(latestResults(conversation, toolNames));
    if ('text' in answer)
      return { role: 'assistant', parts: [{ type: 'text', content: answer.text }], finish_reason: 'stop' };
    return {
      role: 'assistant',
      finish_reason: 'tool_call',
      parts: answer.toolCalls.map((call) => ({
        type: 'tool_call',
        id: `call_${++this.#callCounter}`,
        ...call,
      })),
    };
  }
}

function latestResults(conversation: readonly ChatMessage[], toolNames: ReadonlyMap<string, string>) {
  const seen = new Map<string, JsonValue>();
  for (const message of conversation) {
    for (const part of message.parts) {
      if (part.type === 'tool_call_response') seen.set(toolNames.get(part.id) ?? part.id, part.response);
    }
  }
  return seen;
}
