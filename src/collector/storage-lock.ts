/**
 * A storage folder belongs to one process: a lock file (`LOCK`, the holder's pid) made with an
 * exclusive create before anything in the folder is read. Two processes on one folder would
 * judge each other's traces again and write over each other's segments. A lock whose pid is no
 * longer running (the holder was killed) is stale and taken over; one holding this process's own
 * pid is this process's (a container restarted under the same pid, or a second adapter in one
 * process, which its caller answers for).
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The lock file's name in the storage folder. */
export const LOCK_NAME = 'LOCK';

/** The folder is held by another running process. */
export class StorageLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: number,
  ) {
    super(
      `storage: ${dir} is in use by another toolpath process (${holder > 0 ? `pid ${holder}` : 'one starting'}, in ${join(dir, LOCK_NAME)}); one process per storage.directory`,
    );
    this.name = 'StorageLockedError';
  }
}

/** A lock held on a storage folder. */
export interface StorageLock {
  readonly path: string;
  /** Lets go of the folder (the file is removed if it is still ours). */
  release(): void;
}

/** Takes the lock on `dir`, or throws {@link StorageLockedError} naming the running holder. */
export function lockStorage(dir: string): StorageLock {
  const path = join(dir, LOCK_NAME);
  // Two tries: the second after a stale lock was removed (another starter may win the race).
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      return held(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(path);
    if (holder === process.pid) return held(path);
    if (holder !== undefined && running(holder)) throw new StorageLockedError(dir, holder);
    // No pid yet in a file just made: its maker is writing it.
    if ((holder === undefined && justMade(path)) || attempt > 0)
      throw new StorageLockedError(dir, holder ?? -1);
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

function held(path: string): StorageLock {
  return {
    path,
    release: () => {
      try {
        if (holderOf(path) === process.pid) unlinkSync(path);
      } catch {
        // Gone already: nothing to let go of.
      }
    },
  };
}

/** The pid in the lock file; undefined when it is unreadable (a holder killed mid-write: stale). */
function holderOf(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

function justMade(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < 2_000;
  } catch {
    return false;
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
