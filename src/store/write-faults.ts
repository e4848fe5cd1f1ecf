/**
 * Armed write failures, to test what a full disk does to a run. Inert unless armed, e.g.
 * `effect-write:3` makes the third ledger write fail half-way with ENOSPC. Besides the journal's
 * points, `lock-write` fails the writing of the run's lock and `notes-write` that of the demo's
 * sample notes.
 */
import type { JournalRecord } from './journal-record.ts';
import { pointOf } from './record-points.ts';

export class WriteFaultPlan {
  private readonly armed = new Map<string, Set<number>>();
  private readonly seen = new Map<string, number>();

  constructor(spec: string | undefined) {
    for (const item of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      const match = /^([a-z-]+):(\d+)$/.exec(item);
      if (!match) throw new Error(`write fault "${item}" is not of the form <point>:<n>, e.g. effect-write:3`);
      const [, point, n] = match as unknown as [string, string, string];
      const set = this.armed.get(point) ?? new Set<number>();
      set.add(Number(n));
      this.armed.set(point, set);
    }
  }

  /** Counts this write; returns the error to fail it with, if it is armed. */
  check(record: JournalRecord): Error | null {
    return this.checkPoint(pointOf(record));
  }

  /** Counts a write at a point that is not a journal record (lock-write, notes-write). */
  checkPoint(point: string): Error | null {
    const count = (this.seen.get(point) ?? 0) + 1;
    this.seen.set(point, count);
    if (!this.armed.get(point)?.has(count)) return null;
    const error = new Error(`ENOSPC: no space left on device (simulated at ${point}:${count})`) as NodeJS.ErrnoException;
    error.code = 'ENOSPC';
    return error;
  }
}
