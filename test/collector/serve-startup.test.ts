/**
 * What `toolpath serve` says at start and at stop, on a real service on loopback ports: on the
 * built-in defaults, what they check, what they cannot, and that findings are only printed
 * when nothing is configured to take them; at stop, counts in words.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startupText, stopLine } from '../../src/cli/serve-command.js';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { type RunningService, startService } from '../../src/collector/serve.js';
import { freePort } from '../helpers/free-port.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { agentSpans, eventually, sendWith } from './next-hop.js';

const LOOPBACK = { otlp: { http: { endpoint: '127.0.0.1:0' }, grpc: { endpoint: '127.0.0.1:0' } } };
const running: RunningService[] = [];
afterAll(async () => {
  for (const service of running) await service.close();
});

async function serve(document: Record<string, unknown>, log: string[] = []) {
  const config = parseAdapterConfig({ receivers: LOOPBACK, ...document }, 'test.yaml');
  const service = await startService(config, { baseDir: process.cwd(), log: (line) => log.push(line) });
  running.push(service);
  return { service, config };
}

describe('toolpath serve, said at start and at stop', () => {
  it('on the defaults: says what they check, what needs a scenario, and that findings are only printed', async () => {
    const log: string[] = [];
    const { service, config } = await serve({ decision: { waitAfterRoot: '50ms' } }, log);
    const text = startupText(service, config);
    expect(text).toContain('  scenarios  toolpath.defaults (built-in defaults)\n');
    expect(text).toContain(
      "  checks     no value taken from a failed call's result, at most 2 identical repeats of a call, at most 3 retries; they know no tool names, so order, grounding and allowed tools need a scenario (scenarios: in a --config file)\n",
    );
    expect(text).toContain(
      '  findings   printed here only, one line a trace: no exporters.otlp or reports.file is configured, so none is forwarded or kept\n',
    );

    expect(await sendWith('http/json', service.httpUrl as string, await agentSpans('good'))).toBe(0);
    await eventually(() => service.adapter.stats().judgedTraces === 1, 'the trace judged');
    expect(log.some((line) => line.startsWith('PASS  toolpath.defaults@1  trace '))).toBe(true);
    await service.close();
    expect(stopLine(service)).toMatch(
      /^toolpath serve: stopped; 1 trace judged, 0 late spans; nothing lost$/,
    );
  }, 30_000);

  it('with a next hop and a reports file: names where findings go, and no defaults line', async () => {
    const reports = `${temporaryDir('toolpath-serve-startup-')}/reports.jsonl`;
    const { service, config } = await serve({
      scenarios: ['examples/vercel-ai-agent/refund.scenario.yaml'],
      exporters: { otlp: { endpoint: 'http://127.0.0.1:9/', protocol: 'http/json' } },
      reports: { file: reports },
    });
    const text = startupText(service, config, 'toolpath.yaml');
    expect(text).toMatch(/^toolpath serve: config toolpath\.yaml\n/);
    expect(text).not.toContain('  checks ');
    expect(text).toContain(`  findings   evaluation spans to http://127.0.0.1:9/, reports to ${reports}\n`);
  });

  it('its own metrics name it: service.name toolpath, not unknown_service:node', async () => {
    const port = await freePort();
    const { service } = await serve({ metrics: { prometheus: { endpoint: `127.0.0.1:${port}` } } });
    const scraped = await (await fetch(service.metricsUrl as string)).text();
    expect(scraped).toMatch(/^target_info\{[^}]*service_name="toolpath"/m);
    expect(scraped).not.toContain('unknown_service');
  });
});
