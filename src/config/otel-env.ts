/**
 * The OpenTelemetry environment variables `toolpath serve` honours, merged with its configuration
 * in one place, the way the OTel JS exporters merge them: what the file says wins, then the
 * environment, then the default. `OTEL_LOG_LEVEL` sets `logLevel`; `OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `_PROTOCOL` and `_HEADERS` (and their `_TRACES_` and `_METRICS_` forms) set `exporters.otlp`.
 */
import {
  DEFAULT_LOG_LEVEL,
  DEFAULT_OTLP_PROTOCOL,
  logLevelSchema,
  otlpProtocolSchema,
  type ServeConfig,
} from './schema.js';
import { ConfigError } from './values.js';

type Protocol = (typeof otlpProtocolSchema.options)[number];
type LogLevel = (typeof logLevelSchema.options)[number];

/** Where evaluation spans and metrics go, every setting resolved. */
export interface OtlpExporterSettings {
  /** As written in the file or `OTEL_EXPORTER_OTLP_ENDPOINT`: over HTTP each signal's path is added when it has none. */
  endpoint: string;
  /** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `_METRICS_ENDPOINT`: used as given, as the spec says. */
  tracesEndpoint?: string;
  metricsEndpoint?: string;
  protocol: Protocol;
  headers: Record<string, string>;
}

/** A `toolpath serve` configuration with the environment merged in. */
export type ServeSettings = Omit<ServeConfig, 'exporters' | 'logLevel'> & {
  exporters: { otlp?: OtlpExporterSettings };
  logLevel: LogLevel;
};

/** Merges the OTel environment variables into a parsed configuration; throws a ConfigError for a bad one. */
export function withOtelEnvironment(
  config: ServeConfig,
  source: string,
  env: NodeJS.ProcessEnv = process.env,
): ServeSettings {
  const problems: string[] = [];
  const logLevel =
    config.logLevel ?? pick(logLevelSchema, 'OTEL_LOG_LEVEL', env, problems) ?? DEFAULT_LOG_LEVEL;
  const given = config.exporters.otlp;
  const tracesEndpoint = url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', env, problems);
  const metricsEndpoint = url('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', env, problems);
  const endpoint = given?.endpoint ?? url('OTEL_EXPORTER_OTLP_ENDPOINT', env, problems);
  const protocol =
    given?.protocol ??
    pick(otlpProtocolSchema, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', env, problems) ??
    pick(otlpProtocolSchema, 'OTEL_EXPORTER_OTLP_PROTOCOL', env, problems) ??
    DEFAULT_OTLP_PROTOCOL;
  const headers = {
    ...headersOf('OTEL_EXPORTER_OTLP_HEADERS', env, problems),
    ...headersOf('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env, problems),
    ...given?.headers,
  };
  const first = given?.endpoint === undefined ? (tracesEndpoint ?? endpoint) : endpoint;
  if (first === undefined && given)
    problems.push('exporters.otlp.endpoint: not given, and OTEL_EXPORTER_OTLP_ENDPOINT is not set');
  if (problems.length > 0) throw new ConfigError(source, problems);
  const { exporters: _, logLevel: __, ...rest } = config;
  if (first === undefined) return { ...rest, exporters: {}, logLevel };
  const otlp: OtlpExporterSettings = { endpoint: first, protocol, headers };
  // The file's endpoint is for both signals; the environment's signal endpoints only stand in for it.
  if (given?.endpoint === undefined) {
    if (tracesEndpoint !== undefined) otlp.tracesEndpoint = tracesEndpoint;
    if (metricsEndpoint !== undefined) otlp.metricsEndpoint = metricsEndpoint;
  }
  return { ...rest, exporters: { otlp }, logLevel };
}

function pick<T extends string>(
  schema: { options: readonly T[] },
  name: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): T | undefined {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return undefined;
  const found = schema.options.find((option) => option === value.toLowerCase());
  if (found === undefined)
    problems.push(`${name}: expected one of ${schema.options.join(', ')}; got "${value}"`);
  return found;
}

function url(name: string, env: NodeJS.ProcessEnv, problems: string[]): string | undefined {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return undefined;
  if (!URL.canParse(value)) {
    problems.push(`${name}: expected a URL like http://collector:4318; got "${value}"`);
    return undefined;
  }
  return value;
}

/** `key1=value1,key2=value2`, each part URL-encoded (the W3C Baggage form the spec names). */
function headersOf(name: string, env: NodeJS.ProcessEnv, problems: string[]): Record<string, string> {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return {};
  const headers: Record<string, string> = {};
  for (const part of value.split(',')) {
    const equals = part.indexOf('=');
    if (equals <= 0) {
      problems.push(`${name}: expected key=value pairs separated by commas; got "${part.trim()}"`);
      continue;
    }
    try {
      headers[decodeURIComponent(part.slice(0, equals).trim())] = decodeURIComponent(
        part.slice(equals + 1).trim(),
      );
    } catch {
      problems.push(`${name}: "${part.trim()}" is not URL-encoded`);
    }
  }
  return headers;
}
