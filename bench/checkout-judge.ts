/**
 * A checkout's TraceJudge against the processor benchmark's scenario, for the benches that set
 * two checkouts side by side (judge-pair.ts, instructions.ts).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SpanRecord } from '../src/model/span-record.js';
import { PROCESSOR_SCENARIO } from './processor.js';

/** What the benches call of a TraceJudge, whichever checkout it comes from. */
export interface CheckoutJudge {
  judge(traceId: string, spans: SpanRecord[]): { reports: readonly { verdict: string }[] };
}

/** The checkout's TraceJudge: src/judging/ today, src/processor/ before the core moved. */
export async function checkoutJudge(root: string): Promise<CheckoutJudge> {
  for (const path of ['src/judging/trace-judge.ts', 'src/processor/trace-judge.ts']) {
    try {
      const module = (await import(pathToFileURL(resolve(root, path)).href)) as {
        TraceJudge: new (options: { scenarios: unknown[] }) => CheckoutJudge;
      };
      return new module.TraceJudge({ scenarios: [PROCESSOR_SCENARIO] });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    }
  }
  throw new Error(`${root}: no src/judging/trace-judge.ts or src/processor/trace-judge.ts`);
}
