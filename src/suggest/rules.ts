/**
 * The rules `toolpath suggest` can suggest, each one entry of a native scenario, and the
 * scenario document a list of them makes. One place turns a rule into scenario text, so the
 * rule checked alone against each run is the very rule printed.
 */
import type { JsonValue } from '../model/json.js';
import type { AgentGroup } from './runs.js';

/** One suggestable rule: where it goes in a native scenario and what it says. */
export type SuggestedRule =
  | { kind: 'tools.allowed'; tools: string[] }
  | { kind: 'tools.required'; tool: string }
  | { kind: 'tools.counts'; tool: string; max: number }
  | { kind: 'order.before'; before: string; after: string }
  | { kind: 'order.terminal'; tool: string }
  | { kind: 'arguments'; tool: string; key: string; value: JsonValue }
  | { kind: 'grounding'; tool: string; path: string; from: { tool: string; path: string } }
  | { kind: 'efficiency.maxCalls'; max: number };

/** A rule with its support: in how many of the agent's good runs it held with something to check. */
export interface Supported<R extends SuggestedRule = SuggestedRule> {
  rule: R;
  /** Runs where the rule held and was not vacuous (its tool was called). */
  support: number;
}

/** A short name for a rule in messages: `order.before: get_refund_policy before issue_refund`. */
export function ruleLabel(rule: SuggestedRule): string {
  switch (rule.kind) {
    case 'tools.allowed':
      return `tools.allowed: ${rule.tools.join(', ')}`;
    case 'tools.required':
    case 'order.terminal':
      return `${rule.kind}: ${rule.tool}`;
    case 'tools.counts':
      return `tools.counts: ${rule.tool} at most ${rule.max}`;
    case 'order.before':
      return `order.before: ${rule.before} before ${rule.after}`;
    case 'arguments':
      return `arguments: ${rule.tool}.${rule.key} = ${JSON.stringify(rule.value)}`;
    case 'grounding':
      return `grounding: ${rule.tool}.${rule.path} from ${rule.from.tool}.${rule.from.path}`;
    case 'efficiency.maxCalls':
      return `efficiency.maxCalls: ${rule.max}`;
  }
}

/** Where a rule sits in the document {@link scenarioDocument} makes, for its comment. */
export type RulePlace =
  | { at: 'key'; path: string[] }
  | { at: 'item'; path: (string | number)[]; scalar: boolean }
  | { at: 'value'; path: string[] };

/** The scenario id suggested for an agent's group. */
export function scenarioId(group: Pick<AgentGroup, 'key'>): string {
  const slug = group.key
    .replace(/^span:/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug === '' ? 'suggested' : `${slug}.suggested`;
}

/**
 * The native scenario document of these rules (in the order given), with the place of each rule
 * in it. Sections come in the order the schema lists them; nothing is added that no rule asks for.
 */
export function scenarioDocument(
  group: Pick<AgentGroup, 'key' | 'appliesTo'>,
  rules: readonly SuggestedRule[],
): { document: Record<string, unknown>; places: RulePlace[] } {
  const tools: { allowed?: string[]; required?: string[]; counts?: Record<string, { max: number }> } = {};
  const order: { before?: { before: string; after: string }[]; terminal?: string[] } = {};
  const args: { tool: string; match: { mode: 'superset'; args: Record<string, JsonValue> } }[] = [];
  const grounding: { tool: string; path: string; from: { tool: string; path: string } }[] = [];
  const efficiency: { maxCalls?: number } = {};
  const places: RulePlace[] = [];
  for (const rule of rules) {
    switch (rule.kind) {
      case 'tools.allowed':
        tools.allowed = [...rule.tools];
        places.push({ at: 'key', path: ['tools', 'allowed'] });
        break;
      case 'tools.required':
        tools.required ??= [];
        places.push({ at: 'item', path: ['tools', 'required', tools.required.length], scalar: true });
        tools.required.push(rule.tool);
        break;
      case 'tools.counts':
        // Defined, not assigned: a tool named `__proto__` is a key like any other.
        tools.counts = Object.fromEntries([
          ...Object.entries(tools.counts ?? {}),
          [rule.tool, { max: rule.max }],
        ]);
        places.push({ at: 'key', path: ['tools', 'counts', rule.tool] });
        break;
      case 'order.before':
        order.before ??= [];
        places.push({ at: 'item', path: ['order', 'before', order.before.length], scalar: false });
        order.before.push({ before: rule.before, after: rule.after });
        break;
      case 'order.terminal':
        order.terminal ??= [];
        places.push({ at: 'item', path: ['order', 'terminal', order.terminal.length], scalar: true });
        order.terminal.push(rule.tool);
        break;
      case 'arguments':
        places.push({ at: 'item', path: ['arguments', args.length], scalar: false });
        args.push({ tool: rule.tool, match: { mode: 'superset', args: { [rule.key]: rule.value } } });
        break;
      case 'grounding':
        places.push({ at: 'item', path: ['grounding', grounding.length], scalar: false });
        grounding.push({ tool: rule.tool, path: rule.path, from: { ...rule.from } });
        break;
      case 'efficiency.maxCalls':
        efficiency.maxCalls = rule.max;
        places.push({ at: 'value', path: ['efficiency', 'maxCalls'] });
        break;
    }
  }
  const document: Record<string, unknown> = { id: scenarioId(group) };
  const agent = group.appliesTo?.agent?.[0];
  const rootSpan = group.appliesTo?.rootSpan?.[0];
  if (agent !== undefined) document.appliesTo = { agent };
  else if (rootSpan !== undefined) document.appliesTo = { rootSpan };
  if (Object.keys(tools).length > 0) document.tools = tools;
  if (Object.keys(order).length > 0) document.order = order;
  if (args.length > 0) document.arguments = args;
  if (grounding.length > 0) document.grounding = grounding;
  if (Object.keys(efficiency).length > 0) document.efficiency = efficiency;
  return { document, places };
}
