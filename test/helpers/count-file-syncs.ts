/**
 * Counts fsync and fdatasync by wrapping node:fs, the blocking and the callback forms (a write
 * that waits for the disk without blocking syncs through the callback). Undone by
 * vi.restoreAllMocks().
 */
import fs from 'node:fs';
import { vi } from 'vitest';

/** Starts counting; the function returns the fsyncs made since. */
export function countFileSyncs(): () => number {
  let syncs = 0;
  for (const name of ['fsyncSync', 'fdatasyncSync'] as const) {
    const real = fs[name].bind(fs);
    vi.spyOn(fs, name).mockImplementation((fd: number) => {
      syncs += 1;
      real(fd);
    });
  }
  for (const name of ['fsync', 'fdatasync'] as const) {
    const real = fs[name].bind(fs);
    vi.spyOn(fs, name).mockImplementation(((fd: number, callback: fs.NoParamCallback) => {
      syncs += 1;
      real(fd, callback);
    }) as typeof fs.fdatasync);
  }
  return () => syncs;
}
