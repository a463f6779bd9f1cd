/**
 * Graded scores against a reference trajectory, as ADK, Vertex, Ragas and promptfoo report them
 * (trajectory precision and recall, tool-call F1), from the reference rule's optimal pairing: the
 * count of pairs it holds for sure, so no other pairing scores higher.
 */
import type { ReferenceScores } from '../model/report.js';

/**
 * Precision (paired / calls), recall (paired / reference calls) and their harmonic mean. An empty
 * side has nothing unpaired and scores 1; F1 is 0 when both precision and recall are.
 */
export function referenceScores(paired: number, references: number, calls: number): ReferenceScores {
  const precision = calls === 0 ? 1 : paired / calls;
  const recall = references === 0 ? 1 : paired / references;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}
