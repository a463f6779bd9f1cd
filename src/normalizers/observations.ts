/**
 * What agents that keep their memory as chat text show the model: smolagents writes each step's
 * outcome as a user message starting `Observation:` (a tool's result, a code action's printed
 * output, a managed agent's final answer), with no tool message and no call id. Such a message
 * last in a turn's input is what the previous step's calls returned. And the first message of a
 * history says which conversation a turn continues (a manager and the agent it manages each
 * keep their own).
 */
import type { ShownResult } from './convention.js';
import { type FlatMessage, textOrJson } from './openinference-messages.js';

const OBSERVATION = 'Observation:';
/** Characters of the first message's start and end a thread key keeps. */
const KEY_EDGE = 48;

/** The result an `Observation:` message last in the input shows, with no id or tool; else undefined. */
export function observationShown(messages: readonly FlatMessage[]): ShownResult | undefined {
  const last = messages[messages.length - 1];
  if (last?.role !== 'user') return undefined;
  const text = textOf(last as FlatMessage);
  if (text === undefined || !text.startsWith(OBSERVATION)) return undefined;
  return { result: textOrJson(text.slice(OBSERVATION.length).trim()) };
}

/**
 * A short key of the conversation the messages continue: the first message's role, length and
 * edges. Cheap (no hash of a long system prompt), and two agents' prompts differ in all three.
 */
export function threadKey(messages: readonly FlatMessage[]): string | undefined {
  const first = messages[0];
  if (!first) return undefined;
  const text = textOf(first);
  if (text === undefined) return undefined;
  const edges =
    text.length <= 2 * KEY_EDGE ? text : `${text.slice(0, KEY_EDGE)}…${text.slice(text.length - KEY_EDGE)}`;
  return `${first.role ?? ''}:${text.length}:${edges}`;
}

function textOf(message: FlatMessage): string | undefined {
  if (typeof message.content === 'string') return message.content;
  return message.texts.length > 0 ? message.texts.join('') : undefined;
}
