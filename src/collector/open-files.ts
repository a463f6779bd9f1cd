/**
 * The process's open-file limit and how many files it has open, as Linux says in /proc (Node has
 * no getrlimit). Elsewhere, or when /proc cannot be read, the limit is unknown and only
 * `limits.maxConnections` bounds the connections.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The soft "Max open files" of /proc/self/limits; Infinity when unlimited or unknown. */
export function openFileLimit(limits = '/proc/self/limits'): number {
  try {
    return parseOpenFileLimit(readFileSync(limits, 'utf8'));
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** The soft limit in the text of /proc/self/limits (`Max open files  1024  4096  files`). */
export function parseOpenFileLimit(text: string): number {
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  const value = Number(soft);
  return Number.isSafeInteger(value) && value > 0 ? value : Number.POSITIVE_INFINITY;
}

/**
 * Files open now (/proc/self/fd, less the one listing it), or undefined when it cannot be read.
 * It costs a few milliseconds with a thousand open, so callers sample it rarely.
 */
export function openFileCount(dir = '/proc/self/fd'): number | undefined {
  try {
    return Math.max(0, readdirSync(dir).length - 1);
  } catch {
    return undefined;
  }
}
