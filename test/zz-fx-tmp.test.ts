import { readFileSync } from 'node:fs';
import { it } from 'vitest';
import { readStoredTraces } from '/work/main/src/cli/read-traces.js';
import { normalizeSpans } from '/work/main/src/normalizers/normalize.js';
it('x', () => {
  const read = readStoredTraces(readFileSync('/work/main/test/spans/vercel-ai-v7-genai-refund.otlp.json','utf8'), 'f');
  if (read.input?.format !== 'otlp-json') throw new Error('no');
  const ts = normalizeSpans(read.input.spans);
  for (const t of ts) { console.log(t.calls.map(c => [c.id, c.tool, c.turnId, c.outcome.status, JSON.stringify(c.args)])); console.log(t.turns); }
});
