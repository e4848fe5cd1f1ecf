/**
 * The time limits of running tool calls, on one timer. A timer of its own per call (set, then
 * cleared when the call returns) made and threw away a timer list each call: about 4% of the
 * in-memory loop's CPU in a profile. Here a call adds an entry and removes it; the one timer is armed for the
 * earliest limit, and re-armed only when a call due sooner arrives or it fires.
 *
 * While a limit is pending the timer keeps the process alive, as a call's own timer did (a hung
 * tool still ends at its limit); with none pending it does not.
 */
import { performance } from 'node:perf_hooks';

export interface Deadline {
  readonly due: number;
  readonly onExpire: () => void;
}

export class CallDeadlines {
  private readonly pending = new Set<Deadline>();
  private timer: NodeJS.Timeout | null = null;
  /** When the armed timer fires (performance.now() time); Infinity when none is armed. */
  private armedFor = Number.POSITIVE_INFINITY;

  /** Calls `onExpire` once `ms` have passed, unless the deadline is cleared first. */
  add(ms: number, onExpire: () => void): Deadline {
    const deadline: Deadline = { due: performance.now() + ms, onExpire };
    this.pending.add(deadline);
    if (deadline.due < this.armedFor) this.arm(deadline.due);
    else this.timer?.ref();
    return deadline;
  }

  clear(deadline: Deadline): void {
    if (!this.pending.delete(deadline)) return;
    // The timer stays armed (re-arming costs what this module saves) but no longer holds the process.
    if (this.pending.size === 0) this.timer?.unref();
  }

  private arm(due: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = due;
    // A timer may fire a little before `due` by this clock: fire() then arms it again.
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil(due - performance.now())));
    if (this.pending.size === 0) this.timer.unref();
  }

  private fire(): void {
    this.timer = null;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    const expired: Deadline[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const deadline of this.pending) {
      if (deadline.due <= now) expired.push(deadline);
      else if (deadline.due < next) next = deadline.due;
    }
    for (const deadline of expired) this.pending.delete(deadline);
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    // Last: an expiry may start another call, whose deadline add() then places.
    for (const deadline of expired) deadline.onExpire();
  }
}

/** The process's one set of call deadlines. */
export const callDeadlines = new CallDeadlines();
