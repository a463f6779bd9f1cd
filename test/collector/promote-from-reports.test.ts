import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAdapterConfig } from '../../src/collector/config.js';
import type { ReportLine } from '../../src/collector/reports-file.js';
import { startService } from '../../src/collector/serve.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { REFUND_SCENARIO } from '../processor/vercel-agent.js';
import { agentSpans, sendWith } from './next-hop.js';

describe('from a production failure to a regression fixture', () => {
  it('the adapter stores failed traces beside its reports, and promote turns one into a fixture by trace id', async () => {
    const dir = temporaryDir('toolpath-promote-');
    writeFileSync(join(dir, 'refund.json'), JSON.stringify(REFUND_SCENARIO));
    const config = parseAdapterConfig(
      {
        receivers: { otlp: { http: { endpoint: '127.0.0.1:0' }, grpc: null } },
        scenarios: ['refund.json'],
        decision: { wait: '10s', waitAfterRoot: '20ms' },
        reports: { file: 'out/reports.jsonl', traceDir: 'out/traces' },
      },
      'test.yaml',
    );
    const service = await startService(config, { baseDir: dir, log: () => {} });
    const good = await agentSpans('good');
    const bad = await agentSpans('refund-before-policy');
    expect(await sendWith('http/json', service.httpUrl as string, [...good, ...bad])).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await service.close();

    const reportsPath = join(dir, 'out/reports.jsonl');
    const lines = readFileSync(reportsPath, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ReportLine);
    const failed = lines.find((line) => line.verdict === 'fail');
    const passed = lines.find((line) => line.verdict === 'pass');
    // Only the failed trace's spans were stored (the default), and its line says where.
    expect(failed?.traceFile).toBe(`traces/${failed?.traceId}.otlp.json`);
    expect(passed?.traceFile).toBeUndefined();

    const out = join(dir, 'fixtures/refund-before-policy.json');
    const run = await runCli([
      'promote',
      failed?.traceId as string,
      '--reports',
      reportsPath,
      '--scenario',
      join(dir, 'refund.json'),
      '--out',
      out,
    ]);
    expect(run.stderr).toMatch(/findings? reproduced/);
    expect(run.code).toBe(0);
    const fixture = readFileSync(out, 'utf8');
    for (const raw of ['A1001', 'ana@example.com', 'R-7781']) expect(fixture).not.toContain(raw);
    const expected = JSON.parse(
      readFileSync(join(dir, 'fixtures/refund-before-policy.expected.json'), 'utf8'),
    );
    expect(JSON.stringify(expected)).toContain('order.before');
    // And the fixture judges the same under eval.
    const evalRun = await runCli(['eval', '--scenario', join(dir, 'refund.json'), out]);
    expect(evalRun.code).toBe(1);
    expect(evalRun.stdout).toContain('order.before');

    const notStored = await runCli([
      'promote',
      passed?.traceId as string,
      '--reports',
      reportsPath,
      '--scenario',
      join(dir, 'refund.json'),
      '--out',
      join(dir, 'x.json'),
    ]);
    expect(notStored.code).toBe(2);
    expect(notStored.stderr).toContain('its spans were not stored');
    expect(existsSync(join(dir, 'x.json'))).toBe(false);
  });
});
