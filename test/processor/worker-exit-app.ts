/**
 * An app for worker-robustness.test.ts, run as its own process: a provider with a `worker: true`
 * processor that never shuts it down. `idle` judges nothing, `judged` ends one agent trace. It
 * prints what was judged when the process exits; a worker that held the event loop would keep it
 * running past the test's timeout.
 */
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { trajectoryProcessor } from '../../src/index.js';
import { REFUND_SCENARIO } from './vercel-agent.js';

const reports: string[] = [];
const processor = trajectoryProcessor({
  scenarios: [REFUND_SCENARIO],
  worker: true,
  onReport: (report) => reports.push(report.verdict),
});
const tracer = new TracerProvider({ spanProcessors: [processor] }).getTracer('app');
process.on('exit', () => console.log(`exit ${JSON.stringify(reports)}`));
if (process.argv[2] === 'judged') {
  tracer
    .startSpan('invoke_agent a', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } }, ROOT_CONTEXT)
    .end();
}
