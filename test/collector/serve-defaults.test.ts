/**
 * `toolpath serve` with no config: a real process on the built-in defaults says where it listens,
 * takes traces there over OTLP/HTTP and OTLP/gRPC, answers its health endpoints, and judges what
 * it took before it exits on SIGTERM. The defaults are fixed ports (4318, 4317): where something
 * else holds them (a developer's own Collector), the command must say so and exit 2 instead; that
 * refusal is also tested on purpose, with a port this test holds under each endpoint key in turn.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { agentSpans, sendWith } from './next-hop.js';

const BIN = new URL('../../src/cli/bin.ts', import.meta.url).pathname;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Whether nothing listens on 127.0.0.1:`port` (we could listen there ourselves). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

interface Serve {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `toolpath serve` with `args`, as a real process. */
function runServe(...args: string[]): Serve {
  const child = spawn(process.execPath, ['--import', 'tsx', BIN, 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk) => (out += chunk));
  child.stderr?.on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Resolves with the startup block once its last line (the scenarios) is out; rejects if the process exits first. */
function startupBlock(serve: Serve): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (/\n {2}scenarios .*\n/.test(serve.stdout())) resolve(serve.stdout());
    };
    serve.child.stdout?.on('data', check);
    serve.exited.then((code) => reject(new Error(`serve exited ${code}: ${serve.stderr()}`)));
  });
}

describe('toolpath serve with no config', () => {
  it('listens on the default endpoints, says where, judges what it took, and stops on SIGTERM', async () => {
    const free = (await portIsFree(4318)) && (await portIsFree(4317));
    const serve = runServe();
    if (!free) {
      // Held by something else: a clear refusal, not a hang or a stack trace.
      expect(await serve.exited).toBe(2);
      expect(serve.stderr()).toMatch(
        /toolpath serve: cannot start: .*EADDRINUSE.*\(another process listens there; the config sets endpoints in receivers\.otlp\.http\.endpoint/,
      );
      return;
    }
    const block = await startupBlock(serve);
    expect(block.split('\n').slice(0, 5)).toEqual([
      'toolpath serve: built-in defaults (no --config)',
      '  OTLP/HTTP  http://127.0.0.1:4318/v1/traces',
      '  health     http://127.0.0.1:4318/healthz, http://127.0.0.1:4318/readyz',
      '  OTLP/gRPC  127.0.0.1:4317',
      '  scenarios  toolpath.defaults (built-in defaults)',
    ]);

    expect((await fetch('http://127.0.0.1:4318/healthz')).status).toBe(200);
    expect((await fetch('http://127.0.0.1:4318/readyz')).status).toBe(200);
    expect(await sendWith('http/json', 'http://127.0.0.1:4318', await agentSpans('good'))).toBe(0);
    expect(await sendWith('grpc', 'http://127.0.0.1:4317', await agentSpans('tool-error'))).toBe(0);

    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    // Judged at SIGTERM at the latest (their 2 s after the root may not have passed yet), not lost.
    expect(serve.stdout()).toMatch(/toolpath serve: stopped; 2 traces judged, 0 late spans/);
  }, 60_000);
});

/** Listens on a free loopback port, as another process holding it would; resolves with the server and its port. */
function holdPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

describe('toolpath serve where another process holds an endpoint', () => {
  // Each endpoint in turn on the held port, the others on free ones (port 0): whichever is taken,
  // the command says which address and which keys move it, and exits 2 without a startup block.
  it.each([
    ['receivers.otlp.http.endpoint', (held: string) => ({ http: held, grpc: '127.0.0.1:0' })],
    ['receivers.otlp.grpc.endpoint', (held: string) => ({ http: '127.0.0.1:0', grpc: held })],
    [
      'metrics.prometheus.endpoint',
      (held: string) => ({ http: '127.0.0.1:0', grpc: '127.0.0.1:0', prometheus: held }),
    ],
  ])(
    'refuses to start when %s is taken',
    async (_key, endpoints) => {
      const { server, port } = await holdPort();
      const dir = temporaryDir('toolpath-serve-');
      try {
        const { http, grpc, prometheus } = endpoints(`127.0.0.1:${port}`) as Record<string, string>;
        const config = join(dir, 'toolpath.yaml');
        writeFileSync(
          config,
          [
            'receivers:',
            '  otlp:',
            `    http: { endpoint: "${http}" }`,
            `    grpc: { endpoint: "${grpc}" }`,
            ...(prometheus ? ['metrics:', `  prometheus: { endpoint: "${prometheus}" }`] : []),
            '',
          ].join('\n'),
        );
        const serve = runServe('--config', config);
        expect(await serve.exited).toBe(2);
        expect(serve.stderr()).toMatch(
          new RegExp(
            `toolpath serve: cannot start: .*EADDRINUSE.*127\\.0\\.0\\.1:${port}.*\\(another process listens there; the config sets endpoints in receivers\\.otlp\\.http\\.endpoint, receivers\\.otlp\\.grpc\\.endpoint and metrics\\.prometheus\\.endpoint\\)`,
          ),
        );
        // It never said it listens: nothing on stdout claims an endpoint.
        expect(serve.stdout()).not.toMatch(/OTLP\/HTTP|OTLP\/gRPC|metrics /);
      } finally {
        server.close();
      }
    },
    30_000,
  );
});
