/**
 * Makes the calls of a parallel turn finish in a chosen order, whatever the machine's load: a
 * call returns only once every call ranked before it has its outcome recorded (seen in the
 * run's `saved` events). Calls not in the order finish after those in it, in no fixed order.
 */
import type { RunEvent } from '../../src/core/run-events.ts';

export class FinishOrder {
  private readonly recorded = new Set<string>();
  private readonly waiters: Array<{ before: readonly string[]; resolve: () => void }> = [];
  /** False: every call returns at once (a resume that re-runs calls one at a time must not wait). */
  active = true;

  private readonly started: string[] = [];
  private releaseTogether: (() => void) | null = null;
  private readonly allStarted: Promise<void>;

  /**
   * `together`: the calls of `order` return at the same instant instead, once every one of them
   * has started (released in that order, in one go): their outcomes come back while the first
   * one's write waits for the disk.
   */
  constructor(
    readonly order: readonly string[],
    readonly together = false,
  ) {
    this.allStarted = new Promise((resolve) => (this.releaseTogether = resolve));
  }

  /** Feed the run's events here. */
  readonly observe = (event: RunEvent): void => {
    if (event.type !== 'saved') return;
    for (const id of event.recordedIds) this.recorded.add(id);
    for (const waiter of this.waiters.splice(0)) {
      if (waiter.before.every((id) => this.recorded.has(id))) waiter.resolve();
      else this.waiters.push(waiter);
    }
  };

  /** Resolves once every call ranked before `id` is recorded. */
  turnOf(id: string): Promise<void> {
    if (this.together && this.active && this.order.includes(id)) {
      this.started.push(id);
      if (this.order.every((other) => this.started.includes(other))) this.releaseTogether!();
      return this.allStarted;
    }
    const rank = this.order.indexOf(id);
    const before = rank === -1 ? this.order : this.order.slice(0, rank);
    if (!this.active || before.every((other) => this.recorded.has(other))) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ before, resolve }));
  }
}
