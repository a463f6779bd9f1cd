/**
 * `toolpath serve`'s own diagnostics: the OpenTelemetry `diag` logger, installed at the
 * configured level (`logLevel`, else `OTEL_LOG_LEVEL`, else warn), one line each on stderr. Without
 * it the adapter's `diag.error` calls (ingest, judging, forwarding failures) would go nowhere.
 */
import { type DiagLogFunction, type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import type { ServeSettings } from '../config/otel-env.js';

const LEVELS: Record<ServeSettings['logLevel'], DiagLogLevel> = {
  none: DiagLogLevel.NONE,
  error: DiagLogLevel.ERROR,
  warn: DiagLogLevel.WARN,
  info: DiagLogLevel.INFO,
  debug: DiagLogLevel.DEBUG,
  verbose: DiagLogLevel.VERBOSE,
  all: DiagLogLevel.ALL,
};

/** Installs the global diag logger writing to `write`; returns what uninstalls it. */
export function installDiagLogger(
  level: ServeSettings['logLevel'],
  write: (line: string) => void,
): () => void {
  const line =
    (label: string): DiagLogFunction =>
    (message, ...args) =>
      write(`${label} ${[message, ...args.map(describe)].join(' ')}\n`);
  const logger: DiagLogger = {
    error: line('error'),
    warn: line('warn'),
    info: line('info'),
    debug: line('debug'),
    verbose: line('verbose'),
  };
  diag.setLogger(logger, { logLevel: LEVELS[level], suppressOverrideMessage: true });
  return () => diag.disable();
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.stack ?? `${value.name}: ${value.message}`;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
