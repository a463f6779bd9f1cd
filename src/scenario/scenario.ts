/**
 * Loading a scenario: JSON or YAML text -> the native schema (or the trajectory-assertion JSON's or the scenario object's, read
 * into the native form) -> a {@link Scenario}. Every way a
 * file can be wrong ends in one {@link ScenarioError} whose message says which file, where in
 * it, what was expected and what was there, so a user can fix it without reading this code.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, extname } from 'node:path';
import { z } from 'zod';
import type { Severity } from '../model/report.js';
import { ASSERTION_JSON_KEYS, assertionJsonRules } from './assertion-json.js';
import { scenarioDocumentSchema } from './assertions.js';
import { formatIssues } from './issue-messages.js';
import {
  type AppliesTo,
  type Gate,
  nativeScenarioSchema,
  type Rules,
  rulesSchema,
  type Scope,
} from './native.js';
import { describeReadError } from './read-error.js';
import { SCENARIO_OBJECT_KEYS, scenarioObjectRules, scenarioObjectSchema } from './scenario-object.js';
import { describeYamlError } from './yaml-errors.js';

export { suggestion } from './suggestion.js';

/** A loaded scenario: who it is, where it came from, which traces it applies to, and its rules. */
export interface Scenario {
  id: string;
  version?: string;
  description?: string;
  /** The file (or other origin) the scenario was read from, for messages. */
  source?: string;
  appliesTo?: AppliesTo;
  /**
   * `conversation`: judged on every trace carrying the trace's conversation id, joined (native
   * `scope: conversation`, and every trajectory-assertion JSON file, whose grader runs over a
   * conversation's cumulative calls). Absent: each trace on its own.
   */
  scope?: Exclude<Scope, 'trace'>;
  /** Severity overrides by rule id or family. */
  severity: Readonly<Record<string, Severity>>;
  /** The rule sections, in the native form whatever format the file was in; regexes compiled. */
  rules: Rules;
  /**
   * The run gate (native `gate`, the trajectory-assertion JSON's `min_pass_rate`): what a run must reach. Absent:
   * every evaluation must pass.
   */
  gate?: Gate;
}

/**
 * A scenario as the entry points take it: a loaded {@link Scenario}, a file path (JSON or YAML),
 * or a scenario document as an object (native or a compatible format).
 */
export type ScenarioInput = Scenario | string | Readonly<Record<string, unknown>>;

/** A scenario that cannot be loaded. `problems` holds one line per thing wrong, without the file prefix. */
export class ScenarioError extends Error {
  readonly source: string;
  readonly problems: readonly string[];

  constructor(source: string, problems: readonly string[]) {
    super(problems.map((problem) => `scenario ${source}: ${problem}`).join('\n'));
    this.name = 'ScenarioError';
    this.source = source;
    this.problems = problems;
  }
}

const RULE_SECTIONS = Object.keys(rulesSchema.shape);

/**
 * Validates an already-parsed document (e.g. from JSON.parse) as a scenario: the native format,
 * the trajectory-assertion JSON or the scenario object (camelCase, as a TypeScript `Scenario` literal), each read verbatim into the native
 * rules. The format is told by the top-level keys; a document mixing formats is rejected with
 * the keys of each. `source` names it in messages, and gives the id when the document has none
 * (its base name without extension).
 */
export function parseScenario(value: unknown, source: string): Scenario {
  const format = detectFormat(value, source);
  if (format === 'assertion-json') return fromAssertionJson(value as Record<string, unknown>, source);
  if (format === 'scenario-object') return fromScenarioObject(value as Record<string, unknown>, source);
  const parsed = nativeScenarioSchema.safeParse(value);
  if (!parsed.success)
    throw new ScenarioError(source, formatIssues(parsed.error.issues, value, rootForSuggestions));
  const {
    id,
    version,
    description,
    appliesTo,
    severity,
    gate,
    scope,
    $schema: _schema,
    ...rules
  } = parsed.data;
  const given = RULE_SECTIONS.filter((section) => rules[section as keyof Rules] !== undefined);
  if (given.length === 0) {
    throw new ScenarioError(source, [`no rules: expected at least one of ${RULE_SECTIONS.join(', ')}`]);
  }
  return {
    id: id ?? basename(source, extname(source)),
    source,
    severity: severity ?? {},
    rules,
    ...(version !== undefined && { version }),
    ...(description !== undefined && { description }),
    ...(appliesTo !== undefined && { appliesTo }),
    ...(scope === 'conversation' && { scope }),
    ...(gate !== undefined && { gate }),
  };
}

/** The keys that mark each format; `id`, `version` and `description` are shared by all three. */
const FORMAT_KEYS = {
  native: [...RULE_SECTIONS, 'appliesTo', 'severity', 'gate', 'scope'],
  'assertion-json': [...ASSERTION_JSON_KEYS, 'min_pass_rate'],
  'scenario-object': SCENARIO_OBJECT_KEYS,
} as const;
type Format = keyof typeof FORMAT_KEYS;
const FORMAT_NAMES: Readonly<Record<Format, string>> = {
  native: 'native',
  'assertion-json': 'trajectory-assertion JSON',
  'scenario-object': 'scenario object',
};

/**
 * The format the top-level keys mark: the trajectory-assertion JSON's snake_case keys, the scenario object's camelCase
 * keys, else native (whose own schema then reports anything unknown). Keys of two formats in one
 * document are an error naming them: half of it would otherwise be silently ignored or misread.
 */
function detectFormat(value: unknown, source: string): Format {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'native';
  const marked = (Object.keys(FORMAT_KEYS) as Format[])
    .map((format) => ({ format, keys: FORMAT_KEYS[format].filter((key) => Object.hasOwn(value, key)) }))
    .filter(({ keys }) => keys.length > 0);
  if (marked.length > 1) {
    const gateHint = misplacedGate(marked);
    if (gateHint) throw new ScenarioError(source, [gateHint]);
    const parts = marked.map(({ format, keys }) => `${FORMAT_NAMES[format]}: ${keys.join(', ')}`);
    throw new ScenarioError(source, [
      `mixes scenario formats (${parts.join('; ')}); write each scenario in one format`,
    ]);
  }
  return marked[0]?.format ?? 'native';
}

function fromScenarioObject(value: Record<string, unknown>, source: string): Scenario {
  const parsed = scenarioObjectSchema.safeParse(value);
  if (!parsed.success)
    throw new ScenarioError(source, formatIssues(parsed.error.issues, value, scenarioObjectSchema));
  const { id, version, description, ...document } = parsed.data;
  const { rules, severity, problems } = scenarioObjectRules(document);
  if (problems.length > 0) throw new ScenarioError(source, problems);
  if (Object.keys(rules).length === 0) {
    const given = SCENARIO_OBJECT_KEYS.filter((key) => Object.hasOwn(document, key));
    throw new ScenarioError(source, [
      `no rules: expected at least one of ${SCENARIO_OBJECT_KEYS.join(', ')} with something to check; got only ${given.map((key) => `empty ${key}`).join(', ')}`,
    ]);
  }
  return {
    id: id ?? basename(source, extname(source)),
    source,
    severity,
    rules,
    ...(version !== undefined && { version }),
    ...(description !== undefined && { description }),
  };
}

function fromAssertionJson(value: Record<string, unknown>, source: string): Scenario {
  const parsed = scenarioDocumentSchema.safeParse(value);
  if (!parsed.success)
    throw new ScenarioError(source, formatIssues(parsed.error.issues, value, scenarioDocumentSchema));
  const { id, version, description, min_pass_rate: minPassRate, ...assertions } = parsed.data;
  const rules = assertionJsonRules(assertions);
  if (Object.keys(rules).length === 0) {
    const given = ASSERTION_JSON_KEYS.filter((key) => Object.hasOwn(assertions, key));
    throw new ScenarioError(source, [
      `no assertions: expected at least one of ${ASSERTION_JSON_KEYS.join(', ')}; ${given.length > 0 ? `got only empty ${given.join(', ')}` : 'a min_pass_rate alone gates nothing'}`,
    ]);
  }
  return {
    id: id ?? basename(source, extname(source)),
    source,
    severity: {},
    rules,
    // The trajectory-assertion JSON's grader runs over the cumulative tool calls of a conversation.
    scope: 'conversation',
    ...(version !== undefined && { version }),
    ...(description !== undefined && { description }),
    ...(minPassRate !== undefined && { gate: { minPassRate } }),
  };
}

/**
 * The one key of a gate written in the other format's spelling (`min_pass_rate` in a native
 * scenario, `gate` in a trajectory-assertion JSON one): said as such, with the spelling of the format used.
 */
function misplacedGate(marked: readonly { format: Format; keys: readonly string[] }[]): string | undefined {
  const keysOf = (format: Format) => marked.find((m) => m.format === format)?.keys ?? [];
  const seed = keysOf('assertion-json');
  const native = keysOf('native');
  if (marked.length !== 2 || seed.length === 0 || native.length === 0) return undefined;
  if (seed.length === 1 && seed[0] === 'min_pass_rate')
    return 'min_pass_rate is the key of the trajectory-assertion JSON; in the native format write gate: {minPassRate: …}';
  if (native.length === 1 && native[0] === 'gate')
    return 'gate is the key of the native format; in the trajectory-assertion JSON write min_pass_rate: … (a pass^k gate needs the native format)';
  return undefined;
}

/** Unknown top-level keys are matched against native sections and trajectory-assertion and scenario-object keys alike. */
const rootForSuggestions = nativeScenarioSchema.extend(
  Object.fromEntries(
    [...ASSERTION_JSON_KEYS, 'min_pass_rate', ...SCENARIO_OBJECT_KEYS].map((key) => [
      key,
      z.unknown().optional(),
    ]),
  ),
);

/** Parses scenario text, JSON or YAML (YAML 1.2 reads JSON as is). `source` names it in messages. */
export function parseScenarioText(text: string, source: string): Scenario {
  if (text.trim() === '') throw new ScenarioError(source, ['the file is empty; expected an object of rules']);
  const json = jsonDocument(text);
  if (json !== NOT_JSON) return parseScenario(json, source);
  // uniqueKeys: a key given twice is a mistake, not "the last one wins".
  const document = yaml().parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const syntaxError = document.errors[0];
  if (syntaxError) {
    throw new ScenarioError(source, [`not valid YAML or JSON: ${describeYamlError(syntaxError, text)}`]);
  }
  let value: unknown;
  try {
    value = document.toJS();
  } catch (error) {
    // e.g. an alias expanded too many times (a "billion laughs" document).
    throw new ScenarioError(source, [`not valid YAML or JSON: ${(error as Error).message}`]);
  }
  return parseScenario(value, source);
}

const NOT_JSON = Symbol('not JSON');

/**
 * JSON text as `JSON.parse` reads it, many times faster than the YAML parser; NOT_JSON for
 * anything else, and for JSON that gives a key twice in one object (which `JSON.parse` lets
 * pass): the YAML parser then reads it and says where it is wrong, as for any file.
 */
function jsonDocument(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return NOT_JSON;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
  return keysWritten(text) === keysHeld(value) ? value : NOT_JSON;
}

/** Keys written in valid JSON text: every string followed by a colon (string by string, so a colon inside one is never counted). */
function keysWritten(text: string): number {
  let keys = 0;
  for (const match of text.matchAll(/"(?:[^"\\]|\\.)*"(\s*:)?/g)) if (match[1] !== undefined) keys++;
  return keys;
}

/** Own keys of every object in a parsed JSON value (a stack, not recursion: the nesting is the input's). */
function keysHeld(value: unknown): number {
  let keys = 0;
  const stack = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    const values = Object.values(next);
    if (!Array.isArray(next)) keys += values.length;
    for (const inner of values) if (inner !== null && typeof inner === 'object') stack.push(inner);
  }
  return keys;
}

const require = createRequire(import.meta.url);
/** The YAML parser, loaded the first time a scenario is not JSON (loading it costs more than parsing most files). */
function yaml(): typeof import('yaml') {
  return require('yaml') as typeof import('yaml');
}

/** Reads and parses a scenario file (JSON or YAML, told apart by content, not by extension). */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ScenarioError(path, [describeReadError(error, path)]);
  }
  return parseScenarioText(text, path);
}

/**
 * {@link loadScenarioFile}, synchronously: for setup code that cannot await (a SpanProcessor
 * built in a provider's constructor).
 */
export function loadScenarioFileSync(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ScenarioError(path, [describeReadError(error, path)]);
  }
  return parseScenarioText(text, path);
}
