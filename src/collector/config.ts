/**
 * `toolpath serve --config toolpath.yaml`: the adapter's configuration, as a zod schema (types,
 * defaults and messages from one place). `${env:NAME}` in any string is replaced by that
 * environment variable; every mistake is reported with its path, all at once.
 */
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { formatIssues } from '../scenario/issue-messages.js';
import { describeReadError } from '../scenario/read-error.js';
import { describeYamlError } from '../scenario/yaml-errors.js';

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000 } as const;

/** `30s`, `500ms`, `2m`, or a number of milliseconds. */
const duration = z.union([z.number(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'number' && value >= 0) return value;
  const match = typeof value === 'string' ? DURATION.exec(value.trim()) : null;
  if (!match) {
    ctx.addIssue({
      code: 'custom',
      message: `expected a duration like 500ms, 30s or 2m; got ${JSON.stringify(value)}`,
    });
    return z.NEVER;
  }
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
});

/** `host:port`; a bare port means 127.0.0.1 (the safe default: listen only locally unless told). */
const endpoint = z.string().transform((text, ctx) => {
  const match = /^(?:(.*):)?(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[2]);
  if (!match || port > 65_535) {
    ctx.addIssue({ code: 'custom', message: `expected host:port (e.g. 127.0.0.1:4318); got "${text}"` });
    return z.NEVER;
  }
  const host = match[1] === undefined || match[1] === '' ? '127.0.0.1' : match[1].replace(/^\[(.*)\]$/, '$1');
  return { host, port };
});

const listener = z.strictObject({ endpoint });

/** A duration that must pass before something happens: zero would mean at once, or never. */
const positiveDuration = duration.refine((ms) => ms > 0, {
  message: 'expected a duration above zero, like 60s',
});

/** The configuration file's schema. */
export const adapterConfigSchema = z.strictObject({
  receivers: z
    .strictObject({
      otlp: z
        .strictObject({
          http: listener.nullable().default({ endpoint: { host: '127.0.0.1', port: 4318 } }),
          grpc: listener.nullable().default({ endpoint: { host: '127.0.0.1', port: 4317 } }),
        })
        .prefault({}),
      // A connection with no request, or a request that stops arriving, is closed after this.
      idleTimeout: positiveDuration.default(60_000),
    })
    .prefault({}),
  scenarios: z.array(z.string().min(1)).default([]).meta({ description: 'Scenario files or globs.' }),
  judges: z.string().min(1).optional().meta({
    description:
      'A module (.js, .mjs) whose default export lists judges, run after the rules on the scenarios they name.',
  }),
  exporters: z
    .strictObject({
      otlp: z
        .strictObject({
          endpoint: z.url({
            error: (issue) => `expected a URL like http://collector:4318; got ${JSON.stringify(issue.input)}`,
          }),
          protocol: z.enum(['http/json', 'http/protobuf', 'grpc']).default('http/protobuf'),
          headers: z.record(z.string(), z.string()).default({}),
        })
        .optional(),
    })
    .prefault({}),
  forward: z.strictObject({ spans: z.enum(['none', 'sampled', 'all']).default('none') }).prefault({}),
  decision: z
    .strictObject({
      wait: duration.default(30_000),
      waitAfterRoot: duration.default(2_000),
      // How long a judged trace's id is remembered, so its late spans follow its decision.
      lateWindow: duration.default(600_000),
    })
    .prefault({}),
  conversations: z
    .strictObject({
      // A conversation with no new trace for this long is judged final and let go.
      idleTimeout: positiveDuration.default(300_000),
      maxConversations: z.int().min(1).default(10_000),
      // Calls held per conversation; past it the conversation is judged final early.
      maxCalls: z.int().min(1).default(100_000),
    })
    .prefault({}),
  limits: z
    .strictObject({
      maxTraces: z.int().min(1).default(10_000),
      maxSpansPerTrace: z.int().min(1).default(10_000),
      maxSpans: z.int().min(1).default(1_000_000),
      maxRequestBytes: z
        .int()
        .min(1)
        .default(20 * 1024 * 1024),
      // Default (in TraceAdapter): 512 MiB, or half the V8 heap limit when that is less.
      maxBufferedBytes: z.int().min(1).optional(),
      // Ids of judged traces remembered for decision.lateWindow at most (about 80 bytes each).
      maxJudgedTraceIds: z.int().min(1).default(1_000_000),
      // Open connections over both receivers; keep it below the process's open-file limit.
      maxConnections: z.int().min(1).default(1_000),
    })
    .prefault({}),
  sampling: z
    .strictObject({
      ratio: z.number().min(0).max(1).optional(),
      keepAttributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
      keepTools: z.array(z.string()).optional(),
    })
    .optional(),
  redact: z
    .union([
      z.literal(false),
      z.strictObject({
        keepFields: z.array(z.string()).optional(),
        hashFields: z.array(z.string()).optional(),
        // The same key on every adapter (e.g. from an env variable) hashes an id the same everywhere.
        hashKey: z.string().min(16).optional(),
      }),
    ])
    .optional(),
  metrics: z.strictObject({ prometheus: z.strictObject({ endpoint }).optional() }).prefault({}),
  reports: z
    .strictObject({
      file: z.string().min(1).optional(),
      /** Where the spans of judged traces are stored, for `toolpath promote TRACE_ID --reports FILE`. */
      traceDir: z.string().min(1).optional(),
      keepTraces: z.enum(['failed', 'all']).default('failed'),
      maxTraceFiles: z.int().min(0).default(1_000),
    })
    .prefault({}),
  auth: z.strictObject({ bearerToken: z.string().min(1).optional() }).prefault({}),
  // Durable mode (docs/durable.md): every span answered 200 is on disk first; a crash loses none.
  storage: z
    .strictObject({
      directory: z.string().min(1),
      maxBytes: z
        .int()
        .min(1024 * 1024)
        .default(2 ** 30),
    })
    .optional(),
});

/** A validated configuration, defaults filled in. */
export type AdapterConfig = z.output<typeof adapterConfigSchema>;

/** A configuration that cannot be used: one line per mistake. */
export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(problems.map((problem) => `config ${source}: ${problem}`).join('\n'));
    this.name = 'ConfigError';
  }
}

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
  return parsed.data;
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
