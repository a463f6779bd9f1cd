/** `toolpath serve` with `judges:` in its config: a judges module run on what it judges, over loopback. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAdapterConfig } from '../../src/collector/config.js';
import { startService } from '../../src/collector/serve.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { agentSpans, eventually, sendWith } from './next-hop.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

const MODULE = `export default [
  { name: 'rubric', version: '2', type: 'llm', scenarios: ['support.refund'], when: 'fail',
    judge: async (trajectory) => ({ score: 0.5, label: 'policy-skipped', reason: trajectory.calls.length + ' calls' }) },
  { name: 'broken', type: 'code', scenarios: ['support.refund'], judge: () => { throw new Error('no rubric'); } },
];
`;

describe('toolpath serve with judges', () => {
  it("runs the module's judges on the traces it judges, logs each result, counts a failure and keeps the verdict", async () => {
    const dir = temporaryDir('toolpath-serve-judges-');
    writeFileSync(join(dir, 'judges.mjs'), MODULE);
    writeFileSync(
      join(dir, 'refund.json'),
      JSON.stringify({
        id: 'support.refund',
        order: { before: [{ before: 'get_refund_policy', after: 'issue_refund' }] },
      }),
    );
    const config = parseAdapterConfig(
      {
        receivers: { otlp: { http: { endpoint: '127.0.0.1:0' }, grpc: null } },
        scenarios: ['refund.json'],
        judges: 'judges.mjs',
        decision: { wait: '10s', waitAfterRoot: '50ms' },
      },
      'test.yaml',
    );
    const lines: string[] = [];
    const running = await startService(config, { baseDir: dir, log: (line) => lines.push(line) });
    cleanup.push(() => running.close());
    await sendWith('http/json', running.httpUrl as string, await agentSpans('refund-before-policy'));
    await eventually(() => lines.some((line) => line.startsWith('judge broken')), 'the judges to run');
    expect(lines.find((line) => line.startsWith('judge rubric'))).toBe(
      'judge rubric on support.refund: policy-skipped (0.5)',
    );
    expect(lines.find((line) => line.startsWith('judge broken'))).toBe(
      'judge broken on support.refund: failed: threw: no rubric',
    );
    expect(lines.some((line) => /FAIL|fail/.test(line) && line.includes('support.refund'))).toBe(true);
  });

  it('a judges module that exports no list stops the start, saying so', async () => {
    const dir = temporaryDir('toolpath-serve-judges-');
    writeFileSync(join(dir, 'judges.mjs'), 'export const x = 1;\n');
    writeFileSync(
      join(dir, 'refund.json'),
      JSON.stringify({ id: 'support.refund', tools: { required: ['x'] } }),
    );
    const config = parseAdapterConfig(
      {
        receivers: { otlp: { http: { endpoint: '127.0.0.1:0' }, grpc: null } },
        scenarios: ['refund.json'],
        judges: 'judges.mjs',
      },
      'test.yaml',
    );
    await expect(startService(config, { baseDir: dir, log: () => {} })).rejects.toThrow(
      /expected a default \(or judges\) export/,
    );
  });
});
