import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { Report } from '../../src/index.js';
import { pipeline } from './harness.js';
import { AGENTS_REFUND_SCENARIO, instrumentAgents, runAgentsRefund } from './openai-agents-agent.js';

const RUNS = 50;
const reports: Report[] = [];
const live = pipeline({ scenarios: [AGENTS_REFUND_SCENARIO], onReport: (report) => reports.push(report) });
instrumentAgents(live.provider);
afterAll(() => live.shutdown());
afterEach(() => {
  vi.useRealTimers();
  reports.length = 0;
});

/** Runs the good conversation `RUNS` times, each judged before the next starts; `during` wraps each run. */
async function goodRuns(during: (run: () => Promise<void>) => Promise<void>): Promise<Report[]> {
  for (let run = 0; run < RUNS; run++) {
    await during(runAgentsRefund);
    // The bridge ends the trace's root span from the SDK's trace-end callback.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await live.processor.forceFlush();
  }
  return reports;
}

function expectAllPassed(judged: readonly Report[]): void {
  expect(judged).toHaveLength(RUNS);
  const why = judged
    .filter((report) => report.verdict !== 'pass')
    .map((report) => report.findings.map((finding) => finding.message).join('; '));
  expect(why).toEqual([]);
  for (const report of judged) expect(report.stats.calls).toBe(4);
  expect(live.errors).toEqual([]);
}

describe('trajectoryProcessor with the OpenAI Agents SDK through the OpenInference bridge, live', () => {
  it(`passes ${RUNS} repeated good runs of an instant model that records no LLM spans`, async () => {
    expectAllPassed(await goodRuns((run) => run()));
  }, 60_000);

  // The bridge's times have millisecond precision: on a fast machine a whole turn fits in one
  // millisecond. A clock that stands still while the SDK runs puts every span of a run in the
  // same millisecond, so time orders nothing and only the `turn` spans can.
  it(`passes ${RUNS} good runs when every span of a run falls in one millisecond`, async () => {
    const judged = await goodRuns(async (run) => {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
      try {
        await run();
      } finally {
        vi.useRealTimers();
      }
    });
    expectAllPassed(judged);
  }, 60_000);
});
