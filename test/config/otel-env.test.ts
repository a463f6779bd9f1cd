/**
 * `toolpath serve` honours the OTel environment variables as the OTel JS exporters do: what the
 * file says wins, then the environment, then the default; a bad value is a ConfigError naming it.
 */
import { describe, expect, it } from 'vitest';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { ConfigError } from '../../src/config/values.js';

const parse = (document: unknown, env: NodeJS.ProcessEnv) =>
  parseAdapterConfig(document, 'toolpath.yaml', env);

describe('OTEL_LOG_LEVEL and OTEL_EXPORTER_OTLP_*', () => {
  it('default to warn and no exporter', () => {
    const config = parse({}, {});
    expect(config.logLevel).toBe('warn');
    expect(config.exporters.otlp).toBeUndefined();
  });

  it('take the environment when the file says nothing', () => {
    const config = parse(
      {},
      {
        OTEL_LOG_LEVEL: 'DEBUG',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc%20d,x-team=evals',
      },
    );
    expect(config.logLevel).toBe('debug');
    expect(config.exporters.otlp).toEqual({
      endpoint: 'http://collector:4318',
      protocol: 'grpc',
      headers: { 'api-key': 'abc d', 'x-team': 'evals' },
    });
  });

  it('let the file win over the environment, headers merged key by key', () => {
    const config = parse(
      {
        logLevel: 'error',
        exporters: {
          otlp: { endpoint: 'http://next:4318', protocol: 'http/json', headers: { 'x-team': 'file' } },
        },
      },
      {
        OTEL_LOG_LEVEL: 'debug',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/v1/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc,x-team=env',
      },
    );
    expect(config.logLevel).toBe('error');
    expect(config.exporters.otlp).toEqual({
      endpoint: 'http://next:4318',
      protocol: 'http/json',
      headers: { 'api-key': 'abc', 'x-team': 'file' },
    });
  });

  it('use a signal endpoint as given, beside the protocol default', () => {
    const config = parse(
      {},
      {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://metrics:4318/m',
      },
    );
    expect(config.exporters.otlp).toEqual({
      endpoint: 'http://traces:4318/custom',
      tracesEndpoint: 'http://traces:4318/custom',
      metricsEndpoint: 'http://metrics:4318/m',
      protocol: 'http/protobuf',
      headers: {},
    });
  });

  it('name each bad variable in one ConfigError', () => {
    let error: unknown;
    try {
      parse(
        { exporters: { otlp: {} } },
        {
          OTEL_LOG_LEVEL: 'loud',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http',
          OTEL_EXPORTER_OTLP_HEADERS: 'novalue',
        },
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'OTEL_LOG_LEVEL: expected one of none, error, warn, info, debug, verbose, all; got "loud"',
      'OTEL_EXPORTER_OTLP_PROTOCOL: expected one of http/json, http/protobuf, grpc; got "http"',
      'OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs separated by commas; got "novalue"',
      'exporters.otlp.endpoint: not given, and OTEL_EXPORTER_OTLP_ENDPOINT is not set',
    ]);
  });
});
