/**
 * `toolpath serve --config toolpath.yaml`: reads the file and validates it against the one schema
 * of options (config/schema.ts). `${env:NAME}` in any string is replaced by that environment
 * variable; every mistake is reported with its path, all at once.
 */
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { type ServeSettings, withOtelEnvironment } from '../config/otel-env.js';
import { serveConfigSchema } from '../config/schema.js';
import { ConfigError } from '../config/values.js';
import { formatIssues } from '../scenario/issue-messages.js';
import { describeReadError } from '../scenario/read-error.js';
import { describeYamlError } from '../scenario/yaml-errors.js';

/** The configuration file's schema (config/schema.ts, shared with the TypeScript options). */
export const adapterConfigSchema = serveConfigSchema;

/** A validated configuration, defaults filled in and the OTel environment variables merged (otel-env.ts). */
export type AdapterConfig = ServeSettings;

export { ConfigError };

/** Validates a parsed configuration document. */
export function parseAdapterConfig(
  document: unknown,
  source: string,
  env: NodeJS.ProcessEnv = process.env,
): AdapterConfig {
  const problems: string[] = [];
  const expanded = expandEnv(document ?? {}, [], env, problems);
  const parsed = adapterConfigSchema.safeParse(expanded);
  if (!parsed.success) problems.push(...formatIssues(parsed.error.issues, expanded, adapterConfigSchema));
  if (problems.length > 0 || !parsed.success) throw new ConfigError(source, problems);
  return withOtelEnvironment(parsed.data, source, env);
}

/** Reads and validates a YAML (or JSON) configuration file. */
export function loadAdapterConfig(path: string, env: NodeJS.ProcessEnv = process.env): AdapterConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [describeReadError(error, path)]);
  }
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      path,
      document.errors.map((error) => `not valid YAML: ${describeYamlError(error, text)}`),
    );
  }
  return parseAdapterConfig(document.toJS(), path, env);
}

const ENV_REFERENCE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

function expandEnv(value: unknown, path: PropertyKey[], env: NodeJS.ProcessEnv, problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REFERENCE, (_, name: string) => {
      const found = env[name];
      if (found === undefined) problems.push(`${formatPath(path)}: environment variable ${name} is not set`);
      // Left as written when unset: the one problem above says it, not a second "too short".
      return found ?? `\${env:${name}}`;
    });
  }
  if (Array.isArray(value))
    return value.map((item, index) => expandEnv(item, [...path, index], env, problems));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandEnv(item, [...path, key], env, problems)]),
    );
  }
  return value;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : index === 0 ? String(segment) : `.${String(segment)}`,
    )
    .join('');
}
