/**
 * The trajectory-assertion JSON read into the native rules, so one evaluator serves both and the
 * results keep that document's names (`tool_call_args:<tool>`, `tool_sequence`,
 * `no_unexpected_tool`, `expected_tool_calls:<tool>`, `answer_contains:<text>`,
 * `answer_matches:<pattern>`). Its `subset` mode ("every key of args equals the same key of the
 * input") is the native `superset`: modes are read from the call's side.
 */
import type { ArgsMatch, AssertionSet } from './assertions.js';
import type { ArgsMatchSpec, Rules } from './native.js';

/** The top-level keys that mark a trajectory-assertion JSON document. */
export const ASSERTION_JSON_KEYS = [
  'tool_call_args',
  'expected_tool_sequence',
  'allowed_tools',
  'expected_tool_calls',
  'answer_contains',
  'answer_matches',
];

/** The native rules of a parsed trajectory-assertion set; empty lists assert nothing and are left out. */
export function assertionJsonRules(assertions: AssertionSet): Rules {
  const rules: Rules = {};
  if (assertions.tool_call_args && assertions.tool_call_args.length > 0) {
    rules.arguments = assertions.tool_call_args.map((entry) => ({
      tool: entry.tool,
      ...(entry.call_index !== undefined && { call: entry.call_index }),
      match: nativeMatch(entry.match),
    }));
  }
  if (assertions.expected_tool_sequence && assertions.expected_tool_sequence.length > 0) {
    const steps = assertions.expected_tool_sequence.map((step) => ({
      tool: step.tool,
      ...(step.match && { match: nativeMatch(step.match) }),
    }));
    rules.order = { sequence: { mode: 'in_order', steps } };
  }
  const required = assertions.expected_tool_calls ?? [];
  if (assertions.allowed_tools || required.length > 0) {
    rules.tools = {
      ...(assertions.allowed_tools && { allowed: assertions.allowed_tools }),
      ...(required.length > 0 && { required }),
    };
  }
  const contains = assertions.answer_contains ?? [];
  const matches = assertions.answer_matches ?? [];
  if (contains.length > 0 || matches.length > 0) {
    // Hard: a CI gate on this format fails when either layer, trajectory or answer, fails.
    rules.answer = {
      severity: 'hard',
      ...(contains.length > 0 && {
        contains: contains.map((text) => ({ text, name: `answer_contains:${text}` })),
      }),
      ...(matches.length > 0 && {
        matches: matches.map((match) => ({ ...match, name: `answer_matches:${match.pattern}` })),
      }),
    };
  }
  return rules;
}

function nativeMatch(match: ArgsMatch): ArgsMatchSpec {
  if (match.mode === 'regex') {
    return {
      mode: 'regex',
      pattern: match.pattern,
      ...(match.flags !== undefined && { flags: match.flags }),
      regex: match.regex,
    };
  }
  return { mode: match.mode === 'subset' ? 'superset' : 'exact', args: match.args };
}
