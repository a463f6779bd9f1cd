import { readFileSync } from 'node:fs';
import { readStoredTraces } from './src/io/read-traces.js';
import { normalizeSpans } from './src/normalizers/normalize.js';
for (const f of process.argv.slice(2)) {
  const read = readStoredTraces(readFileSync(f, 'utf8'), f);
  const [t] = normalizeSpans(read.input!.spans);
  console.log('==', f);
  for (const r of t!.agents) console.log(' run', r.id, r.name, 'parent', r.parentRunId, 'pcall', r.parentCallId, 'hcall', r.handoffCallId, 'calls', r.calls.join(','), 'turns', r.turns.length);
  for (const c of t!.calls) console.log(' call', c.id, c.tool, c.agentName, c.outcome.status, JSON.stringify(c.handoff));
  for (const i of t!.issues) console.log(' issue', i.kind, i.message.slice(0,150));
}
