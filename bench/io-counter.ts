/**
 * Counts what this process asks of the disk: bytes handed to write calls and fsync/fdatasync
 * calls. The stores write through `fs.writeSync`, `fs.fsyncSync` and `fs.fdatasyncSync` (and
 * `fs.fdatasync` for a group commit) on the `node:fs` module object, so wrapping those methods counts every byte and every sync
 * exactly, without changing a line of the stores. Installed once, for the whole bench process.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface IoCounts {
  /** Bytes the write calls reported written (their return values). */
  bytes: number;
  /** fsync and fdatasync calls, on files and on directories. */
  syncs: number;
  /** Milliseconds spent inside those calls. */
  syncMs: number;
}

const counts: IoCounts = { bytes: 0, syncs: 0, syncMs: 0 };
let installed = false;
let skipSyncs = false;

export function installIoCounter(): void {
  if (installed) return;
  installed = true;
  const writeSync = fs.writeSync as (...args: unknown[]) => number;
  fs.writeSync = ((...args: unknown[]) => {
    const written = writeSync.apply(fs, args);
    counts.bytes += written;
    return written;
  }) as typeof fs.writeSync;
  for (const name of ['fsyncSync', 'fdatasyncSync'] as const) {
    const sync = fs[name];
    fs[name] = (fd: number) => {
      counts.syncs += 1;
      if (skipSyncs) return;
      const start = performance.now();
      sync.call(fs, fd);
      counts.syncMs += performance.now() - start;
    };
  }
  // A write that waits for the disk without blocking (a group commit while calls run) syncs through the callback form.
  for (const name of ['fsync', 'fdatasync'] as const) {
    const sync = fs[name];
    fs[name] = ((fd: number, callback: fs.NoParamCallback) => {
      counts.syncs += 1;
      if (skipSyncs) return void process.nextTick(callback, null);
      const start = performance.now();
      sync.call(fs, fd, (error) => {
        counts.syncMs += performance.now() - start;
        callback(error);
      });
    }) as typeof fs.fdatasync;
  }
}

/** A copy of the counters now; subtract two readings to count what happened in between. */
export function ioNow(): IoCounts {
  return { ...counts };
}

export function ioSince(start: IoCounts): IoCounts {
  return { bytes: counts.bytes - start.bytes, syncs: counts.syncs - start.syncs, syncMs: counts.syncMs - start.syncMs };
}

/**
 * Runs `work` with fsync and fdatasync turned into no-ops (still counted). Only for writing the
 * large journals the resume is measured on: the store's code and bytes are exactly the real
 * ones, only the wait for the disk is skipped. Never used for a timed contender.
 */
export async function withoutSyncs<T>(work: () => Promise<T>): Promise<T> {
  installIoCounter();
  skipSyncs = true;
  try {
    return await work();
  } finally {
    skipSyncs = false;
  }
}
