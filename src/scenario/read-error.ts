/** Why a file could not be read, in words, with the path as the system resolved it. */
import { resolve } from 'node:path';

/**
 * `no such file: /abs/refund.yaml` rather than `ENOENT`: what went wrong and where, so the
 * fix (the path, a permission) is plain without knowing errno names.
 */
export function describeReadError(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  const where = resolve(path);
  if (code === 'ENOENT') return `no such file: ${where} (check the path and the working directory)`;
  if (code === 'EACCES' || code === 'EPERM') return `permission denied reading ${where}`;
  if (code === 'EISDIR') return `${where} is a directory; give a file (or a glob such as ${path}/*.json)`;
  if (code === 'ENOTDIR') return `a part of ${where} is a file, not a directory`;
  return `cannot read ${where}: ${(error as Error).message}`;
}
