/**
 * What the run's last fenced write learnt besides landing: how long the lease it was made under
 * still had to run, and whether a cancel or pause waited in da_controls. The writer's checks at
 * a step boundary (is the lease still mine? is a control request waiting?) come right after such
 * a write, so they are answered from it instead of costing a round trip each.
 *
 * The lease: no claim takes a lease before it expires (leases.ts), so a lease that had L ms left
 * when the server ran the write is surely still held until L ms after the write was sent, by
 * both this process's monotonic clock (wall-clock jumps) and its wall clock (a suspended machine,
 * whose monotonic clock stands still), less a margin. A frozen worker wakes past that and asks.
 * The control inbox: a note is trusted for CONTROL_NOTE_MS only; a request written after the
 * write's snapshot is seen at the next write or the next look after that.
 */

/** How long "no control request was waiting" stays true enough to skip a look at a step boundary. */
export const CONTROL_NOTE_MS = 100;

/** Subtracted from what the server said was left of the lease: clock rates, scheduling. */
function leaseMarginMs(leftMs: number): number {
  return Math.max(250, leftMs / 10);
}

export interface WriteMoment {
  monotonic: number;
  wall: number;
}

export function momentNow(): WriteMoment {
  return { monotonic: performance.now(), wall: Date.now() };
}

export class WriteNotes {
  private leaseUntil: WriteMoment | null = null;
  private controlsNone: WriteMoment | null = null;

  /** `sent`: taken before the statement was sent (the server's now() is later, so the bound is safe). */
  noteWrite(sent: WriteMoment, leaseLeftMs: number | null, controlsWaiting: boolean): void {
    const left = leaseLeftMs === null ? 0 : leaseLeftMs - leaseMarginMs(leaseLeftMs);
    this.leaseUntil = left > 0 ? { monotonic: sent.monotonic + left, wall: sent.wall + left } : null;
    this.controlsNone = controlsWaiting ? null : sent;
  }

  /** True only while the last write proves the lease cannot have been taken yet. */
  leaseSurelyHeld(): boolean {
    const until = this.leaseUntil;
    return until !== null && performance.now() < until.monotonic && Date.now() < until.wall;
  }

  /** True only when a write sent less than CONTROL_NOTE_MS ago saw no control request. */
  controlsSurelyNone(): boolean {
    const seen = this.controlsNone;
    if (!seen) return false;
    const age = Math.max(performance.now() - seen.monotonic, Date.now() - seen.wall);
    return age >= 0 && age < CONTROL_NOTE_MS;
  }

  /** The lease let go of, or a write's fate unknown: ask the database next time. */
  forget(): void {
    this.leaseUntil = null;
    this.controlsNone = null;
  }

  /** A request was written or settled here: the next look asks the database. */
  forgetControls(): void {
    this.controlsNone = null;
  }
}
