/**
 * `toolpath serve` as a real process (node + tsx, as a user runs it from a checkout), on a
 * configuration written for the test, with what it prints captured; and the raw requests the
 * reliability tests send it: OTLP JSON over HTTP, a TraceService/Export call over gRPC.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { buildSync } from 'esbuild';
import { afterAll } from 'vitest';
import {
  type ExportResponse,
  TRACE_EXPORT_PATH,
  traceServiceDefinition,
} from '../../src/collector/grpc-receiver.js';
import { temporaryDir } from './temporary-dir.js';

const BIN = new URL('../../src/cli/bin.ts', import.meta.url).pathname;
const ROOT = new URL('../../', import.meta.url).pathname;
let bundled: string | undefined;

/**
 * `src/cli/bin.ts` bundled once into one ESM file (dependencies left to node_modules), for tests
 * that start serve many times: it starts in a third of the time tsx takes on a busy machine.
 * It sits two levels below a copy of package.json, as bin.js does in dist/, inside node_modules
 * so that its imports resolve.
 */
function bundledBin(): string {
  if (bundled) return bundled;
  const dir = join(ROOT, 'node_modules', '.cache', `toolpath-serve-${process.pid}`);
  mkdirSync(join(dir, 'cli', 'bin'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  const outfile = join(dir, 'cli', 'bin', 'bin.mjs');
  buildSync({
    entryPoints: [BIN],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile,
    logLevel: 'warning',
  });
  bundled = outfile;
  return outfile;
}
const running: ChildProcess[] = [];
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
  if (bundled) rmSync(join(bundled, '..', '..', '..'), { recursive: true, force: true });
});

/** A running `toolpath serve`. */
export interface ServeProcess {
  child: ChildProcess;
  /** The folder its configuration is in (relative paths in it resolve there). */
  dir: string;
  /** `http://127.0.0.1:PORT`, the OTLP/HTTP receiver. */
  httpUrl: string;
  /** `127.0.0.1:PORT`, the OTLP/gRPC receiver. */
  grpcAddress: string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Sends SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `toolpath serve --config` on `yaml` (receivers on free loopback ports unless it says
 * otherwise), with `files` (scenarios) written beside it first, and resolves once it has said
 * where it listens. `openFiles` runs it under that open-file limit (`prlimit`, Linux).
 */
export async function startServe(
  yaml: string,
  files: Record<string, string> = {},
  options: { bundled?: boolean; openFiles?: number } = {},
): Promise<ServeProcess> {
  const dir = temporaryDir('toolpath-serve-process-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const config = join(dir, 'toolpath.yaml');
  const receivers = /^receivers:/m.test(yaml)
    ? ''
    : 'receivers:\n  otlp:\n    http: { endpoint: "127.0.0.1:0" }\n    grpc: { endpoint: "127.0.0.1:0" }\n';
  writeFileSync(config, `${receivers}${yaml}`);
  const command = options.bundled ? [bundledBin()] : ['--import', 'tsx', BIN];
  const argv = [process.execPath, ...command, 'serve', '--config', config];
  // An open-file limit of the test's choosing (soft and hard), as `ulimit -n` would set it.
  if (options.openFiles !== undefined) argv.unshift('prlimit', `--nofile=${options.openFiles}`, '--');
  const child = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk) => (out += chunk));
  child.stderr?.on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (/\n {2}scenarios .*\n/.test(out)) resolve();
    };
    child.stdout?.on('data', check);
    exited.then((code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  const httpUrl = /OTLP\/HTTP {2}(\S+)\/v1\/traces/.exec(out)?.[1] as string;
  const grpcAddress = /OTLP\/gRPC {2}(\S+)/.exec(out)?.[1] as string;
  return {
    child,
    dir,
    httpUrl,
    grpcAddress,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A span of an OTLP JSON request: hex ids, times in ns as decimal strings, string attributes. */
export interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** Unix ns; now when absent. */
  endTimeUnixNano?: bigint;
  attributes?: Record<string, string>;
}

/** The OTLP JSON ExportTraceServiceRequest holding `spans`. */
export function otlpJson(spans: readonly JsonSpan[]): string {
  const now = BigInt(Date.now()) * 1_000_000n;
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'test' } }] },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: spans.map((span) => {
              const end = span.endTimeUnixNano ?? now;
              return {
                traceId: span.traceId,
                spanId: span.spanId,
                ...(span.parentSpanId && { parentSpanId: span.parentSpanId }),
                name: span.name,
                kind: 1,
                startTimeUnixNano: String(end - 1_000_000n),
                endTimeUnixNano: String(end),
                attributes: Object.entries(span.attributes ?? {}).map(([key, value]) => ({
                  key,
                  value: { stringValue: value },
                })),
                status: {},
              };
            }),
          },
        ],
      },
    ],
  });
}

/** POSTs spans to `/v1/traces` as OTLP JSON. */
export function postSpans(httpUrl: string, spans: readonly JsonSpan[]): Promise<Response> {
  return fetch(`${httpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: otlpJson(spans),
  });
}

/** A trace id from a number: 32 hex digits. */
export const traceIdOf = (n: number) => (n + 1).toString(16).padStart(32, '0');
/** A span id from a number: 16 hex digits. */
export const spanIdOf = (n: number) => (n + 1).toString(16).padStart(16, '0');

/** An agent's root span (OTel GenAI `invoke_agent`): a trace with it is judged and reported. */
export function agentRoot(trace: number): JsonSpan {
  return {
    traceId: traceIdOf(trace),
    spanId: spanIdOf(0),
    name: 'invoke_agent support',
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
  };
}

/** An OTel GenAI tool call under the agent's root. */
export function toolSpan(trace: number, span: number, tool: string, args: string): JsonSpan {
  return {
    traceId: traceIdOf(trace),
    spanId: spanIdOf(span),
    parentSpanId: spanIdOf(0),
    name: `execute_tool ${tool}`,
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'gen_ai.tool.call.id': `call-${span}`,
      'gen_ai.tool.call.arguments': args,
    },
  };
}

/** One TraceService/Export call with `bytes` as the request; resolves with the error, if any. */
export function grpcExport(
  address: string,
  bytes: Uint8Array = new Uint8Array(),
): Promise<grpc.ServiceError | null> {
  const method = traceServiceDefinition.Export as grpc.MethodDefinition<Uint8Array, ExportResponse>;
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      TRACE_EXPORT_PATH,
      method.requestSerialize,
      method.responseDeserialize,
      bytes,
      new grpc.Metadata(),
      { deadline: Date.now() + 10_000 },
      (error) => {
        client.close();
        resolve(error);
      },
    );
  });
}
