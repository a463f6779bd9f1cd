/**
 * The TypeScript entry points' options, parsed through the schemas of schema.ts: what
 * `trajectoryProcessor(...)` and `new TraceAdapter(...)` take, and what they hold once parsed
 * (every default filled in, durations in milliseconds). A bad option throws {@link ConfigError}
 * naming it, as a bad YAML key does.
 */
import { z } from 'zod';
import { formatIssues } from '../scenario/issue-messages.js';
import {
  adapterLimitsSchema,
  conversationsOption,
  conversationsSchema,
  decisionSchema,
  forwardSpansSchema,
  processorLimitsSchema,
  storageSchema,
} from './schema.js';
import { ConfigError, duration } from './values.js';

/** The processor's options that the schema owns. */
export const processorOptionsSchema = z.object({
  limits: processorLimitsSchema.prefault({}),
  conversations: conversationsOption,
});

/** The adapter's options that the schema owns. */
export const adapterOptionsSchema = z.object({
  decision: decisionSchema.prefault({}),
  limits: adapterLimitsSchema.prefault({}),
  conversations: conversationsOption,
  forwardSpans: forwardSpansSchema,
  // `storage.reports` and `storage.segmentBytes` are the adapter's own wiring, not options: let through.
  storage: storageSchema.loose().optional(),
  sweepInterval: duration
    .refine((ms) => ms > 0, { message: 'expected a duration above zero' })
    .default(100)
    .meta({ description: 'How often traces due to be judged are looked for.' }),
});

/** `conversations` as given: a duration may be written `5m` or in milliseconds. */
export type ConversationOptions = z.input<typeof conversationsSchema> & {
  /** @deprecated The old name of `idleTimeout` (milliseconds). */
  idleMs?: number;
};

/** `decision` as given (the adapter). */
export type DecisionOptions = z.input<typeof decisionSchema> & {
  /** @deprecated The old name of `wait` (milliseconds). */
  waitMs?: number;
  /** @deprecated The old name of `waitAfterRoot` (milliseconds). */
  waitAfterRootMs?: number;
  /** @deprecated The old name of `lateWindow` (milliseconds). */
  lateWindowMs?: number;
};

/** The processor's caps and waits as given; each is described in docs/reference.md. */
export type ProcessorLimits = z.input<typeof processorLimitsSchema> & {
  /** @deprecated The old name of `traceTimeout` (milliseconds). */
  traceTimeoutMs?: number;
  /** @deprecated The old name of `lateWindow` (milliseconds). */
  lateWindowMs?: number;
  /** @deprecated The old name of `workerTimeout` (milliseconds). */
  workerTimeoutMs?: number;
  /** @deprecated The old name of `maxJudgedTraceIds`. */
  decisionCacheSize?: number;
  /** @deprecated Now `conversations.idleTimeout`. */
  conversationIdleMs?: number;
  /** @deprecated Now `conversations.maxConversations`. */
  maxConversations?: number;
  /** @deprecated Now `conversations.maxCalls`. */
  maxConversationCalls?: number;
};

/** The adapter's caps as given; each is described in docs/reference.md. */
export type AdapterLimits = z.input<typeof adapterLimitsSchema>;

/** The processor's parsed options. */
export type ProcessorSettings = z.output<typeof processorOptionsSchema>;
/** The adapter's parsed options. */
export type AdapterSettings = z.output<typeof adapterOptionsSchema>;
/** Parsed `conversations`, or `false` for none kept. */
export type ConversationSettings = z.output<typeof conversationsOption>;

/** Old option names (dotted paths) and the names they now have; kept working, not documented beyond TSDoc. */
export const PROCESSOR_RENAMES: readonly (readonly [string, string])[] = [
  ['limits.traceTimeoutMs', 'limits.traceTimeout'],
  ['limits.lateWindowMs', 'limits.lateWindow'],
  ['limits.workerTimeoutMs', 'limits.workerTimeout'],
  ['limits.decisionCacheSize', 'limits.maxJudgedTraceIds'],
  ['limits.conversationIdleMs', 'conversations.idleTimeout'],
  ['limits.maxConversations', 'conversations.maxConversations'],
  ['limits.maxConversationCalls', 'conversations.maxCalls'],
  ['conversations.idleMs', 'conversations.idleTimeout'],
];
export const ADAPTER_RENAMES: readonly (readonly [string, string])[] = [
  ['decision.waitMs', 'decision.wait'],
  ['decision.waitAfterRootMs', 'decision.waitAfterRoot'],
  ['decision.lateWindowMs', 'decision.lateWindow'],
  ['conversations.idleMs', 'conversations.idleTimeout'],
  ['sweepIntervalMs', 'sweepInterval'],
];

/** Parses `trajectoryProcessor`'s options; throws a ConfigError naming every bad one. */
export function parseProcessorOptions(options: {
  limits?: ProcessorLimits;
  conversations?: ConversationOptions | false;
}): ProcessorSettings {
  return parseWith(processorOptionsSchema, options, PROCESSOR_RENAMES, 'trajectoryProcessor');
}

/** Parses the adapter's options; throws a ConfigError naming every bad one. */
export function parseAdapterOptions(options: {
  decision?: DecisionOptions;
  limits?: AdapterLimits;
  conversations?: ConversationOptions | false;
  forwardSpans?: z.input<typeof forwardSpansSchema>;
  sweepInterval?: number | string;
  sweepIntervalMs?: number;
  storage?: { directory: string; maxBytes?: number | undefined };
}): AdapterSettings {
  return parseWith(adapterOptionsSchema, options, ADAPTER_RENAMES, 'TraceAdapter');
}

/** Parsed `conversations` as the judging core holds them. */
export function conversationLimitsOf(settings: z.output<typeof conversationsSchema>): {
  idleMs: number;
  maxConversations: number;
  maxCalls: number;
} {
  return {
    idleMs: settings.idleTimeout,
    maxConversations: settings.maxConversations,
    maxCalls: settings.maxCalls,
  };
}

/** The conversation defaults, parsed from the schema. */
export function defaultConversationLimits(): ReturnType<typeof conversationLimitsOf> {
  return conversationLimitsOf(conversationsSchema.parse({}));
}

function parseWith<S extends z.ZodObject>(
  schema: S,
  options: object,
  renames: readonly (readonly [string, string])[],
  source: string,
): z.output<S> {
  const problems: string[] = [];
  const owned = new Set([...Object.keys(schema.shape), ...renames.map(([from]) => split(from)[0] ?? from)]);
  const given = Object.fromEntries(Object.entries(options).filter(([key]) => owned.has(key)));
  const renamed = rename(given, renames, problems);
  const parsed = schema.safeParse(renamed);
  if (!parsed.success) problems.push(...formatIssues(parsed.error.issues, renamed, schema));
  if (problems.length > 0 || !parsed.success) throw new ConfigError(source, problems);
  return parsed.data;
}

/** A copy of the sections the schema owns, with old names moved to their new ones. */
function rename(
  options: object,
  renames: readonly (readonly [string, string])[],
  problems: string[],
): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    copy[key] = isPlainObject(value) ? dropUndefined(value) : value;
  }
  for (const [from, to] of renames) {
    const [fromSection, fromKey] = split(from);
    const [toSection, toKey] = split(to);
    const source = fromSection === undefined ? copy : copy[fromSection];
    if (!isPlainObject(source) || !(fromKey in source)) continue;
    const value = source[fromKey];
    delete source[fromKey];
    if (toSection !== undefined && copy[toSection] === undefined) copy[toSection] = {};
    const target = toSection === undefined ? copy : copy[toSection];
    // `conversations: false` with an old conversation cap: false wins, as it says keep none.
    if (target === false) continue;
    if (!isPlainObject(target)) continue;
    if (toKey in target) problems.push(`${from}: the old name of ${to}, given beside it`);
    else target[toKey] = value;
  }
  return copy;
}

function split(path: string): [string | undefined, string] {
  const dot = path.indexOf('.');
  return dot < 0 ? [undefined, path] : [path.slice(0, dot), path.slice(dot + 1)];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

function dropUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined));
}
