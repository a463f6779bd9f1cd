/**
 * A file-size limit (RLIMIT_FSIZE) set on a running process and lifted again, with util-linux
 * `prlimit --pid`: a write past it fails with a real EFBIG from the kernel (Node ignores the
 * SIGXFSZ that comes with it), as on a disk quota or a filesystem's size cap.
 */
import { execFileSync } from 'node:child_process';

/** Whether `prlimit` can set limits here (tests that need it skip, saying why, without it). */
export function canLimitFileSize(): boolean {
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), '--fsize'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Appended to the name of a test that needs {@link canLimitFileSize}: why it was skipped, when it is. */
export function fileSizeLimitNote(): string {
  return canLimitFileSize() ? '' : ' (skipped: util-linux prlimit cannot set RLIMIT_FSIZE here)';
}

/** Limits files written by process `pid` to `bytes` (the soft limit; the hard one is left as it is). */
export function limitFileSize(pid: number, bytes: number): void {
  execFileSync('prlimit', ['--pid', String(pid), `--fsize=${bytes}:`]);
}

/** Lifts the limit {@link limitFileSize} set. */
export function liftFileSizeLimit(pid: number): void {
  execFileSync('prlimit', ['--pid', String(pid), '--fsize=unlimited:']);
}
