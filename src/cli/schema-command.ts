/**
 * `toolpath schema [--config] [--out FILE]`: prints the JSON Schema (draft 2020-12) of the native scenario
 * format, generated from the zod schema that validates scenarios, so editors can complete and
 * check scenario files and the schema can never drift from what `toolpath eval` accepts.
 */
import { z } from 'zod';
import { serveConfigSchema } from '../config/schema.js';
import { nativeScenarioSchema, rulesSchema } from '../scenario/native.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';

/** Usage text of `toolpath schema`. */
export const SCHEMA_USAGE = `usage: toolpath schema [--config] [--out FILE]

  prints the JSON Schema (draft 2020-12) of the native scenario format, for editors:
  e.g. a first line "# yaml-language-server: $schema=./scenario.schema.json" in a YAML scenario

  --config   the schema of toolpath serve's configuration file instead (docs/reference.md)
  --out, -o  write it there instead of stdout
`;

/** The configuration schema's `$id`. */
export const CONFIG_SCHEMA_ID = 'urn:toolpath:serve-config';

/** The JSON Schema of `toolpath serve --config` files, from the one schema of options. */
export function configJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(serveConfigSchema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  const { $schema, ...rest } = withoutComputedDefaults(generated) as Record<string, unknown>;
  return {
    $schema: $schema ?? 'https://json-schema.org/draft/2020-12/schema',
    $id: CONFIG_SCHEMA_ID,
    title: 'toolpath serve configuration',
    description:
      'The configuration file of toolpath serve (YAML or JSON). Durations are 500ms, 30s, 2m, 1h or milliseconds; ${env:NAME} in a string is replaced by that environment variable.',
    ...rest,
  };
}

/** A default computed from this machine's heap says nothing about another's: its words stand instead. */
function withoutComputedDefaults(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutComputedDefaults);
  if (node === null || typeof node !== 'object') return node;
  const entries = Object.entries(node).map(([key, value]) => [key, withoutComputedDefaults(value)] as const);
  const object = Object.fromEntries(entries) as Record<string, unknown>;
  if (typeof object.defaultText === 'string') {
    delete object.default;
    object.description = `${object.description ?? ''} Default: ${object.defaultText}.`.trim();
    delete object.defaultText;
  }
  return object;
}

/** The schema's `$id`: a stable name, not a download location. */
export const SCENARIO_SCHEMA_ID = 'urn:toolpath:scenario';

/** The JSON Schema of the native scenario format, with `$schema`, `$id`, `title` and descriptions. */
export function scenarioJsonSchema(): Record<string, unknown> {
  // io 'input': the document as written (a single tool name where a list is accepted, defaults omitted).
  const generated = z.toJSONSchema(nativeScenarioSchema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  const { $schema, description, ...rest } = generated;
  return {
    $schema: $schema ?? 'https://json-schema.org/draft/2020-12/schema',
    $id: SCENARIO_SCHEMA_ID,
    title: 'toolpath scenario',
    description:
      description ??
      'A toolpath scenario (native format, JSON or YAML): which traces it applies to and what a good tool-call trajectory is. Every section is optional and an omitted one checks nothing, but a scenario needs at least one rule section.',
    ...rest,
    // As loading does: a scenario with no rule section at all is a mistake, not "everything passes".
    anyOf: Object.keys(rulesSchema.shape).map((section) => ({ required: [section] })),
  };
}

/** Runs `toolpath schema`; resolves to the exit code. */
export async function schemaCommand(args: readonly string[], io: CliIO): Promise<number> {
  let out: string | undefined;
  let config = false;
  try {
    const { values } = parseCommandLine({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: { out: { type: 'string', short: 'o' }, config: { type: 'boolean' } },
    });
    out = values.out;
    config = values.config === true;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const text = `${JSON.stringify(config ? configJsonSchema() : scenarioJsonSchema(), null, 2)}\n`;
  if (out === undefined) io.stdout(text);
  else await io.writeFile(out, text);
  return 0;
}
