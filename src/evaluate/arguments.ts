/**
 * The arguments family: a tool was called (any call, or its Nth in causal order) with
 * arguments that match. Reasons say what was expected and what each call had.
 */
import type { ArgumentRule } from '../scenario/native.js';
import { type RuleFamily, type RuleResult, ruleResult } from './rule.js';
import { checkToolCallArgs } from './tool-call-args.js';

/** Evaluates the `arguments` section. */
export const argumentsFamily: RuleFamily<readonly ArgumentRule[]> = (
  trajectory,
  rules,
  results: RuleResult[] = [],
) => {
  for (const rule of rules) {
    const { result, calls } = checkToolCallArgs(trajectory, rule);
    results.push(ruleResult('arguments.match', 'arguments', result, calls));
  }
  return results;
};
