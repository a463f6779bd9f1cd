import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadAdapterConfig, parseAdapterConfig } from '../../src/collector/config.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

function problems(document: unknown, env: NodeJS.ProcessEnv = {}): readonly string[] {
  try {
    parseAdapterConfig(document, 'toolpath.yaml', env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('adapter configuration', () => {
  it('fills every default from an empty file: local receivers, no exporter, sane limits', () => {
    const config = parseAdapterConfig({}, 'empty.yaml', {});
    expect(config.receivers.otlp.http?.endpoint).toEqual({ host: '127.0.0.1', port: 4318 });
    expect(config.receivers.otlp.grpc?.endpoint).toEqual({ host: '127.0.0.1', port: 4317 });
    expect(config.forward.spans).toBe('none');
    expect(config.decision).toEqual({ wait: 30_000, waitAfterRoot: 2_000, lateWindow: 600_000 });
    expect(config.receivers.idleTimeout).toBe(60_000);
    expect(config.limits.maxRequestBytes).toBe(20 * 1024 * 1024);
    expect(config.limits.maxJudgedTraceIds).toBe(1_000_000);
    expect(config.limits.maxConnections).toBe(1_000);
    expect(config.exporters.otlp).toBeUndefined();
  });

  it('reads every documented key, with durations, endpoints and ${env:NAME}', () => {
    const config = parseAdapterConfig(
      {
        receivers: { otlp: { http: { endpoint: '0.0.0.0:14318' }, grpc: null }, idleTimeout: '90s' },
        scenarios: ['scenarios/*.yaml'],
        exporters: {
          otlp: {
            endpoint: 'http://backend:4318',
            protocol: 'http/json',
            headers: { 'x-key': '${env:KEY}' },
          },
        },
        forward: { spans: 'sampled' },
        decision: { wait: '2m', waitAfterRoot: '500ms', lateWindow: '1m' },
        limits: {
          maxTraces: 5,
          maxSpansPerTrace: 6,
          maxRequestBytes: 1024,
          maxBufferedBytes: 4096,
          maxJudgedTraceIds: 7,
          maxConnections: 8,
        },
        sampling: { ratio: 0.1, keepAttributes: { 'app.tier': 'gold' } },
        metrics: { prometheus: { endpoint: '9464' } },
        reports: { file: 'reports.jsonl' },
        auth: { bearerToken: '${env:TOKEN}' },
      },
      'full.yaml',
      { KEY: 'k1', TOKEN: 's3cret' },
    );
    expect(config.receivers.otlp.http?.endpoint).toEqual({ host: '0.0.0.0', port: 14318 });
    expect(config.receivers.otlp.grpc).toBeNull();
    expect(config.exporters.otlp).toEqual({
      endpoint: 'http://backend:4318',
      protocol: 'http/json',
      headers: { 'x-key': 'k1' },
    });
    expect(config.decision).toEqual({ wait: 120_000, waitAfterRoot: 500, lateWindow: 60_000 });
    expect(config.receivers.idleTimeout).toBe(90_000);
    expect(config.metrics.prometheus?.endpoint).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(config.auth.bearerToken).toBe('s3cret');
    expect(config.limits).toEqual({
      maxTraces: 5,
      maxSpansPerTrace: 6,
      maxSpans: 1_000_000,
      maxRequestBytes: 1024,
      maxBufferedBytes: 4096,
      maxJudgedTraceIds: 7,
      maxConnections: 8,
    });
  });

  it('says what is wrong with the idle timeout, the late window and the new limits', () => {
    expect(
      problems({
        receivers: { idleTimeout: 0, idleTimout: '1s' },
        decision: { lateWindow: 'ten minutes' },
        limits: { maxJudgedTraceIds: 0, maxConnections: 1.5 },
      }),
    ).toEqual([
      'receivers.idleTimeout: expected a duration above zero, like 60s',
      'receivers: unknown key "idleTimout" (did you mean idleTimeout?)',
      'decision.lateWindow: expected a duration like 500ms, 30s or 2m; got "ten minutes"',
      'limits.maxJudgedTraceIds: expected an integer >= 1; got 0',
      'limits.maxConnections: expected an integer; got 1.5',
    ]);
  });

  it('reports every mistake with its path, and suggests the key meant', () => {
    expect(
      problems(
        {
          recievers: {},
          forward: { spans: 'some' },
          decision: { wait: '30 seconds' },
          exporters: { otlp: { endpoint: 'not a url', protocol: 'http' } },
          limits: { maxTraces: 0, maxBufferedBytes: '1GB' },
          auth: { bearerToken: '${env:MISSING_TOKEN}' },
        },
        {},
      ),
    ).toEqual([
      'auth.bearerToken: environment variable MISSING_TOKEN is not set',
      'exporters.otlp.endpoint: expected a URL like http://collector:4318; got "not a url"',
      'exporters.otlp.protocol: expected "http/json" or "http/protobuf" or "grpc"; got "http"',
      'forward.spans: expected "none" or "sampled" or "all"; got "some"',
      'decision.wait: expected a duration like 500ms, 30s or 2m; got "30 seconds"',
      'limits.maxTraces: expected an integer >= 1; got 0',
      'limits.maxBufferedBytes: expected a number; got "1GB"',
      'unknown key "recievers" (did you mean receivers?)',
    ]);
  });

  it('names the file and the YAML error', () => {
    const dir = temporaryDir('toolpath-config-');
    const file = join(dir, 'toolpath.yaml');
    writeFileSync(file, 'receivers:\n  otlp: [\n');
    expect(() => loadAdapterConfig(file, {})).toThrow(
      /^config .*toolpath\.yaml: not valid YAML: line 2, column 9: /,
    );
    expect(() => loadAdapterConfig(join(dir, 'missing.yaml'), {})).toThrow(
      `config ${join(dir, 'missing.yaml')}: no such file: ${join(dir, 'missing.yaml')}`,
    );
  });

  it('accepts the example configuration in examples/collector', () => {
    const path = new URL('../../examples/collector/toolpath.yaml', import.meta.url).pathname;
    const config = loadAdapterConfig(path, { BACKEND_TOKEN: 'b', TOOLPATH_TOKEN: 't' });
    expect(config.exporters.otlp?.headers.authorization).toBe('Bearer b');
    expect(config.receivers.otlp.grpc?.endpoint).toEqual({ host: '0.0.0.0', port: 4317 });
  });
});
