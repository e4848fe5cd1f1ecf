/**
 * Armed write failures, to test what a full disk does to a run. Inert unless armed, e.g.
 * `effect-write:3` makes the third ledger write fail half-way with ENOSPC. Besides the journal's
 * points, `lock-write` fails the writing of the run's lock, `notes-write` that of the demo's
 * sample notes, `decision-write` that of a decision in the inbox, `control-write` that of a
 * cancel or pause request and `fork-write` that of a forked run's journal (half of it is written
 * to the temporary file, never linked in).
 */
import type { JournalRecord } from './journal/journal-record.ts';
import { POINT_NAMES, pointOf } from './journal/record-points.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** The writes that are not journal records but can be failed too. */
const OTHER_WRITES = ['lock-write', 'notes-write', 'decision-write', 'control-write', 'fork-write'] as const;

/** Every name DURABLE_AGENT_FAIL_WRITE accepts. */
export const WRITE_FAULT_POINTS: readonly string[] = [...POINT_NAMES, ...OTHER_WRITES];

/** An armed write fault that names no write: refused, since it would silently never fire. */
export class WriteFaultSpecError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'WriteFaultSpecError';
  constructor(readonly spec: string) {
    super(
      `DURABLE_AGENT_FAIL_WRITE=${spec} names no write. Use <point>:<n> with n ≥ 1 and <point> one of: ` +
        `${WRITE_FAULT_POINTS.join(', ')} (e.g. effect-write:3; several separated by commas).`,
    );
  }
}

export class WriteFaultPlan {
  private readonly armed = new Map<string, Set<number>>();
  private readonly seen = new Map<string, number>();

  constructor(spec: string | undefined) {
    for (const item of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      const match = /^([a-z-]+):([1-9]\d{0,8})$/.exec(item);
      if (!match || !WRITE_FAULT_POINTS.includes(match[1]!)) throw new WriteFaultSpecError(item);
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
