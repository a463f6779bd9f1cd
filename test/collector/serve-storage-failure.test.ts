/**
 * A span log that cannot be written for a while, as a real process: `toolpath serve` with
 * storage, its files held to a size by RLIMIT_FSIZE (set on the running process with
 * `prlimit --pid`, so the kernel answers its writes EFBIG), then the limit lifted. While the log
 * cannot write, requests answer 503 and `/readyz` 503; once a retry lands, both answer 200 again,
 * and the marks written meanwhile (traces judged while it failed) are on disk, so a restart judges
 * nothing twice.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EVALUATION_SPAN_NAME } from '../../src/judging/evaluation-events.js';
import {
  canLimitFileSize,
  fileSizeLimitNote,
  liftFileSizeLimit,
  limitFileSize,
} from '../helpers/file-size-limit.js';
import { agentRoot, postSpans, type ServeProcess, startServe, toolSpan } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';
import { eventually, type NextHop, startNextHop } from './next-hop.js';

const hops: NextHop[] = [];
afterAll(async () => {
  for (const hop of hops.splice(0)) await hop.close();
});

/** Evaluation spans the next hop got, by trace. */
function findingsByTrace(hop: NextHop): Map<string, number> {
  const counts = new Map<string, number>();
  for (const span of hop.spans)
    if (span.name === EVALUATION_SPAN_NAME) counts.set(span.traceId, (counts.get(span.traceId) ?? 0) + 1);
  return counts;
}

function reportCounts(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const { traceId } = JSON.parse(line) as { traceId: string };
    counts.set(traceId, (counts.get(traceId) ?? 0) + 1);
  }
  return counts;
}

/** The segment new records go to: the newest. */
function activeSegment(storage: string): string {
  const names = readdirSync(storage)
    .filter((name) => name.endsWith('.log'))
    .sort();
  return join(storage, names.at(-1) as string);
}

/** A trace whose request is large beside its report line, so the log meets the limit first. */
const paddedTrace = (n: number) => [
  { ...agentRoot(n), attributes: { ...agentRoot(n).attributes, 'app.padding': 'p'.repeat(4_000) } },
  toolSpan(n, 1, 'get_order', '{"orderId":"A1"}'),
];

async function readyz(serve: ServeProcess): Promise<number> {
  return (await fetch(`${serve.httpUrl}/readyz`)).status;
}

function config(dir: string, decision: string, hop?: NextHop): string {
  return [
    `storage: { directory: "${join(dir, 'storage')}" }`,
    ...(hop ? [`exporters: { otlp: { endpoint: "${hop.url}", protocol: http/protobuf } }`] : []),
    `reports: { file: "${join(dir, 'reports.jsonl')}" }`,
    `decision: ${decision}`,
    '',
  ].join('\n');
}

describe.skipIf(!canLimitFileSize())(
  `toolpath serve when the span log cannot be written for a while${fileSizeLimitNote()}`,
  () => {
    it('answers 503 and /readyz 503 while a file-size limit holds, 200 once it is lifted, and judges each trace once', async () => {
      const dir = temporaryDir('toolpath-log-failure-');
      const storage = join(dir, 'storage');
      const serve = await startServe(config(dir, '{ waitAfterRoot: 10m, wait: 10m }'), {}, { bundled: true });
      const pid = serve.child.pid as number;
      const answered = new Map<number, number>();
      const send = async (n: number) => {
        const { status } = await postSpans(serve.httpUrl, paddedTrace(n));
        answered.set(n, status);
        return status;
      };
      for (let n = 0; n < 10; n++) expect(await send(n)).toBe(200);
      expect(await readyz(serve)).toBe(200);

      limitFileSize(pid, statSync(activeSegment(storage)).size);
      try {
        expect(await send(10)).toBe(503);
        expect(await readyz(serve)).toBe(503);
        // Past the first retry, still over the limit: still refused, still not ready.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(await send(11)).toBe(503);
        expect(await readyz(serve)).toBe(503);
      } finally {
        liftFileSizeLimit(pid);
      }
      // No restart: the next retry lands.
      const lifted = Date.now();
      let ready = 0;
      await eventually(
        () => {
          void readyz(serve).then((status) => (ready = status));
          return ready === 200;
        },
        '/readyz 200 once the limit is lifted',
        10_000,
      );
      expect(Date.now() - lifted).toBeLessThan(5_000);
      for (let n = 12; n < 15; n++) expect(await send(n)).toBe(200);

      expect(await serve.stop()).toBe(0);
      expect(serve.stdout()).toMatch(/writes? of the span log failed and tried again/);
      const counts = reportCounts(join(dir, 'reports.jsonl'));
      for (const [n, status] of answered) {
        const traceId = paddedTrace(n)[0]?.traceId as string;
        // Answered 200: judged once. Answered 503: never twice (its record landed with the retry,
        // or its client sends it again).
        if (status === 200) expect(counts.get(traceId), `trace ${n}`).toBe(1);
        else expect(counts.get(traceId) ?? 0, `trace ${n}`).toBeLessThanOrEqual(1);
      }
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
    }, 90_000);

    it('does not judge spans the log could not write: not while it fails, nor at a stop while it still does', async () => {
      const dir = temporaryDir('toolpath-log-failure-');
      const storage = join(dir, 'storage');
      const reports = join(dir, 'reports.jsonl');
      const yaml = config(dir, '{ waitAfterRoot: 300ms, wait: 10m }');
      const first = await startServe(yaml, {}, { bundled: true });
      const pid = first.child.pid as number;
      for (let n = 0; n < 3; n++) expect((await postSpans(first.httpUrl, paddedTrace(n))).status).toBe(200);
      await eventually(() => reportCounts(reports).size === 3, 'the first traces judged');
      // Their marks written before the limit: the next request is taken, and its write fails.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const refused = paddedTrace(3)[0]?.traceId as string;
      limitFileSize(pid, statSync(activeSegment(storage)).size);
      try {
        expect((await postSpans(first.httpUrl, paddedTrace(3))).status).toBe(503);
        // Well past its wait, and past a retry: not judged, its spans are not on disk.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(reportCounts(reports).has(refused)).toBe(false);
        expect(await first.stop()).toBe(0);
      } finally {
        if (first.child.exitCode === null) liftFileSizeLimit(pid);
      }
      expect(first.stdout() + first.stderr()).toMatch(
        /1 trace not judged: the span log could not write their spans/,
      );
      expect(reportCounts(reports).has(refused)).toBe(false);
      // Its client sends it again: judged once.
      const second = await startServe(yaml, {}, { bundled: true });
      expect((await postSpans(second.httpUrl, paddedTrace(3))).status).toBe(200);
      await eventually(() => reportCounts(reports).has(refused), 'the trace judged');
      expect(await second.stop()).toBe(0);
      expect(reportCounts(reports).get(refused)).toBe(1);
      expect([...reportCounts(reports).values()]).toEqual([1, 1, 1, 1]);
    }, 90_000);

    it('writes the marks of traces judged while the log failed once it can: a restart judges none of them again', async () => {
      const dir = temporaryDir('toolpath-log-failure-');
      const storage = join(dir, 'storage');
      const reports = join(dir, 'reports.jsonl');
      const hop = await startNextHop();
      hops.push(hop);
      const yaml = config(dir, '{ waitAfterRoot: 2s, wait: 10m }', hop);
      const first = await startServe(yaml, {}, { bundled: true });
      const pid = first.child.pid as number;
      const traces = 20;
      for (let n = 0; n < traces; n++)
        expect((await postSpans(first.httpUrl, paddedTrace(n))).status).toBe(200);
      // Acknowledged, on disk, not judged yet: judged while the log cannot take their marks.
      limitFileSize(pid, statSync(activeSegment(storage)).size);
      try {
        await eventually(() => findingsByTrace(hop).size === traces, 'the findings delivered', 20_000);
        // Their marks (judged, delivered) tried, and tried again, while the limit holds.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(await readyz(first)).toBe(503);
      } finally {
        liftFileSizeLimit(pid);
      }
      let ready = 0;
      await eventually(
        () => {
          void readyz(first).then((status) => (ready = status));
          return ready === 200;
        },
        '/readyz 200 once the limit is lifted',
        10_000,
      );
      expect(await first.stop()).toBe(0);

      const second = await startServe(yaml, {}, { bundled: true });
      expect(await second.stop()).toBe(0);
      // Nothing replayed: each trace judged, reported and delivered once.
      expect(second.stdout()).not.toMatch(/replayed [1-9]/);
      const counts = reportCounts(reports);
      expect(counts.size).toBe(traces);
      expect([...counts.entries()].filter(([, count]) => count !== 1)).toEqual([]);
      const findings = findingsByTrace(hop);
      expect(findings.size).toBe(traces);
      expect([...findings.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    }, 90_000);
  },
);
