import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three tiers, as vitest projects (`npm test` runs all three):
 * - unit (`npm run test:unit`, the quick loop): pure modules, in-process pipelines, fixtures;
 * - integration (`npm run test:integration`): real servers and processes on loopback (serve,
 *   receivers, durable storage, worker threads, conversations across traces);
 * - e2e (`npm run test:e2e`): packed installs, the README's commands, Chromium, SIGKILL chaos,
 *   benchmarks against recorded corpora.
 */
const E2E = [
  'test/install/**/*.test.ts',
  'test/readme/**/*.test.ts',
  'test/examples/**/*.test.ts',
  'test/demo/**/*.test.ts',
  'test/benchmarks/**/*.test.ts',
  'test/cli/*browser*.test.ts',
  'test/cli/chromium-lookup.test.ts',
  'test/collector/serve-durable.test.ts',
  'test/conversations/serve-durable-conversations-kills.test.ts',
  'test/processor/load.test.ts',
];
const INTEGRATION = [
  'test/collector/serve-*.test.ts',
  'test/collector/receivers.test.ts',
  'test/collector/two-adapters.test.ts',
  'test/collector/durable-*.test.ts',
  'test/collector/adapter-service.test.ts',
  'test/collector/held-heap.test.ts',
  'test/collector/promote-from-reports.test.ts',
  'test/conversations/**/*.test.ts',
  'test/processor/worker-*.test.ts',
  'test/processor/judge-worker.test.ts',
  'test/processor/openai-agents-live.test.ts',
  'test/run/taubench-pass-k.test.ts',
  // Child processes or many real SDK providers: seconds each, not the quick loop's milliseconds.
  'test/processor/span-accounting.test.ts',
  'test/cli/outcome-runner.test.ts',
  'test/cli/init-command.test.ts',
];
// test/sdk3 runs under its own config, on Node 22 and the 3.x SDK line (test/sdk3/run.sh).
const EXCLUDE = [...configDefaults.exclude, 'test/sdk3/**'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...EXCLUDE, ...E2E, ...INTEGRATION] },
      },
      { extends: true, test: { name: 'integration', include: INTEGRATION, exclude: [...EXCLUDE, ...E2E] } },
      { extends: true, test: { name: 'e2e', include: E2E, exclude: EXCLUDE } },
    ],
  },
});
