/**
 * Zod issues as lines a user can act on: "path: expected X; got Y", unknown keys with the
 * nearest known one. Shared by scenarios and the adapter's configuration, so both speak alike.
 */
import { z } from 'zod';
import { describeValue } from './assertions.js';
import { suggestion } from './suggestion.js';

/** More problems than this in one file are summarized: the first ones are what a user fixes first. */
const MAX_PROBLEMS = 10;

type Path = readonly PropertyKey[];
type Issue = z.core.$ZodIssue;

/** Turns zod issues into "path: expected X; got Y" lines, looking values up in the document itself. */
export function formatIssues(issues: readonly Issue[], document: unknown, root: z.ZodType): string[] {
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
      return issue.keys.map(
        (key) =>
          `${where}unknown key ${JSON.stringify(key)}${suggestion(key, known) || dedented(key, path, known, document, root)}`,
      );
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
        (branch) =>
          !branch.some(
            (inner) =>
              (inner.code === 'invalid_type' || inner.code === 'invalid_value') && inner.path.length === 0,
          ),
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
      // A message of our own (a refine's) may say what it got already.
      return [
        /; got /.test(issue.message) ? `${where}${issue.message}` : `${where}${issue.message}; ${got(found)}`,
      ];
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

/**
 * ` (did you mean tools.required, indented under tools?)` for a key that belongs one level down, in
 * a section beside it: a key dedented out of its section. The section written in the document wins.
 */
function dedented(
  key: string,
  path: Path,
  known: readonly string[],
  document: unknown,
  root: z.ZodType,
): string {
  const sections = known.filter((section) => knownKeysAt([...path, section], document, root).includes(key));
  const here = valueAt(document, path).value as Record<string, unknown> | undefined;
  const section = sections.find((name) => here?.[name] !== undefined) ?? sections[0];
  if (section === undefined) return '';
  const full = formatPath([...path, section, key]);
  return ` (did you mean ${full}, indented under ${formatPath([...path, section])}?)`;
}

/** Unwraps optional/transform/union layers down to the object or array schemas a value can meet. */
function objectOptions(schema: z.ZodType, value: unknown): z.ZodType[] {
  if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodNullable ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodPrefault
  )
    return objectOptions(schema.unwrap() as z.ZodType, value);
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
