import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as toolpath from '../src/index.js';

describe('the package root', () => {
  it('runs the whole pipeline on a stored fixture through its public exports alone', async () => {
    const text = await readFile(
      new URL('./spans/vercel-ai-v7-genai-refund.otlp.json', import.meta.url),
      'utf8',
    );
    const read = toolpath.readStoredTraces(text, 'vercel-ai-v7-genai-refund.otlp.json');
    if (read.input?.format !== 'otlp-json') throw new Error('fixture did not decode');
    const [trajectory] = toolpath.normalizeSpans(read.input.spans);
    if (!trajectory) throw new Error('no trajectory');
    const scenario = toolpath.parseScenario(
      {
        expected_tool_sequence: [
          { tool: 'get_order' },
          { tool: 'issue_refund' },
          { tool: 'send_confirmation' },
        ],
      },
      'inline',
    );
    const report = toolpath.evaluate(trajectory, scenario);
    expect(report.verdict).toBe('pass');
    expect(report.stats.calls).toBe(4);
  });
});
