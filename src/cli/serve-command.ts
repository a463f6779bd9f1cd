/**
 * `toolpath serve [--config toolpath.yaml]`: runs the collector adapter until SIGINT or SIGTERM,
 * then stops gracefully (stop accepting, judge pending traces as incomplete, flush, exit 0).
 * Without a config it runs on built-in defaults and says where it listens.
 */
import { dirname, resolve } from 'node:path';
import type { AdapterStats } from '../collector/adapter.js';
import {
  type AdapterConfig,
  ConfigError,
  loadAdapterConfig,
  parseAdapterConfig,
} from '../collector/config.js';
import { DEFAULT_SCENARIO } from '../collector/default-scenario.js';
import { installDiagLogger } from '../collector/diag-logger.js';
import type { RunningService } from '../collector/serve.js';
import { ScenarioError } from '../scenario/scenario.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';
import { loadServeModule } from './serve-packages.js';

export const SERVE_USAGE = `usage: toolpath serve [--config toolpath.yaml]

Receives OTLP traces (HTTP JSON/protobuf on 127.0.0.1:4318, gRPC on 127.0.0.1:4317 by default),
judges each completed trace against the configured scenarios, and forwards evaluation spans
(and, if configured, the spans) over OTLP to the next hop. SIGINT/SIGTERM stop it gracefully.

options:
  --config FILE  YAML configuration (receivers, scenarios, exporters, forward, decision,
                 limits, sampling, metrics, reports, auth, logLevel; \${env:NAME} expands;
                 its keys and defaults: toolpath schema --config, docs/reference.md)

environment: OTEL_LOG_LEVEL (default warn), OTEL_EXPORTER_OTLP_ENDPOINT, _PROTOCOL, _HEADERS
(and their _TRACES_ / _METRICS_ forms); what the file says wins.
`;

/** Runs `toolpath serve`; resolves to the exit code once stopped. */
export async function serveCommand(args: readonly string[], io: CliIO): Promise<number> {
  let configPath: string | undefined;
  try {
    const { values } = parseCommandLine({
      args: [...args],
      options: { config: { type: 'string' } },
      strict: true,
    });
    configPath = values.config;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // The service's own packages (receivers, exporters) are optional peers: loaded only here.
  const serve = await loadServeModule();
  if (typeof serve === 'string') {
    io.stderr(serve);
    return 2;
  }
  let service: RunningService;
  let config: AdapterConfig;
  try {
    config = configPath ? loadAdapterConfig(configPath) : parseAdapterConfig({}, 'built-in defaults');
    const baseDir = configPath ? dirname(resolve(configPath)) : process.cwd();
    installDiagLogger(config.logLevel, io.stderr);
    service = await serve.startService(config, { baseDir, log: (line) => io.stderr(`${line}\n`) });
  } catch (error) {
    if (error instanceof ConfigError || error instanceof ScenarioError) {
      io.stderr(`${error.message}\n`);
      return 2;
    }
    // The defaults are the OTLP ports, which a local Collector often holds already. gRPC's bind
    // error carries no code, only the listen error's text.
    const inUse = /\bEADDRINUSE\b/.test((error as Error).message);
    const hint = inUse
      ? ' (another process listens there; the config sets endpoints in receivers.otlp.http.endpoint, receivers.otlp.grpc.endpoint and metrics.prometheus.endpoint)'
      : '';
    io.stderr(`toolpath serve: cannot start: ${(error as Error).message}${hint}\n`);
    return 2;
  }
  // Listening before the startup text says so: a SIGTERM sent on reading it stops gracefully.
  const stopped = new Promise<void>((resolveStop) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolveStop();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  io.stdout(startupText(service, config, configPath));
  await stopped;
  io.stdout('toolpath serve: stopping: judging pending traces and flushing\n');
  await service.close();
  io.stdout(`${stopLine(service)}\n`);
  return 0;
}

/**
 * What the service says when it starts: where it listens, what it judges by, and where its
 * findings go. On the built-in defaults it says what they check and what they cannot (they know
 * no tool names), and when nothing is configured to receive findings it says they are only
 * printed here.
 */
export function startupText(service: RunningService, config: AdapterConfig, configPath?: string): string {
  const lines = [
    `toolpath serve: ${configPath ? `config ${configPath}` : 'built-in defaults (no --config)'}`,
  ];
  if (service.httpUrl) {
    lines.push(`  OTLP/HTTP  ${service.httpUrl}/v1/traces`);
    lines.push(`  health     ${service.httpUrl}/healthz, ${service.httpUrl}/readyz`);
  }
  if (service.grpcAddress) lines.push(`  OTLP/gRPC  ${service.grpcAddress}`);
  if (service.metricsUrl) lines.push(`  metrics    ${service.metricsUrl}`);
  const { connections } = service;
  if (connections.capacity < connections.max)
    lines.push(
      `  connections at most ${connections.capacity} open: what the open-file limit ${connections.openFileLimit} leaves, under limits.maxConnections (${connections.max})`,
    );
  const storage = service.adapter.stats().storage;
  if (storage) {
    const cut =
      storage.cutSegments > 0
        ? `; cut a damaged tail (${storage.cutBytes} bytes in ${storage.cutSegments} segments)`
        : '';
    const skipped =
      storage.skippedRecords > 0
        ? `; skipped ${storage.skippedRecords} damaged records (${storage.skippedBytes} bytes)`
        : '';
    lines.push(
      `  storage    ${service.storageDirectory}: replayed ${storage.replayedTraces} traces not done (${storage.replayedReported} reported already)${heldAgain(storage)}${cut}${skipped}`,
    );
  }
  lines.push(
    `  scenarios  ${service.scenarios.map((s) => (s.source ? `${s.id} (${s.source})` : s.id)).join(', ')}`,
  );
  if (config.scenarios.length === 0)
    lines.push(
      `  checks     ${DEFAULT_CHECKS}; they know no tool names, so order, grounding and allowed tools need a scenario (scenarios: in a --config file)`,
    );
  const sinks = [
    config.exporters.otlp && `evaluation spans to ${config.exporters.otlp.endpoint}`,
    config.reports.file && `reports to ${config.reports.file}`,
  ].filter((sink): sink is string => typeof sink === 'string' && sink !== '');
  lines.push(
    sinks.length > 0
      ? `  findings   ${sinks.join(', ')}`
      : '  findings   printed here only, one line a trace: no exporters.otlp or reports.file is configured, so none is forwarded or kept',
  );
  return `${lines.join('\n')}\n`;
}

/** The built-in scenario's checks, in words (src/collector/serve.ts DEFAULT_SCENARIO). */
const DEFAULT_CHECKS = `no value taken from a failed call's result, at most ${DEFAULT_SCENARIO.efficiency.repeats.max} identical repeats of a call, at most ${DEFAULT_SCENARIO.efficiency.retries.max} retries`;

/** What a stop did not keep, by reason, in words (forwarding losses are said under "lost"). */
const DROPPED: Partial<Record<keyof AdapterStats['dropped'], [item: string, why: string]>> = {
  buffer_full: ['span', 'buffer full, the client told to retry'],
  trace_too_large: ['span', 'over limits.maxSpansPerTrace'],
  too_many_traces: ['span', 'of traces past limits.maxTraces or limits.maxSpans in one request'],
  late_unknown: ['span', 'late, of traces no longer known'],
  late_sampled_out: ['span', 'late, of traces sampled out'],
  sampled_out: ['trace', 'sampled out'],
  evicted: ['trace', 'evicted unjudged'],
};

/**
 * `toolpath serve: stopped; 2 traces judged, 0 late spans; lost: 20000 findings (next hop
 * unreachable); dropped: ...`: every loss by reason, in words.
 */
export function stopLine(service: RunningService): string {
  const stats = service.adapter.stats();
  const lost = service.losses.describe();
  const parts = [
    `${plural(stats.judgedTraces, 'trace')} judged, ${plural(stats.lateSpans, 'late span')}`,
    lost === '' ? 'nothing lost' : `lost: ${lost}`,
  ];
  const dropped = Object.entries(DROPPED).flatMap(([reason, words]) => {
    const count = stats.dropped[reason as keyof AdapterStats['dropped']];
    const [item, why] = words as [string, string];
    return count > 0 ? [`${count} ${item}${count === 1 ? '' : 's'} (${why})`] : [];
  });
  if (dropped.length > 0) parts.push(`dropped: ${dropped.join(', ')}`);
  if (service.connections.evicted > 0)
    parts.push(
      `closed ${service.connections.evicted} connections, longest idle first, to make room (limits.maxConnections or the open-file limit)`,
    );
  if (service.connections.refused > 0)
    parts.push(`refused ${service.connections.refused} connections over limits.maxConnections`);
  if (stats.storage && stats.storage.keptForRestart > 0)
    parts.push(`${stats.storage.keptForRestart} spans for the next hop kept in storage for the next start`);
  if (stats.storage && stats.storage.writeFailures > 0)
    parts.push(`${plural(stats.storage.writeFailures, 'write')} of the span log failed and tried again`);
  if (stats.storage && stats.storage.unwrittenAtStop > 0)
    parts.push(
      `${plural(stats.storage.unwrittenAtStop, 'trace')} not judged: the span log could not write their spans (answered 503)`,
    );
  if (stats.storage && stats.storage.keptConversations > 0)
    parts.push(
      `${plural(stats.storage.keptConversations, 'conversation')} not final kept in storage for the next start`,
    );
  if (stats.decisionsForgottenEarly > 0)
    parts.push(
      `${stats.decisionsForgottenEarly} judged trace ids forgotten before decision.lateWindow (limits.maxJudgedTraceIds)`,
    );
  return `toolpath serve: stopped; ${parts.join('; ')}`;
}

/** `; held 3 conversations again (7 traces; 1 not in storage), 1 final judged again for its findings`. */
function heldAgain(storage: NonNullable<AdapterStats['storage']>): string {
  const parts: string[] = [];
  if (storage.replayedConversations > 0) {
    const missing =
      storage.missingConversationTraces > 0 ? `; ${storage.missingConversationTraces} not in storage` : '';
    parts.push(
      `held ${plural(storage.replayedConversations, 'conversation')} again (${plural(storage.replayedConversationTraces, 'trace')}${missing})`,
    );
  }
  if (storage.conversationsJudgedAgain > 0)
    parts.push(`${plural(storage.conversationsJudgedAgain, 'final')} judged again for their findings`);
  return parts.length > 0 ? `; ${parts.join(', ')}` : '';
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
