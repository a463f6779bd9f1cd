/**
 * Regenerates the demo-agent fixtures in test/spans/: the demo's own conversations (src/demo),
 * and the seed-000 variations and seed-001 worked-eval conversations of
 * test/helpers/worked-evals.ts, each one OTLP JSON trace.
 *
 *   npx tsx test/spans/capture/demo-agent/capture.ts
 */
import { writeFile } from 'node:fs/promises';
import { captureDemoTraces } from '../../../../src/demo/capture.js';
import { captureConversations, SEED_000_CONVERSATIONS } from '../../../helpers/worked-evals.js';

const dir = new URL('../../', import.meta.url);
const demo = [...(await captureDemoTraces()), ...(await captureDemoTraces(SEED_000_CONVERSATIONS))];
const worked = await captureConversations();
const traces = [
  ...demo.map(({ conversation, otlpJson }) => ({ name: conversation.name, otlpJson })),
  ...worked,
];
for (const { name, otlpJson } of traces) {
  const file = new URL(`demo-agent-${name}.otlp.json`, dir);
  await writeFile(file, `${JSON.stringify(JSON.parse(otlpJson), null, 1)}\n`);
  console.log(`wrote ${file.pathname}`);
}
