/**
 * A storage folder belongs to one process. A second `toolpath serve` on a folder another one
 * holds (on the same ports, or on others) exits 2 naming the holder, having read, judged and
 * written nothing; a lock left by a process that died is taken over. Real processes, OTLP over
 * loopback.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCK_NAME, lockStorage, StorageLockedError } from '../../src/collector/storage-lock.js';
import { freePort } from '../helpers/free-port.js';
import { agentRoot, postSpans, startServe, toolSpan } from '../helpers/serve-process.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

function reportLines(file: string): { traceId: string }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('a storage folder held by one process', () => {
  it('refuses a second serve on the folder (same ports or others) with exit 2, judging nothing', async () => {
    const dir = temporaryDir('toolpath-lock-');
    const storage = join(dir, 'storage');
    const reports = join(dir, 'reports.jsonl');
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    const config = (http: number, grpc: number) =>
      [
        'receivers:',
        '  otlp:',
        `    http: { endpoint: "127.0.0.1:${http}" }`,
        `    grpc: { endpoint: "127.0.0.1:${grpc}" }`,
        `storage: { directory: "${storage}" }`,
        `reports: { file: "${reports}" }`,
        // Held until the first stops: nothing is judged while the second tries.
        'decision: { waitAfterRoot: 10m, wait: 10m }',
        '',
      ].join('\n');
    const first = await startServe(config(httpPort, grpcPort), {}, { bundled: true });
    for (let trace = 0; trace < 10; trace++) {
      const response = await postSpans(first.httpUrl, [
        agentRoot(trace),
        toolSpan(trace, 1, 'get_order', '{"orderId":"A1"}'),
      ]);
      expect(response.status).toBe(200);
    }
    const segmentsBefore = readdirSync(storage).sort();

    // Same ports: it fails on them; other ports: on the lock. Either way, before the log is read.
    const [otherHttp, otherGrpc] = [await freePort(), await freePort()];
    for (const [http, grpc] of [
      [httpPort, grpcPort],
      [otherHttp, otherGrpc],
    ] as const) {
      const second = startServe(config(http, grpc), {}, { bundled: true });
      await expect(second).rejects.toThrow(/serve exited 2/);
      const error = await second.catch((caught: Error) => caught.message);
      if (http === otherHttp) {
        expect(error).toContain(`pid ${first.child.pid}`);
        expect(error).toContain(storage);
      }
      expect(reportLines(reports)).toEqual([]);
      expect(readdirSync(storage).sort()).toEqual(segmentsBefore);
    }

    expect(await first.stop()).toBe(0);
    const lines = reportLines(reports);
    expect(lines).toHaveLength(10);
    expect(new Set(lines.map((line) => line.traceId)).size).toBe(10);
    expect(existsSync(join(storage, LOCK_NAME))).toBe(false);
  }, 60_000);

  it('takes over a lock whose holder has died, and refuses one whose holder runs', () => {
    const dir = temporaryDir('toolpath-lock-unit-');
    writeFileSync(join(dir, LOCK_NAME), `${deadPid()}\n`);
    const lock = lockStorage(dir);
    expect(readFileSync(join(dir, LOCK_NAME), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(join(dir, LOCK_NAME))).toBe(false);

    // The parent of this process runs: its pid holds the folder.
    writeFileSync(join(dir, LOCK_NAME), `${process.ppid}\n`);
    expect(() => lockStorage(dir)).toThrow(StorageLockedError);
    expect(() => lockStorage(dir)).toThrow(`pid ${process.ppid}`);
    // A file with no pid, just made: its maker is writing it.
    writeFileSync(join(dir, LOCK_NAME), '');
    expect(() => lockStorage(dir)).toThrow(/one starting/);
  });
});
