/**
 * Records the refund run of test/helpers/refund-run.ts into test/spans/refund-run/: ten traces
 * of the demo agent given the same request, each one OTLP JSON file.
 *
 *   npx tsx test/spans/capture/demo-agent/capture-refund-run.ts
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { captureRefundRun } from '../../../helpers/refund-run.js';

const dir = new URL('../../refund-run/', import.meta.url);
await mkdir(dir, { recursive: true });
for (const { file, otlpJson } of await captureRefundRun()) {
  const path = new URL(file, dir);
  await writeFile(path, `${JSON.stringify(JSON.parse(otlpJson), null, 1)}\n`);
  console.log(`wrote ${path.pathname}`);
}
