/**
 * The order family, on happens-before (never on raw start times): `before` constraints (a
 * partial order; calls asked for in one turn are not ordered), terminal tools (nothing causally
 * after them), and an ordered sequence of steps with per-step argument match.
 */
import type { OrderSection } from '../scenario/native.js';
import type { RuleFamily, RuleResult } from './rule.js';
import { checkToolSequence } from './tool-sequence.js';

/** Evaluates the `order` section. */
export const orderFamily: RuleFamily<OrderSection> = (trajectory, section) => {
  const results: RuleResult[] = [];
  if (section.sequence) {
    const { result, calls } = checkToolSequence(trajectory, section.sequence.steps);
    results.push({ rule: 'order.sequence', dimension: 'order', ...result, calls });
  }
  return results;
};
