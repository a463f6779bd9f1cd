/**
 * Records the refund runs of test/helpers/suggest-refund.ts into test/spans/suggest-refund/:
 * the demo agent under a real SDK provider, each run one OTLP JSON file.
 *
 *   npx tsx test/spans/capture/demo-agent/capture-suggest-refund.ts
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { captureSuggestRefund, SUGGEST_REFUND_DIR } from '../../../helpers/suggest-refund.js';

await mkdir(SUGGEST_REFUND_DIR, { recursive: true });
for (const { file, otlpJson } of await captureSuggestRefund()) {
  const path = new URL(file, SUGGEST_REFUND_DIR);
  await writeFile(path, `${JSON.stringify(JSON.parse(otlpJson), null, 1)}\n`);
  console.log(`wrote ${path.pathname}`);
}
