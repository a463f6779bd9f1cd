/**
 * `toolpath serve` logs its own errors through `diag` at `OTEL_LOG_LEVEL` (default warn): a next
 * hop that refuses the evaluation spans is said on stderr, not lost in silence.
 */
import { diag } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { installDiagLogger } from '../../src/collector/diag-logger.js';
import { until } from '../helpers/chat-conversation.js';
import { freePort } from '../helpers/free-port.js';
import { agentRoot, postSpans, startServe } from '../helpers/serve-process.js';

describe('the diag logger serve installs', () => {
  const lines: string[] = [];
  afterEach(() => {
    diag.disable();
    lines.length = 0;
  });

  it('writes what reaches its level, one line each, errors with their stack', () => {
    installDiagLogger('warn', (line) => lines.push(line));
    diag.error('toolpath: judging failed', new Error('boom'));
    diag.warn('toolpath: will retry');
    diag.info('toolpath: not shown at warn');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error toolpath: judging failed Error: boom\n {4}at /);
    expect(lines[1]).toBe('warn toolpath: will retry\n');
  });

  it('writes nothing at none', () => {
    installDiagLogger('none', (line) => lines.push(line));
    diag.error('toolpath: judging failed');
    expect(lines).toEqual([]);
  });

  it('says on stderr that the next hop is down, in the real service', async () => {
    const closed = await freePort();
    const serve = await startServe(
      `exporters:\n  otlp: { endpoint: "http://127.0.0.1:${closed}", protocol: http/json }\ndecision: { waitAfterRoot: 10ms }\n`,
      {},
      { bundled: true },
    );
    expect((await postSpans(serve.httpUrl, [agentRoot(1)])).status).toBe(200);
    await until(() => serve.stderr().includes('export to the next hop failed'), 20_000);
    expect(serve.stderr()).toMatch(/^warn toolpath: export to the next hop failed; will retry/m);
    await serve.stop();
  });
});
