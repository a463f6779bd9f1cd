/**
 * A TraceAdapter as `serve` runs it, for tests: its judgements written to a reports file in
 * `dir` (conversation finals too), storage in `dir/storage` when asked, behind a real OTLP/HTTP
 * receiver on loopback. `stop` is a normal stop; `crash` what a SIGKILL leaves (the receiver
 * gone, nothing flushed or judged on the way out).
 */
import { join } from 'node:path';
import { type AdapterOptions, TraceAdapter } from '../../src/collector/adapter.js';
import { startHttpReceiver } from '../../src/collector/http-receiver.js';
import { ReportsFile } from '../../src/collector/reports-file.js';

export interface ReportingAdapter {
  adapter: TraceAdapter;
  url: string;
  /** The reports file's path. */
  reportsPath: string;
  stop(): Promise<void>;
  crash(): Promise<void>;
}

export interface ReportingAdapterSetup {
  dir: string;
  /** The adapter's options (scenarios among them); the reports file and storage are added. */
  options: Omit<AdapterOptions, 'storage' | 'onJudged' | 'onConversationJudged'>;
  /** Storage options beside `directory` and `reports`; no storage when absent. */
  storage?: Partial<NonNullable<AdapterOptions['storage']>>;
  maxRequestBytes?: number;
  /** How long a crash waits first, so marks appended just before go out with the log's next batch. */
  crashAfterMs?: number;
  /** Told of `stop`, so the test's cleanup runs it. */
  cleanup: (stop: () => Promise<void>) => void;
}

export async function startReportingAdapter(setup: ReportingAdapterSetup): Promise<ReportingAdapter> {
  const { dir, storage } = setup;
  const reportsPath = join(dir, 'reports.jsonl');
  const reports = new ReportsFile(reportsPath, undefined, undefined, storage !== undefined);
  const adapter = new TraceAdapter({
    ...setup.options,
    onJudged: (spans, judgement) => reports.writeTrace(spans, judgement.reports),
    onConversationJudged: (judgement) => reports.writeReports(judgement.reports),
    ...(storage && { storage: { directory: join(dir, 'storage'), reports, ...storage } }),
  });
  const receiver = await startHttpReceiver({
    host: '127.0.0.1',
    port: 0,
    ingest: adapter,
    maxRequestBytes: setup.maxRequestBytes ?? 1 << 20,
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await receiver.close();
    await adapter.shutdown();
    await reports.close();
  };
  const crash = async () => {
    if (setup.crashAfterMs) await new Promise((resolve) => setTimeout(resolve, setup.crashAfterMs));
    stopped = true;
    await receiver.close();
  };
  setup.cleanup(stop);
  return { adapter, url: receiver.url, reportsPath, stop, crash };
}
