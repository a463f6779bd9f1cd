/**
 * `toolpath serve`: the adapter as a service. Builds everything the configuration asks for
 * (receivers, the adapter, the exporter to the next hop, the Prometheus endpoint and OTLP
 * metrics, the reports file), starts it, and stops it in order: stop taking spans (the receivers
 * stay open and answer "unavailable, retry later"), judge what is pending as incomplete, make the
 * last forward attempt, then close the receivers and the sinks. What was lost on the way is in
 * {@link RunningService.losses}.
 */
import { mkdirSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { diag } from '@opentelemetry/api';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtobufMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, type MetricReader, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { globSync } from 'tinyglobby';
import type { OtlpExporterSettings } from '../config/otel-env.js';
import { type JudgeRecord, loadJudges } from '../judging/judges.js';
import { loadScenarios } from '../judging/trace-judge.js';
import { type Report, scenarioLabel } from '../model/report.js';
import { parseScenario, type Scenario } from '../scenario/scenario.js';
import { TraceAdapter } from './adapter.js';
import type { AdapterConfig } from './config.js';
import { type ConnectionEvents, ConnectionLimit } from './connection-limit.js';
import { DEFAULT_SCENARIO } from './default-scenario.js';
import { startGrpcReceiver } from './grpc-receiver.js';
import { startHttpReceiver } from './http-receiver.js';
import type { IngestResult, TraceIngest } from './ingest.js';
import { Losses } from './losses.js';
import { hostForUrl } from './receiver-common.js';
import { ReportsFile } from './reports-file.js';
import { lockStorage, type StorageLock } from './storage-lock.js';

export { DEFAULT_SCENARIO } from './default-scenario.js';

/** `judge answer-quality on demo.answer: hallucinated (0.25)`, or why it failed. */
function judgeLine(record: JudgeRecord): string {
  const what = record.result ? `${record.result.label} (${record.result.score})` : `failed: ${record.error}`;
  return `judge ${record.name} on ${record.scenario}: ${what}`;
}

/** What a request gets while the adapter is being made (the log read back). */
const STARTING: IngestResult = {
  kind: 'unavailable',
  reason: 'shutting_down',
  retryAfterSeconds: 1,
  message: 'starting',
};

/** A running service. */
export interface RunningService {
  adapter: TraceAdapter;
  /** Base URL of the OTLP/HTTP receiver (`${httpUrl}/v1/traces`), when enabled. */
  httpUrl?: string;
  /** `host:port` of the OTLP/gRPC receiver, when enabled. */
  grpcAddress?: string;
  /** URL of the Prometheus scrape endpoint, when enabled. */
  metricsUrl?: string;
  scenarios: readonly Scenario[];
  /** What could not be delivered or kept (findings, spans, report lines), by what and why. */
  losses: Losses;
  /** Connections over both receivers, those closed to make room, and those refused. */
  connections: ConnectionLimit;
  /** Durable mode's folder, when configured. */
  storageDirectory?: string;
  /** Graceful stop; resolves when everything is flushed. */
  close(): Promise<void>;
}

/** Where relative paths in the configuration are resolved from, and where to say what happens. */
export interface ServeContext {
  baseDir: string;
  log: (line: string) => void;
}

/**
 * The resource of serve's own metrics: `service.name` toolpath (the SDK's default would be
 * `unknown_service:node`), unless OTEL_SERVICE_NAME names the deployment otherwise.
 */
function serviceResource() {
  const name = process.env.OTEL_SERVICE_NAME?.trim() || 'toolpath';
  return defaultResource().merge(resourceFromAttributes({ 'service.name': name }));
}

/** Starts the service described by `config`. Throws (ScenarioError, listen errors) before serving anything. */
export async function startService(config: AdapterConfig, context: ServeContext): Promise<RunningService> {
  const scenarios = loadConfiguredScenarios(config.scenarios, context.baseDir);
  // The storage folder is taken before anything of it (or the reports file beside it) is read:
  // a second process on it stops here, having judged and written nothing.
  const storageDir = config.storage && resolvePath(config.storage.directory, context.baseDir);
  let lock: StorageLock | undefined;
  if (storageDir) {
    mkdirSync(storageDir, { recursive: true });
    lock = lockStorage(storageDir);
  }
  try {
    return await startLocked(config, context, scenarios);
  } catch (error) {
    lock?.release();
    throw error;
  }
}

async function startLocked(
  config: AdapterConfig,
  context: ServeContext,
  scenarios: Scenario[],
): Promise<RunningService> {
  const readers: MetricReader[] = [];
  let metricsUrl: string | undefined;
  const prometheus = config.metrics.prometheus?.endpoint;
  if (prometheus) {
    const exporter = await new Promise<PrometheusExporter>((resolvePromise, reject) => {
      const created: PrometheusExporter = new PrometheusExporter(
        { host: prometheus.host, port: prometheus.port },
        (error) => (error ? reject(error) : resolvePromise(created)),
      );
    });
    // exporter-prometheus 0.223.0 pins sdk-metrics 2.12.0: the same MetricReader, declared twice.
    readers.push(exporter as unknown as MetricReader);
    metricsUrl = `http://${hostForUrl(prometheus.host)}:${prometheus.port}/metrics`;
  }
  const otlp = config.exporters.otlp;
  if (otlp) readers.push(new PeriodicExportingMetricReader({ exporter: metricExporter(otlp) }));
  const meterProvider = new MeterProvider({ readers, resource: serviceResource() });
  const losses = new Losses();
  const reportsConfig = config.reports;
  const reports = reportsConfig.file
    ? new ReportsFile(
        resolvePath(reportsConfig.file, context.baseDir),
        reportsConfig.traceDir === undefined
          ? undefined
          : {
              dir: resolvePath(reportsConfig.traceDir, context.baseDir),
              keep: reportsConfig.keepTraces,
              maxFiles: reportsConfig.maxTraceFiles,
            },
        losses,
        config.storage !== undefined,
      )
    : undefined;
  // With nowhere else for verdicts to go, say them: a first run should show something.
  const onReport = reports || otlp ? undefined : (report: Report) => context.log(verdictLine(report));

  const judges =
    config.judges === undefined ? undefined : await loadJudges(resolvePath(config.judges, context.baseDir));
  // The ports are bound first and answer "unavailable" until the adapter is made: a second
  // process on the same ports fails before it reads (or judges) anything of the storage folder.
  let adapter: TraceAdapter | undefined;
  let metered: ConnectionEvents = {};
  const connections = new ConnectionLimit(config.limits.maxConnections, {
    onRefused: (receiver) => metered.onRefused?.(receiver),
    onEvicted: (receiver, state) => metered.onEvicted?.(receiver, state),
  });
  const gate: TraceIngest = {
    ingest: (decoded, raw) => adapter?.ingest(decoded, raw) ?? STARTING,
    ready: () => adapter?.ready() ?? false,
    heldTexts: (traceId) => adapter?.heldTexts(traceId),
  };
  const closers: (() => Promise<void>)[] = [];
  const closeReceivers = async () => {
    for (const close of closers.splice(0))
      await close().catch((error) => diag.error('toolpath: close', error));
  };
  const bound: { httpUrl?: string; grpcAddress?: string } = {};
  try {
    const receiverOptions = {
      ingest: gate,
      maxRequestBytes: config.limits.maxRequestBytes,
      idleTimeoutMs: config.receivers.idleTimeout,
      connections,
      ...(config.auth.bearerToken !== undefined && { bearerToken: config.auth.bearerToken }),
    };
    const http = config.receivers.otlp.http;
    if (http) {
      const receiver = await startHttpReceiver({ ...receiverOptions, ...http.endpoint });
      closers.push(() => receiver.close());
      bound.httpUrl = receiver.url;
    }
    const grpc = config.receivers.otlp.grpc;
    if (grpc) {
      const receiver = await startGrpcReceiver({ ...receiverOptions, ...grpc.endpoint });
      closers.push(() => receiver.close());
      bound.grpcAddress = `${grpc.endpoint.host}:${receiver.port}`;
    }
  } catch (error) {
    await closeReceivers();
    await meterProvider.shutdown().catch(() => undefined);
    await reports?.close();
    throw error;
  }

  try {
    adapter = new TraceAdapter({
      scenarios,
      ...(judges && {
        judges,
        onJudges: (_: Report, records: readonly JudgeRecord[]) => {
          for (const record of records) context.log(judgeLine(record));
        },
      }),
      ...(config.redact !== undefined && { redact: config.redact }),
      ...(config.sampling !== undefined && { sampling: config.sampling }),
      meterProvider,
      ...(onReport && { onReport }),
      ...(reports && {
        onJudged: (spans, judgement) => reports.writeTrace(spans, judgement.reports),
        onConversationJudged: (judgement) => reports.writeReports(judgement.reports),
      }),
      conversations: config.conversations,
      decision: config.decision,
      limits: {
        maxTraces: config.limits.maxTraces,
        maxSpansPerTrace: config.limits.maxSpansPerTrace,
        maxSpans: config.limits.maxSpans,
        maxBufferedBytes: config.limits.maxBufferedBytes,
        maxJudgedTraceIds: config.limits.maxJudgedTraceIds,
      },
      forwardSpans: config.forward.spans,
      losses,
      ...(config.storage && {
        storage: {
          directory: resolvePath(config.storage.directory, context.baseDir),
          maxBytes: config.storage.maxBytes,
          ...(reports && { reports }),
        },
      }),
      ...(otlp && { exporter: traceExporter(otlp) }),
    });
  } catch (error) {
    // A storage folder held by another process, or one it cannot read: nothing was judged.
    await closeReceivers();
    await meterProvider.shutdown().catch(() => undefined);
    await reports?.close();
    throw error;
  }
  const started = adapter;
  const { metrics } = started.judge.sinks;
  metered = {
    onRefused: (receiver) => metrics.recordRefusedConnection(receiver),
    onEvicted: (receiver, state) => metrics.recordEvictedConnection(receiver, state),
  };

  const service: RunningService = {
    adapter: started,
    scenarios: started.judge.scenarios,
    losses,
    connections,
    ...bound,
    ...(metricsUrl && { metricsUrl }),
    ...(config.storage && { storageDirectory: resolvePath(config.storage.directory, context.baseDir) }),
    close: async () => {
      // Judge and make the last forward attempt while the receivers answer "unavailable" (so a
      // client retries elsewhere or later instead of meeting a closed port), then close them, then
      // the sinks: the last metrics export counts what was lost.
      await started.shutdown();
      await closeReceivers();
      await meterProvider.shutdown().catch((error) => diag.error('toolpath: metrics shutdown', error));
      await reports?.close();
    },
  };
  return service;
}

function loadConfiguredScenarios(patterns: readonly string[], baseDir: string): Scenario[] {
  if (patterns.length === 0) return [parseScenario(DEFAULT_SCENARIO, 'built-in defaults')];
  const files: string[] = [];
  for (const pattern of patterns) {
    const matched = globSync(pattern, { cwd: baseDir, absolute: true }).sort();
    // A pattern that matches nothing is a typo more often than an intention: say so.
    if (matched.length === 0) throw new Error(`scenarios: "${pattern}" matches no file (from ${baseDir})`);
    files.push(...matched);
  }
  return loadScenarios(files);
}

function traceExporter(otlp: OtlpExporterSettings): SpanExporter {
  if (otlp.protocol === 'grpc')
    return new GrpcTraceExporter({
      url: otlp.tracesEndpoint ?? otlp.endpoint,
      metadata: grpcMetadata(otlp.headers),
    });
  const options = { url: otlp.tracesEndpoint ?? signalUrl(otlp.endpoint, 'traces'), headers: otlp.headers };
  return otlp.protocol === 'http/json' ? new JsonTraceExporter(options) : new ProtobufTraceExporter(options);
}

type MetricExporter = ConstructorParameters<typeof PeriodicExportingMetricReader>[0]['exporter'];

/** Metrics go where the spans go, the same way. */
function metricExporter(otlp: OtlpExporterSettings): MetricExporter {
  // The metric exporters 0.223.0 pin sdk-metrics 2.12.0: the same PushMetricExporter, declared twice.
  if (otlp.protocol === 'grpc')
    return new GrpcMetricExporter({
      url: otlp.metricsEndpoint ?? otlp.endpoint,
      metadata: grpcMetadata(otlp.headers),
    }) as unknown as MetricExporter;
  const options = { url: otlp.metricsEndpoint ?? signalUrl(otlp.endpoint, 'metrics'), headers: otlp.headers };
  return (otlp.protocol === 'http/json'
    ? new JsonMetricExporter(options)
    : new ProtobufMetricExporter(options)) as unknown as MetricExporter;
}

/** The configured headers as gRPC metadata. */
function grpcMetadata(headers: Record<string, string>): Metadata {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
  return metadata;
}

/** An endpoint without a path gets the signal's path, as OTEL_EXPORTER_OTLP_ENDPOINT does. */
function signalUrl(endpoint: string, signal: 'traces' | 'metrics'): string {
  const url = new URL(endpoint);
  if (url.pathname === '' || url.pathname === '/') url.pathname = `/v1/${signal}`;
  return url.toString();
}

function verdictLine(report: Report): string {
  const findings = report.findings.map((finding) => `${finding.rule}: ${finding.message}`).join('; ');
  return `${report.verdict.toUpperCase()}  ${scenarioLabel(report.scenario)}  trace ${report.traceId}${findings ? `  ${findings}` : ''}`;
}

function resolvePath(path: string, baseDir: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}
