/**
 * Suggestions as text: YAML, one native scenario document per agent, each rule commented with
 * its support ("held in 12 of 12 runs") and the bad runs it fails; or JSON, the scenarios with
 * the same facts as fields. The same suggestions always give the same bytes.
 */
import { Document, isMap, isScalar, type Node, type Pair } from 'yaml';
import { type RulePlace, ruleLabel, scenarioDocument } from './rules.js';
import type { SuggestRun } from './runs.js';
import type { AgentSuggestion, RuleSuggestion, Suggestions } from './suggest.js';

/** How a run is named in output: its source, and its trace id when the source held several traces. */
export type RunNamer = (run: SuggestRun) => string;

/** A namer for these runs. */
export function runNamer(runs: readonly SuggestRun[]): RunNamer {
  const perSource = new Map<string, number>();
  for (const run of runs) perSource.set(run.source, (perSource.get(run.source) ?? 0) + 1);
  return (run) =>
    (perSource.get(run.source) ?? 0) > 1 ? `${run.source} (trace ${run.trajectory.traceId})` : run.source;
}

/** `held in 3 of 3 runs`, and with bad runs which ones it fails. */
function ruleComment(rule: RuleSuggestion, agent: AgentSuggestion, name: RunNamer): string {
  const runs = agent.group.runs.length;
  // It held in every run; in some it may have had nothing to check (its tool was not called).
  const checked = rule.support === runs ? '' : ` (${rule.support} with something to check)`;
  const held = ` held in ${runs} of ${runs} ${runs === 1 ? 'run' : 'runs'}${checked}`;
  if (agent.bad.length === 0) return held;
  if (rule.catches.length === 0) return `${held}; fails no bad run`;
  const fails = rule.catches.map((c) => `${name(c.run)}${c.severity === 'warning' ? ' (warning)' : ''}`);
  return `${held}; fails ${fails.join(', ')}`;
}

/** The YAML text: one document per agent, `---` between them. */
export function renderYaml(suggestions: Suggestions, name: RunNamer): string {
  return suggestions.agents.map((agent) => agentYaml(agent, name)).join('---\n');
}

/** One scenario file to write per agent with rules: a file name made from the agent's name, and its text. */
export interface ScenarioFile {
  file: string;
  text: string;
}

/**
 * Each agent's scenario as a file `toolpath eval -s` loads: YAML with its comments, or the bare
 * scenario as JSON. Names are the agent's, made safe for any file system and unique.
 */
export function scenarioFiles(
  suggestions: Suggestions,
  name: RunNamer,
  format: 'yaml' | 'json',
): ScenarioFile[] {
  const taken = new Set<string>();
  const files: ScenarioFile[] = [];
  for (const agent of suggestions.agents) {
    if (agent.rules.length === 0) continue;
    const stem = safeStem(agent.group.key);
    let file = `${stem}.scenario.${format}`;
    for (let n = 2; taken.has(file.toLowerCase()); n++) file = `${stem}-${n}.scenario.${format}`;
    taken.add(file.toLowerCase());
    const text =
      format === 'yaml'
        ? agentYaml(agent, name)
        : `${JSON.stringify(
            scenarioDocument(
              agent.group,
              agent.rules.map(({ rule }) => rule),
            ).document,
            null,
            2,
          )}\n`;
    files.push({ file, text });
  }
  return files;
}

/** `billing agent/v2` as `billing-agent-v2`; traces naming no agent as `no-agent`. */
function safeStem(agent: string): string {
  const stem = agent
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 80);
  return stem === '' ? 'no-agent' : stem;
}

function agentYaml(agent: AgentSuggestion, name: RunNamer): string {
  if (agent.rules.length === 0) return noRules(agent);
  const { document, places } = scenarioDocument(
    agent.group,
    agent.rules.map(({ rule }) => rule),
  );
  const yaml = new Document(document);
  const runs = agent.group.runs.length;
  const who = agent.group.key === '' ? 'traces naming no agent' : agent.group.key;
  const header = [
    ` Suggested by toolpath suggest from ${runs} good ${runs === 1 ? 'run' : 'runs'} of ${who}.`,
    ' Every rule passed on every good run; review each: a habit of these runs is not always a rule.',
  ];
  if (agent.dropped > 0)
    header.push(
      ` ${agent.dropped} mined ${agent.dropped === 1 ? 'rule' : 'rules'} left out: the evaluator did not pass ${agent.dropped === 1 ? 'it' : 'them'} on every good run.`,
    );
  yaml.commentBefore = header.join('\n');
  agent.rules.forEach((rule, index) => {
    comment(yaml, places[index] as RulePlace, ruleComment(rule, agent, name));
  });
  if (agent.bad.length > 0) {
    yaml.comment =
      agent.uncaught.length === 0
        ? ` Every bad run fails a rule above.`
        : ` No rule above fails these bad runs (write those rules by hand): ${agent.uncaught.map(name).join(', ')}`;
  }
  return yaml.toString({ lineWidth: 0 });
}

/** An agent with nothing to suggest gets a comment, not a scenario no loader would take. */
function noRules(agent: AgentSuggestion): string {
  const runs = agent.group.runs.length;
  const who = agent.group.key === '' ? 'traces naming no agent' : agent.group.key;
  return `# toolpath suggest: no rule held on every one of the ${runs} good ${runs === 1 ? 'run' : 'runs'} of ${who} with the support asked for\n`;
}

/** Puts a rule's comment where it reads best: before its key or list item, after a scalar. */
function comment(yaml: Document, place: RulePlace, text: string): void {
  if (place.at === 'key') {
    const parent = yaml.getIn(place.path.slice(0, -1), true);
    const key = place.path[place.path.length - 1];
    if (!isMap(parent)) return;
    const pair = parent.items.find((item: Pair) => isScalar(item.key) && item.key.value === key);
    if (pair && isScalar(pair.key)) pair.key.commentBefore = text;
    return;
  }
  const node = yaml.getIn(place.path, true) as Node | undefined;
  if (!node) return;
  if (place.at === 'value' || (place.at === 'item' && place.scalar)) node.comment = text;
  else node.commentBefore = text;
}

/** The JSON text: per agent its scenario, each rule's support and the bad runs it fails. */
export function renderJson(suggestions: Suggestions, name: RunNamer): string {
  const agents = suggestions.agents.map((agent) => ({
    agent: agent.group.key,
    runs: agent.group.runs.length,
    scenario:
      agent.rules.length === 0
        ? null
        : scenarioDocument(
            agent.group,
            agent.rules.map(({ rule }) => rule),
          ).document,
    rules: agent.rules.map((rule) => ({
      rule: ruleLabel(rule.rule),
      support: rule.support,
      fails: rule.catches.map((c) => ({ run: name(c.run), severity: c.severity })),
    })),
    dropped: agent.dropped,
    uncaught: agent.uncaught.map(name),
  }));
  return `${JSON.stringify({ agents, unmatchedBad: suggestions.unmatchedBad.map(name) }, null, 2)}\n`;
}
