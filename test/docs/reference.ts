/**
 * docs/reference.md, generated: every option of the three entry points with its default, from
 * the one schema (src/config/schema.ts), the old names that still work, and every metric, from
 * the instruments ToolpathMetrics creates. test/docs/reference.test.ts checks the page matches.
 */
import { createNoopMeter, type Meter, type MeterProvider } from '@opentelemetry/api';
import { z } from 'zod';
import {
  ADAPTER_RENAMES,
  adapterOptionsSchema,
  PROCESSOR_RENAMES,
  processorOptionsSchema,
} from '../../src/config/options.js';
import { DEFAULT_LOG_LEVEL, DEFAULT_OTLP_PROTOCOL, serveConfigSchema } from '../../src/config/schema.js';
import { ToolpathMetrics } from '../../src/judging/metrics.js';

interface Row {
  key: string;
  type: string;
  default: string;
  description: string;
}

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
const metaOf = (schema: z.ZodType) =>
  z.globalRegistry.get(schema) as { description?: string; defaultText?: string } | undefined;

/** One row per option (leaf) of an object schema, with dotted keys. */
function rows(schema: z.ZodType, prefix: string): Row[] {
  const out: Row[] = [];
  const shape = (defOf(schema).shape ?? {}) as Record<string, z.ZodType>;
  for (const [name, field] of Object.entries(shape)) {
    const key = prefix === '' ? name : `${prefix}.${name}`;
    const found = unwrap(field);
    const object = found.objects[0];
    const isDuration = found.inner !== undefined && isDurationSchema(found.inner);
    if (object && !found.leafType) {
      if (found.orFalse)
        out.push({
          key,
          type: '`false` or the keys below',
          default: 'the keys below',
          description: found.description ?? '',
        });
      else if (found.description)
        out.push({
          key,
          type: 'section',
          default: formatDefault(found.default, false, found.optional),
          description: found.description,
        });
      out.push(...rows(object, key));
      continue;
    }
    out.push({
      key,
      type: found.leafType ?? 'value',
      default: found.defaultText ?? formatDefault(found.default, isDuration, found.optional),
      description: found.description ?? '',
    });
  }
  return out;
}

interface Unwrapped {
  description?: string;
  defaultText?: string;
  default?: unknown;
  optional: boolean;
  orFalse: boolean;
  objects: z.ZodType[];
  leafType?: string;
  inner?: z.ZodType;
}

function unwrap(schema: z.ZodType): Unwrapped {
  const found: Unwrapped = { optional: false, orFalse: false, objects: [] };
  let current: z.ZodType | undefined = schema;
  let hasDefault = false;
  while (current) {
    const meta = metaOf(current);
    found.description ??= meta?.description;
    found.defaultText ??= meta?.defaultText;
    const def = defOf(current);
    if (def.type === 'default' || def.type === 'prefault') {
      if (!hasDefault) {
        hasDefault = true;
        const value = def.defaultValue;
        found.default = typeof value === 'function' ? undefined : value;
      }
      current = def.innerType as z.ZodType;
    } else if (def.type === 'optional' || def.type === 'nullable') {
      if (def.type === 'optional') found.optional = true;
      current = def.innerType as z.ZodType;
    } else if (def.type === 'union') {
      const options = def.options as z.ZodType[];
      const object = options.find((option) => defOf(option).type === 'object');
      const literalFalse = options.some((option) => defOf(option).type === 'literal');
      if (object && literalFalse) {
        found.orFalse = true;
        current = object;
        continue;
      }
      found.leafType = options.map((option) => typeName(option)).join(' or ');
      found.inner = current;
      return found;
    } else if (def.type === 'object') {
      found.objects.push(current);
      return found;
    } else {
      found.leafType = typeName(current);
      found.inner = current;
      return found;
    }
  }
  return found;
}

function isDurationSchema(schema: z.ZodType): boolean {
  const def = defOf(schema);
  if (def.type !== 'pipe') return false;
  const input = defOf(def.in as z.ZodType);
  return input.type === 'union' && (input.options as z.ZodType[]).length === 2;
}

function typeName(schema: z.ZodType): string {
  if (isDurationSchema(schema)) return 'duration';
  const def = defOf(schema);
  switch (def.type) {
    case 'pipe':
      return defOf(def.in as z.ZodType).type === 'string' ? 'string' : typeName(def.in as z.ZodType);
    case 'number':
      return typeof def.format === 'string' && def.format.includes('int') ? 'integer' : 'number';
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'enum':
      return Object.values(def.entries as Record<string, string>)
        .map((value) => `\`${value}\``)
        .join(', ');
    case 'literal':
      return (def.values as unknown[]).map((value) => `\`${String(value)}\``).join(', ');
    case 'array':
      return `list of ${typeName(def.element as z.ZodType)}`;
    case 'record':
      return 'map';
    case 'object':
      return 'object';
    default:
      return def.type;
  }
}

function formatDefault(value: unknown, isDuration: boolean, optional: boolean): string {
  if (value === undefined) return optional ? 'none' : '';
  if (isDuration && typeof value === 'number') return `\`${humanDuration(value)}\``;
  if (typeof value === 'number') return bytesOrCount(value);
  if (value === null) return 'none';
  if (typeof value === 'object') {
    const endpoint = (value as { endpoint?: { host: string; port: number } }).endpoint;
    if (endpoint) return `\`${endpoint.host}:${endpoint.port}\``;
    return `\`${JSON.stringify(value)}\``;
  }
  return `\`${String(value)}\``;
}

/** Powers of two from 1 MiB up read as sizes; other numbers as counts. */
function bytesOrCount(value: number): string {
  if (value >= 2 ** 20 && value % 2 ** 20 === 0) {
    const mib = value / 2 ** 20;
    return mib % 1024 === 0 ? `${mib / 1024} GiB` : `${mib} MiB`;
  }
  return value.toLocaleString('en-US');
}

function humanDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1_000 && ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}

function table(list: readonly Row[]): string {
  const escapeCell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return markdownTable(
    ['key', 'type', 'default', 'what it does'],
    list.map((row) => [`\`${row.key}\``, row.type, row.default, escapeCell(row.description)]),
  );
}

/** A table laid out as the formatter (Biome) lays it out: every column padded to its widest cell. */
function markdownTable(head: readonly string[], body: readonly (readonly string[])[]): string {
  const widths = head.map((cell, column) =>
    Math.max(3, cell.length, ...body.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(head), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}

/** The instruments ToolpathMetrics creates, recorded on a meter that keeps nothing else. */
function metricRows(): string {
  const made: { name: string; kind: string; unit: string; description: string }[] = [];
  const noop = createNoopMeter();
  const record =
    (kind: string, create: (name: string, options?: object) => unknown) =>
    (name: string, options: { unit?: string; description?: string } = {}) => {
      made.push({ name, kind, unit: options.unit ?? '', description: options.description ?? '' });
      return create(name, options);
    };
  const meter: Meter = {
    ...noop,
    createCounter: record('counter', noop.createCounter.bind(noop)),
    createHistogram: record('histogram', noop.createHistogram.bind(noop)),
    createUpDownCounter: record('up-down counter', noop.createUpDownCounter.bind(noop)),
    createObservableGauge: record('gauge', noop.createObservableGauge.bind(noop)),
    createObservableCounter: record('observable counter', noop.createObservableCounter.bind(noop)),
    createObservableUpDownCounter: record(
      'observable up-down counter',
      noop.createObservableUpDownCounter.bind(noop),
    ),
    createGauge: record('gauge', noop.createGauge.bind(noop)),
    addBatchObservableCallback: () => undefined,
    removeBatchObservableCallback: () => undefined,
  } as Meter;
  const provider: MeterProvider = { getMeter: () => meter };
  new ToolpathMetrics(provider).observeBuffer(() => ({ traces: 0, spans: 0, bytes: 0 }));
  return markdownTable(
    ['metric', 'kind', 'unit', 'what it counts'],
    made.map((m) => [`\`${m.name}\``, m.kind, `\`${m.unit}\``, m.description.replace(/\|/g, '\\|')]),
  );
}

function renames(list: readonly (readonly [string, string])[]): string {
  return list.map(([from, to]) => `\`${from}\` -> \`${to}\``).join(', ');
}

/** The whole page. */
export function referencePage(): string {
  return `# Reference: options and metrics

<!-- Generated from src/config/schema.ts and src/judging/metrics.ts by test/docs/reference.ts;
     UPDATE_REFERENCE=1 npx vitest run test/docs writes it anew. Do not edit by hand. -->

Every option has one name and one default, owned by [src/config/schema.ts](../src/config/schema.ts).
The TypeScript options and \`toolpath serve\`'s YAML take the same names; a duration is written
\`500ms\`, \`30s\`, \`2m\`, \`1h\`, or as a number of milliseconds. A bad option throws (or, for
\`serve\`, prints) a \`ConfigError\` naming it. \`toolpath schema --config\` prints the YAML's JSON Schema.

## \`toolpath serve --config toolpath.yaml\`

\`\${env:NAME}\` in any string is replaced by that environment variable.

${table(rows(serveConfigSchema, ''))}

### Environment variables

What the file says wins, then the environment, then the default (as the OTel JS exporters do):

${markdownTable(
  ['variable', 'sets', 'default'],
  [
    ['`OTEL_LOG_LEVEL`', "`logLevel`: toolpath's own diagnostics on stderr", `\`${DEFAULT_LOG_LEVEL}\``],
    [
      '`OTEL_EXPORTER_OTLP_ENDPOINT`',
      "`exporters.otlp.endpoint` (each signal's path added over HTTP)",
      'none',
    ],
    ['`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `_METRICS_ENDPOINT`', "that signal's URL, as given", 'none'],
    [
      '`OTEL_EXPORTER_OTLP_PROTOCOL`, `_TRACES_PROTOCOL`',
      '`exporters.otlp.protocol`',
      `\`${DEFAULT_OTLP_PROTOCOL}\``,
    ],
    [
      '`OTEL_EXPORTER_OTLP_HEADERS`, `_TRACES_HEADERS`',
      'headers (`k=v,k2=v2`), under `exporters.otlp.headers`',
      'none',
    ],
  ],
)}

## \`trajectoryProcessor({ ... })\`

Beside \`scenarios\`, \`export\`, \`worker\`, \`onReport\`, \`meterProvider\`, \`loggerProvider\`,
\`redact\` and \`sampling\` (docs/in-process.md):

${table(rows(processorOptionsSchema, ''))}

Old names that still work: ${renames(PROCESSOR_RENAMES)}.

## \`new TraceAdapter({ ... })\`

The adapter behind \`serve\`, for a service of your own:

${table(rows(adapterOptionsSchema, ''))}

Old names that still work: ${renames(ADAPTER_RENAMES)}.

## Metrics

Through the metrics API (\`meterProvider\`, else the global one), from the processor and \`serve\` alike:

${metricRows()}
`;
}
