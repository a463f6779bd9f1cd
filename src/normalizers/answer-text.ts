/**
 * A turn's answer ({@link TurnDraft.answer}): the text the model wrote, as one string, whichever
 * convention recorded it. Each convention finds its text pieces (never its tool-call parts) and
 * joins them here, so every answer is joined and cut the same way. The view shows it; nothing
 * else reads it.
 */
import type { TurnDraft } from './convention.js';

/** The longest answer text a turn keeps. */
export const MAX_ANSWER_CHARS = 4_000;

/** Any character that is not white space: a piece without one says nothing. */
const VISIBLE = /\S/;

/**
 * The answer so far (undefined: no text yet) with `piece` on a line of its own. A piece that is
 * not a string, or only white space, adds nothing; past {@link MAX_ANSWER_CHARS} nothing more is
 * added (the cut drops it anyway).
 */
export function withAnswerText(sofar: string | undefined, piece: unknown): string | undefined {
  if (typeof piece !== 'string' || !VISIBLE.test(piece)) return sofar;
  if (sofar === undefined) return piece;
  return sofar.length > MAX_ANSWER_CHARS ? sofar : `${sofar}\n${piece}`;
}

/** The answer as a turn keeps it: at most {@link MAX_ANSWER_CHARS}, an ellipsis marking a cut. */
export function cutAnswer(text: string | undefined): string | undefined {
  return text !== undefined && text.length > MAX_ANSWER_CHARS ? `${text.slice(0, MAX_ANSWER_CHARS)}…` : text;
}

/** Sets the turn's answer from the text found, cut; a turn with no text gets none. */
export function setAnswer(turn: TurnDraft, text: string | undefined): void {
  const answer = cutAnswer(text);
  if (answer !== undefined) turn.answer = answer;
}
