/**
 * Loading a scenario: JSON or YAML text -> the native schema (or seed 001's or seed 000's, read
 * into the native form) -> a {@link Scenario}. Every way a
 * file can be wrong ends in one {@link ScenarioError} whose message says which file, where in
 * it, what was expected and what was there, so a user can fix it without reading this code.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import type { Severity } from '../model/report.js';
import { describeValue, scenarioDocumentSchema } from './assertions.js';
import { SEED_000_KEYS, seed000DocumentSchema, seed000Rules } from './compat-seed-000.js';
import { SEED_001_KEYS, seed001Rules } from './compat-seed-001.js';
import {
  type AppliesTo,
  type Gate,
  nativeScenarioSchema,
  type Rules,
  rulesSchema,
  type Scope,
} from './native.js';

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
   * `scope: conversation`, and every seed-001 assertion file, whose grader runs over a
   * conversation's cumulative calls). Absent: each trace on its own.
   */
  scope?: Exclude<Scope, 'trace'>;
  /** Severity overrides by rule id or family. */
  severity: Readonly<Record<string, Severity>>;
  /** The rule sections, in the native form whatever format the file was in; regexes compiled. */
  rules: Rules;
  /**
   * The run gate (native `gate`, seed 001's `min_pass_rate`): what a run must reach. Absent:
   * every evaluation must pass.
   */
  gate?: Gate;
}

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

/** More problems than this in one file are summarized: the first ones are what a user fixes first. */
const MAX_PROBLEMS = 10;

const RULE_SECTIONS = Object.keys(rulesSchema.shape);

/**
 * Validates an already-parsed document (e.g. from JSON.parse) as a scenario: the native format,
 * seed 001's assertion JSON or seed 000's `Scenario` object, each read verbatim into the native
 * rules. The format is told by the top-level keys; a document mixing formats is rejected with
 * the keys of each. `source` names it in messages, and gives the id when the document has none
 * (its base name without extension).
 */
export function parseScenario(value: unknown, source: string): Scenario {
  const format = detectFormat(value, source);
  if (format === 'seed-001') return fromSeed001(value as Record<string, unknown>, source);
  if (format === 'seed-000') return fromSeed000(value as Record<string, unknown>, source);
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
  'seed-001': [...SEED_001_KEYS, 'min_pass_rate'],
  'seed-000': SEED_000_KEYS,
} as const;
type Format = keyof typeof FORMAT_KEYS;
const FORMAT_NAMES: Readonly<Record<Format, string>> = {
  native: 'native',
  'seed-001': 'seed 001 (assertion JSON)',
  'seed-000': 'seed 000 (Scenario object)',
};

/**
 * The format the top-level keys mark: seed 001's snake_case assertion keys, seed 000's camelCase
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

function fromSeed000(value: Record<string, unknown>, source: string): Scenario {
  const parsed = seed000DocumentSchema.safeParse(value);
  if (!parsed.success)
    throw new ScenarioError(source, formatIssues(parsed.error.issues, value, seed000DocumentSchema));
  const { id, version, description, ...document } = parsed.data;
  const { rules, severity, problems } = seed000Rules(document);
  if (problems.length > 0) throw new ScenarioError(source, problems);
  if (Object.keys(rules).length === 0) {
    const given = SEED_000_KEYS.filter((key) => Object.hasOwn(document, key));
    throw new ScenarioError(source, [
      `no rules: expected at least one of ${SEED_000_KEYS.join(', ')} with something to check; got only ${given.map((key) => `empty ${key}`).join(', ')}`,
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

function fromSeed001(value: Record<string, unknown>, source: string): Scenario {
  const parsed = scenarioDocumentSchema.safeParse(value);
  if (!parsed.success)
    throw new ScenarioError(source, formatIssues(parsed.error.issues, value, scenarioDocumentSchema));
  const { id, version, description, min_pass_rate: minPassRate, ...assertions } = parsed.data;
  const rules = seed001Rules(assertions);
  if (Object.keys(rules).length === 0) {
    const given = SEED_001_KEYS.filter((key) => Object.hasOwn(assertions, key));
    throw new ScenarioError(source, [
      `no assertions: expected at least one of ${SEED_001_KEYS.join(', ')}; ${given.length > 0 ? `got only empty ${given.join(', ')}` : 'a min_pass_rate alone gates nothing'}`,
    ]);
  }
  return {
    id: id ?? basename(source, extname(source)),
    source,
    severity: {},
    rules,
    // Seed 001's grader runs over the cumulative tool calls of a conversation.
    scope: 'conversation',
    ...(version !== undefined && { version }),
    ...(description !== undefined && { description }),
    ...(minPassRate !== undefined && { gate: { minPassRate } }),
  };
}

/**
 * The one key of a gate written in the other format's spelling (`min_pass_rate` in a native
 * scenario, `gate` in a seed-001 one): said as such, with the spelling of the format used.
 */
function misplacedGate(marked: readonly { format: Format; keys: readonly string[] }[]): string | undefined {
  const keysOf = (format: Format) => marked.find((m) => m.format === format)?.keys ?? [];
  const seed = keysOf('seed-001');
  const native = keysOf('native');
  if (marked.length !== 2 || seed.length === 0 || native.length === 0) return undefined;
  if (seed.length === 1 && seed[0] === 'min_pass_rate')
    return "min_pass_rate is the key of seed 001's assertion JSON; in the native format write gate: {minPassRate: …}";
  if (native.length === 1 && native[0] === 'gate')
    return "gate is the key of the native format; in seed 001's assertion JSON write min_pass_rate: … (a pass^k gate needs the native format)";
  return undefined;
}

/** Unknown top-level keys are matched against native sections and seed-001 and seed-000 keys alike. */
const rootForSuggestions = nativeScenarioSchema.extend(
  Object.fromEntries(
    [...SEED_001_KEYS, 'min_pass_rate', ...SEED_000_KEYS].map((key) => [key, z.unknown().optional()]),
  ),
);

/** Parses scenario text, JSON or YAML (YAML 1.2 reads JSON as is). `source` names it in messages. */
export function parseScenarioText(text: string, source: string): Scenario {
  if (text.trim() === '') throw new ScenarioError(source, ['the file is empty; expected an object of rules']);
  // uniqueKeys: a key given twice is a mistake, not "the last one wins".
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const syntaxError = document.errors[0];
  if (syntaxError) {
    const firstLine = syntaxError.message.split('\n')[0]?.replace(/:$/, '') ?? syntaxError.message;
    throw new ScenarioError(source, [`not valid YAML or JSON: ${firstLine}`]);
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

/** Reads and parses a scenario file (JSON or YAML, told apart by content, not by extension). */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ScenarioError(path, [`cannot read the file: ${describeReadError(error)}`]);
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
    throw new ScenarioError(path, [`cannot read the file: ${describeReadError(error)}`]);
  }
  return parseScenarioText(text, path);
}

function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file (ENOENT)';
  if (code === 'EACCES' || code === 'EPERM') return `permission denied (${code})`;
  if (code === 'EISDIR') return 'it is a directory (EISDIR)';
  return (error as Error).message;
}

type Path = readonly PropertyKey[];
type Issue = z.core.$ZodIssue;

/** Turns zod issues into "path: expected X; got Y" lines, looking values up in the document itself. */
function formatIssues(issues: readonly Issue[], document: unknown, root: z.ZodType): string[] {
  const lines = issues.flatMap((issue) => formatIssue(issue, [], document, root));
  if (lines.length <= MAX_PROBLEMS) return lines;
  return [...lines.slice(0, MAX_PROBLEMS), `… and ${lines.length - MAX_PROBLEMS} more problems`];
}

function formatIssue(issue: Issue, base: Path, document: unknown, root: z.ZodType): string[] {
  const path = [...base, ...issue.path];
  const where = path.length === 0 ? '' : `${formatPath(path)}: `;
  const found = valueAt(document, path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeysAt(path, document, root);
      return issue.keys.map((key) => `${where}unknown key ${JSON.stringify(key)}${suggestion(key, known)}`);
    }
    case 'invalid_union': {
      const options = (issue as { options?: unknown[] }).options;
      if (options) {
        const names = options.map(String);
        const hint = typeof found.value === 'string' ? suggestion(found.value, names) : '';
        return [`${where}expected one of ${names.join(', ')}; ${got(found)}${hint}`];
      }
      // A union (expected_tool_calls entries): report the branch whose type fits the value.
      const fitting = issue.errors.filter(
        (branch) => !branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0),
      );
      const [only] = fitting;
      if (fitting.length === 1 && only)
        return only.flatMap((inner) => formatIssue(inner, path, document, root));
      const expected = issue.errors.flatMap((branch) =>
        branch.flatMap((inner) => (inner.code === 'invalid_type' ? [expectedType(inner.expected)] : [])),
      );
      return [`${where}expected ${[...new Set(expected)].join(' or ')}; ${got(found)}`];
    }
    case 'invalid_type': {
      const expected = path.length === 0 ? 'an object of rules' : expectedType(issue.expected);
      return [`${where}expected ${expected}; ${got(found)}`];
    }
    case 'too_small': {
      const minimum = Number(issue.minimum);
      if (issue.origin === 'string') return [`${where}expected a non-empty string; ${got(found)}`];
      if (issue.origin === 'array') return [`${where}expected at least ${minimum} item(s); ${got(found)}`];
      const kind = Number.isInteger(found.value) ? 'an integer' : 'a number';
      return [`${where}expected ${kind} >= ${minimum}; ${got(found)}`];
    }
    case 'invalid_value': {
      const hint =
        typeof found.value === 'string'
          ? suggestion(
              found.value,
              issue.values.filter((value): value is string => typeof value === 'string'),
            )
          : '';
      return [
        `${where}expected ${issue.values.map((value) => JSON.stringify(value)).join(' or ')}; ${got(found)}${hint}`,
      ];
    }
    case 'custom':
      return [`${where}${issue.message}`];
    default:
      return [`${where}${issue.message}; ${got(found)}`];
  }
}

function got(found: { present: boolean; value: unknown }): string {
  return found.present ? `got ${describeValue(found.value)}` : 'the key is missing';
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  int: 'an integer',
  number: 'a number',
  object: 'an object',
  array: 'a list',
  boolean: 'true or false',
};

function expectedType(expected: string): string {
  return TYPE_NAMES[expected] ?? expected;
}

/** `tool_call_args[0].match.mode`; keys that are not identifiers are quoted. */
function formatPath(path: Path): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]*$/.test(segment)) {
      text += text === '' ? segment : `.${segment}`;
    } else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

/** The value at `path` in the raw document, using own properties only. */
function valueAt(document: unknown, path: Path): { present: boolean; value: unknown } {
  let value = document;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || typeof segment === 'symbol') {
      return { present: false, value: undefined };
    }
    if (!Object.hasOwn(value, segment)) return { present: false, value: undefined };
    value = (value as Record<string | number, unknown>)[segment];
  }
  return { present: true, value };
}

/**
 * The keys the schema knows for the object at `path`, read from the schema itself so the
 * suggestions can never drift from it. For a `match`, the keys of the mode written there.
 */
function knownKeysAt(path: Path, document: unknown, root: z.ZodType): string[] {
  let schemas: z.ZodType[] = [root];
  for (let depth = 0; depth <= path.length; depth++) {
    schemas = schemas.flatMap((schema) =>
      objectOptions(schema, valueAt(document, path.slice(0, depth)).value),
    );
    const segment = path[depth];
    if (depth === path.length || segment === undefined) break;
    schemas = schemas.flatMap((schema) => {
      if (schema instanceof z.ZodObject && typeof segment === 'string') {
        const child = (schema.shape as Record<string, z.ZodType>)[segment];
        return child ? [child] : [];
      }
      if (schema instanceof z.ZodArray && typeof segment === 'number') return [schema.element as z.ZodType];
      // A record (tools.counts): every key holds a value of the same schema.
      if (schema instanceof z.ZodRecord && typeof segment === 'string')
        return [schema.valueType as z.ZodType];
      return [];
    });
  }
  const keys = schemas.flatMap((schema) => (schema instanceof z.ZodObject ? Object.keys(schema.shape) : []));
  return [...new Set(keys)];
}

/** Unwraps optional/transform/union layers down to the object or array schemas a value can meet. */
function objectOptions(schema: z.ZodType, value: unknown): z.ZodType[] {
  if (schema instanceof z.ZodOptional) return objectOptions(schema.unwrap() as z.ZodType, value);
  if (schema instanceof z.ZodPipe) return objectOptions(schema.in as z.ZodType, value);
  if (schema instanceof z.ZodUnion) {
    const options = (schema.options as z.ZodType[]).flatMap((option) => objectOptions(option, value));
    // In a discriminated union, the mode written picks the branch, if it names one.
    const mode = (value as { mode?: unknown } | undefined)?.mode;
    const picked = options.filter((option) => {
      if (!(option instanceof z.ZodObject)) return false;
      const literal = (option.shape as Record<string, z.ZodType>).mode;
      return literal instanceof z.ZodLiteral && literal.values.has(mode as string);
    });
    return picked.length > 0 ? picked : options;
  }
  if (schema instanceof z.ZodObject || schema instanceof z.ZodArray || schema instanceof z.ZodRecord)
    return [schema];
  return [];
}

/** ` (did you mean x?)` when a known name is close enough to be the intended one, else ''. */
export function suggestion(word: string, candidates: readonly string[]): string {
  const normalized = normalizeName(word);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(normalized, normalizeName(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(1, Math.floor(normalized.length / 3));
  return best !== undefined && bestDistance <= tolerance ? ` (did you mean ${best}?)` : '';
}

/** Case, `-` and `_` are the usual slips (`allowed-tools`, `callIndex`): ignore them when comparing. */
function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/** Levenshtein distance, two rows. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
